// The configuration of `ordo serve` (spec/formats-v1.md, "Service"): the cluster, the time grid and
// the objective as in a scenario, the tenants with their bearer tokens and the admin token.
//
//   {"step_minutes": 60, "horizon_steps": 24,
//    "cluster": {"node_groups": [{"name": "h100", "nodes": 8, "gpus_per_node": 8}]},
//    "tenants": [{"name": "vision", "token": "..."}], "admin_token": "..."}
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"

namespace ordo::service {

struct Tenant {
  std::string name;
  std::string token;
};

/// The principal a request acts for: a tenant, or the admin (who sees and may change everything).
struct Principal {
  std::string name;  // the tenant's name; "admin" for the admin
  bool admin = false;
};

inline constexpr std::string_view kAdminName = "admin";

struct ServiceConfig {
  /// The cluster, time grid and objective; no jobs or services. Validated and indexed.
  Scenario base;
  /// The config's `cluster` object as given: requests are read by wrapping them into a scenario
  /// with this cluster, so a job is checked by the same reader as a scenario file's.
  nlohmann::json cluster_json;
  std::vector<Tenant> tenants;
  std::string admin_token;

  /// The principal whose token this is, compared in constant time against every token (so the
  /// time taken says nothing about how much of a token matched). Empty when none matches.
  [[nodiscard]] std::optional<Principal> Authenticate(std::string_view token) const;
};

/// Parses a config (JSON, or YAML when `yaml`). Unknown fields are errors unless they start with
/// `x-`. Errors name the field: `tenants[1].token`, `cluster.node_groups[0].nodes`. Rules beyond
/// the scenario's: tenant names are 1..64 of [A-Za-z0-9._:-], unique, not "admin"; tokens
/// are 16..256 printable ASCII characters without spaces, all distinct (the admin's too).
[[nodiscard]] Result<ServiceConfig> ParseServiceConfig(std::string_view text, bool yaml);
[[nodiscard]] Result<ServiceConfig> ReadServiceConfigFile(const std::string& path);

/// True for 1..max_length characters of [A-Za-z0-9._:-]: ids that need no escaping in a URL path.
bool IsSafeId(std::string_view id, size_t max_length);

}  // namespace ordo::service
