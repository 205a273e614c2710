// The one door between ordo and a Slurm cluster: run a Slurm command (scontrol, squeue, sinfo,
// salloc, scancel) as an argument vector and get its exit code and output. The real client
// (ProcessSlurmClient) forks and execs; tests use a scripted fake. Everything above this interface
// (parsing, mapping, enforcement) is plain code that unit tests drive without a cluster.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"

namespace ordo::slurm {

/// What one finished (or killed) command produced.
struct CommandResult {
  int exit_code = 0;       // the program's exit status; 128 + signal when killed by one
  std::string out;         // standard output
  std::string err;         // standard error
  bool timed_out = false;  // killed because it ran past its timeout
  [[nodiscard]] bool ok() const { return exit_code == 0 && !timed_out; }
};

/// Runs Slurm commands. Called from one thread at a time (the reconciliation cycle); an
/// implementation need not be thread-safe.
class SlurmClient {
 public:
  virtual ~SlurmClient() = default;

  /// Runs argv[0] with argv[1..] — never through a shell — and waits at most timeout_s seconds.
  /// A command that ran and failed is a CommandResult with a non-zero exit code (data); an Error
  /// means it could not be run at all (program missing, fork failed).
  [[nodiscard]] virtual Result<CommandResult> Run(const std::vector<std::string>& argv,
                                                  double timeout_s) = 0;
};

/// How often and how patiently a failing command is retried: attempt k (from 1) waits
/// min(initial_backoff_s * 2^(k-1), max_backoff_s) before attempt k + 1.
struct RetryPolicy {
  int attempts = 5;
  double initial_backoff_s = 0.5;
  double max_backoff_s = 8;
};

/// Waits; injected so that tests never sleep.
using Sleeper = std::function<void(double seconds)>;
/// Receives one log line (no trailing newline).
using Logger = std::function<void(std::string_view line)>;

/// True when a failed command may succeed if simply repeated: a timeout, or an error Slurm prints
/// while its controller is restarting or busy ("Unable to contact slurm controller", "Socket timed
/// out", ...). A refusal ("Invalid job id", "Requested node configuration is not available") is
/// not.
bool IsTransient(const CommandResult& result);

/// Runs a command, retrying with exponential backoff while the failure is transient (or, when
/// `retry_any_failure`, on every failure: safe for reads). Logs one line per retry. Returns the
/// last result; an Error only when the program could not be run.
[[nodiscard]] Result<CommandResult> RunWithRetry(SlurmClient& client,
                                                 const std::vector<std::string>& argv,
                                                 double timeout_s, const RetryPolicy& policy,
                                                 bool retry_any_failure, const Sleeper& sleep,
                                                 const Logger& log);

/// The command as a person would type it in a POSIX shell (arguments quoted where needed): for
/// log lines and `--dry-run`.
std::string FormatCommand(const std::vector<std::string>& argv);

/// The first line of a command's stderr (or stdout), trimmed, for log lines.
std::string FirstLine(const CommandResult& result);

}  // namespace ordo::slurm
