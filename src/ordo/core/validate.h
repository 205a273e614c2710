// Scenario-level checks: the rules of spec/formats-v1.md that a reader checking one field at a time
// cannot see (duplicate ids, running blocks, demand length, whether any legal plan exists).
#pragma once

#include <string>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"

namespace ordo {

/// Checks a scenario built by a reader or by code. On success the scenario admits a legal plan
/// (batch jobs are optional; the services' floors fit beside the running jobs at every step).
/// The error names the field as a path (`jobs[3].running.first_gpu`). Calls scenario.cluster
/// accessors, so Cluster::Index() must have been called.
[[nodiscard]] Result<void> ValidateScenario(const Scenario& scenario);

/// Checks a job's checkpoint (`every_steps` 1..1000000, `restart_steps` 0..1000000); `where`
/// names it in the error (`jobs[2].checkpoint`).
[[nodiscard]] Result<void> ValidateCheckpoint(const Checkpoint& checkpoint,
                                              const std::string& where);

/// The lowest GPU count service `s` can hold at each step: min_gpus, or what the churn limit allows
/// on the way down from current_gpus. Every legal plan gives the service at least this, and this
/// curve itself obeys the churn limit.
std::vector<int> ServiceFloor(const Scenario& scenario, int service);

/// The highest GPU count the churn limit allows at each step on the way up from current_gpus,
/// capped at max_gpus.
std::vector<int> ServiceCeiling(const Scenario& scenario, int service);

}  // namespace ordo
