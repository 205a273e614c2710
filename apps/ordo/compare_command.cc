// `ordo compare SCENARIO... [--policies a,b] [--format table|json|markdown] [--report-dir DIR]
// [--time-limit S]`: every policy on every scenario, side by side; optionally the report files.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "ordo/policy/full/full_policy.h"
#include "ordo/policy/registry.h"
#include "ordo/report/comparison.h"
#include "ordo/report/render.h"

namespace ordo::cli {

const char* const kCompareUsage =
    "usage: ordo compare SCENARIO... [--policies a,b,...] [--format table|json|markdown]\n"
    "                    [--report-dir DIR] [--time-limit SECONDS] [--effort N]\n"
    "\n"
    "Plans every SCENARIO with every policy (default: all of them), checks each plan against the\n"
    "spec's rules and prints the metrics side by side, with the value gain over fifo and, for the\n"
    "scenarios that re-create the published study, the study's own figures.\n"
    "  --policies LIST       comma-separated names: fifo, fifo-backfill, priority-backfill,\n"
    "                        reactive, priority-preempt, reactive-preempt, ordo, ordo-full\n"
    "  --format FORMAT       table (default), json or markdown\n"
    "  --report-dir DIR      also write DIR/report.md, DIR/report.html (self-contained, with a\n"
    "                        GPU x time chart per scenario and policy) and DIR/report.json\n"
    "  --time-limit SECONDS  budget for every policy; default 2 for ordo, 10 for ordo-full\n"
    "  --effort N            fast mode's search effort, 1-64 (default 1; also ordo-full's\n"
    "                        warm start)\n"
    "  --no-bound            skip the LP relaxation bound (by default every objective is also\n"
    "                        shown as a share of the best bound known: the LP's or ordo-full's)\n"
    "Exit: 0 all plans legal; 1 a policy failed or broke a rule (a bug, listed on stderr);\n"
    "2 bad arguments or an unreadable or invalid scenario.\n";

int RunCompare(int argc, char** argv) {
  static constexpr OptionSpec kOptions[] = {{"--policies", true},   {"--format", true},
                                            {"--report-dir", true}, {"--time-limit", true},
                                            {"--effort", true},     {"--no-bound", false}};
  Result<Args> args = ParseArgs({argv, static_cast<size_t>(argc)}, kOptions);
  if (!args) return UsageError(args.error().ToString(), kCompareUsage);
  if (args->help) {
    std::cout << kCompareUsage;
    return kExitOk;
  }
  if (args->positional.empty()) return UsageError("compare needs SCENARIO files", kCompareUsage);

  const PolicyRegistry registry = MakeInTreeRegistry();
  report::CompareOptions options;
  if (auto list = args->value("--policies")) {
    options.policies = SplitList(*list);
    if (options.policies.empty()) return UsageError("--policies: names no policy", kCompareUsage);
    for (const std::string& name : options.policies) {
      if (Result<std::unique_ptr<Policy>> p = registry.Create(name); !p) {
        return UsageError("--policies: " + p.error().message, kCompareUsage);
      }
    }
  }
  const std::string format = args->value("--format").value_or("table");
  if (format != "table" && format != "json" && format != "markdown") {
    return UsageError("--format: must be table, json or markdown (got \"" + format + "\")",
                      kCompareUsage);
  }
  if (auto limit = args->value("--time-limit")) {
    Result<double> seconds = ParseSeconds("--time-limit", *limit);
    if (!seconds) return UsageError(seconds.error().ToString(), kCompareUsage);
    options.time_limit_s = *seconds;
  }
  if (auto effort = args->value("--effort")) {
    Result<int> value = ParseEffort("--effort", *effort);
    if (!value) return UsageError(value.error().ToString(), kCompareUsage);
    options.effort = *value;
  }
  if (!args->has("--no-bound")) {
    // A few seconds at most on the built-in scenarios; large instances use the aggregated LP.
    options.bound = [](const Scenario& scenario) {
      return policy::LpRelaxationBound(scenario, 30);
    };
  }
  const std::optional<std::string> report_dir = args->value("--report-dir");
  if (report_dir && report_dir->empty()) return UsageError("--report-dir: is empty", kCompareUsage);

  // Every file is read before any planning, and every bad one is named.
  std::vector<report::ScenarioInput> inputs;
  int bad_files = 0;
  for (const std::string& path : args->positional) {
    Result<Scenario> scenario = LoadScenario(path);
    if (!scenario) {
      FileError(path, scenario.error());
      ++bad_files;
      continue;
    }
    inputs.push_back({path, std::move(*scenario)});
  }
  if (bad_files > 0) return kExitBadInput;

  if (isatty(STDERR_FILENO)) {
    options.on_run = [](const report::ScenarioInput& input, const std::string& policy) {
      std::cerr << "ordo: planning " << input.scenario.name << " with " << policy << "\n";
    };
  }
  Result<report::Comparison> comparison =
      report::RunComparison(std::move(inputs), registry, options);
  if (!comparison) return UsageError(comparison.error().ToString(), kCompareUsage);

  if (format == "json") {
    std::cout << report::RenderJson(*comparison);
  } else if (format == "markdown") {
    std::cout << report::RenderMarkdown(*comparison);
  } else {
    std::cout << report::RenderTable(*comparison);
  }
  std::cout.flush();

  int status = kExitOk;
  if (report_dir) {
    std::error_code ec;
    std::filesystem::create_directories(*report_dir, ec);
    if (ec) {
      std::cerr << "ordo: " << *report_dir
                << ": cannot create the report directory: " << ec.message() << "\n";
      return kExitBadInput;
    }
    const std::filesystem::path dir(*report_dir);
    const std::pair<std::string, std::string> files[] = {
        {"report.md", report::RenderMarkdown(*comparison)},
        {"report.html", report::RenderHtml(*comparison)},
        {"report.json", report::RenderJson(*comparison)}};
    for (const auto& [name, text] : files) {
      const std::string path = (dir / name).string();
      if (Result<void> written = WriteTextFile(path, text); !written) {
        std::cerr << "ordo: " << path << ": " << written.error().ToString() << "\n";
        status = kExitBadInput;
      }
    }
    if (status == kExitOk) {
      std::cerr << "ordo: wrote " << (dir / "report.html").string() << ", "
                << (dir / "report.md").string() << " and " << (dir / "report.json").string()
                << "\n";
    }
  }
  if (comparison->problems() > 0) {
    std::cerr << "ordo: " << comparison->problems()
              << " runs failed or made an illegal plan (a bug in the policy):\n";
    for (const std::string& line : report::ProblemLines(*comparison)) {
      std::cerr << "  " << line << "\n";
    }
    return kExitFailed;
  }
  return status;
}

}  // namespace ordo::cli
