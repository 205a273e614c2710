// What every subcommand shares: exit codes, a strict argument parser, loading files with errors
// that name the file and the field. Commands stay thin: parse, load, call the library, print.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::cli {

/// Exit codes (docs/cli.md): 0 success; 1 the plan breaks a rule (`validate`), or a policy failed
/// or produced an illegal plan (`plan`, `compare`, `bound`), or the service said no (the client
/// commands); 2 bad arguments or an unreadable or invalid file; 3 the service cannot be reached.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitUnreachable = 3;

struct OptionSpec {
  std::string_view name;  // "--policy"
  bool takes_value = false;
};

/// A parsed command line. `--name value` and `--name=value` are the same; `--` ends the options.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string, std::less<>> values;
  std::set<std::string, std::less<>> flags;
  bool help = false;  // -h or --help anywhere before `--`

  [[nodiscard]] bool has(std::string_view name) const {
    return flags.contains(name) || values.contains(name);
  }
  [[nodiscard]] std::optional<std::string> value(std::string_view name) const {
    auto it = values.find(name);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
};

/// Parses the arguments after the subcommand. Errors (field = the option): an option not in
/// `options`, a missing value, a value given to a flag, an option given twice.
[[nodiscard]] Result<Args> ParseArgs(std::span<char* const> args,
                                     std::span<const OptionSpec> options);

/// Prints one line to stderr, "ordo: MESSAGE (see `ordo CMD --help`)" with CMD read from
/// `usage` ("usage: ordo CMD ..."); returns kExitBadInput.
int UsageError(std::string_view message, std::string_view usage);

/// Prints one line, "ordo: MESSAGE (see `ordo COMMAND --help`)", to stderr; returns kExitBadInput.
int CommandUsageError(std::string_view command, std::string_view message);

/// Prints "ordo: PATH: FIELD: MESSAGE" to stderr; returns kExitBadInput.
int FileError(std::string_view path, const Error& error);

/// A positive, finite number of seconds, at most a week.
[[nodiscard]] Result<double> ParseSeconds(std::string_view option, std::string_view text);

/// A decimal integer from `lo` to `hi`; else an error naming `option`.
[[nodiscard]] Result<int> ParseInteger(std::string_view option, std::string_view text, int lo,
                                       int hi);

/// A finite decimal number from `lo` to `hi`; else an error naming `option` and the range.
[[nodiscard]] Result<double> ParseNumber(std::string_view option, std::string_view text, double lo,
                                         double hi);
/// The option's number (ParseNumber), or `fallback` when it is not given.
[[nodiscard]] Result<double> OptionalNumber(const Args& args, std::string_view option,
                                            double fallback, double lo, double hi);

/// Fast mode's search effort (PolicyOptions::effort): an integer from 1 to 64.
[[nodiscard]] Result<int> ParseEffort(std::string_view option, std::string_view text);

/// Reads and validates a scenario (JSON or YAML); durations missing beside `features` come from
/// the forecasters. The error does not repeat the path.
[[nodiscard]] Result<Scenario> LoadScenario(const std::string& path);
/// Reads a plan (JSON or YAML): structure and types only; CheckPlan judges the rules.
[[nodiscard]] Result<Plan> LoadPlan(const std::string& path);

/// Writes `text` to `path` (replacing it). The error names the path's problem.
[[nodiscard]] Result<void> WriteTextFile(const std::string& path, std::string_view text);

/// Splits "a,b,,c" into {"a", "b", "c"}: empty items are dropped.
std::vector<std::string> SplitList(std::string_view text);

}  // namespace ordo::cli
