// Full mode's working form of a plan: where each job runs and how many GPUs each service holds in
// each node group at each step. Service GPUs are fungible inside a group, so ids are handed out
// only at the end (Realize), sticky between steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "ordo/core/metrics.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::policy::full {

/// A started job: which of its shapes, when, where.
struct Placement {
  int shape = 0;  // index into Job::shapes
  int start = 0;
  int first_gpu = 0;
  friend bool operator==(const Placement&, const Placement&) = default;
};

/// A checkpointed job giving its block back at `step` (spec: `preempt_step`), perhaps started
/// again on a block of its size (`resume`).
struct Preemption {
  int step = 0;
  std::optional<ResumePlacement> resume;
  friend bool operator==(const Preemption&, const Preemption&) = default;
};

struct Decisions {
  /// Indexed like Scenario::jobs. Running jobs are always nullopt (they hold their block until
  /// they end or are preempted).
  std::vector<std::optional<Placement>> jobs;
  /// Indexed like Scenario::jobs: the preemption of a running job, or of a started one
  /// (then `jobs[j]` is its first stay).
  std::vector<std::optional<Preemption>> preemptions;
  /// [service][group][step]: GPUs the service holds in that node group (0 for groups it does not
  /// match).
  std::vector<std::vector<std::vector<int>>> service_gpus;
};

/// Decisions with no job started and every service count 0.
Decisions EmptyDecisions(const Scenario& scenario);

/// Reads a legal plan back into decisions (shapes by their gpus and duration; services counted per
/// group). Jobs whose placement matches none of their shapes stay unstarted.
Decisions DecisionsFromPlan(const Scenario& scenario, const Plan& plan);

/// The planning objective of the decisions (batch rewards inside the horizon, running jobs
/// included, minus unmet penalties), as ComputeObjective would compute it on the realised plan.
double DecisionsObjective(const Scenario& scenario, const Decisions& decisions);

/// Reward of one job running `shape` from `start`: priority * gpus * sum over the steps it runs
/// inside the horizon of (1 - alpha t / T).
double PlacementReward(const Scenario& scenario, const Job& job, const Shape& shape, int start);

/// Value of the same (the spec's undecayed `value`: priority * gpus * steps inside the horizon),
/// what fast mode's value promise counts.
double PlacementValue(const Scenario& scenario, const Job& job, const Shape& shape, int start);

/// Job j's entry in the plan of these decisions (JobPlacement: start, block, shape, preemption).
/// Requires a running job or a placed one.
JobPlacement PlacementOf(const Scenario& scenario, const Decisions& decisions, int j);

/// Calls fn(first_gpu, from, to) for each stay of `p` (StaysOf: one, or two when it is preempted
/// and resumed), its steps clipped to the horizon; stays outside it are skipped.
template <typename Fn>
void ForEachStayInHorizon(const Scenario& scenario, const Job& job, const JobPlacement& p,
                          Fn&& fn) {
  const JobStays stays = StaysOf(job, p);
  const int steps = scenario.horizon_steps;
  for (int k = 0; k < stays.count; ++k) {
    const auto from = static_cast<int>(std::clamp<long long>(stays.stays[k].from, 0, steps));
    const auto to = static_cast<int>(std::clamp<long long>(stays.stays[k].to, 0, steps));
    if (from < to) fn(stays.stays[k].first_gpu, from, to);
  }
}

/// Reward and value of a job placed as `p` (any legal placement, preempted or not): its kept work
/// inside the horizon (StaysOf), as ComputeMetrics counts it.
double KeptReward(const Scenario& scenario, const Job& job, const JobPlacement& p);
double KeptValue(const Scenario& scenario, const Job& job, const JobPlacement& p);

/// Job j's reward under the decisions: its kept work (0 when not started).
double JobReward(const Scenario& scenario, const Decisions& decisions, int j);

/// Reward of the running jobs when they keep their blocks: a constant of every model that does not
/// decide them.
double RunningReward(const Scenario& scenario);
/// One running job's reward and value: its work from its restart steps left to its
/// Job::running_end_step(), inside the horizon.
double RunningJobReward(const Scenario& scenario, const Job& job);
double RunningJobValue(const Scenario& scenario, const Job& job);

/// GPU-steps (inside the horizon) held by batch work: running jobs, plus the placed jobs of
/// `decisions` unless `decisions` is null (with `decisions`, each job's stays: a preempted job
/// holds its first block until its preemption, then its resumed block). Jobs marked in
/// `skip_jobs` (running ones too) are left out. Indexed [gpu * T + step]; 1 = held.
std::vector<uint8_t> BatchOccupancy(const Scenario& scenario, const Decisions* decisions,
                                    const std::vector<char>* skip_jobs = nullptr);

/// The plan of the decisions, in scenario order, with concrete service GPU ids: at each step and
/// group a service first keeps the ids it held at the step before, then takes free ones from the
/// highest id down. Metrics are not filled. The decisions must fit (counts within the free GPUs).
Plan Realize(const Scenario& scenario, const Decisions& decisions, std::string_view policy_name);

}  // namespace ordo::policy::full
