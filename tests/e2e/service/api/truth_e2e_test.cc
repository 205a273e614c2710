// `ordo serve` over real HTTP: the service tells the truth and keeps tenants apart (issue 15's
// examples, each with the corrected answer): no other tenant's job id in any view, the real holder
// named, a service at its daily low not called "at its peak", a job that can never run refused at
// submission, fifo's head-of-line reason, one step numbering after the clock advances.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/service/support/server_process.h"

namespace ordo::testing::e2e {
namespace {

using nlohmann::json;

class TruthTest : public ::testing::Test {
 protected:
  void StartServer(json config) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = ArtifactDir(std::string("truth-") + info->name());
    server_ = ServerProcess::Start(config, {"--manual-clock", "--full-every", "0"}, dir_);
    ASSERT_TRUE(server_.running());
  }
  void TearDown() override {
    if (HasFailure() && server_.running()) {
      std::cerr << "server log:\n" << server_.Log().substr(0, 20000) << "\n";
    }
  }
  void Submit(const char* token, const json& job) {
    Response r = server_.Post("/v1/jobs", token, job.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  json Get(const std::string& path, const char* token) {
    Response r = server_.Get(path, token);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return r.json();
  }

  std::filesystem::path dir_;
  ServerProcess server_;
};

json Job(const std::string& id, int gpus, int duration, double priority) {
  return {{"id", id},
          {"kind", "training"},
          {"priority", priority},
          {"gpus", gpus},
          {"duration_steps", duration}};
}

json Service(const std::string& id, int min_gpus, std::vector<int> demand) {
  return {
      {"id", id}, {"priority", 10}, {"min_gpus", min_gpus}, {"max_gpus", 16}, {"demand", demand}};
}

// Tenant B's secret-x (priority 9, 8 GPUs) holds the only node; tenant A's job waits behind it.
// Nothing A reads names secret-x or its priority; the admin sees it.
TEST_F(TruthTest, AnotherTenantsJobIsNeverNamed) {
  StartServer(TestConfig(1, 12));
  Submit(kTokenB, Job("secret-x", 8, 4, 9));
  Submit(kTokenA, Job("a-wait", 8, 2, 1));

  json view = Get("/v1/jobs/a-wait", kTokenA);
  // Under ordo a planned job of higher priority holding the node is "lower value than the planned
  // work"; either way the holder is not named.
  EXPECT_TRUE(view["reason"] == "low_value" || view["reason"] == "blocked_by_job") << view.dump();
  EXPECT_TRUE(view["blocking_id"].is_null()) << view.dump();
  EXPECT_NE(view["message"].get<std::string>().find("another tenant's job"), std::string::npos)
      << view.dump();
  EXPECT_EQ(view["planned_start_step"], 4);

  const std::vector<std::pair<std::string, std::string>> reads = {
      {"GET", "/v1/jobs/a-wait"},
      {"GET", "/v1/jobs"},
      {"GET", "/v1/plan"},
      {"GET", "/v1/dashboard"},
      {"GET", "/v1/history?from=0&to=10"},
      {"POST", "/v1/whatif"}};
  for (const auto& [method, path] : reads) {
    Response r = method == "GET"
                     ? server_.Get(path, kTokenA)
                     : server_.Post(path, kTokenA, json{{"jobs", {Job("w", 8, 1, 1)}}}.dump());
    EXPECT_EQ(r.body.find("secret-x"), std::string::npos)
        << method << " " << path << ": " << r.body;
    EXPECT_EQ(r.body.find("priority 9"), std::string::npos) << method << " " << path;
  }
  // Asking for it by name is a 404 that says no more than the caller's own words.
  Response probe = server_.Get("/v1/jobs/secret-x", kTokenA);
  EXPECT_EQ(probe.status, 404);
  EXPECT_EQ(probe.json()["error"]["message"], "no job \"secret-x\"") << probe.body;

  // The admin addresses and reads jobs by their qualified ids.
  json admin = Get("/v1/jobs/a/a-wait", kAdminToken);
  EXPECT_EQ(admin["blocking_id"], "b/secret-x");
  EXPECT_NE(admin["message"].get<std::string>().find("\"b/secret-x\" (priority 9"),
            std::string::npos);
}

// asr-quant ends at step 3 on the other half of the node; llama-ft holds its half until step 10.
// The binding holder is llama-ft, and asr-quant is named only for the steps it really holds GPUs.
TEST_F(TruthTest, TheRealHolderIsNamed) {
  StartServer(TestConfig(1, 12));
  Submit(kTokenA, Job("asr-quant", 4, 3, 9));
  Submit(kTokenA, Job("llama-ft", 4, 10, 8));
  Submit(kTokenA, Job("wait", 8, 2, 1));
  json view = Get("/v1/jobs/wait", kTokenA);
  EXPECT_EQ(view["planned_start_step"], 10) << view.dump();
  EXPECT_EQ(view["blocking_id"], "llama-ft") << view.dump();
  const std::string message = view["message"];
  EXPECT_NE(message.find("job \"llama-ft\" (priority 8, steps 0-9)"), std::string::npos) << message;
  if (message.find("asr-quant") != std::string::npos) {
    // Named only for the steps it holds GPUs of the block, with its real run.
    EXPECT_EQ(message.rfind("steps 0-2: ", 0), 0u) << message;
    EXPECT_NE(message.find("job \"asr-quant\" (priority 9, steps 0-2)"), std::string::npos)
        << message;
    EXPECT_LT(message.find("asr-quant"), message.find("steps 3-9: ")) << message;
  }
  EXPECT_EQ(message.find("until step 8"), std::string::npos) << message;

  // The plan's x-explain carries the same facts as spans covering every step of the wait.
  json plan = Get("/v1/plan", kTokenA);
  bool found = false;
  for (const json& e : plan["x-explain"]) {
    if (e["id"] != "wait") continue;
    found = true;
    int at = 0;
    for (const json& span : e["spans"]) {
      EXPECT_EQ(span["from_step"], at) << e.dump();
      at = span["to_step"];
    }
    EXPECT_EQ(at, 10) << e.dump();
  }
  EXPECT_TRUE(found) << plan.dump();
}

// chat needs 2 GPUs for four steps (its low), then nothing, then 8 at its peak. A job that waits
// while chat is at 2 is told chat holds GPUs at demand 2 of its peak 8, never "at its peak".
TEST_F(TruthTest, AServiceAtItsLowIsNotCalledAtItsPeak) {
  StartServer(TestConfig(1, 12));
  ASSERT_EQ(server_
                .Post("/v1/services", kAdminToken,
                      Service("chat", 0, {2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 8, 8}).dump())
                .status,
            201);
  Submit(kTokenA, Job("needs-all", 8, 2, 1));
  json view = Get("/v1/jobs/needs-all", kTokenA);
  ASSERT_FALSE(view["planned_start_step"].is_null()) << view.dump();
  EXPECT_NE(view["reason"], "service_peak") << view.dump();
  EXPECT_EQ(view["reason"], "blocked_by_service") << view.dump();
  EXPECT_EQ(view["blocking_id"], "chat");
  const std::string message = view["message"];
  EXPECT_NE(message.find("service \"chat\" (demand 2 of its peak 8"), std::string::npos) << message;
  EXPECT_EQ(message.find("at or near its peak"), std::string::npos) << message;
}

// 16 GPUs and a service that never drops below one: a 16-GPU job can never run. It is refused at
// submission with a 400 naming `gpus`; with an 8-GPU alternative shape it is accepted.
TEST_F(TruthTest, AJobThatCanNeverRunIsRefusedAtSubmission) {
  StartServer(TestConfig(2, 12));
  ASSERT_EQ(
      server_.Post("/v1/services", kAdminToken, Service("chat", 1, std::vector<int>(12, 1)).dump())
          .status,
      201);
  Response r = server_.Post("/v1/jobs", kTokenA, Job("llama-16", 16, 2, 5).dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json()["error"]["field"], "gpus") << r.body;
  EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("never run"), std::string::npos)
      << r.body;
  EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("min_gpus"), std::string::npos)
      << r.body;

