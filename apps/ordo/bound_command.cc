// `ordo bound SCENARIO [--time-limit SECONDS]`: an upper bound on the planning objective (the LP
// relaxation of full mode's model), to judge how far any plan can be from the optimum.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli.h"
#include "commands.h"
#include "ordo/policy/full/full_policy.h"

namespace ordo::cli {

const char* const kBoundUsage =
    "usage: ordo bound SCENARIO [--time-limit SECONDS]\n"
    "\n"
    "Prints an upper bound on SCENARIO's planning objective, from the LP relaxation of full\n"
    "mode's model, as JSON: {\"scenario\": ..., \"lp_bound\": ...}. No plan can score above it.\n"
    "  --time-limit SECONDS  LP budget (default 60)\n"
    "Exit: 0 bound printed; 1 no bound within the time or no solver in this build;\n"
    "2 bad arguments or an unreadable or invalid scenario.\n";

int RunBound(int argc, char** argv) {
  static constexpr OptionSpec kOptions[] = {{"--time-limit", true}};
  Result<Args> args = ParseArgs({argv, static_cast<size_t>(argc)}, kOptions);
  if (!args) return UsageError(args.error().ToString(), kBoundUsage);
  if (args->help) {
    std::cout << kBoundUsage;
    return kExitOk;
  }
  if (args->positional.size() != 1) {
    return UsageError("bound takes exactly one SCENARIO file", kBoundUsage);
  }
  double time_limit_s = 60;
  if (auto limit = args->value("--time-limit")) {
    Result<double> seconds = ParseSeconds("--time-limit", *limit);
    if (!seconds) return UsageError(seconds.error().ToString(), kBoundUsage);
    time_limit_s = *seconds;
  }
  const std::string& path = args->positional[0];
  Result<Scenario> scenario = LoadScenario(path);
  if (!scenario) return FileError(path, scenario.error());
  Result<double> bound = policy::LpRelaxationBound(*scenario, time_limit_s);
  if (!bound) {
    std::cerr << "ordo: " << path << ": no bound: " << bound.error().ToString() << "\n";
    return kExitFailed;
  }
  const nlohmann::json out = {{"scenario", scenario->name}, {"lp_bound", *bound}};
  std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return kExitOk;
}

}  // namespace ordo::cli
