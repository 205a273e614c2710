// End-to-end support: runs the real `ordo serve` binary (OrdoBinary()) on 127.0.0.1
// with a random free port, in a temporary directory, and talks to it over real HTTP. Nothing here
// ever contacts an address other than 127.0.0.1.
//
//   ServerProcess server = ServerProcess::Start(TestConfig(), {"--manual-clock"});
//   auto response = server.Post("/v1/jobs", kTenantA, R"({"kind": "training", ...})");
//   server.Kill9();  server.Restart();
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/service/support/http_client.h"

namespace ordo::testing::e2e {

inline constexpr const char* kAdminToken = "admin-token-0123456789";
inline constexpr const char* kTokenA = "tenant-a-token-0123456789";
inline constexpr const char* kTokenB = "tenant-b-token-0123456789";

/// A config: one group of `nodes` x 8 GPUs, 12 one-hour steps, tenants "a" and "b".
inline nlohmann::json TestConfig(int nodes = 2, int horizon_steps = 12) {
  return {{"step_minutes", 60},
          {"horizon_steps", horizon_steps},
          {"cluster",
           {{"node_groups",
             {{{"name", "h100"}, {"nodes", nodes}, {"gpus_per_node", 8}, {"gpu_type", "H100"}}}}}},
          {"tenants", {{{"name", "a"}, {"token", kTokenA}}, {{"name", "b"}, {"token", kTokenB}}}},
          {"admin_token", kAdminToken}};
}

/// The `ordo` binary under test: $ORDO_BINARY, else the path CMake compiled in
/// (ORDO_TEST_BINARY), else <build>/apps/ordo/ordo next to this test's <build>/tests/.
inline std::string OrdoBinary() {
  if (const char* env = std::getenv("ORDO_BINARY"); env != nullptr && *env != '\0') return env;
#if defined(ORDO_TEST_BINARY)
  return ORDO_TEST_BINARY;
#else
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (self.parent_path().parent_path() / "apps" / "ordo" / "ordo").string();
#endif
}

/// The directory for a test's files: <build>/test-artifacts/<name>, emptied first.
inline std::filesystem::path ArtifactDir(const std::string& name) {
  const std::string binary = OrdoBinary();
  std::filesystem::path root =
      !binary.empty() ? std::filesystem::path(binary).parent_path().parent_path().parent_path()
                      : std::filesystem::temp_directory_path();
  std::filesystem::path dir = root / "test-artifacts" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

struct Response {
  int status = 0;  // 0: no answer (connection failed)
  std::string body;
  // The body as JSON (discarded when it is not JSON). Mutable so that json()["missing"] gives
  // null, as on any json, instead of asserting.
  mutable nlohmann::json parsed;
  /// A reference into this Response: keep the Response alive while using it (range-for over a
  /// temporary's member would dangle).
  nlohmann::json& json() const { return parsed; }
};

class ServerProcess {
 public:
  /// Starts `ordo serve` with `config` in `dir` (its database, log and port file live there).
  static ServerProcess Start(const nlohmann::json& config, std::vector<std::string> extra_args,
                             const std::filesystem::path& dir) {
    ServerProcess p;
    p.dir_ = dir;
    p.extra_ = std::move(extra_args);
    std::ofstream(dir / "config.json") << config.dump(2);
    p.Launch();
    return p;
  }

  ServerProcess() = default;
  ServerProcess(ServerProcess&& other) noexcept { *this = std::move(other); }
  ServerProcess& operator=(ServerProcess&& other) noexcept {
    pid_ = std::exchange(other.pid_, -1);
    port_ = other.port_;
    dir_ = other.dir_;
    extra_ = other.extra_;
    launches_ = other.launches_;
    return *this;
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::filesystem::path& dir() const { return dir_; }
  bool running() const { return pid_ > 0; }

  /// SIGKILL: no shutdown code runs.
  void Kill9() {
    ASSERT_GT(pid_, 0);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  /// SIGTERM and wait; returns the exit status.
  int Terminate() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  /// Starts the same command again on the same database (a new random port).
  void Restart() { Launch(); }

  /// The server's stderr so far (structured logs), for failure messages.
  std::string Log() const {
    std::ifstream in(dir_ / ("server-" + std::to_string(launches_) + ".log"));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  /// A new connection to the server (kept alive across its requests).
  HttpConnection Connect(double timeout_s = 60) const { return HttpConnection(port_, timeout_s); }

  Response Get(const std::string& path, const char* token) const {
    return Call("GET", path, token, "");
  }
  Response Post(const std::string& path, const char* token, const std::string& body) const {
    return Call("POST", path, token, body);
  }
  Response Put(const std::string& path, const char* token, const std::string& body) const {
    return Call("PUT", path, token, body);
  }
  Response Delete(const std::string& path, const char* token) const {
    return Call("DELETE", path, token, "");
  }

  Response Call(const std::string& method, const std::string& path, const char* token,
                const std::string& body) const {
    HttpConnection connection = Connect();
    std::vector<std::pair<std::string, std::string>> headers;
    if (token != nullptr) headers.emplace_back("Authorization", std::string("Bearer ") + token);
    std::optional<RawResponse> result =
        connection.Request(method, path, headers, method == "GET" || method == "DELETE" ? "" : body,
                           /*close=*/true);
    if (!result) return {};
    return {result->status, result->body, nlohmann::json::parse(result->body, nullptr, false)};
  }

 private:
  void Launch() {
    const std::string binary = OrdoBinary();
    ASSERT_TRUE(std::filesystem::exists(binary)) << "no ordo binary at \"" << binary << "\"";
    ++launches_;
    const std::filesystem::path port_file = dir_ / "port";
    std::filesystem::remove(port_file);
    std::vector<std::string> args = {binary,        "serve",
                                     "--config",    (dir_ / "config.json").string(),
                                     "--db",        (dir_ / "ordo.db").string(),
                                     "--listen",    "127.0.0.1:0",
                                     "--port-file", port_file.string()};
    args.insert(args.end(), extra_.begin(), extra_.end());
    const std::string log = (dir_ / ("server-" + std::to_string(launches_) + ".log")).string();
    // Everything the child needs is prepared before fork: the test may have other threads, so the
    // child calls only async-signal-safe functions (no allocation) until execv.
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 2);
        dup2(fd, 1);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
    pid_ = pid;
    // Wait for the port file (an ASan build starts slowly on a busy machine).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "ordo serve exited during start-up; its log:\n" << Log();
      }
      std::ifstream in(port_file);
      if (in >> port_ && port_ > 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL() << "ordo serve did not start within 90 s; its log:\n" << Log();
  }

  pid_t pid_ = -1;
  int port_ = 0;
  std::filesystem::path dir_;
  std::vector<std::string> extra_;
  int launches_ = 0;
};

}  // namespace ordo::testing::e2e
