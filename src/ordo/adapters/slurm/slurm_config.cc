#include "ordo/adapters/slurm/slurm_config.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "ordo/io/document.h"
#include "ordo/io/json_fields.h"
#include "ordo/io/tenancy_io.h"

namespace ordo::slurm {
namespace {

using nlohmann::json;

// A silence below a few seconds cannot outlast one cycle's own commands.
constexpr double kMinSilenceS = 10;
constexpr double kMaxSilenceS = 7 * 24 * 3600;

Result<void> CheckKeys(const json& obj, const std::string& where,
                       const std::set<std::string>& known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (known.contains(it.key()) || it.key().rfind("x-", 0) == 0) continue;
    return FailInput(where.empty() ? it.key() : where + "." + it.key(), "unknown field");
  }
  return {};
}

std::string Path(const std::string& where, const char* key) {
  return where.empty() ? std::string(key) : where + "." + key;
}

Result<int64_t> Int(const json& obj, const std::string& where, const char* key, int64_t lo,
                    int64_t hi, int64_t fallback) {
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_number_integer()) return FailInput(Path(where, key), "must be an integer");
  const int64_t v = it->is_number_unsigned()
                        ? static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), INT64_MAX))
                        : it->get<int64_t>();
  if (v < lo || v > hi) {
    return FailInput(Path(where, key), "must be in [" + std::to_string(lo) + ", " +
                                           std::to_string(hi) + "] (got " + std::to_string(v) +
                                           ")");
  }
  return v;
}

Result<double> Number(const json& obj, const std::string& where, const char* key, double lo,
                      double hi, double fallback) {
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_number()) return FailInput(Path(where, key), "must be a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    return FailInput(Path(where, key),
                     "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

Result<std::string> String(const json& obj, const std::string& where, const char* key,
                           bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return FailInput(Path(where, key), "missing");
    return std::string();
  }
  if (!it->is_string()) return FailInput(Path(where, key), "must be a string");
  return it->get<std::string>();
}

Result<ServiceSpec> ParseService(const json& s, const std::string& where) {
  if (!s.is_object()) return FailInput(where, "must be an object");
  if (auto k = CheckKeys(s, where,
                         {"id", "priority", "min_gpus", "max_gpus", "max_change_per_step",
                          "gpu_type", "min_gpu_memory_gb", "demand", "demand_start"});
      !k) {
    return Fail(k.error());
  }
  ServiceSpec spec;
  Service& svc = spec.service;
  auto id = String(s, where, "id", true);
  if (!id) return Fail(id.error());
  if (id->empty() || id->size() > 64) return FailInput(where + ".id", "must be 1 to 64 characters");
  for (char c : *id) {
    // The id becomes part of a Slurm job name (ordo-svc-ID).
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return FailInput(where + ".id", "may hold only letters, digits, '-', '_' and '.'");
    }
  }
  svc.id = *id;
  auto priority = Number(s, where, "priority", 0, Limits::kMaxPriority, -1);
  if (!priority) return Fail(priority.error());
  if (*priority <= 0) return FailInput(where + ".priority", "missing or not > 0");
  svc.priority = *priority;
  auto min_gpus = Int(s, where, "min_gpus", 0, Limits::kMaxGpus, 0);
  auto max_gpus = Int(s, where, "max_gpus", 0, Limits::kMaxGpus, -1);
  auto churn = Int(s, where, "max_change_per_step", 1, Limits::kMaxGpus, -1);
  auto start = Int(s, where, "demand_start", -(int64_t{1} << 40), int64_t{1} << 40, 0);
  for (auto* r : {&min_gpus, &max_gpus, &churn, &start}) {
    if (!*r) return Fail(r->error());
  }
  svc.min_gpus = static_cast<int>(*min_gpus);
  svc.max_gpus = static_cast<int>(*max_gpus);  // -1: the cluster size, filled per cycle
  if (*churn > 0) svc.max_change_per_step = static_cast<int>(*churn);
  spec.demand_start = *start;
  auto type = String(s, where, "gpu_type", false);
  if (!type) return Fail(type.error());
  if (!type->empty()) svc.requirement.gpu_type = *type;
  auto memory = Number(s, where, "min_gpu_memory_gb", 0, 1e6, -1);
  if (!memory) return Fail(memory.error());
  if (*memory >= 0) svc.requirement.min_gpu_memory_gb = *memory;
  auto demand = s.find("demand");
  if (demand == s.end()) return FailInput(where + ".demand", "missing");
  if (!demand->is_array() || demand->empty())
    return FailInput(where + ".demand", "must be a non-empty list");
  if (demand->size() > static_cast<size_t>(Limits::kMaxHorizonSteps)) {
    return FailInput(where + ".demand",
                     "longer than " + std::to_string(Limits::kMaxHorizonSteps) + " steps");
  }
  for (size_t i = 0; i < demand->size(); ++i) {
    const json& d = (*demand)[i];
    if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > Limits::kMaxGpus) {
      return FailInput(where + ".demand[" + std::to_string(i) + "]",
                       "must be a non-negative integer");
    }
    svc.demand.push_back(static_cast<int>(d.get<int64_t>()));
  }
  if (svc.max_gpus >= 0 && svc.min_gpus > svc.max_gpus) {
    return FailInput(where + ".min_gpus", "is above max_gpus");
  }
  return spec;
}

