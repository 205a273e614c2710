// An explicit registry of policies by their spec names; no static self-registration.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/policy/policy.h"

namespace ordo {

class PolicyRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Policy>()>;

  /// Adds a policy; a name registered twice is a bug.
  void Register(const std::string& name, Factory factory);

  /// A new instance of the named policy, or kNotFound naming the known ones.
  [[nodiscard]] Result<std::unique_ptr<Policy>> Create(const std::string& name) const;

  /// Registered names in registration order.
  [[nodiscard]] const std::vector<std::string>& names() const { return names_; }

 private:
  std::map<std::string, Factory> factories_;
  std::vector<std::string> names_;
};

/// Every in-tree policy: fifo, fifo-backfill, priority-backfill, reactive, priority-preempt,
/// reactive-preempt, ordo, ordo-full.
PolicyRegistry MakeInTreeRegistry();

/// The time limit a command gives a policy when the user names none: full mode searches for
/// kFullModeDefaultTimeLimitS, everything else gets PolicyOptions' small default (fast mode's
/// improvement budget; the baselines ignore it).
inline constexpr double kFullModeDefaultTimeLimitS = 10.0;
double DefaultTimeLimitSeconds(std::string_view policy_name);

}  // namespace ordo
