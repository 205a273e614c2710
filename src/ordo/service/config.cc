#include "ordo/service/config.h"

#include <cmath>
#include <cstdlib>
#include <set>

#include "ordo/io/document.h"
#include "ordo/io/json_fields.h"
#include "ordo/io/scenario_io.h"

namespace ordo::service {
namespace {

using io::internal::IndexPath;
using io::internal::Json;
using io::internal::ObjectReader;

constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenLength = 256;
constexpr size_t kMaxTenantName = 64;
constexpr size_t kMaxTenants = 10'000;

Result<std::string> ReadToken(const ObjectReader& obj, std::string_view key) {
  auto token = obj.String(key, kMaxTokenLength, false);
  if (!token) return Fail(token.error());
  if (token->size() < kMinTokenLength) {
    return FailInput(obj.Path(key), "must be at least " + std::to_string(kMinTokenLength) +
                                        " characters (got " + std::to_string(token->size()) + ")");
  }
  for (const char c : *token) {
    if (c <= ' ' || c > '~') {
      return FailInput(obj.Path(key),
                       "must be printable ASCII without spaces (it travels in an HTTP header)");
    }
  }
  return token;
}

// The scenario part of the config, read by the scenario reader itself so its rules and messages
// are the scenario's.
Result<Scenario> ReadBase(const Json& root) {
  Json doc = Json::object();
  doc["version"] = 1;
  for (const char* key : {"version", "name", "description", "step_minutes", "horizon_steps",
                          "cluster", "objective"}) {
    if (auto it = root.find(key); it != root.end()) doc[key] = *it;
  }
  return io::ParseScenario(doc.dump(), false);
}

// `share`: a number of GPUs or a percentage ("25%"), as in a world's tenants.
Result<void> ReadShare(const ObjectReader& t, Tenant& tenant) {
  const Json* share = t.Find("share");
  if (share == nullptr) return {};
  if (share->is_string()) {
    const auto& text = share->get_ref<const std::string&>();
    char* end = nullptr;
    const double percent = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end == nullptr || std::string_view(end) != "%" || !std::isfinite(percent)) {
      return FailInput(t.Path("share"),
                       "must be a number of GPUs or a percentage such as \"25%\" "
                       "(got \"" +
                           text.substr(0, 40) + "\")");
    }
    tenant.share = percent;
    tenant.share_is_percent = true;
  } else {
    auto gpus = t.Number("share", -1e9, 1e9);
    if (!gpus) return Fail(gpus.error());
    tenant.share = *gpus;
  }
  if (tenant.share < 0) {
    return FailInput(t.Path("share"), "must not be negative (got " + std::to_string(tenant.share) +
                                          (tenant.share_is_percent ? "%" : "") + ")");
  }
  if (tenant.share_is_percent && tenant.share > 100) {
    return FailInput(t.Path("share"), "a percentage must be at most 100%");
  }
  return {};
}

// The optional `planning` object: planning_priority.h's options, defaults for what is absent.
Result<priority::PlanningOptions> ReadPlanning(const ObjectReader& top) {
  priority::PlanningOptions o = ServicePlanningDefaults();
  const Json* planning = top.Find("planning");
  if (planning == nullptr) return o;
  auto p = ObjectReader::Make(*planning, "planning", "the planning options");
  if (!p) return Fail(p.error());
  ORDO_RETURN_IF_ERROR(
      p->AllowOnly({"aging", "fair_share", "wait_bound_hours", "bound_priority", "size_exponent"}));
  auto number = [](const ObjectReader& obj, std::string_view key, double& target) -> Result<void> {
    auto value = obj.OptionalNumber(key, -1e9, 1e9);
    if (!value) return Fail(value.error());
    if (*value) target = **value;
    return {};
  };
  if (const Json* aging = p->Find("aging")) {
    auto a = ObjectReader::Make(*aging, "planning.aging", "the aging options");
    if (!a) return Fail(a.error());
    ORDO_RETURN_IF_ERROR(a->AllowOnly({"rate_per_hour", "cap"}));
    ORDO_RETURN_IF_ERROR(number(*a, "rate_per_hour", o.aging.rate_per_hour));
    ORDO_RETURN_IF_ERROR(number(*a, "cap", o.aging.cap));
  }
  if (const Json* fair = p->Find("fair_share")) {
    auto f = ObjectReader::Make(*fair, "planning.fair_share", "the fair-share options");
    if (!f) return Fail(f.error());
    ORDO_RETURN_IF_ERROR(f->AllowOnly({"half_life_hours", "max_exponent", "weight"}));
    ORDO_RETURN_IF_ERROR(number(*f, "half_life_hours", o.fair_share.half_life_hours));
    ORDO_RETURN_IF_ERROR(number(*f, "max_exponent", o.fair_share.max_exponent));
    ORDO_RETURN_IF_ERROR(number(*f, "weight", o.fair_share.weight));
  }
  ORDO_RETURN_IF_ERROR(number(*p, "wait_bound_hours", o.wait_bound_hours));
  ORDO_RETURN_IF_ERROR(number(*p, "bound_priority", o.bound_priority));
  ORDO_RETURN_IF_ERROR(number(*p, "size_exponent", o.size_exponent));
  if (auto ok = priority::ValidatePlanningOptions(o); !ok) {
    Error error = ok.error();
    error.field = "planning." + error.field;
    return Fail(std::move(error));
  }
  return o;
}

}  // namespace

