// `ordo submit | queue | cancel | show | plan | advance`: thin commands over ordo::client. Each
// parses its arguments, resolves the server and token (flags, environment, config file), makes
// its calls and prints a table, or with --json the server's JSON.
#include "client_commands.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cli.h"
#include "ordo/client/connection.h"
#include "ordo/client/service_client.h"
#include "ordo/client/table.h"

namespace ordo::cli {
namespace {

using client::Reply;
using client::ServiceClient;
using Json = nlohmann::json;

constexpr const char* kConnectionHelp =
    "  --server URL     the service, http://HOST:PORT (else $ORDO_SERVER, else \"server\" in the\n"
    "                   client config: $ORDO_CONFIG, else ~/.config/ordo/client.json)\n"
    "  --token TOKEN    a tenant's or the admin token (else $ORDO_TOKEN, else \"token\" there)\n"
    "  --json           print the server's JSON instead of a table\n"
    "Exit: 0 done; 1 the server said no (its status and message on stderr); 2 bad arguments or\n"
    "no server or token configured; 3 the server cannot be reached.\n";

constexpr OptionSpec kConnectionOptions[] = {
    {"--server", true}, {"--token", true}, {"--json", false}};

// The command's options followed by the connection's.
std::vector<OptionSpec> With(std::initializer_list<OptionSpec> own) {
  std::vector<OptionSpec> all(own);
  all.insert(all.end(), std::begin(kConnectionOptions), std::end(kConnectionOptions));
  return all;
}

// A parsed command line, or the exit code of a usage error or --help already handled.
struct Parsed {
  Args args;
  std::optional<int> exit;
};

Parsed Parse(std::string_view command, int argc, char** argv, std::span<const OptionSpec> options,
             std::string_view usage) {
  Result<Args> args = ParseArgs({argv, static_cast<size_t>(argc)}, options);
  if (!args) return {{}, CommandUsageError(command, args.error().ToString())};
  if (args->help) {
    std::cout << usage;
    return {*args, kExitOk};
  }
  return {*args, std::nullopt};
}

// The service client for these arguments, or the exit code of a configuration error.
std::variant<ServiceClient, int> Connect(std::string_view command, const Args& args) {
  Result<client::Connection> connection = client::ResolveConnection(
      {args.value("--server"), args.value("--token")}, client::ProcessEnvironment());
  if (!connection) return CommandUsageError(command, connection.error().ToString());
  return ServiceClient(*connection);
}

// The exit code for a call that did not succeed, after one line on stderr: 3 when there was no
// answer, 1 when the server said no (or answered something that is not ordo).
int CallFailed(const Result<Reply>& reply) {
  if (!reply) {
    std::cerr << "ordo: " << reply.error().ToString() << "\n";
    return reply.error().code == ErrorCode::kIo ? kExitUnreachable : kExitFailed;
  }
  std::cerr << "ordo: the server said " << client::RefusalMessage(*reply) << "\n";
  return kExitFailed;
}

// The server's JSON as it came (its field order kept), one document per line.
int PrintJson(const Reply& reply) {
  std::cout << reply.body;
  if (reply.body.empty() || reply.body.back() != '\n') std::cout << "\n";
  return std::cout.good() ? kExitOk : kExitFailed;
}

// The body of a submission: the JOB file (or stdin for "-") if given, then the flags on top.
Result<Json> SubmissionBody(const Args& args) {
  Json job = Json::object();
  if (!args.positional.empty()) {
    const std::string& path = args.positional[0];
    std::stringstream text;
    if (path == "-") {
      text << std::cin.rdbuf();
    } else {
      std::ifstream in(path, std::ios::binary);
      if (!in) return FailInput(path, "cannot read the job file");
      text << in.rdbuf();
    }
    job = Json::parse(text.str(), nullptr, false);
    if (job.is_discarded() || !job.is_object()) {
      return FailInput(path,
                       "must hold one job as a JSON object (docs/openapi.yaml, JobSubmission)");
    }
  }
  static constexpr std::pair<const char*, const char*> kStrings[] = {
      {"--id", "id"}, {"--kind", "kind"}, {"--gpu-type", "gpu_type"}};
  for (const auto& [option, field] : kStrings) {
    if (auto v = args.value(option)) job[field] = *v;
  }
  if (auto v = args.value("--priority")) {
    char* end = nullptr;
    const double priority = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0') {
      return FailInput("--priority", "must be a number (got \"" + *v + "\")");
    }
    job["priority"] = priority;
  }
  if (auto v = args.value("--gpus")) {
    Result<int> gpus = ParseInteger("--gpus", *v, 1, 1 << 20);
    if (!gpus) return tl::unexpected(gpus.error());
    job["gpus"] = *gpus;
  }
  if (auto v = args.value("--duration-steps")) {
    Result<int> steps = ParseInteger("--duration-steps", *v, 1, 1000000);
    if (!steps) return tl::unexpected(steps.error());
    job["duration_steps"] = *steps;
  }
  return job;
}

}  // namespace

