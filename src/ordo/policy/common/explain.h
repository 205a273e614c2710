// Why a job does not start now: for every pending job of a plan, its planned start and, for every
// step from its earliest possible start to its planned start, a reason that an independent check
// can confirm from the scenario and the plan alone.
//
// A job "could use" a block of one of its shapes (the first shape only under the baselines, which
// never consider the others) in a group matching its requirement. Starting at step t on block B
// needs B's GPUs free over [t, t + duration) inside the horizon, the job's own placement not
// counting. At each step t of the wait:
//   - some candidate block is free at t: the policy's own logic is named — fifo's head of line (the
//     first job of its queue not started by t), a baseline's static peak reservation closing the
//     free blocks, or else "the planner did not start it there" (not_chosen);
//   - no block is free: the holders are named — for every candidate block the first job or service
//     that takes one of its GPUs during the run; all services at their peak is service_peak, other
//     services blocked_by_service; under ordo, planned jobs of at least its priority low_value;
//     otherwise blocked_by_job.
// Consecutive steps with the same reason and holders form one span. A job that can never run says
// why instead: no group matches it, no block of its size exists, or the services' floors close
// every block at every step (service_floor).
//
//   one group of 8 GPUs, horizon 10; job a (8 GPUs, steps 0-5) planned at 0, b (8 GPUs) at 6
//   ExplainPlan -> b: planned_start 6, spans [{0, 6, blocked_by_job, holders [a (0-6)]}]
//
// Cost: O(G x T) for the occupancy, then per waiting job O(wait x blocks x block size).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::policy {

/// A service is at or near its peak at a step when its demand there is at least this share of its
/// highest demand over the horizon.
inline constexpr double kNearPeakShare = 0.9;

/// How much ExplainPlan may do: past `deadline`, or once the explanations would name more than
/// `max_holders` holders in all (summed over their spans: what an answer carrying them costs to
/// write), the jobs not yet explained are left out.
struct ExplainBudget {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  int64_t max_holders = std::numeric_limits<int64_t>::max();
};

/// One explanation per job that is not running and does not start at step 0, in scenario order.
/// The wording follows `plan.policy` (fifo, fifo-backfill, priority-backfill, reactive, ordo,
/// ordo-full). `plan` must be legal. Call it on demand, not on every plan. Out of `budget`, the
/// jobs not yet explained are left out (a bounded caller compares the count with the waiting
/// jobs); a job is explained whole or not at all.
std::vector<JobExplanation> ExplainPlan(const Scenario& scenario, const Plan& plan,
                                        const ExplainBudget& budget = {});

/// The display name of a holder ("job \"a\"", "service \"chat\""), or nullopt for a job the reader
/// may not see: it is then written as "another tenant's job", with no id or priority.
using HolderNamer = std::function<std::optional<std::string>(const WaitHolder&)>;

/// The explanation's message, rendered from its structured fields (ExplainPlan fills `message`
/// with every holder named). The service renders it again per reader with a redacting namer.
std::string ExplanationMessage(const JobExplanation& explanation, std::string_view policy,
                               const HolderNamer& name);

/// The default namer: every holder by its id.
std::optional<std::string> NameEveryHolder(const WaitHolder& holder);

/// Why `job` can never start on `scenario`'s cluster beside its services, whatever else runs: no
/// group matches its requirement (kGpuType), no aligned block of any of its shapes exists
/// (kNoBlockOfSize), or the services' floors (min_gpus), which hold at every step, leave no block
/// of any shape free (kServiceFloor). Nullopt when some block can be free at some step.
/// `first_shape_only`: consider only the first shape (as the baselines do).
struct NeverRuns {
  WaitReason reason = WaitReason::kNone;
  std::string message;
};
std::optional<NeverRuns> WhyNeverRuns(const Scenario& scenario, const Job& job,
                                      bool first_shape_only = false);

/// A submission-time check: an input Error naming `gpus` (one shape) or `shapes` when the job can
/// never run on the scenario's cluster beside its services (WhyNeverRuns).
Result<void> CheckCanEverRun(const Scenario& scenario, const Job& job);

/// True for the policies that only ever use a job's first shape (the baselines).
bool UsesFirstShapeOnly(std::string_view policy);

/// "blocked_by_job", "service_peak", ... — the wire name of a reason.
std::string_view WaitReasonName(WaitReason reason);

}  // namespace ordo::policy
