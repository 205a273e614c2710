// The real SlurmClient: runs the Slurm command-line tools as child processes.
#pragma once

#include "ordo/adapters/slurm/slurm_client.h"

namespace ordo::slurm {

/// Starts each command with posix_spawnp (an argument vector, no shell), reads its stdout and
/// stderr through pipes while it runs, and kills it (SIGTERM, then SIGKILL a second later) when it
/// outlives its timeout. The child inherits the environment, so SLURM_CONF reaches the tools.
/// Output beyond 64 MiB per stream is dropped (Slurm's JSON for a large cluster is a few MiB).
class ProcessSlurmClient final : public SlurmClient {
 public:
  [[nodiscard]] Result<CommandResult> Run(const std::vector<std::string>& argv,
                                          double timeout_s) override;
};

}  // namespace ordo::slurm