  json shapes = {
      {"id", "llama-16-or-8"},
      {"kind", "training"},
      {"priority", 5},
      {"shapes", {{{"gpus", 16}, {"duration_steps", 2}}, {{"gpus", 8}, {"duration_steps", 4}}}}};
  EXPECT_EQ(server_.Post("/v1/jobs", kTokenA, shapes.dump()).status, 201);
  json only16 = shapes;
  only16["id"] = "only-16";
  only16["shapes"] = {{{"gpus", 16}, {"duration_steps", 2}}, {{"gpus", 16}, {"duration_steps", 1}}};
  Response refused = server_.Post("/v1/jobs", kTokenA, only16.dump());
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.json()["error"]["field"], "shapes") << refused.body;
}

// Under fifo a job waits behind the first job of the queue, even with a block free: that is
// head-of-line blocking, not "low value".
TEST_F(TruthTest, FifoSaysHeadOfLine) {
  StartServer(TestConfig(1, 12));
  Submit(kTokenA, Job("h1", 4, 3, 1));
  json body = {{"policy", "fifo"}, {"jobs", {Job("w1", 8, 2, 1), Job("w2", 1, 1, 1)}}};
  Response r = server_.Post("/v1/whatif", kTokenA, body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  bool found = false;
  for (const json& job : r.json()["jobs"]) {
    if (job["id"] != "w2") continue;
    found = true;
    EXPECT_EQ(job["reason"], "head_of_line") << job.dump();
    EXPECT_EQ(job["blocking_id"], "w1") << job.dump();
    const std::string message = job["message"];
    EXPECT_NE(message.find("waits behind job \"w1\""), std::string::npos) << message;
    EXPECT_NE(message.find("first in the queue"), std::string::npos) << message;
    EXPECT_EQ(message.find("value"), std::string::npos) << message;
  }
  EXPECT_TRUE(found) << r.body;
}

// After the clock advances 4 steps every step in a view is absolute (with its time); the distance
// from now is only an extra field.
TEST_F(TruthTest, OneStepNumberingAfterAdvance) {
  StartServer(TestConfig(1, 12));
  Submit(kTokenA, Job("first", 8, 6, 5));
  Submit(kTokenA, Job("second", 8, 2, 1));
  Response advanced = server_.Post("/v1/clock/advance", kAdminToken, R"({"steps": 4})");
  ASSERT_EQ(advanced.status, 200) << advanced.body;
  ASSERT_EQ(advanced.json()["next_step"], 4);

  json running = Get("/v1/jobs/first", kTokenA);
  EXPECT_EQ(running["state"], "running");
  EXPECT_EQ(running["planned_start_step"], 0);
  EXPECT_EQ(running["end_step"], 6);
  EXPECT_TRUE(running["end_time"].is_string());
  EXPECT_NE(running["message"].get<std::string>().find("since step 0, until step 6"),
            std::string::npos)
      << running.dump();

  json pending = Get("/v1/jobs/second", kTokenA);
  EXPECT_EQ(pending["planned_start_step"], 6) << pending.dump();
  EXPECT_EQ(pending["planned_start_in_steps"], 2) << pending.dump();
  EXPECT_TRUE(pending["planned_start_time"].is_string());
  const std::string message = pending["message"];
  EXPECT_NE(message.find("planned start: step 6"), std::string::npos) << message;
  EXPECT_NE(message.find("steps 4-5"), std::string::npos) << message;
  EXPECT_NE(message.find("\"first\" (priority 5, running, steps 0-5)"), std::string::npos)
      << message;

  // The dashboard's rows carry the same absolute numbers.
  json dashboard = Get("/v1/dashboard", kTokenA);
  for (const json& job : dashboard["jobs"]) {
    if (job["id"] == "second") {
      EXPECT_EQ(job["planned_start_step"], 6);
    }
  }
  EXPECT_EQ(dashboard["next_step"], 4);
  EXPECT_EQ(dashboard["current_step"], 3);
}

}  // namespace
}  // namespace ordo::testing::e2e
