// `ordo slurm`: plan for a real Slurm cluster and enforce the plan (docs/slurm.md).
#pragma once

/// Takes argv with argv[0] = "slurm"; returns the exit code: 0 success, 1 a cycle failed (Slurm
/// unreachable after retries, a policy failure, a command that failed), 2 bad arguments or config.
int RunSlurmCommand(int argc, char** argv);
