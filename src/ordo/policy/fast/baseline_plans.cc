#include "ordo/policy/fast/baseline_plans.h"

#include <string>
#include <utility>

#include "ordo/policy/baselines/baselines.h"

namespace ordo::policy {

BaselineFactories InTreeBaselineFactories() {
  return BaselineFactories{MakeFifoPolicy, MakeFifoBackfillPolicy, MakePriorityBackfillPolicy,
                           MakeReactivePolicy};
}

Result<BaselinePlans> PlanBaselines(const Scenario& scenario, const PolicyOptions& options,
                                    const BaselineFactories& factories) {
  BaselinePlans plans;
  const std::pair<const BaselineFactories::Factory*, Plan*> each[] = {
      {&factories.fifo, &plans.fifo},
      {&factories.fifo_backfill, &plans.fifo_backfill},
      {&factories.priority_backfill, &plans.priority_backfill},
      {&factories.reactive, &plans.reactive}};
  for (const auto& [factory, out] : each) {
    std::unique_ptr<Policy> policy = *factory ? (*factory)() : nullptr;
    if (!policy) {
      return Fail(Error{ErrorCode::kInternal, "policy",
                        "fast mode could not make a baseline to keep its promises against"});
    }
    Result<Plan> plan = policy->Solve(scenario, options);
    if (!plan) {
      Error error = plan.error();
      error.message = "fast mode's baseline " + std::string(policy->name()) +
                      " failed, so its promises cannot be kept: " + error.message;
      return Fail(std::move(error));
    }
    *out = std::move(*plan);
  }
  return plans;
}

}  // namespace ordo::policy