const char* const kSubmitUsage =
    "usage: ordo submit [JOB.json | -] [--kind K] [--priority P] [--gpus N] [--duration-steps D]\n"
    "                   [--id ID] [--gpu-type T] [--server URL] [--token TOKEN] [--json]\n"
    "\n"
    "Submits a job to the service (POST /v1/jobs) and prints its id. The job is the JSON object\n"
    "in JOB.json (or stdin for -), as docs/openapi.yaml's JobSubmission (shapes, features, ...),\n"
    "with the flags set on top; or the flags alone. The server checks it and names any bad field.\n"
    "  --kind K           training, batch_inference or quantization\n"
    "  --priority P       a positive number\n"
    "  --gpus N           GPUs, a power of two;  --duration-steps D  steps it runs\n"
    "  --id ID            the job's id (else the server's job-N; a retry with the same id is "
    "409)\n";

int RunSubmit(int argc, char** argv) {
  const std::string usage = std::string(kSubmitUsage) + kConnectionHelp;
  const std::vector<OptionSpec> options = With({{"--kind", true},
                                                {"--priority", true},
                                                {"--gpus", true},
                                                {"--duration-steps", true},
                                                {"--id", true},
                                                {"--gpu-type", true}});
  Parsed parsed = Parse("submit", argc, argv, options, usage);
  if (parsed.exit) return *parsed.exit;
  const Args& args = parsed.args;
  if (args.positional.size() > 1) {
    return CommandUsageError("submit", "submit takes at most one JOB file");
  }
  Result<Json> body = SubmissionBody(args);
  if (!body) return CommandUsageError("submit", body.error().ToString());
  auto service = Connect("submit", args);
  if (const int* exit = std::get_if<int>(&service)) return *exit;
  Result<Reply> reply = std::get<ServiceClient>(service).Submit(*body);
  if (!reply || !reply->ok()) return CallFailed(reply);
  if (args.has("--json")) return PrintJson(*reply);
  std::cout << "Submitted job " << reply->json.value("id", std::string("?")) << "\n";
  return kExitOk;
}

const char* const kQueueUsage =
    "usage: ordo queue [--state STATE | --all] [--server URL] [--token TOKEN] [--json]\n"
    "\n"
    "Lists the jobs the token may see (a tenant its own, the admin all), as squeue does: pending\n"
    "and running ones by default, in submission order, with the planned or actual start and end\n"
    "as absolute steps and UTC times, and why a pending job waits (docs/explanations.md).\n"
    "  --state STATE    only jobs in STATE: pending, running, done or cancelled\n"
    "  --all            every job, done and cancelled ones too\n";

int RunQueue(int argc, char** argv) {
  const std::string usage = std::string(kQueueUsage) + kConnectionHelp;
  const std::vector<OptionSpec> options = With({{"--state", true}, {"--all", false}});
  Parsed parsed = Parse("queue", argc, argv, options, usage);
  if (parsed.exit) return *parsed.exit;
  const Args& args = parsed.args;
  if (!args.positional.empty()) {
    return CommandUsageError("queue",
                             "queue takes no arguments (got \"" + args.positional[0] + "\")");
  }
  if (args.has("--state") && args.has("--all")) {
    return CommandUsageError("queue", "--state and --all: give one");
  }
  auto service = Connect("queue", args);
  if (const int* exit = std::get_if<int>(&service)) return *exit;
  Result<Reply> reply = std::get<ServiceClient>(service).ListJobs(args.value("--state"));
  if (!reply || !reply->ok()) return CallFailed(reply);
  Json& jobs = reply->json["jobs"];
  if (!args.has("--state") && !args.has("--all")) {
    Json active = Json::array();
    for (Json& job : jobs) {
      const std::string state = job.value("state", std::string());
      if (state == "pending" || state == "running") active.push_back(std::move(job));
    }
    jobs = std::move(active);
  }
  if (args.has("--json")) {
    reply->body = reply->json.dump();
    return PrintJson(*reply);
  }
  std::cout << client::RenderJobTable(reply->json);
  return std::cout.good() ? kExitOk : kExitFailed;
}

const char* const kCancelUsage =
    "usage: ordo cancel JOBID... [--server URL] [--token TOKEN] [--json]\n"
    "\n"
    "Cancels each job (DELETE /v1/jobs/JOBID): a pending job leaves the queue, a running job's\n"
    "GPUs are free from the next step. Every id is tried; the exit is 1 if any was refused.\n";

