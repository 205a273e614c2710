// `ordo plan SCENARIO [--policy NAME] [--time-limit SECONDS] [--effort N] [--explain]`: the plan
// on stdout.
#include <algorithm>
#include <iostream>
#include <string>

#include "cli.h"
#include "client_commands.h"
#include "commands.h"
#include "ordo/client/connection.h"
#include "ordo/core/check_plan.h"
#include "ordo/io/plan_io.h"
#include "ordo/policy/common/explain.h"
#include "ordo/policy/registry.h"

namespace ordo::cli {

const char* const kPlanUsage =
    "usage: ordo plan SCENARIO [--policy NAME] [--time-limit SECONDS] [--effort N] [--explain]\n"
    "\n"
    "       ordo plan [--server URL] [--token TOKEN] [--json]\n"
    "\n"
    "Plans SCENARIO (JSON or YAML) and writes the plan, in the spec's format, to stdout.\n"
    "Without a SCENARIO it shows a running service's plan (`ordo plan --server URL --help`).\n"
    "  --policy NAME         fifo, fifo-backfill, priority-backfill, reactive, priority-preempt,\n"
    "                        reactive-preempt, ordo (fast mode, the default) or ordo-full (full\n"
    "                        mode)\n"
    "  --time-limit SECONDS  planning budget; default 2 for ordo, 10 for ordo-full (the\n"
    "                        baselines ignore it)\n"
    "  --effort N            fast mode's search effort, 1-64 (default 1): N times the\n"
    "                        improvement passes, about N times the time of the search; a\n"
    "                        better plan more often (docs/fast-mode.md)\n"
    "  --explain             add `x-explain` to the plan (why each job does not start at step 0)\n"
    "                        and print the explanations, one line per job, to stderr\n"
    "Exit: 0 plan written; 1 the policy failed or broke a rule (a bug, reported on stderr);\n"
    "2 bad arguments or an unreadable or invalid scenario.\n";

namespace {

// Seconds per GPU-step that checking and writing a plan take (generous: an optimised build on a
// loaded machine).
constexpr double kCheckAndWriteSecondsPerGpuStep = 4e-8;

// `ordo plan` without a SCENARIO is the service's client when a server is named anywhere (a
// flag, ORDO_SERVER, the client config) and the file planner's options are not used.
bool WantsServicePlan(const Args& args) {
  for (std::string_view own : {"--policy", "--time-limit", "--effort", "--explain"}) {
    if (args.has(own)) return false;
  }
  if (args.has("--server") || args.has("--token") || args.has("--json")) return true;
  const client::Environment env = client::ProcessEnvironment();
  const std::optional<std::string> server = env("ORDO_SERVER");
  return (server && !server->empty()) || client::FindClientConfig(env).has_value();
}

// --time-limit, --effort and --explain for the policy `name`; errors are usage errors.
Result<PolicyOptions> ReadPolicyOptions(const Args& args, const std::string& name) {
  PolicyOptions options;
  options.time_limit_s = DefaultTimeLimitSeconds(name);
  if (auto limit = args.value("--time-limit")) {
    ORDO_ASSIGN_OR_RETURN(options.time_limit_s, ParseSeconds("--time-limit", *limit));
  }
  if (auto effort = args.value("--effort")) {
    ORDO_ASSIGN_OR_RETURN(options.effort, ParseEffort("--effort", *effort));
  }
  options.explain = args.has("--explain");
  return options;
}

// One line per job that does not start at step 0, on stderr (`--explain`).
void PrintExplanations(const Scenario& scenario, const Plan& plan, const std::string& policy_name) {
  std::cerr << "ordo: " << plan.explanations.size() << " of " << scenario.jobs.size()
            << " jobs do not start at step 0 (" << policy_name << "):\n";
  for (const JobExplanation& e : plan.explanations) {
    std::cerr << "  " << e.id << ": "
              << (e.planned_start ? "starts at step " + std::to_string(*e.planned_start)
                                  : std::string("not in the horizon"))
              << " - " << policy::WaitReasonName(e.reason) << ": " << e.message << "\n";
  }
}

}  // namespace

int RunPlan(int argc, char** argv) {
  static constexpr OptionSpec kOptions[] = {
      {"--policy", true}, {"--time-limit", true}, {"--effort", true}, {"--explain", false},
      {"--server", true}, {"--token", true},      {"--json", false}};
  Result<Args> args = ParseArgs({argv, static_cast<size_t>(argc)}, kOptions);
  if (!args) return UsageError(args.error().ToString(), kPlanUsage);
  if (args->positional.empty() &&
      (WantsServicePlan(*args) || (args->help && args->has("--server")))) {
    return RunServicePlan(argc, argv);
  }
  if (args->help) {
    std::cout << kPlanUsage;
    return kExitOk;
  }
  if (args->positional.size() != 1) {
    return UsageError(args->positional.empty()
                          ? "plan needs a SCENARIO file (or a server, to show its plan: --server "
                            "URL, ORDO_SERVER or the client config)"
                          : "plan takes exactly one SCENARIO file",
                      kPlanUsage);
  }
  for (std::string_view client_option : {"--server", "--token", "--json"}) {
    if (args->has(client_option)) {
      return UsageError(
          std::string(client_option) + ": only without a SCENARIO (the service's plan)",
          kPlanUsage);
    }
  }
  const std::string name = args->value("--policy").value_or("ordo");
  const PolicyRegistry registry = MakeInTreeRegistry();
  Result<std::unique_ptr<Policy>> policy = registry.Create(name);
  if (!policy) return UsageError(policy.error().ToString(), kPlanUsage);
  Result<PolicyOptions> read_options = ReadPolicyOptions(*args, name);
  if (!read_options) return UsageError(read_options.error().ToString(), kPlanUsage);
  PolicyOptions options = *read_options;

  const std::string& path = args->positional[0];
  Result<Scenario> scenario = LoadScenario(path);
  if (!scenario) return FileError(path, scenario.error());

  // The limit is the command's: checking and writing the plan after the policy come out of it
  // (they are linear in the GPU-steps and cannot stop early).
  const double gpu_steps =
      static_cast<double>(scenario->cluster.total_gpus()) * scenario->horizon_steps;
  options.time_limit_s -=
      std::min(0.5 * options.time_limit_s, kCheckAndWriteSecondsPerGpuStep * gpu_steps);
  Result<Plan> plan = (*policy)->Solve(*scenario, options);
  if (!plan) {
    std::cerr << "ordo: " << path << ": policy " << name << " failed: " << plan.error().ToString()
              << "\n";
    return kExitFailed;
  }
  // Every plan is checked before anyone sees it: a broken rule is a bug in the policy.
  const std::vector<Violation> violations = CheckPlan(*scenario, *plan);
  if (!violations.empty()) {
    std::cerr << "ordo: " << path << ": BUG: policy " << name << " made an illegal plan:\n";
    for (const Violation& v : violations) std::cerr << "  " << FormatViolation(v) << "\n";
    return kExitFailed;
  }
  // Policies that do not explain themselves (the baselines) get the common explanation.
  if (options.explain && plan->explanations.empty()) {
    plan->explanations = policy::ExplainPlan(*scenario, *plan);
  }
  std::cout << io::WritePlan(*plan) << "\n";
  if (options.explain) PrintExplanations(*scenario, *plan, name);
  return std::cout.good() ? kExitOk : kExitFailed;
}

}  // namespace ordo::cli
