// The configuration of `ordo serve` (spec/formats-v1.md, "Service"): the cluster, the time grid and
// the objective as in a scenario, the tenants with their bearer tokens and the admin token.
//
//   {"step_minutes": 60, "horizon_steps": 24,
//    "cluster": {"node_groups": [{"name": "h100", "nodes": 8, "gpus_per_node": 8}]},
//    "tenants": [{"name": "vision", "token": "...", "share": "50%", "max_priority": 8}],
//    "admin_token": "..."}
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
#include "ordo/priority/planning_priority.h"

namespace ordo::service {

/// A tenant, with the world format's `share` and `max_priority` (spec/formats-v1.md, "World").
struct Tenant {
  std::string name;
  std::string token;
  /// Kueue's nominal quota: GPUs, or a percent of the cluster when `share_is_percent` (JSON
  /// `"25%"`). 0: no share (its fair-share factor is 1). When GPUs are contended a tenant below its
  /// share is planned before one above it; idle GPUs still go to whoever has work.
  double share = 0;
  bool share_is_percent = false;
  /// The highest priority a job of this tenant may ask for (1..10); no cap when absent.
  std::optional<double> max_priority;

  /// The share as a fraction of a cluster of `total_gpus` GPUs.
  [[nodiscard]] double ShareFraction(int total_gpus) const {
    if (share_is_percent) return share / 100.0;
    return total_gpus > 0 ? share / total_gpus : 0;
  }
};

/// The principal a request acts for: a tenant, or the admin (who sees and may change everything).
struct Principal {
  std::string name;  // the tenant's name; "admin" for the admin
  bool admin = false;
};

inline constexpr std::string_view kAdminName = "admin";

/// The highest `max_priority` a config may give (priorities run from 1 to 10 by convention).
inline constexpr double kMaxTenantPriorityCap = 10;

struct ServiceConfig {
  /// The cluster, time grid and objective; no jobs or services. Validated and indexed.
  Scenario base;
  /// The config's `cluster` object as given: requests are read by wrapping them into a scenario
  /// with this cluster, so a job is checked by the same reader as a scenario file's.
  nlohmann::json cluster_json;
  std::vector<Tenant> tenants;
  std::string admin_token;
  /// How waiting jobs' planning priorities are made (priority/planning_priority.h): the config's
  /// optional `planning` object over priority::OnlinePlanningOptions().
  priority::PlanningOptions planning = priority::OnlinePlanningOptions();

  /// The tenant named `name`; null for the admin or an unknown name.
  [[nodiscard]] const Tenant* FindTenant(std::string_view name) const;

  /// The principal whose token this is, compared in constant time against every token (so the
  /// time taken says nothing about how much of a token matched). Empty when none matches.
  [[nodiscard]] std::optional<Principal> Authenticate(std::string_view token) const;
};

/// Parses a config (JSON, or YAML when `yaml`). Unknown fields are errors unless they start with
/// `x-`. Errors name the field: `tenants[1].token`, `cluster.node_groups[0].nodes`. Rules beyond
/// the scenario's: tenant names are 1..64 of [A-Za-z0-9._:-], unique, not "admin"; tokens
/// are 16..256 printable ASCII characters without spaces, all distinct (the admin's too); a
/// share is >= 0 GPUs or a percentage, and together the shares fit the cluster
/// (`tenants[2].share`); max_priority is 1..10 (`tenants[0].max_priority`); `planning` as
/// priority::ValidatePlanningOptions, its fields named under `planning.`.
[[nodiscard]] Result<ServiceConfig> ParseServiceConfig(std::string_view text, bool yaml);
[[nodiscard]] Result<ServiceConfig> ReadServiceConfigFile(const std::string& path);

/// True for 1..max_length characters of [A-Za-z0-9._:-]: ids that need no escaping in a URL path.
bool IsSafeId(std::string_view id, size_t max_length);

}  // namespace ordo::service
