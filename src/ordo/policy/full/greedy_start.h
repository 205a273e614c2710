// A simple greedy plan, full mode's fallback warm start beside fast mode's plan (the better of the
// two starts the search): services first as curves that cover demand and obey the churn limit,
// then jobs by priority, each at its earliest start on a free aligned block (fast mode's BlockGrid:
// buddy best fit), in the shape that earns the most. Cost O(G * T) for the services and the grid,
// then O(jobs * shapes * BlockGrid::FindEarliest); microseconds on small instances; with a deadline
// it stops placing jobs there (the jobs placed so far stay legal).
#pragma once

#include <atomic>
#include <chrono>

#include "ordo/core/scenario.h"
#include "ordo/policy/full/decisions.h"

namespace ordo::policy::full {

/// Legal decisions for a scenario that passed ValidateScenario. Past `deadline`, or once `stop`
/// is set, the jobs not yet placed stay unstarted.
Decisions GreedyDecisions(
    const Scenario& scenario,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max(),
    const std::atomic<bool>* stop = nullptr);

/// Per-service GPU counts per group and step that obey rules 2 and 4 and fit beside `blocked`
/// (GPU-steps held by batch work, [gpu * T + step]): every service's floor first, then, by
/// priority, as much of its demand curve as fits.
std::vector<std::vector<std::vector<int>>> GreedyServiceCounts(const Scenario& scenario,
                                                               const std::vector<uint8_t>& blocked);

}  // namespace ordo::policy::full
