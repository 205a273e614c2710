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

struct PolicyOptions {
  /// Wall time the policy may spend. Fast mode's pass schedule is fixed by the instance's size and
  /// ends far inside this default at every benchmarked size (0.3 s at 32,768 GPUs), so the limit
  /// is a safety cut and plans stay deterministic; full mode uses all of its limit. A policy that
  /// cannot stop early (the baselines) ignores it.
  double time_limit_s = 2.0;
  /// Seed for any randomised search. The same seed and scenario give the same plan.
  uint64_t seed = 1;
  /// When set and true, the policy returns its best plan so far as soon as it can.
  const std::atomic<bool>* stop = nullptr;
  /// Fill Plan::explanations (why each job does not start at step 0).
  bool explain = false;
};

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
