// How far the services' curves give way to batch work in fast mode: the variants one solve tries,
// each planned as services (some perhaps at their floors only), then a schedule of batch passes
// around them, then the services left for after on what the batch work leaves. Each variant is
// judged by the planning objective, never by a rule of thumb (but one that keeps reactive's unmet
// budget first: BetterOutcome).
#pragma once

#include <optional>
#include <vector>

#include "ordo/policy/fast/batch_passes.h"
#include "ordo/policy/fast/search.h"

namespace ordo::policy::fast {

/// How much the services give way to batch work; the first variant is "services first".
struct ServiceVariant {
  std::vector<char> after;  // services planned only after the batch work (floors before)
  CurveOptions curves;      // how the services are planned before it (floor_only = after)
  // The services' GPUs reserved in the cluster as a whole (BlockGrid::ReserveAnywhere), their
  // groups chosen step by step after the batch work, on what it leaves.
  bool anywhere = false;
  // The services' counts as given, not planned again (the first variant's, the priced variant's,
  // reactive's).
  std::optional<ServiceCounts> counts;
  // One of the two variants added for reactive's unmet budget (priced to it, or reactive's own
  // counts): its trial is not taken from the pass budget.
  bool spends_budget = false;
};

/// The variants: services first; services capped at the same quantile (50%, 75%, 90%) of their
/// own demand, which leaves a steady block of capacity to long rigid jobs, as a peak reservation
/// would, without its idle troughs; when some service's worth per GPU-step (M x priority, the
/// penalty avoided) is below a waiting job's priority, those services after the batch work; where
/// the first variant leaves less demand unmet than reactive (`unmet_limit`), services priced to
/// spend that budget (PricedBudgetCounts), and where it leaves some unmet, reactive's own counts
/// (they leave exactly the budget unmet, where reactive's autoscaler put it); services packed away
/// from the groups type-bound jobs need; with several services, the churn-limited ones' curves
/// first where their demand exceeds the GPUs free of running jobs; and, with several groups, the
/// services that can use every group reserved in the cluster as a whole, their groups chosen after
/// the batch work. `reactive`: reactive's plan, null where the baselines were not planned.
std::vector<ServiceVariant> ServiceVariants(const SearchContext& ctx, long long unmet_limit,
                                            const Plan* reactive);

/// One variant's search with `passes` batch passes.
Outcome PlanVariant(const SearchContext& ctx, const BatchPasses& batch,
                    const ServiceVariant& variant, int passes);

/// The variant choice: an outcome that keeps reactive's unmet budget beats one that does not (the
/// do-no-harm selection would refuse the latter), then the higher objective.
bool BetterOutcome(const Scenario& scenario, const Outcome& a, const Outcome& b,
                   long long unmet_limit);

/// Services first, each capped (a steady most-GPUs, as the quantile variants) as low as the budget
/// of `unmet` real-time GPU-steps allows, the services whose unmet demand costs least (M x
/// priority) capped first: the most room for batch work that keeps reactive's promise. Empty when
/// even uncapped curves leave more unmet. Cost: O(log demand) curve plans per service.
std::optional<ServiceCounts> BudgetCounts(const SearchContext& ctx, long long unmet);

/// BudgetCounts on the capacity `free[group][step]` (what the jobs leave, say); `plans`, where
/// given, receives how many curve plans it took.
std::optional<ServiceCounts> BudgetCountsOn(const Scenario& scenario,
                                            const std::vector<std::vector<int>>& free,
                                            long long unmet, int* plans = nullptr);

/// Per step: what a GPU earns a job of priority `lambda` there, at steps where some waiting job has
/// arrived (0 before any has): CurveOptions::price for services that give way to such a job.
std::vector<double> Prices(const Scenario& scenario, double lambda);

/// Per service: what a unit of its demand served is worth to priced curves (CurveOptions::worth):
/// the penalty it avoids, M x priority, or 1 for every service where M is 0.
std::vector<double> ServedWorth(const Scenario& scenario);

/// Priced services (PlanServiceCounts' `price`): a GPU-step at t costs what a job of priority
/// lambda earns there, so each service serves its demand where that is worth more (M x priority,
/// or 1 for every service where M is 0 and only the budget gives served demand a worth) and gives
/// way where batch work is; with a time decay, services serve late peaks and leave early steps to
/// batch work. Lambda is the highest whose curves leave at most `unmet` real-time GPU-steps
/// (bisection; unmet demand grows with the price). Empty when no price does.
std::optional<ServiceCounts> PricedBudgetCounts(const SearchContext& ctx, long long unmet);

}  // namespace ordo::policy::fast
