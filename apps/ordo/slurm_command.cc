#include "slurm_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "cli.h"
#include "ordo/adapters/slurm/process_slurm_client.h"
#include "ordo/adapters/slurm/slurm_cycle.h"
#include "ordo/io/plan_io.h"
#include "ordo/io/scenario_io.h"
#include "ordo/policy/registry.h"

namespace {

constexpr const char* kSlurmUsage =
    "usage: ordo slurm [--once | --every DURATION] [--dry-run] [--config FILE] [--policy NAME]\n"
    "                  [--time-limit SECONDS] [--now UNIX_SECONDS] [--plan-out FILE]\n"
    "                  [--scenario-out FILE] [--silence DURATION]\n"
    "\n"
    "Plans the Slurm cluster that SLURM_CONF names and enforces the plan: held jobs whose comment\n"
    "starts with \"ordo:\" are started on exactly the planned nodes and GPUs, and each configured\n"
    "inference service holds one placeholder allocation per GPU of its demand curve.\n"
    "\n"
    "  --once             one cycle, then exit (the default)\n"
    "  --every DURATION   a cycle every DURATION (30s, 5m, 1h) until SIGINT/SIGTERM\n"
    "  --dry-run          print the Slurm commands instead of running them\n"
    "  --config FILE      step_minutes, horizon_steps, objective, partition, services "
    "(docs/slurm.md)\n"
    "  --policy NAME      the planner (default ordo)\n"
    "  --now UNIX_SECONDS plan as if it were this time (replays and tests)\n"
    "  --silence DURATION after this long without a cycle, the jobs ordo keeps waiting go back\n"
    "                     to Slurm's own scheduling (default: twice the cycle, at least 10m)\n"
    "  --plan-out FILE    write each cycle's plan (JSON); --scenario-out FILE: its scenario\n";

using ordo::cli::FileError;
using ordo::cli::kExitBadInput;
using ordo::cli::kExitFailed;
using ordo::cli::kExitOk;

constexpr ordo::cli::OptionSpec kOptions[] = {
    {"--once", false},        {"--every", true},      {"--dry-run", false}, {"--config", true},
    {"--policy", true},       {"--time-limit", true}, {"--now", true},      {"--plan-out", true},
    {"--scenario-out", true}, {"--silence", true}};

int UsageError(const std::string& message) { return ordo::cli::UsageError(message, kSlurmUsage); }

// What a failure to read the cluster most often means, in the words an operator acts on: which
// controller the Slurm commands were pointed at.
std::string ControllerHint() {
  const char* conf = std::getenv("SLURM_CONF");
  return std::string("is the Slurm controller reachable? SLURM_CONF=") +
         (conf != nullptr && *conf != '\0' ? conf
                                           : "(unset: Slurm's default /etc/slurm/slurm.conf)");
}

std::atomic<bool> g_stop{false};
extern "C" void OnSignal(int /*signal*/) { g_stop.store(true); }

void Log(std::string_view line) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::cerr << "ordo slurm: " << stamp << " " << line << "\n" << std::flush;
}

// "30s", "5m", "1h", "90" (minutes) -> seconds.
ordo::Result<double> ParseDuration(const std::string& option, const std::string& text) {
  if (!text.empty() && text.back() == 's') {
    auto seconds = ordo::cli::ParseSeconds(option, text.substr(0, text.size() - 1));
    if (!seconds)
      return ordo::FailInput(option,
                             "must be a duration such as 30s, 5m or 1h (got \"" + text + "\")");
    return *seconds;
  }
  auto minutes = ordo::slurm::ParseDurationMinutes(text);
  if (!minutes)
    return ordo::FailInput(option,
                           "must be a duration such as 30s, 5m or 1h (got \"" + text + "\")");
  return *minutes * 60.0;
}

