// One reconciliation cycle of `ordo slurm`: read Slurm (squeue --json, sinfo --json), build the
// scenario, plan with a policy from the registry, check the plan (CheckPlan: an illegal plan is
// never enforced), decide and run the commands. Idempotent: running it twice in a row changes
// nothing the second time unless Slurm changed in between.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ordo/adapters/slurm/slurm_client.h"
#include "ordo/adapters/slurm/slurm_config.h"
#include "ordo/adapters/slurm/slurm_enforce.h"
#include "ordo/adapters/slurm/slurm_mapping.h"
#include "ordo/core/plan.h"

namespace ordo::slurm {

struct CycleOptions {
  std::string policy = "ordo";
  double time_limit_s = 0.05;
  bool dry_run = false;
  std::ostream* dry_out = nullptr;  // where --dry-run prints the commands
  int64_t now = 0;                  // Unix seconds; step 0 of the plan starts here
};

struct CycleReport {
  Mapping mapping;
  Plan plan;
  std::vector<Action> actions;
  ApplyReport applied;
};

/// Reads the cluster through `client` (reads are retried on any failure), plans and enforces.
/// An Error when Slurm cannot be read, the state cannot be modelled, or the policy fails; failed
/// commands are reported in `applied` (the cycle still runs the others).
[[nodiscard]] Result<CycleReport> RunCycle(SlurmClient& client, const SlurmConfig& config,
                                           const CycleOptions& options, const Sleeper& sleep,
                                           const Logger& log);

/// Reads nodes and jobs (`sinfo --json`, `squeue --all --json`).
[[nodiscard]] Result<Snapshot> ReadSnapshot(SlurmClient& client, const SlurmConfig& config,
                                            int64_t now, const Sleeper& sleep, const Logger& log);

}  // namespace ordo::slurm