priority::PlanningOptions ServicePlanningDefaults() {
  priority::PlanningOptions o = priority::DefaultPlanningOptions();
  o.size_exponent = 0;
  return o;
}

const Tenant* ServiceConfig::FindTenant(std::string_view name) const {
  for (const Tenant& tenant : tenants) {
    if (tenant.name == name) return &tenant;
  }
  return nullptr;
}

bool IsSafeId(std::string_view id, size_t max_length) {
  if (id.empty() || id.size() > max_length) return false;
  for (const char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == ':';
    if (!ok) return false;
  }
  return true;
}

std::optional<Principal> ServiceConfig::Authenticate(std::string_view token) const {
  // Every token is compared in full, whatever matched before, so timing reveals nothing.
  auto same = [](std::string_view a, std::string_view b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (size_t i = 0; i < b.size(); ++i) {
      diff |= static_cast<unsigned char>(b[i] ^ (i < a.size() ? a[i] : ~b[i]));
    }
    return diff == 0;
  };
  std::optional<Principal> found;
  if (same(token, admin_token)) found = Principal{std::string(kAdminName), true};
  for (const Tenant& tenant : tenants) {
    if (same(token, tenant.token)) found = Principal{tenant.name, false};
  }
  return found;
}

Result<ServiceConfig> ParseServiceConfig(std::string_view text, bool yaml) {
  try {
    auto document = io::ParseDocument(text, yaml);
    if (!document) return Fail(document.error());
    auto top = ObjectReader::Make(*document, "", "a service config");
    if (!top) return Fail(top.error());
    ORDO_RETURN_IF_ERROR(
        top->AllowOnly({"version", "name", "description", "step_minutes", "horizon_steps",
                        "cluster", "objective", "tenants", "admin_token", "planning"}));
    ServiceConfig config;
    ORDO_ASSIGN_OR_RETURN(config.base, ReadBase(*document));
    config.cluster_json = document->at("cluster");

    ORDO_ASSIGN_OR_RETURN(config.admin_token, ReadToken(*top, "admin_token"));
    const Json* tenants = nullptr;
    ORDO_ASSIGN_OR_RETURN(tenants, top->List("tenants", kMaxTenants));
    std::set<std::string> names;
    std::set<std::string> tokens = {config.admin_token};
    const int total_gpus = config.base.cluster.total_gpus();
    double shares_gpus = 0;
    for (size_t k = 0; k < tenants->size(); ++k) {
      auto t = ObjectReader::Make((*tenants)[k], IndexPath("tenants", k), "a tenant");
      if (!t) return Fail(t.error());
      ORDO_RETURN_IF_ERROR(t->AllowOnly({"name", "token", "share", "max_priority"}));
      Tenant tenant;
      ORDO_ASSIGN_OR_RETURN(tenant.name, t->String("name", kMaxTenantName, false));
      if (!IsSafeId(tenant.name, kMaxTenantName)) {
        return FailInput(t->Path("name"), "must be letters, digits, '.', '_', '-' or ':'");
      }
      if (tenant.name == kAdminName) {
        return FailInput(t->Path("name"), "\"admin\" is the admin token's principal");
      }
      if (!names.insert(tenant.name).second) {
        return FailInput(t->Path("name"), "\"" + tenant.name + "\" is listed twice");
      }
      ORDO_ASSIGN_OR_RETURN(tenant.token, ReadToken(*t, "token"));
      if (!tokens.insert(tenant.token).second) {
        return FailInput(t->Path("token"), "is also another tenant's or the admin's token");
      }
      ORDO_RETURN_IF_ERROR(ReadShare(*t, tenant));
      // Shares are nominal quotas: together they may not promise more than the cluster.
      shares_gpus += tenant.ShareFraction(total_gpus) * total_gpus;
      if (shares_gpus > total_gpus + 1e-9) {
        return FailInput(t->Path("share"),
                         "the tenants' shares sum to " + std::to_string(shares_gpus) +
                             " GPUs, more than the cluster's " + std::to_string(total_gpus));
      }
      ORDO_ASSIGN_OR_RETURN(tenant.max_priority, t->OptionalNumber("max_priority", -1e9, 1e9));
      if (tenant.max_priority &&
          (*tenant.max_priority < 1 || *tenant.max_priority > kMaxTenantPriorityCap)) {
        return FailInput(t->Path("max_priority"), "must be a number from 1 to 10");
      }
      config.tenants.push_back(std::move(tenant));
    }
    ORDO_ASSIGN_OR_RETURN(config.planning, ReadPlanning(*top));
    return config;
  } catch (const std::exception& ex) {
    return Fail(Error{ErrorCode::kInternal, "", std::string("config reader: ") + ex.what()});
  }
}

Result<ServiceConfig> ReadServiceConfigFile(const std::string& path) {
  auto text = io::ReadFileText(path);
  if (!text) return Fail(text.error());
  return ParseServiceConfig(*text, io::LooksLikeYaml(path, *text));
}

}  // namespace ordo::service
