// The one redaction step between the service's state and what a principal reads. Every view a
// tenant gets (a job, the job list, the plan and its x-explain, history, the committed step, the
// dashboard, a what-if, error messages) is built through a Redactor: another tenant's job appears
// as "another tenant's job", with no id, name or priority; explanations are re-rendered for the
// reader, in absolute steps. Scrub() is the last pass over a finished view: any `id` or
// `blocking_id` naming another tenant's job becomes null, whatever view put it there.
//
// Job ids are per tenant (state.h): views are built from qualified ids (`tenant/id`), and this is
// the one place that turns them into what the reader sees — a tenant its own ids as it submitted
// them, the admin the qualified ids. Whose job an id names is read from the id itself, so a job
// the state no longer holds (a what-if's) is judged the same way.
//
//   Redactor redact(who);
//   JobExplanation e = redact.Explanation(*why, plan.policy, plan_base_step);
//   JobExplanation e = redact.Explanation(*why, plan.policy, plan_base_step);
//   redact.Scrub(view);                          // before the view leaves the engine
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ordo/core/plan.h"
#include "ordo/service/config.h"
#include "ordo/service/state.h"

namespace ordo::service {

/// How another tenant's job is written wherever a name would go.
inline constexpr std::string_view kHiddenJob = "another tenant's job";

class Redactor {
 public:
  explicit Redactor(Principal who) : who_(std::move(who)) {}

  /// True unless `id` (qualified) names a job of another tenant; ids without a tenant (services')
  /// are visible.
  [[nodiscard]] bool Visible(std::string_view id) const;

  /// `id` as the reader sees it: the admin the qualified id, a tenant its own job's id as
  /// submitted, a service's id as it is; empty for another tenant's job.
  [[nodiscard]] std::string Shown(std::string_view id) const;

  /// The explanation as this reader may see it, with every step shifted by `base_step` (a plan's
  /// step 0 is absolute step `base_step`): every id is as Shown() gives it, hidden holders lose
  /// their id and priority, a hidden blocking_id is cleared, and the message is rendered again
  /// from the result.
  [[nodiscard]] JobExplanation Explanation(const JobExplanation& explanation,
                                           std::string_view policy, int64_t base_step) const;

  /// The last pass over a finished view: every `id` or `blocking_id` field that names another
  /// tenant's job becomes null, every other one becomes Shown()'s.
  void Scrub(nlohmann::json& view) const;

 private:
  Principal who_;
};

}  // namespace ordo::service
