// What fast mode's two preemption moves share (preemption_move.h): the blocks a job may use and
// whether a running job loses work when preempted at a step.
#pragma once

#include <vector>

#include "ordo/core/scenario.h"
#include "ordo/policy/baselines/preemption.h"

namespace ordo::policy::fast {

/// Every legal block of `gpus` GPUs that matches `req`, lowest first.
inline std::vector<int> Blocks(const Scenario& s, int gpus, const GpuRequirement& req) {
  std::vector<int> out;
  s.cluster.ForEachBlock(gpus, req, [&](int first) { out.push_back(first); });
  return out;
}

/// The work steps running job r loses when preempted at step q: its progress then less the
/// progress its last checkpoint saved.
inline int LostWorkSteps(const Job& r, int q) {
  const int progress = baselines::RunningWorkDoneBy(r, q);
  return progress - r.checkpoint->SavedProgress(progress);
}

/// Whether running job r, preempted at step q, loses no work: its progress then is a multiple of
/// its checkpoint interval.
inline bool NoWorkLostAt(const Job& r, int q) { return LostWorkSteps(r, q) == 0; }

}  // namespace ordo::policy::fast
