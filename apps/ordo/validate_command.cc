// `ordo validate SCENARIO PLAN`: exit 0 for a legal plan, 1 with one line per broken rule.
#include <iostream>
#include <string>

#include "cli.h"
#include "commands.h"
#include "ordo/core/check_plan.h"

namespace ordo::cli {

const char* const kValidateUsage =
    "usage: ordo validate SCENARIO PLAN\n"
    "\n"
    "Checks PLAN against SCENARIO with the spec's rules (one contiguous aligned block per job,\n"
    "one holder per GPU and step, service ranges and churn limits, running jobs kept, no\n"
    "interruption, no start before arrival) and prints one line per broken rule to stdout.\n"
    "A plan naming another scenario than SCENARIO's name, or the two files given the other way\n"
    "round, is a usage error (exit 2) that says so.\n"
    "Exit: 0 legal; 1 at least one rule broken; 2 bad arguments or an unreadable or invalid "
    "file.\n";

int RunValidate(int argc, char** argv) {
  Result<Args> args = ParseArgs({argv, static_cast<size_t>(argc)}, {});
  if (!args) return UsageError(args.error().ToString(), kValidateUsage);
  if (args->help) {
    std::cout << kValidateUsage;
    return kExitOk;
  }
  if (args->positional.size() != 2) {
    return UsageError("validate takes a SCENARIO file and a PLAN file", kValidateUsage);
  }
  const std::string& scenario_path = args->positional[0];
  const std::string& plan_path = args->positional[1];
  Result<Scenario> scenario = LoadScenario(scenario_path);
  if (!scenario) {
    // A plan where the scenario belongs, and a scenario where the plan belongs: say so, rather
    // than the first field of a plan that a scenario does not know.
    if (LoadPlan(scenario_path) && LoadScenario(plan_path)) {
      return UsageError("the arguments are swapped: " + scenario_path + " is a plan and " +
                            plan_path + " a scenario; validate takes SCENARIO PLAN",
                        kValidateUsage);
    }
    return FileError(scenario_path, scenario.error());
  }
  Result<Plan> plan = LoadPlan(plan_path);
  if (!plan) return FileError(plan_path, plan.error());
  // The plan names the scenario it was made for: checking it against another one would list
  // every job as a broken rule.
  if (!plan->scenario.empty() && !scenario->name.empty() && plan->scenario != scenario->name) {
    return FileError(
        plan_path,
        InvalidInput("scenario", "the plan was made for scenario \"" + plan->scenario +
                                     "\", not \"" + scenario->name + "\" (" + scenario_path + ")"));
  }

  const std::vector<Violation> violations = CheckPlan(*scenario, *plan);
  for (const Violation& v : violations) std::cout << FormatViolation(v) << "\n";
  if (!violations.empty()) {
    std::cerr << "ordo: " << plan_path << ": " << violations.size()
              << (violations.size() == 1 ? " rule broken" : " rules broken") << "\n";
    return kExitFailed;
  }
  std::cerr << "ordo: " << plan_path << ": legal plan for scenario " << scenario->name << "\n";
  return kExitOk;
}

}  // namespace ordo::cli
