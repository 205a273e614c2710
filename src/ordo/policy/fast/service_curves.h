// Real-time services as curves: how many GPUs each service holds at each step, in which group, and
// then which GPU ids.
#pragma once

#include <vector>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::policy {

/// counts[service][group][step]: GPUs a service holds in a group at a step.
using ServiceCounts = std::vector<std::vector<std::vector<int>>>;

/// Plans the services' GPU counts before any batch work, on the GPUs the running jobs leave:
///  - floors first (min_gpus, or the churn limit's way down from current_gpus), the most
///    constrained services first, so every legal floor is kept;
///  - then services by priority (highest first, ties in file order) get the smallest curve that
///    covers their demand wherever capacity allows and obeys max_change_per_step: a backward pass
///    ramps up ahead of a peak, a forward pass ramps down no faster than the limit. Never more than
///    demand needs (beyond what the churn limit forces). Shortfall falls on the lowest priority.
/// A service prefers the group it held at the step before, then the group with most room.
/// `free[group][step]` is the capacity left by running jobs. Cost O(S x T x groups).
ServiceCounts PlanServiceCounts(const Scenario& scenario,
                                const std::vector<std::vector<int>>& free);

/// Turns counts into GPU ids once batch blocks are placed: `job_busy[step * G + gpu]` marks GPUs
/// held by jobs. A service keeps the ids it held at the step before while it still needs them
/// (shrinking gives back its highest ids), and takes new ones from the highest free id down, so ids
/// move as little as possible between steps. Requires counts that fit beside the jobs.
void AssignServiceGpus(const Scenario& scenario, const ServiceCounts& counts,
                       const std::vector<char>& job_busy, Plan& plan);

}  // namespace ordo::policy