void SleepUnlessStopped(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The schedule of cycles the command line asks for: one (--once, the default) or one every
// `every` seconds, at the real clock or a fixed `now`.
struct CycleSchedule {
  std::optional<int64_t> fixed_now;
  std::optional<double> every;
};

// Reads the planning options and the schedule; `config` gets the --silence override. Errors are
// usage errors.
ordo::Result<CycleSchedule> ReadCycleOptions(const ordo::cli::Args& args,
                                             ordo::slurm::SlurmConfig& config,
                                             ordo::slurm::CycleOptions& options) {
  using namespace ordo;
  if (args.has("--once") && args.has("--every"))
    return FailInput("", "--once and --every exclude each other");
  options.policy = args.value("--policy").value_or("ordo");
  if (auto names = MakeInTreeRegistry().names();
      std::find(names.begin(), names.end(), options.policy) == names.end()) {
    return FailInput("--policy", "unknown policy \"" + options.policy + "\"");
  }
  options.time_limit_s = DefaultTimeLimitSeconds(options.policy);
  if (auto t = args.value("--time-limit")) {
    ORDO_ASSIGN_OR_RETURN(options.time_limit_s, cli::ParseSeconds("--time-limit", *t));
  }
  options.dry_run = args.has("--dry-run");
  options.dry_out = &std::cout;
  CycleSchedule schedule;
  if (auto now = args.value("--now")) {
    char* end = nullptr;
    const long long v = std::strtoll(now->c_str(), &end, 10);
    if (now->empty() || *end != '\0' || v < 0 || v > (int64_t{1} << 40)) {
      return FailInput("--now", "must be Unix seconds (got \"" + *now + "\")");
    }
    schedule.fixed_now = v;
  }
  if (auto e = args.value("--every")) {
    ORDO_ASSIGN_OR_RETURN(schedule.every, ParseDuration("--every", *e));
  }
  if (auto silence = args.value("--silence")) {
    ORDO_ASSIGN_OR_RETURN(config.silence_s, ParseDuration("--silence", *silence));
  }
  ORDO_RETURN_IF_ERROR(slurm::ResolveSilence(config, schedule.every,
                                             args.has("--silence") ? "--silence" : "silence_s"));
  return schedule;
}

// Runs the cycles until the schedule ends or a signal stops it. The exit code of a single cycle
// is its outcome; a repeating run that was stopped exits 0.
int RunCycles(const ordo::cli::Args& args, const ordo::slurm::SlurmConfig& config,
              ordo::slurm::CycleOptions options, const CycleSchedule& schedule) {
  using namespace ordo;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  slurm::ProcessSlurmClient client;
  const slurm::Sleeper sleep = [](double s) { SleepUnlessStopped(s); };
  int exit_code = kExitOk;
  slurm::CycleMemory memory;  // the accounts' use of the cluster, from cycle to cycle
  while (true) {
    options.now = schedule.fixed_now.value_or(static_cast<int64_t>(std::time(nullptr)));
    auto report = slurm::RunCycle(client, config, options, sleep, Log, &memory);
    if (!report) {
      const bool unreadable = report.error().code == ErrorCode::kIo;
      Log("cycle failed: " + report.error().ToString() +
          (unreadable ? " (" + ControllerHint() + ")" : ""));
      exit_code = kExitFailed;
    } else {
      if (auto path = args.value("--plan-out")) {
        if (auto written = cli::WriteTextFile(*path, io::WritePlan(report->plan)); !written) {
          return FileError(*path, written.error());
        }
      }
      if (auto path = args.value("--scenario-out")) {
        if (auto written = cli::WriteTextFile(*path, io::WriteScenario(report->mapping.scenario));
            !written) {
          return FileError(*path, written.error());
        }
      }
      Log("cycle done: " + std::to_string(report->applied.actions_ok) + " actions ok, " +
          std::to_string(report->applied.actions_failed) + " failed");
      exit_code = report->applied.actions_failed == 0 ? kExitOk : kExitFailed;
    }
    if (!schedule.every || g_stop.load()) break;
    SleepUnlessStopped(*schedule.every);
    if (g_stop.load()) break;
  }
  return schedule.every ? kExitOk : exit_code;
}

}  // namespace

int RunSlurmCommand(int argc, char** argv) {
  using namespace ordo;
  auto args = cli::ParseArgs(std::span<char* const>(argv + 1, argc - 1), kOptions);
  if (!args) return UsageError(args.error().ToString());
  if (args->help) {
    std::cout << kSlurmUsage;
    return kExitOk;
  }
  if (!args->positional.empty()) {
    return UsageError("unexpected argument \"" + args->positional.front() + "\"");
  }
  slurm::SlurmConfig config;
  if (auto path = args->value("--config")) {
    auto loaded = slurm::ReadSlurmConfigFile(*path);
    if (!loaded) return FileError(*path, loaded.error());
    config = std::move(*loaded);
  }
  slurm::CycleOptions options;
  auto schedule = ReadCycleOptions(*args, config, options);
  if (!schedule) return UsageError(schedule.error().ToString());
  return RunCycles(*args, config, std::move(options), *schedule);
}
