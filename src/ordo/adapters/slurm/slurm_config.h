// The configuration of `ordo slurm --config FILE` (JSON or YAML, strict): the time grid and
// objective of the scenarios it builds, which partition it manages, and the real-time inference
// services whose capacity it keeps following their demand curves. docs/slurm.md describes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ordo/adapters/slurm/slurm_client.h"
#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
#include "ordo/io/tenancy_io.h"
#include "ordo/priority/planning_priority.h"

namespace ordo::slurm {

/// A service with a repeating demand profile: at Unix time T the current profile step is
/// floor((T - demand_start) / step) mod demand.size(); a scenario's demand[t] is the profile
/// `t` steps later. A 24-entry profile with 60-minute steps and demand_start 0 is a daily
/// profile by UTC hour.
struct ServiceSpec {
  Service service;  // `demand` holds the profile; current_gpus is read from the cluster
  int64_t demand_start = 0;
};

/// A Slurm account with a share of the cluster: its jobs' fair-share factor follows the GPUs its
/// running jobs held against that share (priority/planning_priority.h). Jobs of accounts not
/// listed have no fair-share factor (1).
struct SlurmTenant {
  std::string account;
  io::TenantShare share;
};

struct SlurmConfig {
  int step_minutes = 60;
  int horizon_steps = 24;
  Objective objective;
  std::string partition;  // only nodes of this partition (empty: every node)
  std::vector<ServiceSpec> services;
  double command_timeout_s = 30;
  double salloc_immediate_s = 10;  // salloc --immediate: how long a placeholder may wait
  RetryPolicy retry;
  /// How long ordo may be silent (no cycle enforced) before the jobs it keeps waiting go back to
  /// Slurm's own scheduling. Unset: ResolveSilence's default.
  std::optional<double> silence_s;
  std::vector<SlurmTenant> tenants;
  /// How waiting jobs' planning priorities are made: aging from their submit time, fair share by
  /// account, as in `ordo serve` (the config's `planning`, over the same defaults).
  priority::PlanningOptions planning = priority::OnlinePlanningOptions();
};

/// Without `silence_s`: twice the cycle period (`every_s`, or one step of the time grid when
/// ordo runs once per invocation), at least 10 minutes.
inline constexpr double kMinDefaultSilenceS = 600;

/// The silence in whole seconds (`silence_s`, rounded up; kMinDefaultSilenceS when unset).
int64_t SilenceSeconds(const SlurmConfig& config);

/// Fills in the default `silence_s` for a command that runs a cycle every `every_s` seconds
/// (nullopt: once per invocation) and checks it: a silence not longer than the cycle period would
/// hand jobs to Slurm between two healthy cycles. The error names `field` (the option or key the
/// value came from).
[[nodiscard]] Result<void> ResolveSilence(SlurmConfig& config, std::optional<double> every_s,
                                          const std::string& field);

/// Parses the configuration. Errors name the field (`services[1].demand[3]`). Unknown fields are
/// errors unless they start with `x-`.
[[nodiscard]] Result<SlurmConfig> ParseSlurmConfig(std::string_view text, bool yaml);
[[nodiscard]] Result<SlurmConfig> ReadSlurmConfigFile(const std::string& path);

/// The demand of `spec` for the `horizon_steps` steps starting at Unix time `now`.
std::vector<int> DemandWindow(const ServiceSpec& spec, int step_minutes, int horizon_steps,
                              int64_t now);

}  // namespace ordo::slurm
