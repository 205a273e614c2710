// One reconciliation cycle of `ordo slurm`: read Slurm (squeue --json, sinfo --json), build the
// scenario, give each waiting job its planning priority (aging from its submit time, its
// account's fair share: priority/planning_priority.h, as in the simulator and `ordo serve`), plan
// with a policy from the registry, check the plan (CheckPlan: an illegal plan is never enforced),
// decide and run the commands. Idempotent: running it twice in a row changes nothing the second
// time unless Slurm changed in between.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ordo/adapters/slurm/slurm_client.h"
#include "ordo/adapters/slurm/slurm_config.h"
#include "ordo/adapters/slurm/slurm_enforce.h"
#include "ordo/adapters/slurm/slurm_mapping.h"
#include "ordo/core/plan.h"
#include "ordo/priority/planning_priority.h"

namespace ordo::slurm {

struct CycleOptions {
  std::string policy = "ordo";
  double time_limit_s = 0.05;
  bool dry_run = false;
  std::ostream* dry_out = nullptr;  // where --dry-run prints the commands
  int64_t now = 0;                  // Unix seconds; step 0 of the plan starts here
};

/// What `ordo slurm --every` carries from one cycle to the next: each tenant's (account's) use of
/// the cluster, decayed with `planning.fair_share.half_life_hours`, fed at every cycle with the
/// GPUs its running jobs hold over the time since the previous one. Without it (a single cycle)
/// the fair-share factor sees one step of what runs now.
struct CycleMemory {
  std::optional<priority::UsageLedger> usage;
  int64_t last_now = 0;  // the previous cycle's time; 0 before the first
};

struct CycleReport {
  Mapping mapping;  // its scenario has the jobs' base priorities
  /// The planning priority the planner was given for each candidate (mapping.candidates' order),
  /// the share guarantee's scaling included.
  std::vector<double> planning_priorities;
  Plan plan;  // metrics in base priorities
  std::vector<Action> actions;
  ApplyReport applied;
};

/// Reads the cluster through `client` (reads are retried on any failure), plans and enforces.
/// An Error when Slurm cannot be read, the state cannot be modelled (or the tenants' shares
/// exceed the cluster, naming `tenants[k].share`), or the policy fails; failed commands are
/// reported in `applied` (the cycle still runs the others). `memory`, when given, is read and
/// updated (CycleMemory).
[[nodiscard]] Result<CycleReport> RunCycle(SlurmClient& client, const SlurmConfig& config,
                                           const CycleOptions& options, const Sleeper& sleep,
                                           const Logger& log, CycleMemory* memory = nullptr);

/// Reads nodes and jobs (`sinfo --json`, `squeue --all --json`).
[[nodiscard]] Result<Snapshot> ReadSnapshot(SlurmClient& client, const SlurmConfig& config,
                                            int64_t now, const Sleeper& sleep, const Logger& log);

}  // namespace ordo::slurm
