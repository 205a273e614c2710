// The explicit registry (as Kubernetes' NewInTreeRegistry): every in-tree policy is listed here by
// its spec name, in the order reports show them; nothing registers itself.
#include "ordo/policy/registry.h"

#include <utility>

#include "ordo/core/assert.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/fast/fast_policy.h"
#include "ordo/policy/full/full_policy.h"

namespace ordo {

void PolicyRegistry::Register(const std::string& name, Factory factory) {
  ORDO_ASSERT(!name.empty() && factory);
  const bool inserted = factories_.emplace(name, std::move(factory)).second;
  ORDO_ASSERT(inserted);
  if (inserted) names_.push_back(name);
}

Result<std::unique_ptr<Policy>> PolicyRegistry::Create(const std::string& name) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    std::string known;
    for (const std::string& n : names_) known += (known.empty() ? "" : ", ") + n;
    return Fail(Error{ErrorCode::kNotFound, "policy",
                      "unknown policy \"" + name + "\" (known: " + known + ")"});
  }
  std::unique_ptr<Policy> policy = it->second();
  if (!policy) {
    return Fail(Error{ErrorCode::kInternal, "policy", "the factory of \"" + name + "\" failed"});
  }
  return policy;
}

double DefaultTimeLimitSeconds(std::string_view policy_name) {
  return policy_name == "ordo-full" ? kFullModeDefaultTimeLimitS : PolicyOptions{}.time_limit_s;
}

PolicyRegistry MakeInTreeRegistry() {
  PolicyRegistry registry;
  registry.Register("fifo", policy::MakeFifoPolicy);
  registry.Register("fifo-backfill", policy::MakeFifoBackfillPolicy);
  registry.Register("priority-backfill", policy::MakePriorityBackfillPolicy);
  registry.Register("reactive", policy::MakeReactivePolicy);
  registry.Register("priority-preempt", policy::MakePriorityPreemptPolicy);
  registry.Register("reactive-preempt", policy::MakeReactivePreemptPolicy);
  registry.Register("ordo", policy::MakeFastPolicy);
  registry.Register("ordo-full", policy::MakeFullPolicy);
  return registry;
}

}  // namespace ordo
