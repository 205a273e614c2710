#include "ordo/policy/baselines/preemption.h"

#include <algorithm>

#include "ordo/core/assert.h"

namespace ordo::policy::baselines {

int FirstStayEnd(const Job& job, const JobPlacement& p) {
  return job.running ? job.running_end_step() : p.end_step();
}

bool CanPreemptAt(const Job& job, const JobPlacement& p, int q) {
  return job.checkpoint && p.started() && !p.preempt_step && q >= 0 && *p.start_step < q &&
         q < FirstStayEnd(job, p);
}

int RunningWorkDoneBy(const Job& job, int q) {
  // A running job spends its restart steps left from step 0 first.
  return job.running_progress_steps() +
         std::max(0, q - job.running->restart_steps_left.value_or(0));
}

int ResumeSteps(const Job& job, const JobPlacement& p, int q) {
  ORDO_ASSERT(CanPreemptAt(job, p, q));
  const int done = job.running ? RunningWorkDoneBy(job, q) : q - *p.start_step;
  const int saved = job.checkpoint->SavedProgress(std::min(done, p.duration_steps));
  return job.checkpoint->ResumedStaySteps(p.duration_steps, saved);
}

}  // namespace ordo::policy::baselines
