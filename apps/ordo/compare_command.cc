// `ordo compare SCENARIO... [--policies a,b] [--format table|json|markdown] [--report-dir DIR]
// [--time-limit S]`: every policy on every scenario, side by side; optionally the report files.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "ordo/policy/full/full_policy.h"
#include "ordo/policy/registry.h"
#include "ordo/report/comparison.h"
#include "ordo/report/render.h"
#include "ordo/report/report_files.h"
#include "progress_bar.h"

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

namespace {

// The command line, checked: what RunComparison is given and what is printed.
struct CompareRequest {
  report::CompareOptions options;
  std::string format;
  std::optional<std::string> report_dir;
};

Result<CompareRequest> ParseRequest(const Args& args, const PolicyRegistry& registry) {
  CompareRequest request;
  report::CompareOptions& options = request.options;
  if (auto list = args.value("--policies")) {
    options.policies = SplitList(*list);
    if (options.policies.empty()) return FailInput("--policies", "names no policy");
    for (const std::string& name : options.policies) {
      if (Result<std::unique_ptr<Policy>> p = registry.Create(name); !p) {
        return FailInput("--policies", p.error().message);
      }
    }
  }
  request.format = args.value("--format").value_or("table");
  if (request.format != "table" && request.format != "json" && request.format != "markdown") {
    return FailInput("--format",
                     "must be table, json or markdown (got \"" + request.format + "\")");
  }
  if (auto limit = args.value("--time-limit")) {
    ORDO_ASSIGN_OR_RETURN(options.time_limit_s, ParseSeconds("--time-limit", *limit));
  }
  if (auto effort = args.value("--effort")) {
    ORDO_ASSIGN_OR_RETURN(options.effort, ParseEffort("--effort", *effort));
  }
  if (!args.has("--no-bound")) {
    // A few seconds at most on the built-in scenarios; large instances use the aggregated LP.
    options.bound = [](const Scenario& scenario) {
      return policy::LpRelaxationBound(scenario, 30);
    };
  }
  request.report_dir = args.value("--report-dir");
  if (request.report_dir && request.report_dir->empty()) {
    return FailInput("--report-dir", "is empty");
  }
  return request;
}

// Every file is read before any planning, and every bad one is named; nullopt if any was bad.
std::optional<std::vector<report::ScenarioInput>> LoadInputs(
    const std::vector<std::string>& paths) {
  std::vector<report::ScenarioInput> inputs;
  bool bad = false;
  for (const std::string& path : paths) {
    Result<Scenario> scenario = LoadScenario(path);
    if (!scenario) {
      FileError(path, scenario.error());
      bad = true;
      continue;
    }
    inputs.push_back({path, std::move(*scenario)});
  }
  if (bad) return std::nullopt;
  return inputs;
}

// Writes the report into `dir` (created if missing); the exit code.
int WriteReport(const report::Comparison& comparison, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::cerr << "ordo: " << dir << ": cannot create the report directory: " << ec.message()
              << "\n";
    return kExitBadInput;
  }
  std::vector<std::string> written;
  for (const report::ReportFile& file : report::ReportFiles(comparison)) {
    const std::string path = (std::filesystem::path(dir) / file.name).string();
    if (Result<void> ok = WriteTextFile(path, file.text); !ok) {
      std::cerr << "ordo: " << path << ": " << ok.error().ToString() << "\n";
      return kExitBadInput;
    }
    written.push_back(path);
  }
  std::cerr << "ordo: wrote";
  for (size_t i = 0; i < written.size(); ++i) {
    std::cerr << (i == 0 ? " " : i + 1 == written.size() ? " and " : ", ") << written[i];
  }
  std::cerr << "\n";
  return kExitOk;
}

}  // namespace

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
  Result<CompareRequest> request = ParseRequest(*args, registry);
  if (!request) return UsageError(request.error().ToString(), kCompareUsage);
  std::optional<std::vector<report::ScenarioInput>> inputs = LoadInputs(args->positional);
  if (!inputs) return kExitBadInput;

  // A person at a terminal sees what is running; a script reading stderr sees nothing of it.
  std::optional<ProgressBar> bar;
  if (isatty(STDERR_FILENO) == 1) {
    bar.emplace();
    request->options.on_progress = [&bar](const report::CompareProgress& p) {
      bar->Show(p.done, p.total, std::string(p.scenario) + ": " + std::string(p.step));
    };
  }
  Result<report::Comparison> comparison =
      report::RunComparison(std::move(*inputs), registry, request->options);
  bar.reset();
  if (!comparison) return UsageError(comparison.error().ToString(), kCompareUsage);

  if (request->format == "json") {
    std::cout << report::RenderJson(*comparison);
  } else if (request->format == "markdown") {
    std::cout << report::RenderMarkdown(*comparison);
  } else {
    std::cout << report::RenderTable(*comparison);
  }
  std::cout.flush();
  const int status = request->report_dir ? WriteReport(*comparison, *request->report_dir) : kExitOk;
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
