// Fast mode's do-no-harm selection: the operator's guarantee, on instances of up to 5,000 jobs
// (where the baselines cost little next to a pass). Fast mode's plan has at least fifo's value
// (undecayed, the spec's `value`) and no more unmet real-time GPU-steps than reactive's
// autoscaler. The planning objective decays over the horizon and may value batch work above unmet
// demand, so the plan with the best objective can trade late GPU-steps for earlier high-priority
// work, or real-time demand for batch work; this selection forbids those two trades and keeps the
// best objective among the plans that make neither:
//  1. fast mode's plan, the four baselines' plans and the preempting peers' (`peers`);
//  2. only when the best of those by objective breaks a promise: the other service variants'
//     outcomes; every plan so far re-filled (its batch work kept, the services re-planned as
//     curves on what it leaves, the jobs it left unstarted placed by a greedy pass); fast mode's
//     passes around services capped (BudgetCounts) or priced (PricedBudgetCounts) as far as
//     reactive's unmet demand allows, each re-filled too; and its passes around the services
//     exactly as reactive and as fifo run them (their unmet demand is then theirs, by
//     construction).
// Every plan built here is checked with CheckPlan. When no candidate keeps both promises, the one
// with the least unmet demand among those that keep fifo's value is returned.
#pragma once

#include <vector>

#include "ordo/policy/fast/baseline_plans.h"
#include "ordo/policy/fast/search.h"

namespace ordo::policy::fast {

/// `outcomes`: every service variant's search, the chosen one's last (its plan is `own`).
Plan DoNoHarm(const SearchContext& ctx, const std::vector<Outcome>& outcomes,
              BaselinePlans baselines, std::vector<Plan> peers, Plan own);

}  // namespace ordo::policy::fast
