// Idle GPUs lent to the real-time services at the committed step, as headroom against traffic
// above the forecast.
#pragma once

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::policy {

/// Gives the GPUs no job or service holds at step 0 to the services, highest priority first
/// (scenario order among equals), each only as many as it can give back in one step, so the next
/// plan loses nothing by the loan:
///  - with a churn limit c: up to c above its count at step 1 (and above current_gpus);
///  - without one: up to the largest one-step rise of its own demand curve (at least 1) above
///    its step-0 count — the surprise one step of its traffic is forecast to be able to bring;
///  - never above max_gpus, and only GPUs of groups it may use.
/// Only step 0 changes: it is the step a rolling planner commits, and traffic above the forecast
/// there is served by GPUs that would otherwise sit idle. Every rule of the plan still holds, the
/// objective and value cannot fall (a service's value counts min(allocated, demand)) and unmet
/// demand cannot rise. GPUs the service holds at step 1 are lent first, then GPUs free at
/// step 1, highest ids first (where services grow), so the next plan rarely moves them.
void LendIdleGpus(const Scenario& scenario, Plan& plan);

}  // namespace ordo::policy
