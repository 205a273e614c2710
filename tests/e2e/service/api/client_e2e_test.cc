// `ordo submit | queue | show | plan | advance | cancel` against the real `ordo serve` over HTTP
// on 127.0.0.1: the squeue-like tables, --json, the exit codes (0 done, 1 the server said no,
// 2 usage, 3 unreachable) and where the server and token come from (flag, environment, file).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/cli_runner.h"
#include "tests/e2e/service/support/server_process.h"

namespace ordo::testing::e2e {
namespace {

using nlohmann::json;

// A port nothing listens on: bound by the kernel's choice, then released.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

int Lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// The cells of the table row whose first cell is `id` (split on runs of spaces).
std::vector<std::string> Row(const std::string& table, const std::string& id) {
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    std::vector<std::string> row;
    std::string cell;
    while (cells >> cell) row.push_back(cell);
    if (!row.empty() && row[0] == id) return row;
  }
  return {};
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The user's own client config and variables must not leak into the test.
    for (const char* name : {"ORDO_SERVER", "ORDO_TOKEN", "ORDO_CONFIG"}) unsetenv(name);
    setenv("XDG_CONFIG_HOME", home_.path().c_str(), 1);
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    server_ = ServerProcess::Start(TestConfig(), {"--manual-clock", "--full-every", "0"},
                                   ArtifactDir(std::string("client-") + info->name()));
    ASSERT_TRUE(server_.running());
    url_ = "http://127.0.0.1:" + std::to_string(server_.port());
  }
  void TearDown() override {
    for (const char* name : {"ORDO_SERVER", "ORDO_TOKEN", "ORDO_CONFIG", "XDG_CONFIG_HOME"}) {
      unsetenv(name);
    }
  }

  // `ordo ARGS --server URL --token TOKEN`.
  CliResult Client(std::vector<std::string> args, const char* token = kTokenA) {
    args.insert(args.end(), {"--server", url_, "--token", token});
    return RunOrdo(args);
  }

  json Json(std::vector<std::string> args, const char* token = kTokenA) {
    args.push_back("--json");
    const CliResult r = Client(args, token);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json parsed = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << r.out;
    return parsed;
  }

  TempDir home_;
  ServerProcess server_;
  std::string url_;
};

