// The explicit registry (as Kubernetes' NewInTreeRegistry): every in-tree policy is listed here by
// its spec name, in the order reports show them; nothing registers itself.
#include "ordo/policy/registry.h"

#include <utility>

#include "ordo/core/assert.h"

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

PolicyRegistry MakeInTreeRegistry() {
  PolicyRegistry registry;
  return registry;
}

}  // namespace ordo
