// Fast mode's preemption move (spec "Preemption: checkpoints and migration"): a waiting job that
// could start now on GPUs a running, checkpointed job of a lower priority class (core/scenario.h:
// 1-3, 4-7, 8-10, judged on Job::unscaled_priority) holds takes them, and the running job resumes
// later from its last checkpoint, where that pays; a job borrowing beyond its tenant's share
// (Job::borrowing) is likewise taken back for a waiting job that does not borrow and needs a block
// at least as wide as the borrower's; and a migration: any other running checkpointed job moves to
// another block at once so that a waiting job finds a whole block.
//
// Algorithm. On a finished plan, for each waiting job W the plan leaves unstarted or starts after
// it could (highest priority first, at most kMaxWaiting), each of W's shapes, each running job R
// with a checkpoint, a lower priority class (or borrowing) and no preemption yet, each aligned
// block B of W's shape that overlaps R's block in a group W may use, and two preempt steps q — the
// first step W may start there (its arrival, after R's start), and R's next checkpoint from then
// on, where no work is lost: when B is free over W's run from q apart from R (and W's own later
// run), R gives its block back at q, W starts on B at q, R resumes on the earliest, lowest block
// of its size free for its restart steps and unsaved work, and the jobs still unstarted start
// wherever they now fit (highest priority first, earliest start, lowest block). The other
// running checkpointed jobs are tried after them, as migrations only: a candidate counts when R
// resumes at q. Every candidate is judged by the spec's objective (ComputeMetrics: lost work and
// restart steps earn nothing, and the delay of R's remaining work costs its time decay), and the
// best that beats the plan and keeps the promises is taken; then again, up to kRounds times.
// Guarantees: the plan returned passes CheckPlan, has a strictly higher objective than `plan`,
// the same services (unmet demand unchanged) and keeps `promises`; the same input gives the same
// plan.
// Cost: O(jobs) and nothing else when no running job has a checkpoint; otherwise at most
// kRounds x kMaxCandidates evaluations of O(G x T + jobs x T x blocks) each.
//
//   8 GPUs, running r (8 GPUs, priority 1, 20 steps left, checkpoint every 2, restart 1),
//   waiting w (8 GPUs, priority 9, 4 steps) unstarted: r preempted at 0 (its last save at
//   progress 6), w runs 0-3, r resumes at 4 for 1 + its unsaved remainder.
#pragma once

#include <functional>
#include <optional>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/common/promises.h"

namespace ordo::policy {

/// True when some running job has a checkpoint: the only case where the move can do anything.
[[nodiscard]] bool AnyPreemptibleRunningJob(const Scenario& s);

/// The best plan the move reaches from `plan` (legal, for `s`), or empty when no candidate beats
/// it while keeping `promises`. Stops early (returning the best so far) when `out_of_time` says
/// so. `plan`'s metrics need not be filled; the result's are.
[[nodiscard]] std::optional<Plan> PreemptWherePays(const Scenario& s, const Plan& plan,
                                                   const Promises& promises,
                                                   const std::function<bool()>& out_of_time);

/// The service case: where the plan leaves a service's forecast demand unmet (its demand less its
/// `reserve`), a running checkpointed job that holds GPUs at the first such step (lowest priority
/// first, at most 16) gives them back — at that step, or at its last checkpoint before it, where
/// no work is lost — the services are planned again as curves (services first) on what the jobs
/// leave, and the job resumes on the earliest block the jobs and the services' counts leave free
/// for its resumed stay. The best candidate that raises the spec's objective on the forecast
/// demand (jobs at their unscaled priorities) by more than the work it throws away (the victim's
/// priority x GPUs x work steps lost), keeps `promises` and passes CheckPlan is returned; empty
/// when none does. Jobs other than the victim do not move.
[[nodiscard]] std::optional<Plan> PreemptForServices(const Scenario& s, const Plan& plan,
                                                     const Promises& promises,
                                                     const std::function<bool()>& out_of_time);

}  // namespace ordo::policy
