// `ordo serve` over real HTTP: tenants with a share and a max_priority (issue 16, item 2). A
// submission above the tenant's cap is a 400 naming `priority`; a bad share or cap in the config
// makes `ordo serve` exit 2 naming the field; a job that waits ages until it wins.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "tests/e2e/service/support/server_process.h"

namespace ordo::testing::e2e {
namespace {

using nlohmann::json;

json Job(const std::string& id, int gpus, int duration, double priority) {
  return {{"id", id},
          {"kind", "training"},
          {"priority", priority},
          {"gpus", gpus},
          {"duration_steps", duration}};
}

// Runs `ordo serve` on `config` until it exits (a bad config never serves); its exit code and
// what it wrote.
std::pair<int, std::string> ServeOnce(const std::filesystem::path& dir, const json& config) {
  std::ofstream(dir / "bad-config.json") << config.dump(2);
  // `timeout`: a config accepted by mistake would serve forever; it fails the test instead.
  const std::string command = "timeout 30 " + OrdoBinary() + " serve --config " +
                              (dir / "bad-config.json").string() + " --db " +
                              (dir / "bad.db").string() + " --listen 127.0.0.1:0 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  std::array<char, 4096> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(TenantPriority, MaxPriorityIsEnforcedAndBadConfigExits2) {
  const std::filesystem::path dir = ArtifactDir("tenant-priority");
  json config = TestConfig();  // 16 GPUs
  config["tenants"][0]["share"] = "50%";
  config["tenants"][0]["max_priority"] = 5;
  config["tenants"][1]["share"] = 8;
  ServerProcess server = ServerProcess::Start(config, {"--manual-clock", "--full-every", "0"}, dir);
  ASSERT_TRUE(server.running());

  Response above = server.Post("/v1/jobs", kTokenA, Job("too-high", 1, 1, 6).dump());
  EXPECT_EQ(above.status, 400) << above.body;
  EXPECT_EQ(above.json()["error"]["field"], "priority") << above.body;
  EXPECT_EQ(server.Post("/v1/jobs", kTokenA, Job("at-cap", 1, 1, 5).dump()).status, 201);
  EXPECT_EQ(server.Post("/v1/jobs", kTokenB, Job("uncapped", 1, 1, 9).dump()).status, 201);
  Response whatif = server.Post("/v1/whatif", kTokenA, json{{"jobs", {Job("w", 1, 1, 9)}}}.dump());
  EXPECT_EQ(whatif.status, 400) << whatif.body;
  EXPECT_EQ(whatif.json()["error"]["field"], "jobs[0].priority") << whatif.body;
  EXPECT_EQ(server.Terminate(), 0);

  struct Bad {
    const char* name;
    std::function<void(json&)> edit;
    const char* field;
  };
  for (const Bad& bad : {
           Bad{"negative share", [](json& c) { c["tenants"][0]["share"] = -2; },
               "tenants[0].share"},
           Bad{"shares above the cluster", [](json& c) { c["tenants"][1]["share"] = 9; },
               "tenants[1].share"},
           Bad{"max_priority above 10", [](json& c) { c["tenants"][0]["max_priority"] = 11; },
               "tenants[0].max_priority"},
           Bad{"max_priority below 1", [](json& c) { c["tenants"][0]["max_priority"] = 0.5; },
               "tenants[0].max_priority"},
           Bad{"aging cap below 1",
               [](json& c) {
                 c["planning"] = {{"aging", {{"cap", 0}}}};
               },
               "planning.aging.cap"},
       }) {
    json broken = config;
    bad.edit(broken);
    const auto [code, output] = ServeOnce(dir, broken);
    EXPECT_EQ(code, 2) << bad.name << ": " << output;
    EXPECT_NE(output.find(bad.field), std::string::npos) << bad.name << ": " << output;
  }
}

// L (priority 1) waits behind a 6-step blocker; at step 5 H (priority 2) arrives. L has aged to
// 2.25 and runs first; the step it runs is reported at its base priority (16 GPUs x 1).
TEST(TenantPriority, AWaitingJobAgesUntilItWins) {
  const std::filesystem::path dir = ArtifactDir("tenant-priority-aging");
  ServerProcess server =
      ServerProcess::Start(TestConfig(), {"--manual-clock", "--full-every", "0"}, dir);
  ASSERT_TRUE(server.running());
  ASSERT_EQ(server.Post("/v1/jobs", kTokenA, Job("blocker", 16, 6, 10).dump()).status, 201);
  ASSERT_EQ(server.Post("/v1/jobs", kTokenB, Job("low", 16, 1, 1).dump()).status, 201);
  ASSERT_EQ(server.Post("/v1/clock/advance", kAdminToken, R"({"steps": 5})").status, 200);
  ASSERT_EQ(server.Post("/v1/jobs", kTokenA, Job("high", 16, 1, 2).dump()).status, 201);
  Response low = server.Get("/v1/jobs/low", kTokenB);
  ASSERT_EQ(low.status, 200) << low.body;
  EXPECT_EQ(low.json()["planned_start_step"], 6) << low.body;
  Response high = server.Get("/v1/jobs/high", kTokenA);
  EXPECT_EQ(high.json()["planned_start_step"], 7) << high.body;
  ASSERT_EQ(server.Post("/v1/clock/advance", kAdminToken, R"({"steps": 2})").status, 200);
  Response history = server.Get("/v1/plan/history?from=6&to=7", kAdminToken);
  ASSERT_EQ(history.status, 200) << history.body;
  ASSERT_EQ(history.json()["steps"].size(), 1u) << history.body;
  EXPECT_EQ(history.json()["steps"][0]["value"], 16) << history.body;
  ASSERT_EQ(history.json()["steps"][0]["jobs"].size(), 1u);
  EXPECT_EQ(history.json()["steps"][0]["jobs"][0]["id"], "b/low");
}

}  // namespace
}  // namespace ordo::testing::e2e