TEST_F(ClientTest, SubmitQueueShowPlanAdvanceCancel) {
  const CliResult big = Client({"submit", "--id", "big", "--kind", "training", "--priority", "5",
                                "--gpus", "16", "--duration-steps", "3"});
  ASSERT_EQ(big.exit_code, 0) << big.err;
  EXPECT_EQ(big.out, "Submitted job big\n");
  // A job file, with a flag on top of it.
  WriteWhole(home_.path() / "small.json",
             R"({"id": "small", "kind": "training", "priority": 9, "gpus": 16,
                 "duration_steps": 2})");
  const json small = Json({"submit", (home_.path() / "small.json").string(), "--priority", "1"});
  EXPECT_EQ(small["id"], "small");

  const CliResult queue = Client({"queue"});
  ASSERT_EQ(queue.exit_code, 0) << queue.err;
  EXPECT_EQ(queue.out.rfind("JOBID", 0), 0u) << queue.out;
  for (const char* column : {"KIND", "PRIO", "GPUS", "STATE", "START", "END", "REASON"}) {
    EXPECT_NE(queue.out.find(column), std::string::npos) << column;
  }
  // The table says what the API says: absolute start steps and UTC times, the reason.
  const json jobs = Json({"queue"})["jobs"];
  ASSERT_EQ(jobs.size(), 2u) << jobs.dump();
  for (const json& job : jobs) {
    const std::vector<std::string> row = Row(queue.out, job["id"]);
    ASSERT_EQ(row.size(), 10u) << queue.out;
    EXPECT_EQ(row[2], job["id"] == "big" ? "5" : "1");
    EXPECT_EQ(row[4], "pending");
    EXPECT_EQ(row[5], std::to_string(job["planned_start_step"].get<int>())) << job.dump();
    EXPECT_EQ(row[6], job["planned_start_time"].get<std::string>());
    EXPECT_EQ(row[9], job["reason"].get<std::string>());
  }
  // Both need the whole cluster: small, the lower priority, waits for big.
  const std::vector<std::string> small_row = Row(queue.out, "small");
  EXPECT_NE(small_row[9], "none") << queue.out;

  const CliResult show = Client({"show", "small"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const json shown = Json({"show", "small"});
  EXPECT_EQ(shown["id"], "small");
  EXPECT_NE(show.out.find("reason:"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(shown["message"].get<std::string>()), std::string::npos) << show.out;

  const CliResult plan = Client({"plan"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  const json plan_json = Json({"plan"});
  EXPECT_TRUE(plan_json.contains("x-step")) << plan_json.dump();
  EXPECT_NE(Row(plan.out, "big").size(), 0u) << plan.out;
  EXPECT_NE(Row(plan.out, "small").size(), 0u) << plan.out;

  // Only the admin advances the clock: a tenant is told so by the server (403, exit 1).
  const CliResult refused = Client({"advance"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("403"), std::string::npos) << refused.err;
  const json advanced = Json({"advance", "1"}, kAdminToken);
  EXPECT_EQ(advanced["next_step"], advanced["step"].get<int>() + 1) << advanced.dump();
  const json running = Json({"show", "big"});
  EXPECT_EQ(running["state"], "running") << running.dump();
  const std::vector<std::string> big_row = Row(Client({"queue"}).out, "big");
  ASSERT_EQ(big_row.size(), 10u);
  EXPECT_EQ(big_row[4], "running");
  EXPECT_EQ(big_row[7], std::to_string(running["end_step"].get<int>()));

  const CliResult cancel = Client({"cancel", "small"});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(cancel.out, "Cancelled job small\n");
  EXPECT_EQ(Json({"show", "small"})["state"], "cancelled");
  // The default queue lists pending and running jobs; --all the cancelled one too.
  EXPECT_TRUE(Row(Client({"queue"}).out, "small").empty());
  EXPECT_EQ(Row(Client({"queue", "--all"}).out, "small")[4], "cancelled");
  EXPECT_EQ(Json({"queue", "--state", "cancelled"})["jobs"].size(), 1u);
}

TEST_F(ClientTest, ServerRefusalsExitOneWithTheServersMessage) {
  const Response direct = server_.Get("/v1/jobs", "wrong-token-0123456789");
  ASSERT_EQ(direct.status, 401);
  const std::string message = direct.json()["error"]["message"];
  const CliResult bad_token = Client({"queue"}, "wrong-token-0123456789");
  EXPECT_EQ(bad_token.exit_code, 1);
  EXPECT_EQ(Lines(bad_token.err), 1) << bad_token.err;
  EXPECT_NE(bad_token.err.find("401"), std::string::npos) << bad_token.err;
  EXPECT_NE(bad_token.err.find(message), std::string::npos) << bad_token.err;
  EXPECT_TRUE(bad_token.out.empty());

  // The server names the field it refuses.
  const CliResult bad_job = Client(
      {"submit", "--kind", "training", "--priority", "1", "--gpus", "3", "--duration-steps", "1"});
  EXPECT_EQ(bad_job.exit_code, 1);
  EXPECT_NE(bad_job.err.find("400 bad request: gpus: "), std::string::npos) << bad_job.err;
  const CliResult unknown = Client({"show", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("404"), std::string::npos) << unknown.err;
  // Another tenant's job is unknown to this one.
  ASSERT_EQ(Client({"submit", "--id", "mine", "--kind", "training", "--priority", "1", "--gpus",
                    "1", "--duration-steps", "1"})
                .exit_code,
            0);
  EXPECT_EQ(Client({"cancel", "mine"}, kTokenB).exit_code, 1);
  EXPECT_EQ(Client({"cancel", "mine"}, kTokenA).exit_code, 0);
}

TEST_F(ClientTest, UnreachableServerExitsThreeInOneLine) {
  const std::string nowhere = "http://127.0.0.1:" + std::to_string(FreePort());
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"queue"}, {"show", "x"}, {"plan"}, {"cancel", "x", "y"}, {"advance"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--server", nowhere, "--token", kTokenA});
    const CliResult r = RunOrdo(full);
    EXPECT_EQ(r.exit_code, 3) << args[0] << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("cannot reach " + nowhere), std::string::npos) << r.err;
  }
  const CliResult bad_name =
      RunOrdo({"queue", "--server", "http://no-such-host.invalid:8080", "--token", kTokenA});
  EXPECT_EQ(bad_name.exit_code, 3) << bad_name.err;
  EXPECT_EQ(Lines(bad_name.err), 1) << bad_name.err;
}

TEST_F(ClientTest, ServerAndTokenFromFlagsThenEnvironmentThenConfigFile) {
  // Nothing configured: a usage error that says where to put them.
  const CliResult none = RunOrdo({"queue"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(Lines(none.err), 1) << none.err;
  EXPECT_NE(none.err.find("ORDO_SERVER"), std::string::npos) << none.err;

  // The default config file (XDG_CONFIG_HOME/ordo/client.json) alone.
  std::filesystem::create_directories(home_.path() / "ordo");
  WriteWhole(home_.path() / "ordo" / "client.json",
             json{{"server", url_}, {"token", kTokenA}}.dump());
  ASSERT_EQ(Client({"submit", "--id", "a1", "--kind", "training", "--priority", "1", "--gpus", "1",
                    "--duration-steps", "1"})
                .exit_code,
            0);
  CliResult r = RunOrdo({"queue"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Row(r.out, "a1").empty()) << r.out;

  // The environment beats the file: tenant b sees none of a's jobs.
  setenv("ORDO_TOKEN", kTokenB, 1);
  r = RunOrdo({"queue"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Row(r.out, "a1").empty()) << r.out;
  // The flag beats the environment.
  r = RunOrdo({"queue", "--token", kTokenA});
  EXPECT_FALSE(Row(r.out, "a1").empty()) << r.out;
  // ORDO_SERVER beats the file's server: a dead one gives exit 3.
  setenv("ORDO_SERVER", ("http://127.0.0.1:" + std::to_string(FreePort())).c_str(), 1);
  EXPECT_EQ(RunOrdo({"queue"}).exit_code, 3);
  unsetenv("ORDO_SERVER");
  unsetenv("ORDO_TOKEN");

  // ORDO_CONFIG names another file, which must exist and be well-formed.
  WriteWhole(home_.path() / "other.json", json{{"server", url_}, {"tokn", kTokenA}}.dump());
  setenv("ORDO_CONFIG", (home_.path() / "other.json").c_str(), 1);
  r = RunOrdo({"queue"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("other.json: tokn: unknown field"), std::string::npos) << r.err;
  setenv("ORDO_CONFIG", (home_.path() / "missing.json").c_str(), 1);
  r = RunOrdo({"queue"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;
}

TEST_F(ClientTest, UsageErrorsAreOneLineNamingTheHelp) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"submit", "--gpus", "many"},
                                             {"submit", "--priority", "high"},
                                             {"submit", "a.json", "b.json"},
                                             {"queue", "--state", "pending", "--all"},
                                             {"queue", "--colour"},
                                             {"show"},
                                             {"cancel"},
                                             {"advance", "0"},
                                             {"advance", "1001"},
                                             {"queue", "--server", "https://127.0.0.1:8080"},
                                             {"queue", "--server", "ftp://127.0.0.1:21"},
                                             {"queue", "--server", "http://127.0.0.1:99999"}}) {
    std::vector<std::string> full = args;
    if (std::find(args.begin(), args.end(), "--server") == args.end()) {
      full.insert(full.end(), {"--server", url_});
    }
    full.insert(full.end(), {"--token", kTokenA});
    const CliResult r = RunOrdo(full);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args.back() << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("see `ordo " + args[0] + " --help`"), std::string::npos) << r.err;
  }
  for (const char* command : {"submit", "queue", "show", "cancel", "advance"}) {
    const CliResult help = RunOrdo({command, "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_EQ(help.out.rfind(std::string("usage: ordo ") + command, 0), 0u) << help.out;
  }
}

}  // namespace
}  // namespace ordo::testing::e2e
