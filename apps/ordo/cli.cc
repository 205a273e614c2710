#include "cli.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "ordo/forecast/duration_resolver.h"
#include "ordo/io/json_fields.h"
#include "ordo/io/plan_io.h"
#include "ordo/io/scenario_io.h"
#include "ordo/policy/policy.h"

namespace ordo::cli {
namespace {

// "unknown option", with the closest known option when it is a likely typo (as unknown JSON
// fields get: the same io::internal::ClosestName).
std::string UnknownOption(std::string_view name, std::span<const OptionSpec> options) {
  std::vector<std::string_view> names;
  for (const OptionSpec& o : options) names.push_back(o.name);
  const std::string_view best = io::internal::ClosestName(name, names);
  std::string message = "unknown option";
  if (!best.empty()) message += " (did you mean " + std::string(best) + "?)";
  return message;
}

}  // namespace

Result<Args> ParseArgs(std::span<char* const> args, std::span<const OptionSpec> options) {
  Args out;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i] == nullptr ? "" : args[i];
    if (options_done || arg.size() < 2 || arg[0] != '-' || arg == "-") {
      out.positional.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& o : options) {
      if (o.name == name) spec = &o;
    }
    if (spec == nullptr) return FailInput(std::string(name), UnknownOption(name, options));
    if (out.has(name)) return FailInput(std::string(name), "given more than once");
    if (!spec->takes_value) {
      if (eq != std::string_view::npos) return FailInput(std::string(name), "takes no value");
      out.flags.emplace(name);
      continue;
    }
    if (eq != std::string_view::npos) {
      out.values.emplace(std::string(name), std::string(arg.substr(eq + 1)));
    } else if (i + 1 < args.size() && args[i + 1] != nullptr) {
      out.values.emplace(std::string(name), std::string(args[++i]));
    } else {
      return FailInput(std::string(name), "needs a value");
    }
  }
  return out;
}

int UsageError(std::string_view message, std::string_view usage) {
  // The command is the usage's first word after "usage: ordo "; the top level's is COMMAND.
  constexpr std::string_view kLead = "usage: ordo ";
  std::string_view command;
  if (usage.rfind(kLead, 0) == 0) {
    command = usage.substr(kLead.size());
    command = command.substr(0, command.find_first_of(" \n"));
  }
  if (command.empty() || command == "COMMAND") {
    std::cerr << "ordo: " << message << " (see `ordo --help`)\n";
    return kExitBadInput;
  }
  return CommandUsageError(command, message);
}

int CommandUsageError(std::string_view command, std::string_view message) {
  std::cerr << "ordo: " << message << " (see `ordo " << command << " --help`)\n";
  return kExitBadInput;
}

int FileError(std::string_view path, const Error& error) {
  std::cerr << "ordo: " << path << ": " << error.ToString() << "\n";
  return kExitBadInput;
}

Result<double> ParseSeconds(std::string_view option, std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double value = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  constexpr double kWeek = 7 * 24 * 3600.0;
  if (s.empty() || end == nullptr || *end != '\0' || errno == ERANGE || !std::isfinite(value) ||
      value <= 0 || value > kWeek) {
    return FailInput(std::string(option),
                     "must be a positive number of seconds, at most a week (got \"" + s + "\")");
  }
  return value;
}

Result<int> ParseInteger(std::string_view option, std::string_view text, int lo, int hi) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const long value = s.empty() ? 0 : std::strtol(s.c_str(), &end, 10);
  if (s.empty() || end == nullptr || *end != '\0' || errno == ERANGE || value < lo || value > hi) {
    return FailInput(std::string(option), "must be an integer from " + std::to_string(lo) + " to " +
                                              std::to_string(hi) + " (got \"" + s + "\")");
  }
  return static_cast<int>(value);
}

Result<double> ParseNumber(std::string_view option, std::string_view text, double lo, double hi) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double value = s.empty() ? 0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || errno == ERANGE || !std::isfinite(value) ||
      value < lo || value > hi) {
    // %.15g: the bounds as written ("0 to 60000"), not std::to_string's "0.000000".
    std::array<char, 32> low{}, high{};
    std::snprintf(low.data(), low.size(), "%.15g", lo);
    std::snprintf(high.data(), high.size(), "%.15g", hi);
    return FailInput(std::string(option), std::string("must be a number from ") + low.data() +
                                              " to " + high.data() + " (got \"" + s + "\")");
  }
  return value;
}

Result<double> OptionalNumber(const Args& args, std::string_view option, double fallback, double lo,
                              double hi) {
  auto text = args.value(option);
  if (!text) return fallback;
  return ParseNumber(option, *text, lo, hi);
}

Result<int> ParseEffort(std::string_view option, std::string_view text) {
  return ParseInteger(option, text, 1, kMaxEffort);
}

Result<Scenario> LoadScenario(const std::string& path) {
  // A job given `features` and no `duration_steps` gets the forecasters' median duration (their
  // built-in calibration: the CLI has no history to learn from).
  io::ReadOptions options;
  options.resolve_duration = [](const Job& job, std::string_view features, int step_minutes) {
    return forecast::ForecastDurationSteps(job, features, step_minutes);
  };
  return io::ReadScenarioFile(path, options);
}

Result<Plan> LoadPlan(const std::string& path) { return io::ReadPlanFile(path); }

Result<void> WriteTextFile(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return Fail(
        Error{ErrorCode::kIo, "", std::string("cannot open for writing: ") + std::strerror(errno)});
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Fail(Error{ErrorCode::kIo, "", "write failed"});
  return {};
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t comma = std::min(text.find(',', from), text.size());
    if (comma > from) items.emplace_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return items;
}

}  // namespace ordo::cli