int RunCancel(int argc, char** argv) {
  const std::string usage = std::string(kCancelUsage) + kConnectionHelp;
  const std::vector<OptionSpec> options = With({});
  Parsed parsed = Parse("cancel", argc, argv, options, usage);
  if (parsed.exit) return *parsed.exit;
  const Args& args = parsed.args;
  if (args.positional.empty())
    return CommandUsageError("cancel", "cancel needs at least one JOBID");
  auto service = Connect("cancel", args);
  if (const int* exit = std::get_if<int>(&service)) return *exit;
  int exit = kExitOk;
  for (const std::string& id : args.positional) {
    Result<Reply> reply = std::get<ServiceClient>(service).Cancel(id);
    if (!reply || !reply->ok()) {
      std::cerr << "ordo: " << id << ": ";
      const int code = CallFailed(reply);
      if (code == kExitUnreachable) return code;  // the rest would fail the same way
      exit = code;
      continue;
    }
    if (args.has("--json")) {
      (void)PrintJson(*reply);
    } else {
      std::cout << "Cancelled job " << id << "\n";
    }
  }
  return exit;
}

const char* const kShowUsage =
    "usage: ordo show JOBID [--server URL] [--token TOKEN] [--json]\n"
    "\n"
    "One job in detail (GET /v1/jobs/JOBID), as scontrol show job: its shape, state, planned or\n"
    "actual start and end (absolute steps and UTC times) and why it waits, in sentences.\n";

int RunShow(int argc, char** argv) {
  const std::string usage = std::string(kShowUsage) + kConnectionHelp;
  const std::vector<OptionSpec> options = With({});
  Parsed parsed = Parse("show", argc, argv, options, usage);
  if (parsed.exit) return *parsed.exit;
  const Args& args = parsed.args;
  if (args.positional.size() != 1) return CommandUsageError("show", "show takes one JOBID");
  auto service = Connect("show", args);
  if (const int* exit = std::get_if<int>(&service)) return *exit;
  Result<Reply> reply = std::get<ServiceClient>(service).Job(args.positional[0]);
  if (!reply || !reply->ok()) return CallFailed(reply);
  if (args.has("--json")) return PrintJson(*reply);
  std::cout << client::RenderJobDetail(reply->json);
  return std::cout.good() ? kExitOk : kExitFailed;
}

const char* const kServicePlanUsage =
    "usage: ordo plan [--server URL] [--token TOKEN] [--json]\n"
    "\n"
    "Without a SCENARIO, `ordo plan` shows the running service's adopted plan (GET /v1/plan):\n"
    "each job's GPUs and its start and end in absolute steps, then the services' GPUs. (With a\n"
    "SCENARIO file it plans the file: `ordo plan SCENARIO --help`.)\n";

int RunServicePlan(int argc, char** argv) {
  const std::string usage = std::string(kServicePlanUsage) + kConnectionHelp;
  const std::vector<OptionSpec> options = With({});
  Parsed parsed = Parse("plan", argc, argv, options, usage);
  if (parsed.exit) return *parsed.exit;
  auto service = Connect("plan", parsed.args);
  if (const int* exit = std::get_if<int>(&service)) return *exit;
  Result<Reply> reply = std::get<ServiceClient>(service).Plan();
  if (!reply || !reply->ok()) return CallFailed(reply);
  if (parsed.args.has("--json")) return PrintJson(*reply);
  std::cout << client::RenderPlan(reply->json);
  return std::cout.good() ? kExitOk : kExitFailed;
}

const char* const kAdvanceUsage =
    "usage: ordo advance [STEPS] [--server URL] [--token TOKEN] [--json]\n"
    "\n"
    "Commits STEPS steps (1-1000, default 1) of a service on the manual clock (`ordo serve\n"
    "--help`; POST /v1/clock/advance; the admin token) and prints the step reached.\n";

int RunAdvance(int argc, char** argv) {
  const std::string usage = std::string(kAdvanceUsage) + kConnectionHelp;
  const std::vector<OptionSpec> options = With({});
  Parsed parsed = Parse("advance", argc, argv, options, usage);
  if (parsed.exit) return *parsed.exit;
  const Args& args = parsed.args;
  if (args.positional.size() > 1) return CommandUsageError("advance", "advance takes one STEPS");
  int steps = 1;
  if (!args.positional.empty()) {
    Result<int> value = ParseInteger("STEPS", args.positional[0], 1, 1000);
    if (!value) return CommandUsageError("advance", value.error().ToString());
    steps = *value;
  }
  auto service = Connect("advance", args);
  if (const int* exit = std::get_if<int>(&service)) return *exit;
  Result<Reply> reply = std::get<ServiceClient>(service).Advance(steps);
  if (!reply || !reply->ok()) return CallFailed(reply);
  if (args.has("--json")) return PrintJson(*reply);
  const Json& body = reply->json;
  std::cout << "Committed " << steps << (steps == 1 ? " step" : " steps")
            << "; the current step is " << body.value("step", Json()).dump() << ", the next "
            << body.value("next_step", Json()).dump() << " (plan version "
            << body.value("plan_version", Json()).dump() << ", "
            << body.value("plan_mode", std::string("?")) << ")\n";
  return kExitOk;
}

}  // namespace ordo::cli
