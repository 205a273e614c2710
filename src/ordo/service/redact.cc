#include "ordo/service/redact.h"

#include "ordo/policy/common/explain.h"

namespace ordo::service {

bool Redactor::Visible(std::string_view id) const {
  if (who_.admin) return true;
  const std::string_view tenant = JobIdTenant(id);
  return tenant.empty() || tenant == who_.name;
}

std::string Redactor::Shown(std::string_view id) const {
  if (who_.admin) return std::string(id);
  if (!Visible(id)) return {};
  return std::string(LocalJobId(id));
}

JobExplanation Redactor::Explanation(const JobExplanation& explanation, std::string_view policy,
                                     int64_t base_step) const {
  JobExplanation out = explanation;
  const int base = static_cast<int>(base_step);
  if (out.planned_start) *out.planned_start += base;
  out.id = Shown(out.id);
  if (!out.blocking_id.empty()) out.blocking_id = Shown(out.blocking_id);
  for (WaitSpan& span : out.spans) {
    span.from_step += base;
    span.to_step += base;
    for (WaitHolder& holder : span.holders) {
      if (!holder.service && !(holder.step < 0 && holder.end_step < 0)) {
        holder.step += base;
        holder.end_step += base;
      } else if (holder.service) {
        holder.step += base;
      }
      if (!holder.service) {
        if (!Visible(holder.id)) holder.priority = 0;
        holder.id = Shown(holder.id);
      }
    }
  }
  if (out.spans.empty()) {
    // Messages without spans name no other job; only their steps change.
    if (out.reason == WaitReason::kNotArrived && explanation.planned_start) {
      out.message = "arrives at step " + std::to_string(*out.planned_start) +
                    "; planned start: step " + std::to_string(*out.planned_start);
    }
    return out;
  }
  out.message = policy::ExplanationMessage(
      out, policy, [](const WaitHolder& holder) -> std::optional<std::string> {
        if (holder.id.empty()) return std::nullopt;
        return "\"" + holder.id + "\"";
      });
  return out;
}

void Redactor::Scrub(nlohmann::json& view) const {
  if (who_.admin) return;
  if (view.is_object()) {
    for (auto it = view.begin(); it != view.end(); ++it) {
      // Only fields that carry ids: a job named "pending" must not blank every state field.
      if ((it.key() == "id" || it.key() == "blocking_id") && it->is_string()) {
        const auto& id = it->get_ref<const std::string&>();
        if (Visible(id)) {
          *it = Shown(id);
        } else {
          *it = nullptr;
        }
      } else {
        Scrub(*it);
      }
    }
  } else if (view.is_array()) {
    for (auto& item : view) Scrub(item);
  }
}

}  // namespace ordo::service
