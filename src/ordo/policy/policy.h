// The one interface every planner implements: a scenario and options in, a plan out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo {

/// PolicyOptions::effort's range: 64 times fast mode's passes is seconds at 4,096 GPUs.
inline constexpr int kMaxEffort = 64;

/// PolicyOptions::memory_budget_bytes' default: 1.5 GiB, room for a what-if, the service's
/// background full run and the state beside each other on a 24 GiB machine.
inline constexpr int64_t kDefaultMemoryBudgetBytes = int64_t{3} << 29;

struct PolicyOptions {
  /// Wall time the policy may spend. Fast mode's pass schedule is fixed by the instance's size
  /// and the effort and, at effort 1, ends far inside this default at every benchmarked size
  /// (docs/fast-mode.md), so the limit is a safety cut and plans stay deterministic; full mode
  /// uses all of its limit. A policy that cannot stop early (the baselines) ignores it.
  double time_limit_s = 2.0;
  /// Fast mode's search effort, 1 to kMaxEffort: its improvement passes are multiplied by it (the
  /// plan is still fixed by the input, the seed and the effort). 1 keeps fast mode inside its
  /// latency targets; more costs about proportionally more time and finds a better plan more
  /// often (docs/fast-mode.md, "Against the optimum"). Other policies ignore it.
  int effort = 1;
  /// Seed for any randomised search. The same seed and scenario give the same plan.
  uint64_t seed = 1;
  /// When set and true, the policy returns its best plan so far as soon as it can.
  const std::atomic<bool>* stop = nullptr;
  /// Fill Plan::explanations (why each job does not start at step 0).
  bool explain = false;
  /// Working memory the call may take, in bytes. Full mode estimates each model (and the solver's
  /// copies of it) from the scenario before building it and skips what does not fit, saying so in
  /// metrics.solver.status ("model_too_large"). The other policies' memory is linear in the
  /// scenario (their grids are bounded by Limits::kMaxGpuSteps) and they ignore it.
  int64_t memory_budget_bytes = kDefaultMemoryBudgetBytes;
  /// ordo's policies lend the GPUs idle at step 0 to the services as headroom against traffic
  /// above the forecast (policy/common/headroom.h). Off where a plan must hold exactly its
  /// planned counts (full mode's warm start, tests of the counts themselves).
  bool lend_idle_gpus = true;
};

/// An error naming the field (kInvalidInput) for options no policy accepts: an effort outside
/// [1, kMaxEffort]. Policies that use the field check it.
inline Result<void> CheckPolicyOptions(const PolicyOptions& options) {
  if (options.effort < 1 || options.effort > kMaxEffort) {
    // Appended, not `"..." + std::string`: GCC 12 -O3 reports a false -Wrestrict on that.
    std::string message = "must be an integer from 1 to ";
    message.append(std::to_string(kMaxEffort)).append(" (got ");
    message.append(std::to_string(options.effort)).append(")");
    return FailInput("effort", std::move(message));
  }
  return {};
}

/// A planner. Solve is called once per decision; it never prints, reads files or touches a global
/// clock beyond measuring itself. Implementations are not thread-safe: use one instance per thread.
class Policy {
 public:
  virtual ~Policy() = default;

  /// The registry name ("fifo", "ordo", ...).
  [[nodiscard]] virtual std::string_view name() const = 0;

  /// Plans `scenario`, which must have passed ValidateScenario. Returns a plan whose jobs and
  /// services are in scenario order, with metrics filled (ComputeMetrics) and solve_ms measured.
  /// Jobs that cannot be placed are data (start_step empty), not errors; an Error means the policy
  /// itself failed (a solver missing, say).
  [[nodiscard]] virtual Result<Plan> Solve(const Scenario& scenario,
                                           const PolicyOptions& options) = 0;
};

}  // namespace ordo
