// The GPU ids of the services' counts (service_curves.h plans counts per group and step; a plan
// names GPUs): chosen last, once the batch blocks are placed, so that they move as little as
// possible between steps.
#pragma once

#include <vector>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/fast/service_curves.h"

namespace ordo::policy {

/// Turns counts into GPU ids once batch blocks are placed: `job_busy[step * G + gpu]` marks GPUs
/// held by jobs. A service keeps the ids it held at the step before while it still needs them
/// (shrinking gives back its highest ids), and takes new ones from the highest free id down, so ids
/// move as little as possible between steps. Requires counts that fit beside the jobs.
void AssignServiceGpus(const Scenario& scenario, const ServiceCounts& counts,
                       const std::vector<char>& job_busy, Plan& plan);

}  // namespace ordo::policy
