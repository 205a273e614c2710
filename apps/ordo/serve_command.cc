#include "serve_command.h"

#include <pthread.h>
#include <sys/resource.h>

#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "cli.h"
#include "ordo/service/api.h"
#include "ordo/service/config.h"
#include "ordo/service/engine.h"
#include "ordo/service/log.h"

namespace {

constexpr const char* kServeUsage =
    "usage: ordo serve --config FILE [--db PATH] [--listen ADDR:PORT] [--manual-clock]\n"
    "                  [--port-file PATH] [--log-level LEVEL] [--debounce-ms MS]\n"
    "                  [--fast-time-limit S] [--full-every S] [--full-time-limit S]\n"
    "                  [--max-body-bytes N] [--threads N] [--request-timeout S]\n"
    "                  [--max-connections N] [--max-connections-per-client N]\n"
    "\n"
    "Runs the planning service: a REST API for jobs, services and plans, state in SQLite, a plan\n"
    "re-made after every change and committed one step at a time, metrics at /metrics and a\n"
    "dashboard at / (open http://ADDR:PORT/#token=TOKEN). docs/service.md and docs/openapi.yaml.\n"
    "\n"
    "  --config FILE         cluster, step_minutes, horizon_steps, objective, tenants, "
    "admin_token\n"
    "  --db PATH             the SQLite database (default ordo.db; created when missing)\n"
    "  --listen ADDR:PORT    where to listen (default 127.0.0.1:8080; port 0 picks a free one)\n"
    "  --manual-clock        steps advance only through POST /v1/clock/advance (tests, demos)\n"
    "  --port-file PATH      write the port listened on to PATH once listening\n"
    "  --log-level LEVEL     debug, info (default), warn or error; logs are JSON lines on stderr\n"
    "  --debounce-ms MS      wait this long after a change before re-planning (default 20)\n"
    "  --fast-time-limit S   fast mode's time budget per plan (default 0.05)\n"
    "  --full-every S        run full mode every S seconds (default 300; 0 = never)\n"
    "  --full-time-limit S   full mode's time limit (default 10)\n"
    "  --max-body-bytes N    largest request body accepted, in any transfer encoding\n"
    "                        (default 1048576)\n"
    "  --threads N           request handler threads (default 16)\n"
    "  --request-timeout S   a request's head and body must arrive within S seconds of the server\n"
    "                        starting to wait for it; idle connections close after it (default "
    "10)\n"
    "  --max-connections N   open connections in all; more are refused with 503 (default 1024)\n"
    "  --max-connections-per-client N\n"
    "                        open connections from one address (default 128)\n";

constexpr ordo::cli::OptionSpec kOptions[] = {
    {"--config", true},
    {"--db", true},
    {"--listen", true},
    {"--manual-clock", false},
    {"--port-file", true},
    {"--log-level", true},
    {"--debounce-ms", true},
    {"--fast-time-limit", true},
    {"--full-every", true},
    {"--full-time-limit", true},
    {"--max-body-bytes", true},
    {"--threads", true},
    {"--request-timeout", true},
    {"--max-connections", true},
    {"--max-connections-per-client", true},
};

// Writes the port to `path` atomically (a reader never sees a half-written file).
bool WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return false;
    out << port << "\n";
    if (!out.flush()) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

// What the command line asks of the server, checked: every option in range, the listen address
// parsed. Errors are usage errors (one line, exit 2).
struct ServeSettings {
  std::string config_path;
  ordo::service::LogLevel level = ordo::service::LogLevel::kInfo;
  ordo::service::EngineOptions engine;
  ordo::service::HttpOptions http;
  std::optional<std::string> port_file;
};

ordo::Result<ServeSettings> ReadServeSettings(const ordo::cli::Args& args) {
  namespace service = ordo::service;
  ServeSettings settings;
  if (!args.positional.empty()) {
    return ordo::FailInput("", "unexpected argument \"" + args.positional.front() + "\"");
  }
  const auto config_path = args.value("--config");
  if (!config_path) return ordo::FailInput("", "--config FILE is required");
  settings.config_path = *config_path;
  if (auto name = args.value("--log-level")) {
    auto parsed = service::ParseLogLevel(*name);
    if (!parsed) return ordo::FailInput("--log-level", "must be debug, info, warn or error");
    settings.level = *parsed;
  }
  ORDO_ASSIGN_OR_RETURN(const auto listen,
                        service::ParseListen(args.value("--listen").value_or("127.0.0.1:8080")));
  settings.http.host = listen.first;
  settings.http.port = listen.second;
  settings.port_file = args.value("--port-file");

  service::EngineOptions& options = settings.engine;
  options.db_path = args.value("--db").value_or("ordo.db");
  options.manual_clock = args.has("--manual-clock");
  ORDO_ASSIGN_OR_RETURN(const double debounce,
                        ordo::cli::OptionalNumber(args, "--debounce-ms", 20, 0, 60'000));
  ORDO_ASSIGN_OR_RETURN(const double fast,
                        ordo::cli::OptionalNumber(args, "--fast-time-limit", 0.05, 0, 60));
  ORDO_ASSIGN_OR_RETURN(const double every,
                        ordo::cli::OptionalNumber(args, "--full-every", 300, 0, 7 * 24 * 3600.0));
  ORDO_ASSIGN_OR_RETURN(const double full,
                        ordo::cli::OptionalNumber(args, "--full-time-limit", 10, 0, 3600));
  ORDO_ASSIGN_OR_RETURN(const double body,
                        ordo::cli::OptionalNumber(args, "--max-body-bytes", 1 << 20, 0, 1 << 30));
  ORDO_ASSIGN_OR_RETURN(const double threads,
                        ordo::cli::OptionalNumber(args, "--threads", 16, 0, 1024));
  ORDO_ASSIGN_OR_RETURN(const double request_timeout,
                        ordo::cli::OptionalNumber(args, "--request-timeout", 10, 0, 3600));
  ORDO_ASSIGN_OR_RETURN(const double connections,
                        ordo::cli::OptionalNumber(args, "--max-connections", 1024, 0, 1'000'000));
  ORDO_ASSIGN_OR_RETURN(
      const double per_client,
      ordo::cli::OptionalNumber(args, "--max-connections-per-client", 128, 0, 1'000'000));
  if (fast <= 0 || full <= 0 || body < 1024 || threads < 1 || request_timeout <= 0 ||
      connections < 1 || per_client < 1) {
    return ordo::FailInput(
        "",
        "--fast-time-limit, --full-time-limit and --request-timeout must be > 0, "
        "--max-body-bytes >= 1024, --threads, --max-connections and "
        "--max-connections-per-client >= 1");
  }
  options.debounce_s = debounce / 1000;
  options.fast_time_limit_s = fast;
  options.full_interval_s = every;
  options.full_time_limit_s = full;
  service::http::ServerLimits& limits = settings.http.limits;
  limits.max_body_bytes = static_cast<size_t>(body);
  limits.threads = static_cast<int>(threads);
  limits.request_timeout_s = request_timeout;
  limits.max_connections = static_cast<int>(connections);
  limits.max_connections_per_client = static_cast<int>(per_client);
  return settings;
}

// Each connection is a descriptor: the soft limit (often 1024) would refuse connections before
// --max-connections does. Raised to the hard limit, as the system allows without privileges.
void RaiseOpenFileLimit() {
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

// Serves until SIGINT or SIGTERM, then shuts down: stop listening and close the connections, let
// the requests being handled finish for a bounded time, stop the engine. `signals` are blocked in
// every thread, so one thread takes them with sigwait and shutdown runs as ordinary code.
int ServeUntilSignal(ordo::service::Engine& engine, ordo::service::HttpServer& server,
                     ordo::service::Logger& log, sigset_t signals) {
  std::thread waiter([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    log.Info("shutting_down", {{"signal", signal_number}});
    // Plans in flight (a what-if's, full mode's) return now, so the requests waiting on them end.
    engine.StopPlanning();
    server.Stop();
  });
  server.Run();
  // Run returns on Stop (from the signal) or when the socket fails; either way, shut down. A
  // waiter still blocked in sigwait is released by raising the signal it waits for.
  server.Stop();
  if (waiter.joinable()) {
    pthread_kill(waiter.native_handle(), SIGINT);
    waiter.join();
  }
  // Handlers still running get a moment to finish; stopping the engine then answers the ones
  // waiting on its writer (503). A handler still inside a long computation (a what-if) is not
  // waited for: every acknowledged change is already durable, so the process ends without
  // unwinding the engine under it.
  constexpr double kHandlerGraceS = 2;
  const bool idle = server.WaitIdle(kHandlerGraceS);
  engine.Stop();
  if (!idle && !server.WaitIdle(kHandlerGraceS)) {
    log.Warn("stopped", {{"note", "request handlers still running were not waited for"}});
    std::fflush(nullptr);
    std::_Exit(ordo::cli::kExitOk);
  }
  log.Info("stopped");
  return ordo::cli::kExitOk;
}

}  // namespace

int RunServeCommand(int argc, char** argv) {
  using ordo::cli::kExitFailed;
  namespace service = ordo::service;
  auto args = ordo::cli::ParseArgs(std::span<char* const>(argv + 1, argc - 1), kOptions);
  if (!args) return ordo::cli::UsageError(args.error().ToString(), kServeUsage);
  if (args->help) {
    std::cout << kServeUsage;
    return ordo::cli::kExitOk;
  }
  auto settings = ReadServeSettings(*args);
  if (!settings) return ordo::cli::UsageError(settings.error().ToString(), kServeUsage);
  auto config = service::ReadServiceConfigFile(settings->config_path);
  if (!config) return ordo::cli::FileError(settings->config_path, config.error());

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  RaiseOpenFileLimit();

  service::Logger log(settings->level);
  const std::string& db = settings->engine.db_path;
  auto engine = service::Engine::Open(std::move(*config), settings->engine, &log);
  if (!engine) {
    log.Error("start_failed", {{"error", engine.error().ToString()}, {"db", db}});
    std::cerr << "ordo: " << db << ": " << engine.error().ToString() << "\n";
    return engine.error().code == ordo::ErrorCode::kInvalidInput ? ordo::cli::kExitBadInput
                                                                 : kExitFailed;
  }
  service::HttpServer server(**engine, log, settings->http);
  auto port = server.Bind();
  if (!port) {
    std::cerr << "ordo: " << port.error().ToString() << "\n";
    return kExitFailed;
  }
  (*engine)->Start();
  if (settings->port_file && !WritePortFile(*settings->port_file, *port)) {
    std::cerr << "ordo: cannot write the port file " << *settings->port_file << "\n";
    (*engine)->Stop();
    return kExitFailed;
  }
  const std::string& host = settings->http.host;
  log.Info("listening",
           {{"host", host},
            {"port", *port},
            {"db", db},
            {"dashboard", "http://" + host + ":" + std::to_string(*port) + "/#token=TOKEN"}});
  return ServeUntilSignal(**engine, server, log, signals);
}
