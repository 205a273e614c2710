// What the axes of a GPU x time chart show, computed once for every page that draws one (the
// report's Gantt chart, the simulator's HTML, the dashboard): the nodes along the GPU axis, with
// their names and GPU ranges, and a tick interval along the time axis that falls on whole minutes,
// hours or days.
//
//   for (const NodeSpan& n : NodeSpans(cluster)) DrawBoundary(n.first_gpu, n.name);
//   const int every = TickEvery(horizon_steps, step_minutes, 10);  // 60-minute steps: 12 -> 2
//   Label(t, "step " + std::to_string(t) + " · " + DurationLabel(t * step_minutes));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ordo/core/scenario.h"

namespace ordo {

/// One node: GPUs [first_gpu, first_gpu + gpus), as the spec numbers them.
struct NodeSpan {
  std::string name;  // "<group name>-<n>", n from 0 within the group ("h100-3")
  int group = 0;     // index in cluster.groups
  int node = 0;      // index within the group
  int first_gpu = 0;
  int gpus = 0;
};

/// Every node of `cluster`, in GPU order. A group without a name is called by its GPU type.
std::vector<NodeSpan> NodeSpans(const Cluster& cluster);

/// Steps between two time ticks so that `span_steps` gets at most `max_ticks` of them, the
/// interval being a round duration (1, 2, 5, 10, 15, 30 minutes; 1, 2, 3, 4, 6, 8, 12 hours;
/// 1, 2, 7, 14, 28 days) that is a whole number of steps; beyond those, a whole number of steps.
/// Always at least 1.
int TickEvery(int64_t span_steps, int step_minutes, int max_ticks);

/// A duration in minutes as "45m", "3h", "1d", "1d 6h" or "2h 30m".
std::string DurationLabel(int64_t minutes);

}  // namespace ordo
