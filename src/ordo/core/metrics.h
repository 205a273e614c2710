// The spec's metrics, computed from a scenario and a plan, never by a planner itself.
#pragma once

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo {

/// The metrics of spec/formats-v1.md over steps 0..T-1 (solve_ms and solver are left as they are
/// in `plan.metrics`). Assumes a structurally sound plan (every job and service once, in any order).
Metrics ComputeMetrics(const Scenario& scenario, const Plan& plan);

/// The planning objective alone: batch rewards inside the horizon minus unmet penalties.
double ComputeObjective(const Scenario& scenario, const Plan& plan);

}  // namespace ordo
