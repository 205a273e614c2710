#include "ordo/io/tenancy_io.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace ordo::io {

using internal::Json;
using internal::ObjectReader;

Result<std::optional<TenantShare>> ReadShare(const ObjectReader& obj) {
  const Json* value = obj.Find("share");
  if (value == nullptr) return std::optional<TenantShare>();
  TenantShare share;
  if (value->is_string()) {
    const auto& text = value->get_ref<const std::string&>();
    char* end = nullptr;
    const double percent = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end == nullptr || std::string_view(end) != "%" || !std::isfinite(percent)) {
      return FailInput(obj.Path("share"),
                       R"(must be a number of GPUs or a percentage such as "25%" (got ")" +
                           text.substr(0, 40) + "\")");
    }
    share.amount = percent;
    share.percent = true;
  } else {
    ORDO_ASSIGN_OR_RETURN(share.amount, obj.Number("share", -1e9, 1e9));
  }
  if (share.amount < 0) {
    return FailInput(obj.Path("share"), "must not be negative (got " +
                                            std::to_string(share.amount) +
                                            (share.percent ? "%" : "") + ")");
  }
  if (share.percent && share.amount > 100) {
    return FailInput(obj.Path("share"), "a percentage must be at most 100%");
  }
  return std::optional<TenantShare>(share);
}

Result<priority::PlanningOptions> ReadPlanningOptions(const ObjectReader& top,
                                                      const priority::PlanningOptions& defaults) {
  priority::PlanningOptions o = defaults;
  const Json* planning = top.Find("planning");
  if (planning == nullptr) return o;
  ORDO_ASSIGN_OR_RETURN(
      ObjectReader p, ObjectReader::Make(*planning, top.Path("planning"), "the planning options"));
  ORDO_RETURN_IF_ERROR(p.AllowOnly({"aging", "fair_share", "wait_bound_hours", "bound_priority",
                                    "size_exponent", "ramp_reserve_hours", "borrowing_factor"}));
  auto number = [](const ObjectReader& obj, std::string_view key, double& target) -> Result<void> {
    ORDO_ASSIGN_OR_RETURN(std::optional<double> value, obj.OptionalNumber(key, -1e9, 1e9));
    if (value) target = *value;
    return {};
  };
  if (const Json* aging = p.Find("aging")) {
    ORDO_ASSIGN_OR_RETURN(ObjectReader a,
                          ObjectReader::Make(*aging, p.Path("aging"), "the aging options"));
    ORDO_RETURN_IF_ERROR(a.AllowOnly({"rate_per_hour", "cap"}));
    ORDO_RETURN_IF_ERROR(number(a, "rate_per_hour", o.aging.rate_per_hour));
    ORDO_RETURN_IF_ERROR(number(a, "cap", o.aging.cap));
  }
  if (const Json* fair = p.Find("fair_share")) {
    ORDO_ASSIGN_OR_RETURN(
        ObjectReader f, ObjectReader::Make(*fair, p.Path("fair_share"), "the fair-share options"));
    ORDO_RETURN_IF_ERROR(f.AllowOnly({"half_life_hours", "max_exponent", "weight"}));
    ORDO_RETURN_IF_ERROR(number(f, "half_life_hours", o.fair_share.half_life_hours));
    ORDO_RETURN_IF_ERROR(number(f, "max_exponent", o.fair_share.max_exponent));
    ORDO_RETURN_IF_ERROR(number(f, "weight", o.fair_share.weight));
  }
  ORDO_RETURN_IF_ERROR(number(p, "wait_bound_hours", o.wait_bound_hours));
  ORDO_RETURN_IF_ERROR(number(p, "bound_priority", o.bound_priority));
  ORDO_RETURN_IF_ERROR(number(p, "size_exponent", o.size_exponent));
  ORDO_RETURN_IF_ERROR(number(p, "ramp_reserve_hours", o.ramp_reserve_hours));
  ORDO_RETURN_IF_ERROR(number(p, "borrowing_factor", o.borrowing_factor));
  if (auto ok = priority::ValidatePlanningOptions(o); !ok) {
    Error error = ok.error();
    error.field = p.Path(error.field);
    return Fail(std::move(error));
  }
  return o;
}

}  // namespace ordo::io
