#include "ordo/adapters/slurm/slurm_client.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <sstream>

namespace ordo::slurm {

bool IsTransient(const CommandResult& result) {
  if (result.timed_out) return true;
  if (result.ok()) return false;
  // Messages Slurm 22.05's clients print while slurmctld is down, restarting or overloaded.
  static constexpr std::array<std::string_view, 11> kTransient = {
      "Unable to contact slurm controller",
      "Socket timed out",
      "Zero Bytes were transmitted",
      "Connection refused",
      "Transport endpoint is not connected",
      "Slurm backup controller in standby mode",
      "Resource temporarily unavailable",
      "try again",
      "Communication connection failure",
      "Slurm controller not responding",
      // What 22.05's scontrol printed here while slurmctld was stopped.
      "Unexpected message received",
  };
  for (std::string_view text : {std::string_view(result.err), std::string_view(result.out)}) {
    for (std::string_view pattern : kTransient) {
      if (text.find(pattern) != std::string_view::npos) return true;
    }
  }
  return false;
}

Result<CommandResult> RunWithRetry(SlurmClient& client, const std::vector<std::string>& argv,
                                   double timeout_s, const RetryPolicy& policy,
                                   bool retry_any_failure, const Sleeper& sleep,
                                   const Logger& log) {
  const int attempts = std::max(1, policy.attempts);
  Result<CommandResult> result = client.Run(argv, timeout_s);
  for (int attempt = 1; attempt < attempts; ++attempt) {
    if (!result) return result;
    if (result->ok()) return result;
    if (!retry_any_failure && !IsTransient(*result)) return result;
    const double wait =
        std::min(policy.initial_backoff_s * std::pow(2.0, attempt - 1), policy.max_backoff_s);
    if (log) {
      std::ostringstream line;
      line << "retry " << attempt << "/" << attempts - 1 << " in " << wait
           << " s: " << FormatCommand(argv) << " failed"
           << (result->timed_out ? " (timed out)" : "") << " (exit " << result->exit_code
           << "): " << FirstLine(*result);
      log(line.str());
    }
    if (sleep) sleep(wait);
    result = client.Run(argv, timeout_s);
  }
  return result;
}

std::string FormatCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
             std::string_view("-_=:,./+@%[]").find(c) != std::string_view::npos;
    });
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

std::string FirstLine(const CommandResult& result) {
  const std::string& text =
      result.err.find_first_not_of(" \t\r\n") != std::string::npos ? result.err : result.out;
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "(no output)";
  const size_t end = text.find('\n', begin);
  std::string line = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace ordo::slurm
