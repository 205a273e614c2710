// What fast mode's two preemption moves share (preemption_move.h): the blocks a job may use and
// whether a running job loses work when preempted at a step.
#pragma once

#include <algorithm>
#include <vector>

#include "ordo/core/scenario.h"

namespace ordo::policy::fast {

/// Every legal block of `gpus` GPUs that matches `req`, lowest first.
inline std::vector<int> Blocks(const Scenario& s, int gpus, const GpuRequirement& req) {
  std::vector<int> out;
  s.cluster.ForEachBlock(gpus, req, [&](int first) { out.push_back(first); });
  return out;
}

/// Whether running job r, preempted at step q, loses no work: its progress then is a multiple of
/// its checkpoint interval (restart steps still left count as no progress).
inline bool NoWorkLostAt(const Job& r, int q) {
  const int left = r.running->restart_steps_left.value_or(0);
  return (r.running_progress_steps() + std::max(0, q - left)) % r.checkpoint->every_steps == 0;
}

}  // namespace ordo::policy::fast
