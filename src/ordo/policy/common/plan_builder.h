// Pieces every policy needs to turn decisions into a spec plan: an empty plan in scenario order,
// and the final step that fills metrics and timing.
#pragma once

#include <chrono>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::policy {

/// A running job's plan entry: where it runs, its single shape.
JobPlacement RunningJobEntry(const Job& job);

/// A plan with every job (unstarted, running jobs at their blocks) and every service (T empty
/// lists), in scenario order, named after the scenario and `policy_name`.
Plan MakeEmptyPlan(const Scenario& scenario, std::string_view policy_name);

/// Fills plan.metrics from the scenario (ComputeMetrics) and solve_ms from `started`.
void FinishPlan(const Scenario& scenario, std::chrono::steady_clock::time_point started,
                Plan& plan);

}  // namespace ordo::policy
