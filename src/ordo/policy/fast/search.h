// Fast mode's search, as phases over one solve's context (fast_policy.cc runs them in order):
//   batch_passes.h      greedy passes over the waiting jobs, and their schedule (seed orders,
//                       the time-stepped pass, seeded perturbations of the best order)
//   service_variants.h  how far the services' curves give way to batch work: each variant planned
//   local_moves.h       displacement and ruin-and-recreate around the jobs that lose most reward
//   neighbourhood_search.h  the anytime improvement loop: adaptive large neighbourhood search
//   do_no_harm.h        the selection that keeps fast mode's promises against the baselines
// This header holds what they share: the solve's context (read only; no phase keeps per-solve
// state anywhere else) and the shapes of a search's results.
#pragma once

#include <chrono>
#include <string_view>
#include <vector>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/fast/block_grid.h"
#include "ordo/policy/fast/service_curves.h"
#include "ordo/policy/policy.h"

namespace ordo::policy::fast {

using Clock = std::chrono::steady_clock;

/// The policy name fast mode's plans carry.
inline constexpr std::string_view kPolicyName = "ordo";

/// A waiting job's place in a pass: which of its shapes, on which block, from when.
struct Placement {
  int shape = -1;  // -1: not started
  int first_gpu = 0;
  int start_step = 0;
};

/// Which of a job's shapes a pass takes where several fit.
enum class ShapeRule { kMostReward, kEarliestFinish };

/// A pass's placements (by job index) and the batch reward they earn.
struct PassResult {
  double reward = -1;
  std::vector<Placement> placements;
};

/// One search of the batch work around one set of service counts, and its objective: the batch
/// reward of the waiting jobs minus the unmet penalties.
struct Outcome {
  double objective = 0;
  PassResult pass;
  ServiceCounts counts;
};

/// What every phase of one solve reads: the scenario and options, the deadline, the running jobs
/// pinned on a grid and the GPUs they leave per group and step, and the waiting jobs to place
/// (those arriving inside the horizon, in scenario order). Built once per solve, never changed.
struct SearchContext {
  SearchContext(const Scenario& scenario, const PolicyOptions& options, Clock::time_point deadline);

  const Scenario& scenario;
  const PolicyOptions& options;
  const Clock::time_point deadline;
  BlockGrid pinned;
  std::vector<std::vector<int>> free;  // [group][step]
  std::vector<int> candidates;

  /// Past the deadline, or asked to stop.
  [[nodiscard]] bool OutOfTime() const;
};

/// The GPUs `counts` gives service `service` at `step`, over all its groups.
int HeldAt(const ServiceCounts& counts, size_t service, int step);

/// Unmet real-time GPU-steps of service counts, and their penalty in the objective.
long long UnmetSteps(const Scenario& scenario, const ServiceCounts& counts);
double UnmetPenalty(const Scenario& scenario, const ServiceCounts& counts);

/// Per service, group and step: how many GPUs `plan` gives the service.
ServiceCounts CountsOf(const Scenario& scenario, const Plan& plan);

/// The counts reserved on `grid`, per group and step.
void ReserveCounts(const Scenario& scenario, const ServiceCounts& counts, BlockGrid& grid);

/// Job `j` at `p`: busy on `grid`, its GPUs taken from `left` (per group and step).
void Take(const Scenario& scenario, int j, const Placement& p, BlockGrid& grid,
          std::vector<std::vector<int>>& left);

/// Per group and step: what `free` leaves after the jobs `pass` starts.
std::vector<std::vector<int>> LeftBy(const Scenario& scenario,
                                     const std::vector<std::vector<int>>& free,
                                     const PassResult& pass);

/// A plan from batch placements (by job index; running jobs stay where they run) and service
/// counts, the services' GPU ids chosen to move as little as possible.
Plan Assemble(const Scenario& scenario, const std::vector<Placement>& placements,
              const ServiceCounts& counts);

}  // namespace ordo::policy::fast
