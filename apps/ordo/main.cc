// `ordo`: one binary, one subcommand per file. main only dispatches; every failure is an exit code
// and a message on stderr (docs/cli.md), never an uncaught exception. The commands other modules
// own (forecast, simulate, serve, slurm) are compiled in when their files are present.
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"
#include "client_commands.h"
#include "commands.h"
#include "help_docs.h"

// A command counts as present when both its header and its source are here (every .cc here is
// globbed into this binary), so a half-added command never breaks the link.
#if __has_include("forecast_command.h") && __has_include("forecast_command.cc")
#include "forecast_command.h"
#define ORDO_HAS_FORECAST_COMMAND 1
#endif
#if __has_include("serve_command.h") && __has_include("serve_command.cc")
#include "serve_command.h"
#define ORDO_HAS_SERVE_COMMAND 1
#endif
#if __has_include("simulate_command.h") && __has_include("simulate_command.cc")
#include "simulate_command.h"
#define ORDO_HAS_SIMULATE_COMMAND 1
#endif
#if __has_include("slurm_command.h") && __has_include("slurm_command.cc")
#include "slurm_command.h"
#define ORDO_HAS_SLURM_COMMAND 1
#endif

namespace {

// Every command is called with argv[0] = its name.
struct Command {
  std::string_view name;
  std::string_view synopsis;
  int (*run)(int argc, char** argv);
};

template <int (*Run)(int, char**)>
int AfterName(int argc, char** argv) {
  return Run(argc - 1, argv + 1);
}

const Command kCommands[] = {
    {"plan",
     "plan SCENARIO [--policy NAME] [--time-limit S] [--effort N] [--explain]\n"
     "                                                              plan JSON to stdout\n"
     "  plan [--server URL]                                         the service's plan",
     AfterName<ordo::cli::RunPlan>},
    {"validate", "validate SCENARIO PLAN                                      legality of a plan",
     AfterName<ordo::cli::RunValidate>},
    {"compare",
     "compare SCENARIO... [--policies a,b] [--format F] [--report-dir DIR]\n"
     "          [--time-limit S] [--effort N]                       policies side by side",
     AfterName<ordo::cli::RunCompare>},
    {"bound",
     "bound SCENARIO [--time-limit S]                             LP bound on the objective",
     AfterName<ordo::cli::RunBound>},
#if defined(ORDO_HAS_FORECAST_COMMAND)
    {"forecast", "forecast demand|training|quantization ...                 the forecasters",
     RunForecastCommand},
#endif
#if defined(ORDO_HAS_SIMULATE_COMMAND)
    {"simulate",
     "simulate WORLD [--policies a,b@K] [--replan-every K] [--days D]  rolling-horizon replay",
     RunSimulateCommand},
#endif
#if defined(ORDO_HAS_SERVE_COMMAND)
    {"serve", "serve --config FILE [--db PATH] [--listen ADDR:PORT]        the planning service",
     RunServeCommand},
#endif
    {"submit",
     "submit [JOB.json] [--kind K --priority P --gpus N --duration-steps D]  a job to the service",
     AfterName<ordo::cli::RunSubmit>},
    {"queue", "queue [--state S | --all]                                   the service's jobs",
     AfterName<ordo::cli::RunQueue>},
    {"show", "show JOBID                                                  one job, why it waits",
     AfterName<ordo::cli::RunShow>},
    {"cancel", "cancel JOBID...                                             cancel jobs",
     AfterName<ordo::cli::RunCancel>},
    {"advance",
     "advance [STEPS]                                             commit steps (manual clock)",
     AfterName<ordo::cli::RunAdvance>},
#if defined(ORDO_HAS_SLURM_COMMAND)
    {"slurm",
     "slurm (--once | --every D) [--dry-run] ...                  plan and enforce on Slurm",
     RunSlurmCommand},
#endif
};

std::string Usage() {
  std::string usage =
      "usage: ordo COMMAND [ARGS]\n"
      "\n"
      "ordo plans GPU clusters shared by training, batch inference, quantization and real-time\n"
      "inference: contiguous aligned blocks for batch work, demand curves for services.\n"
      "\n"
      "commands:\n";
  for (const Command& c : kCommands) usage += "  " + std::string(c.synopsis) + "\n";
  usage +=
      "  help [COMMAND]                                              this text, or a command's\n"
      "\n"
      "submit, queue, show, cancel, advance and plan without a SCENARIO are clients of a running\n"
      "`ordo serve`: the server and token from --server/--token, ORDO_SERVER/ORDO_TOKEN or\n"
      "~/.config/ordo/client.json ($ORDO_CONFIG).\n"
      "\n"
      "`ordo COMMAND --help` describes a command. Exit codes: 0 success; 1 a plan breaks a rule, "
      "a\n"
      "policy failed or the service said no; 2 bad arguments or an unreadable or invalid file; 3\n"
      "the service cannot be reached.\n";
  return usage;
}

const Command* Find(std::string_view name) {
  for (const Command& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int RunHelpOf(const Command& c) {
  std::string name(c.name), help("--help");
  char* args[] = {name.data(), help.data(), nullptr};
  return c.run(2, args);
}

// What `ordo NAME --help` prints for every command, taken from the commands themselves: the one
// source of the man page and the completion.
std::vector<ordo::cli::CommandHelp> EveryCommandsHelp() {
  std::vector<ordo::cli::CommandHelp> helps;
  for (const Command& c : kCommands) {
    std::ostringstream text;
    std::streambuf* const stdout_buffer = std::cout.rdbuf(text.rdbuf());
    RunHelpOf(c);
    std::cout.rdbuf(stdout_buffer);
    helps.push_back({std::string(c.name), text.str()});
  }
  return helps;
}

// `ordo help [COMMAND]`, and the generated files: `ordo help --man` (the man page) and
// `ordo help --bash-completion` (apps/ordo/CMakeLists.txt installs both).
int RunHelp(int argc, char** argv) {
  using ordo::cli::kExitOk;
  const std::string_view what = argc >= 3 && argv[2] != nullptr ? argv[2] : "";
  if (what.empty()) {
    std::cout << Usage();
    return kExitOk;
  }
  if (what == "--man") {
    std::cout << ordo::cli::ManPage(ORDO_DESCRIPTION, ORDO_VERSION, Usage(), EveryCommandsHelp());
    return kExitOk;
  }
  if (what == "--bash-completion") {
    static constexpr std::string_view kDispatcherWords[] = {"help", "--help", "--version"};
    std::cout << ordo::cli::BashCompletion(EveryCommandsHelp(), kDispatcherWords);
    return kExitOk;
  }
  if (const Command* c = Find(what)) return RunHelpOf(*c);
  return ordo::cli::UsageError("unknown command \"" + std::string(what) + "\"", Usage());
}

int Dispatch(int argc, char** argv) {
  using ordo::cli::kExitBadInput;
  using ordo::cli::kExitOk;
  if (argc < 2 || argv[1] == nullptr) {
    std::cerr << Usage();
    return kExitBadInput;
  }
  const std::string_view command = argv[1];
  if (command == "help") return RunHelp(argc, argv);
  if (command == "--help" || command == "-h") {
    std::cout << Usage();
    return kExitOk;
  }
  if (command == "--version") {
    std::cout << "ordo " << ORDO_VERSION << "\n";
    return kExitOk;
  }
  if (const Command* c = Find(command)) return c->run(argc - 1, argv + 1);
  return ordo::cli::UsageError("unknown command \"" + std::string(command) + "\"", Usage());
}

}  // namespace

// The largest scenarios are planned, checked and written over GPU x step grids of hundreds of MB,
// and on a virtual machine every 4 KB page faulted in costs microseconds: at 6,656 GPUs x 10,080
// steps, faulting the grids in took half of `ordo plan`'s time. glibc backs malloc with
// transparent huge pages (2 MB a fault) when its hugetlb tunable is set, which it reads only as
// a process starts: the binary sets it and executes itself again, once, unless GLIBC_TUNABLES is
// set already (the caller's choice stands). Where the kernel offers no huge pages this changes
// nothing; if the exec fails the run goes on as it is.
void UseHugePages(char** argv) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1) != 0) return;
  execv("/proc/self/exe", argv);
}

int main(int argc, char** argv) {
  UseHugePages(argv);
  try {
    return Dispatch(argc, argv);
  } catch (const std::exception& e) {
    // Libraries are meant to return errors; anything thrown is a bug, reported, not a crash.
    std::cerr << "ordo: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "ordo: internal error\n";
  }
  return ordo::cli::kExitFailed;
}