// `tenants`: Slurm accounts with a share of the cluster, as the service's tenants (io::ReadShare).
// Percentages are checked against each other here; GPUs against the cluster at each cycle.
Result<std::vector<SlurmTenant>> ParseTenants(const json& root) {
  std::vector<SlurmTenant> tenants;
  auto list = root.find("tenants");
  if (list == root.end()) return tenants;
  if (!list->is_array()) return FailInput("tenants", "must be a list");
  double percent = 0;
  for (size_t k = 0; k < list->size(); ++k) {
    const std::string where = "tenants[" + std::to_string(k) + "]";
    ORDO_ASSIGN_OR_RETURN(io::internal::ObjectReader t,
                          io::internal::ObjectReader::Make((*list)[k], where, "a tenant"));
    ORDO_RETURN_IF_ERROR(t.AllowOnly({"account", "share"}));
    SlurmTenant tenant;
    ORDO_ASSIGN_OR_RETURN(tenant.account, t.String("account", Limits::kMaxIdLength, false));
    for (const SlurmTenant& other : tenants) {
      if (other.account == tenant.account) return FailInput(t.Path("account"), "duplicate account");
    }
    ORDO_ASSIGN_OR_RETURN(std::optional<io::TenantShare> share, io::ReadShare(t));
    if (share) tenant.share = *share;
    if (tenant.share.percent) percent += tenant.share.amount;
    if (percent > 100 + 1e-9) {
      return FailInput(t.Path("share"), "the tenants' shares sum to " + std::to_string(percent) +
                                            "%, above the cluster");
    }
    tenants.push_back(std::move(tenant));
  }
  return tenants;
}

}  // namespace

