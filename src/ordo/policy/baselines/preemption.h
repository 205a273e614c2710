// What a preemption does to one job under spec/formats-v1.md ("Preemption: checkpoints and
// migration"), for the preempting baselines: when a job may give its block back, and how long its
// resumed stay holds the new block (restart steps, then the work not saved by a checkpoint).
//
//   job: 6 steps, checkpoint every 2, restart 1; fresh, started at step 0
//   CanPreemptAt(job, p, 3) -> true; ResumeSteps(job, p, 3) -> 1 + 6 - 2 = 5
#pragma once

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::policy::baselines {

/// The step (exclusive) a started job's first stay ends when left alone: a running job's
/// running_end_step(), any other's start + duration.
[[nodiscard]] int FirstStayEnd(const Job& job, const JobPlacement& p);

/// Whether a started job, not preempted yet, may give its block back at step `q`: it has a
/// checkpoint and start < q < its first stay's end, q >= 0.
[[nodiscard]] bool CanPreemptAt(const Job& job, const JobPlacement& p, int q);

/// The work steps a running job has done by step `q` when left alone: its progress at step 0, then
/// one a step once its restart steps left are spent. Requires `running`.
[[nodiscard]] int RunningWorkDoneBy(const Job& job, int q);

/// The steps the resumed stay of a job preempted at `q` holds its block: restart_steps, then
/// duration_steps minus the progress saved at q. Requires CanPreemptAt(job, p, q).
[[nodiscard]] int ResumeSteps(const Job& job, const JobPlacement& p, int q);

}  // namespace ordo::policy::baselines
