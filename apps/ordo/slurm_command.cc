#include "slurm_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
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

// Exit codes, as every ordo command (docs/cli.md).
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

int UsageError(const std::string& message) { return ordo::cli::UsageError(message, kSlurmUsage); }

// What a failure to read the cluster most often means, in the words an operator acts on: which
// controller the Slurm commands were pointed at.
std::string ControllerHint() {
  const char* conf = std::getenv("SLURM_CONF");
  return std::string("is the Slurm controller reachable? SLURM_CONF=") +
         (conf != nullptr && *conf != '\0' ? conf
                                           : "(unset: Slurm's default /etc/slurm/slurm.conf)");
}

int FileError(const std::string& path, const ordo::Error& error) {
  std::cerr << "ordo: " << path << ": " << error.ToString() << "\n";
  return kExitBadInput;
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// `--name value`, `--name=value` and flags; each at most once. Kept here so the command depends on
// nothing but the library (the shared CLI helpers change with other commands).
struct SlurmArgs {
  std::map<std::string, std::string> values;
  bool help = false;
  [[nodiscard]] bool has(const std::string& name) const { return values.contains(name); }
  [[nodiscard]] std::optional<std::string> value(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
};

ordo::Result<SlurmArgs> ParseSlurmArgs(int argc, char** argv) {
  static const std::map<std::string, bool> kOptions = {
      {"--once", false},        {"--every", true},      {"--dry-run", false}, {"--config", true},
      {"--policy", true},       {"--time-limit", true}, {"--now", true},      {"--plan-out", true},
      {"--scenario-out", true}, {"--silence", true}};
  SlurmArgs out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i] == nullptr ? "" : argv[i];
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const auto spec = kOptions.find(name);
    if (spec == kOptions.end()) {
      return ordo::FailInput(name,
                             arg.rfind("--", 0) == 0 ? "unknown option" : "unexpected argument");
    }
    if (out.has(name)) return ordo::FailInput(name, "given more than once");
    if (!spec->second) {
      if (eq != std::string::npos) return ordo::FailInput(name, "takes no value");
      out.values[name] = "";
    } else if (eq != std::string::npos) {
      out.values[name] = arg.substr(eq + 1);
    } else if (i + 1 < argc && argv[i + 1] != nullptr) {
      out.values[name] = argv[++i];
    } else {
      return ordo::FailInput(name, "needs a value");
    }
  }
  return out;
}

// A positive number of seconds, at most a week.
std::optional<double> Seconds(const std::string& text) {
  char* end = nullptr;
  const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0) || v > 7 * 24 * 3600.0) return std::nullopt;
  return v;
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
    auto seconds = Seconds(text.substr(0, text.size() - 1));
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

}  // namespace

int RunSlurmCommand(int argc, char** argv) {
  using namespace ordo;
  auto args = ParseSlurmArgs(argc, argv);
  if (!args) return UsageError(args.error().ToString());
  if (args->help) {
    std::cout << kSlurmUsage;
    return kExitOk;
  }
  if (args->has("--once") && args->has("--every"))
    return UsageError("--once and --every exclude each other");

  slurm::SlurmConfig config;
  if (auto path = args->value("--config")) {
    auto loaded = slurm::ReadSlurmConfigFile(*path);
    if (!loaded) return FileError(*path, loaded.error());
    config = std::move(*loaded);
  }
  slurm::CycleOptions options;
  options.policy = args->value("--policy").value_or("ordo");
  if (auto names = MakeInTreeRegistry().names();
      std::find(names.begin(), names.end(), options.policy) == names.end()) {
    return UsageError("--policy: unknown policy \"" + options.policy + "\"");
  }
  options.time_limit_s = DefaultTimeLimitSeconds(options.policy);
  if (auto t = args->value("--time-limit")) {
    auto seconds = Seconds(*t);
    if (!seconds)
      return UsageError("--time-limit: must be a positive number of seconds (got \"" + *t + "\")");
    options.time_limit_s = *seconds;
  }
  options.dry_run = args->has("--dry-run");
  options.dry_out = &std::cout;
  std::optional<int64_t> fixed_now;
  if (auto now = args->value("--now")) {
    char* end = nullptr;
    const long long v = std::strtoll(now->c_str(), &end, 10);
    if (now->empty() || *end != '\0' || v < 0 || v > (int64_t{1} << 40)) {
      return UsageError("--now: must be Unix seconds (got \"" + *now + "\")");
    }
    fixed_now = v;
  }
  std::optional<double> every;
  if (auto e = args->value("--every")) {
    auto seconds = ParseDuration("--every", *e);
    if (!seconds) return UsageError(seconds.error().ToString());
    every = *seconds;
  }
  if (auto silence = args->value("--silence")) {
    auto seconds = ParseDuration("--silence", *silence);
    if (!seconds) return UsageError(seconds.error().ToString());
    config.silence_s = *seconds;
  }
  if (auto resolved =
          slurm::ResolveSilence(config, every, args->has("--silence") ? "--silence" : "silence_s");
      !resolved) {
    return UsageError(resolved.error().ToString());
  }

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  slurm::ProcessSlurmClient client;
  const slurm::Sleeper sleep = [](double s) { SleepUnlessStopped(s); };
  int exit_code = kExitOk;
  while (true) {
    options.now = fixed_now.value_or(static_cast<int64_t>(std::time(nullptr)));
    auto report = slurm::RunCycle(client, config, options, sleep, Log);
    if (!report) {
      const bool unreadable = report.error().code == ErrorCode::kIo;
      Log("cycle failed: " + report.error().ToString() +
          (unreadable ? " (" + ControllerHint() + ")" : ""));
      exit_code = kExitFailed;
    } else {
      if (auto path = args->value("--plan-out");
          path && !WriteText(*path, io::WritePlan(report->plan))) {
        return FileError(*path, Error{ErrorCode::kIo, "", "cannot write"});
      }
      if (auto path = args->value("--scenario-out");
          path && !WriteText(*path, io::WriteScenario(report->mapping.scenario))) {
        return FileError(*path, Error{ErrorCode::kIo, "", "cannot write"});
      }
      Log("cycle done: " + std::to_string(report->applied.actions_ok) + " actions ok, " +
          std::to_string(report->applied.actions_failed) + " failed");
      exit_code = report->applied.actions_failed == 0 ? kExitOk : kExitFailed;
    }
    if (!every || g_stop.load()) break;
    SleepUnlessStopped(*every);
    if (g_stop.load()) break;
  }
  return every ? kExitOk : exit_code;
}
