// The one redaction step between the service's state and what a principal reads. Every view a
// tenant gets (a job, the job list, the plan and its x-explain, history, the committed step, the
// dashboard, a what-if, error messages) is built through a Redactor: another tenant's job appears
// as "another tenant's job", with no id, name or priority; explanations are re-rendered for the
// reader, in absolute steps. Scrub() is the last pass over a finished view: any `id` or
// `blocking_id` naming another tenant's job becomes null, whatever view put it there.
//
//   Redactor redact(who, state);                 // under the state's shared lock
//   JobExplanation e = redact.Explanation(*why, plan.policy, plan_base_step);
//   redact.Scrub(view);                          // before the view leaves the engine
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "ordo/core/plan.h"
#include "ordo/service/config.h"
#include "ordo/service/state.h"

namespace ordo::service {

/// How another tenant's job is written wherever a name would go.
inline constexpr std::string_view kHiddenJob = "another tenant's job";

class Redactor {
 public:
  /// `state` must outlive the redactor (readers hold the state's shared lock meanwhile).
  Redactor(const Principal& who, const State& state) : who_(who), state_(&state) {}

  /// Ids the reader owns that the state does not know (a what-if's added jobs).
  void AddOwn(const std::string& id) { own_extra_.insert(id); }

  /// True unless `id` names a job of another tenant (services and unknown ids are visible).
  [[nodiscard]] bool Visible(std::string_view id) const;

  /// The explanation as this reader may see it, with every step shifted by `base_step` (a plan's
  /// step 0 is absolute step `base_step`): hidden holders lose their id and priority, a hidden
  /// blocking_id is cleared, and the message is rendered again from the result.
  [[nodiscard]] JobExplanation Explanation(const JobExplanation& explanation,
                                           std::string_view policy, int64_t base_step) const;

  /// The last pass over a finished view: every `id` or `blocking_id` field that names another
  /// tenant's job becomes null.
  void Scrub(nlohmann::json& view) const;

 private:
  Principal who_;
  const State* state_;
  std::unordered_set<std::string> own_extra_;
};

}  // namespace ordo::service
