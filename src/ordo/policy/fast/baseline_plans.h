// The four baselines' plans fast mode's do-no-harm selection keeps its promises against, by name:
// its plan's value is at least fifo's, its unmet real-time demand at most reactive's.
#pragma once

#include <functional>
#include <memory>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/policy.h"

namespace ordo::policy {

struct BaselinePlans {
  Plan fifo;
  Plan fifo_backfill;
  Plan priority_backfill;
  Plan reactive;
};

/// Makes each baseline; the in-tree policies by default. Tests replace one to see a failure.
struct BaselineFactories {
  using Factory = std::function<std::unique_ptr<Policy>()>;
  Factory fifo, fifo_backfill, priority_backfill, reactive;
};
BaselineFactories InTreeBaselineFactories();

/// Plans the four baselines with `options`. A baseline that fails is an error naming it (its own
/// code and message): the promises are measured against all four, so they never lapse in silence.
[[nodiscard]] Result<BaselinePlans> PlanBaselines(const Scenario& scenario,
                                                  const PolicyOptions& options,
                                                  const BaselineFactories& factories);

}  // namespace ordo::policy