Result<SlurmConfig> ParseSlurmConfig(std::string_view text, bool yaml) {
  auto doc = io::ParseDocument(text, yaml);
  if (!doc) return Fail(doc.error());
  const json& root = *doc;
  if (!root.is_object()) return FailInput("", "the configuration must be an object");
  if (auto k = CheckKeys(
          root, "",
          {"step_minutes", "horizon_steps", "objective", "partition", "services",
           "command_timeout_s", "salloc_immediate_s", "retry", "silence_s", "tenants", "planning"});
      !k) {
    return Fail(k.error());
  }
  SlurmConfig config;
  auto step = Int(root, "", "step_minutes", 1, int64_t{7} * 24 * 60, 60);
  auto horizon = Int(root, "", "horizon_steps", 1, Limits::kMaxHorizonSteps, 24);
  if (!step) return Fail(step.error());
  if (!horizon) return Fail(horizon.error());
  config.step_minutes = static_cast<int>(*step);
  config.horizon_steps = static_cast<int>(*horizon);
  if (auto obj = root.find("objective"); obj != root.end()) {
    if (!obj->is_object()) return FailInput("objective", "must be an object");
    if (auto k = CheckKeys(*obj, "objective", {"time_decay", "unmet_penalty_multiplier"}); !k)
      return Fail(k.error());
    auto alpha = Number(*obj, "objective", "time_decay", 0, 1, 0.5);
    auto m = Number(*obj, "objective", "unmet_penalty_multiplier", 0, 1e6, 8);
    if (!alpha) return Fail(alpha.error());
    if (!m) return Fail(m.error());
    config.objective.time_decay = *alpha;
    config.objective.unmet_penalty_multiplier = *m;
  }
  auto partition = String(root, "", "partition", false);
  if (!partition) return Fail(partition.error());
  config.partition = *partition;
  auto timeout = Number(root, "", "command_timeout_s", 0.1, 3600, 30);
  auto immediate = Number(root, "", "salloc_immediate_s", 1, 3600, 10);
  if (!timeout) return Fail(timeout.error());
  if (!immediate) return Fail(immediate.error());
  config.command_timeout_s = *timeout;
  config.salloc_immediate_s = std::ceil(*immediate);
  if (root.contains("silence_s")) {
    auto silence = Number(root, "", "silence_s", kMinSilenceS, kMaxSilenceS, 0);
    if (!silence) return Fail(silence.error());
    config.silence_s = *silence;
  }
  if (auto retry = root.find("retry"); retry != root.end()) {
    if (!retry->is_object()) return FailInput("retry", "must be an object");
    if (auto k = CheckKeys(*retry, "retry", {"attempts", "initial_backoff_s", "max_backoff_s"}); !k)
      return Fail(k.error());
    auto attempts = Int(*retry, "retry", "attempts", 1, 100, 5);
    auto initial = Number(*retry, "retry", "initial_backoff_s", 0, 600, 0.5);
    auto max = Number(*retry, "retry", "max_backoff_s", 0, 3600, 8);
    if (!attempts) return Fail(attempts.error());
    if (!initial) return Fail(initial.error());
    if (!max) return Fail(max.error());
    config.retry = RetryPolicy{static_cast<int>(*attempts), *initial, *max};
  }
  if (auto services = root.find("services"); services != root.end()) {
    if (!services->is_array()) return FailInput("services", "must be a list");
    std::set<std::string> ids;
    for (size_t i = 0; i < services->size(); ++i) {
      const std::string where = "services[" + std::to_string(i) + "]";
      auto spec = ParseService((*services)[i], where);
      if (!spec) return Fail(spec.error());
      if (!ids.insert(spec->service.id).second) return FailInput(where + ".id", "duplicate id");
      config.services.push_back(std::move(*spec));
    }
  }
  ORDO_ASSIGN_OR_RETURN(config.tenants, ParseTenants(root));
  ORDO_ASSIGN_OR_RETURN(io::internal::ObjectReader top,
                        io::internal::ObjectReader::Make(root, "", "the configuration"));
  ORDO_ASSIGN_OR_RETURN(config.planning,
                        io::ReadPlanningOptions(top, priority::OnlinePlanningOptions()));
  if (config.planning.ramp_reserve_hours > 0) {
    // The reserve is taken from a service's observed demand, which `ordo slurm` does not have
    // (its services' curves are the config's).
    return FailInput("planning.ramp_reserve_hours",
                     "ordo slurm observes no service traffic to take a ramp reserve from; leave it "
                     "out (ordo serve and the simulator have it)");
  }
  return config;
}

int64_t SilenceSeconds(const SlurmConfig& config) {
  return static_cast<int64_t>(std::ceil(config.silence_s.value_or(kMinDefaultSilenceS)));
}

Result<void> ResolveSilence(SlurmConfig& config, std::optional<double> every_s,
                            const std::string& field) {
  const double period = every_s.value_or(config.step_minutes * 60.0);
  if (!config.silence_s) {
    config.silence_s = std::max(kMinDefaultSilenceS, 2 * period);
    return {};
  }
  if (*config.silence_s < kMinSilenceS || *config.silence_s > kMaxSilenceS) {
    return FailInput(field, "must be between " + std::to_string(static_cast<int>(kMinSilenceS)) +
                                " s and 7 days");
  }
  if (every_s && *config.silence_s <= *every_s) {
    return FailInput(field, "must be longer than --every (" +
                                std::to_string(static_cast<int64_t>(*every_s)) +
                                " s): waiting jobs would go to Slurm between two cycles");
  }
  return {};
}

Result<SlurmConfig> ReadSlurmConfigFile(const std::string& path) {
  auto text = io::ReadFileText(path);
  if (!text) return Fail(text.error());
  return ParseSlurmConfig(*text, io::LooksLikeYaml(path, *text));
}

std::vector<int> DemandWindow(const ServiceSpec& spec, int step_minutes, int horizon_steps,
                              int64_t now) {
  const std::vector<int>& profile = spec.service.demand;
  std::vector<int> window(static_cast<size_t>(horizon_steps), 0);
  if (profile.empty()) return window;
  const int64_t step_s = int64_t{step_minutes} * 60;
  const int64_t elapsed = now - spec.demand_start;
  // Floor division, so times before demand_start count backwards through the profile.
  int64_t current = elapsed / step_s - ((elapsed % step_s != 0 && elapsed < 0) ? 1 : 0);
  const auto n = static_cast<int64_t>(profile.size());
  current = ((current % n) + n) % n;
  for (int t = 0; t < horizon_steps; ++t)
    window[t] = profile[static_cast<size_t>((current + t) % n)];
  return window;
}

}  // namespace ordo::slurm
