// `ordo serve` over real HTTP on 127.0.0.1: submit, plan, cancel, what-if, services, the clock,
// tenant isolation, authentication, bad requests (400 naming the field), size limits, restart.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "tests/e2e/service/support/server_process.h"

namespace ordo::testing::e2e {
namespace {

using nlohmann::json;

class ServeTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> args = {"--manual-clock"}, json config = TestConfig()) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = ArtifactDir(std::string("serve-") + info->test_suite_name() + "-" + info->name());
    args.push_back("--full-every");
    args.push_back("0");
    server_ = ServerProcess::Start(config, args, dir_);
    ASSERT_TRUE(server_.running());
  }

  void TearDown() override {
    if (HasFailure() && server_.running()) {
      std::cerr << "server log:\n" << server_.Log().substr(0, 20000) << "\n";
    }
  }

  // Posts a job and expects 201; returns its id.
  std::string Submit(const char* token, const json& job) {
    Response r = server_.Post("/v1/jobs", token, job.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return r.json().value("id", "");
  }

  json GetJob(const char* token, const std::string& id) {
    Response r = server_.Get("/v1/jobs/" + id, token);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.json();
  }

  // Expects a 400 whose error names `field`.
  void ExpectBadRequest(const std::string& path, const json& body, const std::string& field) {
    Response r = server_.Post(path, kTokenA, body.dump());
    EXPECT_EQ(r.status, 400) << body.dump() << " -> " << r.body;
    EXPECT_EQ(r.json()["error"]["field"], field) << body.dump() << " -> " << r.body;
    EXPECT_FALSE(r.json()["error"]["message"].get<std::string>().empty());
  }

  json Advance(int steps) {
    Response r = server_.Post("/v1/clock/advance", kAdminToken, json{{"steps", steps}}.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return r.json();
  }

  std::filesystem::path dir_;
  ServerProcess server_;
};

json Job(const std::string& id, int gpus, int duration, double priority = 1) {
  json job = {
      {"kind", "training"}, {"priority", priority}, {"gpus", gpus}, {"duration_steps", duration}};
  if (!id.empty()) job["id"] = id;
  return job;
}

TEST_F(ServeTest, SubmitPlanAdvanceCancel) {
  StartServer();
  const std::string id = Submit(kTokenA, Job("train-1", 8, 3));
  EXPECT_EQ(id, "train-1");
  json view = GetJob(kTokenA, id);
  EXPECT_EQ(view["state"], "pending");
  EXPECT_EQ(view["tenant"], "a");
  EXPECT_EQ(view["planned_start_step"], 0) << view.dump();  // an empty cluster starts it next
  EXPECT_EQ(view["reason"], "none");

  // The plan, in the plan format, has the job starting at step 0 on an aligned block of 8.
  Response plan = server_.Get("/v1/plan", kTokenA);
  ASSERT_EQ(plan.status, 200) << plan.body;
  json p = plan.json();
  ASSERT_EQ(p["jobs"].size(), 1u) << plan.body;
  EXPECT_EQ(p["jobs"][0]["id"], "train-1");
  EXPECT_EQ(p["jobs"][0]["start_step"], 0);
  EXPECT_EQ(p["jobs"][0]["gpus"], 8);
  EXPECT_EQ(p["jobs"][0]["first_gpu"].get<int>() % 8, 0);
  EXPECT_EQ(p["x-step"], 0);

  // Committing a step starts it; the committed allocation shows it.
  json advanced = Advance(1);
  EXPECT_EQ(advanced["next_step"], 1);
  view = GetJob(kTokenA, id);
  EXPECT_EQ(view["state"], "running");
  EXPECT_EQ(view["planned_start_step"], 0);  // absolute: it started at step 0, now running
  Response committed = server_.Get("/v1/plan/committed", kTokenA);
  ASSERT_EQ(committed.status, 200) << committed.body;
  EXPECT_EQ(committed.json()["step"], 0);
  ASSERT_EQ(committed.json()["jobs"].size(), 1u);
  EXPECT_EQ(committed.json()["jobs"][0]["id"], "train-1");

  // Cancelling frees it from the next step on; the plan no longer holds it.
  Response cancel = server_.Delete("/v1/jobs/train-1", kTokenA);
  EXPECT_EQ(cancel.status, 200) << cancel.body;
  EXPECT_EQ(GetJob(kTokenA, id)["state"], "cancelled");
  Response after = server_.Get("/v1/plan", kTokenA);
  for (const json& j : after.json()["jobs"]) EXPECT_NE(j["id"], "train-1");
  // Cancelling again is harmless; an unknown id is a 404.
  EXPECT_EQ(server_.Delete("/v1/jobs/train-1", kTokenA).status, 200);
  EXPECT_EQ(server_.Delete("/v1/jobs/nope", kTokenA).status, 404);
}

TEST_F(ServeTest, WaitingJobsGetPlannedStartsAndReasons) {
  StartServer();
  // 16 GPUs; three jobs that each need all of them for 3 steps: they run one after another.
  Submit(kTokenA, Job("first", 16, 3, 5));
  Submit(kTokenA, Job("second", 16, 3, 3));
  Submit(kTokenA, Job("third", 16, 3, 1));
  Advance(1);
  json first = GetJob(kTokenA, "first");
  json second = GetJob(kTokenA, "second");
  json third = GetJob(kTokenA, "third");
  EXPECT_EQ(first["state"], "running");
  ASSERT_FALSE(second["planned_start_step"].is_null()) << second.dump();
  ASSERT_FALSE(third["planned_start_step"].is_null()) << third.dump();
  EXPECT_GE(second["planned_start_step"].get<int>(), 3);  // absolute: after `first` ends
  EXPECT_GE(third["planned_start_step"].get<int>(), second["planned_start_step"].get<int>() + 3);
  EXPECT_NE(second["reason"], "none") << second.dump();
  EXPECT_NE(second["reason"], "planning") << second.dump();
  EXPECT_FALSE(second["message"].get<std::string>().empty());

  // A generated id when none is given.
  const std::string generated = Submit(kTokenB, Job("", 1, 1));
  EXPECT_EQ(generated.rfind("job-", 0), 0u) << generated;
  // A duplicate id is a conflict, so a retried submission never makes a second job.
  EXPECT_EQ(server_.Post("/v1/jobs", kTokenA, Job("first", 1, 1).dump()).status, 409);
}

TEST_F(ServeTest, TenantsSeeOnlyTheirOwnJobs) {
  StartServer();
  Submit(kTokenA, Job("a-job", 8, 2));
  Submit(kTokenB, Job("b-job", 8, 2));
  // Another tenant's job is "not found", for reading and for cancelling.
  EXPECT_EQ(server_.Get("/v1/jobs/a-job", kTokenB).status, 404);
  EXPECT_EQ(server_.Delete("/v1/jobs/a-job", kTokenB).status, 404);
  EXPECT_EQ(GetJob(kTokenA, "a-job")["state"], "pending");  // still there
  // Lists and plans hold only the caller's jobs; the admin sees both.
  auto ids = [&](const char* token, const std::string& path, const char* key) {
    std::set<std::string> out;
    Response r = server_.Get(path, token);
    EXPECT_EQ(r.status, 200) << r.body;
    for (const json& j : r.json()[key]) out.insert(j["id"].get<std::string>());
    return out;
  };
  EXPECT_EQ(ids(kTokenB, "/v1/jobs", "jobs"), std::set<std::string>{"b-job"});
  EXPECT_EQ(ids(kTokenA, "/v1/jobs", "jobs"), std::set<std::string>{"a-job"});
  // The admin reads every job under its qualified id, `tenant/id`.
  EXPECT_EQ(ids(kAdminToken, "/v1/jobs", "jobs"), (std::set<std::string>{"a/a-job", "b/b-job"}));
  EXPECT_EQ(ids(kTokenB, "/v1/plan", "jobs"), std::set<std::string>{"b-job"});
  EXPECT_EQ(ids(kAdminToken, "/v1/plan", "jobs"), (std::set<std::string>{"a/a-job", "b/b-job"}));
  // The dashboard shows another tenant's block without its id.
  Advance(1);
  Response dash = server_.Get("/v1/dashboard", kTokenB);
  ASSERT_EQ(dash.status, 200);
  EXPECT_EQ(dash.body.find("a-job"), std::string::npos);
  bool anonymous = false;
  for (const json& b : dash.json()["blocks"]) anonymous |= b["id"].is_null();
  EXPECT_TRUE(anonymous);
  // The committed step and the history hide it too.
  EXPECT_EQ(server_.Get("/v1/plan/committed", kTokenB).body.find("a-job"), std::string::npos);
  EXPECT_EQ(server_.Get("/v1/plan/history", kTokenB).body.find("a-job"), std::string::npos);
  EXPECT_NE(server_.Get("/v1/plan/history", kAdminToken).body.find("a/a-job"), std::string::npos);
  // A tenant cannot cancel another's job in a what-if either.
  Response what = server_.Post("/v1/whatif", kTokenB, json{{"cancel", {"a-job"}}}.dump());
  EXPECT_EQ(what.status, 400);
  EXPECT_EQ(what.json()["error"]["field"], "cancel[0]");
}

TEST_F(ServeTest, MissingOrWrongTokenIs401) {
  StartServer();
  const std::vector<std::pair<std::string, std::string>> routes = {
      {"GET", "/v1/health"},
      {"GET", "/v1/jobs"},
      {"POST", "/v1/jobs"},
      {"GET", "/v1/jobs/x"},
      {"DELETE", "/v1/jobs/x"},
      {"GET", "/v1/plan"},
      {"GET", "/v1/plan/committed"},
      {"GET", "/v1/plan/history"},
      {"POST", "/v1/whatif"},
      {"POST", "/v1/services"},
      {"GET", "/v1/services"},
      {"PUT", "/v1/services/s"},
      {"POST", "/v1/services/s/traffic"},
      {"POST", "/v1/clock/advance"},
      {"GET", "/v1/dashboard"},
      {"GET", "/metrics"}};
  for (const auto& [method, path] : routes) {
    Response none = server_.Call(method, path, nullptr, "{}");
    EXPECT_EQ(none.status, 401) << method << " " << path << " " << none.body;
    Response wrong = server_.Call(method, path, "not-a-token-but-long-enough", "{}");
    EXPECT_EQ(wrong.status, 401) << method << " " << path;
  }
  // The scheme must be Bearer.
  HttpConnection client = server_.Connect();
  auto basic = client.Request("GET", "/v1/health",
                              {{"Authorization", std::string("Basic ") + kAdminToken}}, "");
  ASSERT_TRUE(basic);
  EXPECT_EQ(basic->status, 401);
  // Metrics are for the admin.
  EXPECT_EQ(server_.Get("/metrics", kTokenA).status, 403);
  EXPECT_EQ(server_.Get("/metrics", kAdminToken).status, 200);
  // The dashboard's shell is public: it holds no data.
  EXPECT_EQ(server_.Get("/", nullptr).status, 200);
}

TEST_F(ServeTest, BadRequestsName400Fields) {
  StartServer();
  ExpectBadRequest("/v1/jobs", {{"kind", "training"}, {"priority", 1}, {"duration_steps", 2}},
                   "gpus");
  ExpectBadRequest("/v1/jobs", Job("x", 3, 2), "gpus");
  ExpectBadRequest("/v1/jobs", Job("x", 64, 2), "gpus");  // no block of 64 in 16 GPUs
  ExpectBadRequest("/v1/jobs", Job("x", 2, 0), "duration_steps");
  ExpectBadRequest("/v1/jobs", Job("x", 2, 2, -1), "priority");
  ExpectBadRequest("/v1/jobs", Job("bad/id", 2, 2), "id");
  json typo = Job("x", 2, 2);
  typo["gpu"] = 2;
  ExpectBadRequest("/v1/jobs", typo, "gpu");
  json kind = Job("x", 2, 2);
  kind["kind"] = "pretraining";
  ExpectBadRequest("/v1/jobs", kind, "kind");
  json arrival = Job("x", 2, 2);
  arrival["arrival_step"] = 3;
  ExpectBadRequest("/v1/jobs", arrival, "arrival_step");
  json type = Job("x", 2, 2);
  type["gpu_type"] = "A100";
  ExpectBadRequest("/v1/jobs", type, "gpu_type");
  ExpectBadRequest(
      "/v1/jobs",
      {{"id", "s"},
       {"kind", "training"},
       {"priority", 1},
       {"shapes", {{{"gpus", 2}, {"duration_steps", 2}}, {{"gpus", 4}, {"duration_steps", 0}}}}},
      "shapes[1].duration_steps");
  ExpectBadRequest("/v1/whatif", {{"jobs", {Job("w", 5, 1)}}}, "jobs[0].gpus");
  ExpectBadRequest("/v1/whatif", {{"policy", "magic"}}, "policy");
  ExpectBadRequest("/v1/whatif", {{"cancel", {"nobody"}}}, "cancel[0]");
  // Not JSON at all, or not an object.
  Response garbage = server_.Post("/v1/jobs", kTokenA, "{\"kind\": ");
  EXPECT_EQ(garbage.status, 400);
  EXPECT_TRUE(garbage.json().contains("error"));
  EXPECT_EQ(server_.Post("/v1/jobs", kTokenA, "[1, 2]").status, 400);
  // Query parameters are checked too.
  Response limit = server_.Get("/v1/jobs?limit=0", kTokenA);
  EXPECT_EQ(limit.status, 400);
  EXPECT_EQ(limit.json()["error"]["field"], "limit");
  // Admin requests: the clock and services.
  Response steps = server_.Post("/v1/clock/advance", kAdminToken, R"({"steps": 0})");
  EXPECT_EQ(steps.status, 400);
  EXPECT_EQ(steps.json()["error"]["field"], "steps");
  Response demand = server_.Post("/v1/services", kAdminToken,
                                 R"({"id": "chat", "priority": 5, "demand": [1, 2]})");
  EXPECT_EQ(demand.status, 400);
  EXPECT_EQ(demand.json()["error"]["field"], "demand");
  // Ids in paths, query parameters and bodies of other routes.
  auto expect_field = [](const Response& r, const std::string& field) {
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(r.json()["error"]["field"], field) << r.body;
  };
  expect_field(server_.Get("/v1/jobs/" + std::string(200, 'x'), kTokenA), "id");
  expect_field(server_.Delete("/v1/jobs/bad%20id", kTokenA), "id");
  expect_field(server_.Put("/v1/services/a%21b", kAdminToken, "{}"), "id");
  expect_field(server_.Get("/v1/jobs?state=sleeping", kTokenA), "state");
  expect_field(server_.Get("/v1/jobs?cursor=-3", kTokenA), "cursor");
  expect_field(server_.Get("/v1/plan/history?from=abc", kTokenA), "from");
  expect_field(server_.Get("/v1/plan/history?from=9&to=3", kTokenA), "to");
  expect_field(server_.Get("/v1/dashboard?history=-1", kTokenA), "history");
  expect_field(server_.Post("/v1/clock/advance", kAdminToken, R"({"steps": "3"})"), "steps");
  expect_field(server_.Post("/v1/clock/advance", kAdminToken, R"({"steps": 2, "by": 1})"), "by");
  expect_field(server_.Post("/v1/services/chat/traffic", kAdminToken, R"({"samples": []})"),
               "samples");
  expect_field(server_.Post("/v1/services/chat/traffic", kAdminToken,
                            R"({"samples": [{"time": "yesterday", "rate": 1}]})"),
               "samples[0].time");
  expect_field(server_.Post("/v1/whatif", kTokenA, R"({"time_limit_s": 3600})"), "time_limit_s");
  // A route that does not exist for a valid id is "no such route", not a bad id.
  EXPECT_EQ(server_.Post("/v1/jobs/x", kTokenA, "{}").status, 404);
  // Hostile JSON: deep nesting, invalid UTF-8, a huge number.
  EXPECT_EQ(
      server_.Post("/v1/jobs", kTokenA, std::string(5000, '[') + std::string(5000, ']')).status,
      400);
  EXPECT_EQ(server_.Post("/v1/jobs", kTokenA, "{\"id\": \"\xff\xfe\"}").status, 400);
  // A number beyond a double is not JSON the reader accepts: a 400 that says so.
  Response overflow = server_.Post("/v1/jobs", kTokenA,
                                   R"({"kind": "training", "priority": 1e999, "gpus": 1,
                                       "duration_steps": 1})");
  EXPECT_EQ(overflow.status, 400) << overflow.body;
  EXPECT_NE(overflow.body.find("1e999"), std::string::npos) << overflow.body;
  expect_field(server_.Post("/v1/jobs", kTokenA,
                            R"({"kind": "training", "priority": 1e300, "gpus": 1,
                                "duration_steps": 1})"),
               "priority");
  // Nothing was stored by any of them, and the server is still up.
  EXPECT_EQ(server_.Get("/v1/jobs", kAdminToken).json()["jobs"].size(), 0u);
}

TEST_F(ServeTest, OversizedBodiesAre413) {
  StartServer({"--manual-clock", "--max-body-bytes", "2048"});
  json job = Job("big", 1, 1);
  job["features"] = {{"x-padding", std::string(4096, 'x')}};
  Response r = server_.Post("/v1/jobs", kTokenA, job.dump());
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_TRUE(r.json().contains("error")) << r.body;
  EXPECT_EQ(server_.Post("/v1/jobs", kTokenA, Job("small", 1, 1).dump()).status, 201);
}

TEST_F(ServeTest, WhatIfCommitsNothing) {
  StartServer();
  Submit(kTokenA, Job("base", 16, 4, 2));
  const json before_plan = server_.Get("/v1/plan", kAdminToken).json();
  json body = {{"jobs", {Job("urgent", 16, 2, 100)}}, {"cancel", {"base"}}};
  Response r = server_.Post("/v1/whatif", kTokenA, body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  json what = r.json();
  EXPECT_EQ(what["committed"], false);
  ASSERT_EQ(what["jobs"].size(), 1u);
  EXPECT_EQ(what["jobs"][0]["id"], "urgent");
  EXPECT_EQ(what["jobs"][0]["planned_start_step"], 0);  // `base` cancelled: the cluster is free
  std::set<std::string> planned;
  for (const json& j : what["plan"]["jobs"]) planned.insert(j["id"]);
  EXPECT_EQ(planned, std::set<std::string>{"urgent"});
  EXPECT_TRUE(what.contains("objective_delta"));
  // Nothing changed: the job is still pending, the other does not exist, the plan is the same.
  EXPECT_EQ(GetJob(kTokenA, "base")["state"], "pending");
  EXPECT_EQ(server_.Get("/v1/jobs/urgent", kTokenA).status, 404);
  const json after_plan = server_.Get("/v1/plan", kAdminToken).json();
  EXPECT_EQ(after_plan["x-version"], before_plan["x-version"]);
  EXPECT_EQ(after_plan["jobs"], before_plan["jobs"]);
}

TEST_F(ServeTest, ServicesAndTraffic) {
  StartServer();
  const json service = {{"id", "chat"},
                        {"priority", 10},
                        {"min_gpus", 1},
                        {"max_gpus", 8},
                        {"max_change_per_step", 2},
                        {"demand", {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}}};
  EXPECT_EQ(server_.Post("/v1/services", kTokenA, service.dump()).status, 403);
  Response created = server_.Post("/v1/services", kAdminToken, service.dump());
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(server_.Post("/v1/services", kAdminToken, service.dump()).status, 409);
  // The plan serves it (nothing held before, so no churn limit into step 0); tenants see it.
  // Step 0 holds its demand, 4, plus 2 idle GPUs lent as headroom: as many as it can give back
  // in one step (its churn limit above step 1's 4).
  Response plan = server_.Get("/v1/plan", kTokenA);
  ASSERT_EQ(plan.json()["services"].size(), 1u) << plan.body;
  EXPECT_EQ(plan.json()["services"][0]["gpus"][0].size(), 6u);
  EXPECT_EQ(plan.json()["services"][0]["gpus"][1].size(), 4u);
  // Update: a higher curve, then commit two steps at 6.
  json update = service;
  update["demand"] = json(std::vector<int>(12, 6));
  Response put = server_.Put("/v1/services/chat", kAdminToken, update.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  // An unknown service is a 404; a body whose id differs from the path's is a 400 naming it.
  json unnamed = update;
  unnamed.erase("id");
  EXPECT_EQ(server_.Put("/v1/services/nope", kAdminToken, unnamed.dump()).status, 404);
  Response mismatch = server_.Put("/v1/services/nope", kAdminToken, update.dump());
  EXPECT_EQ(mismatch.status, 400) << mismatch.body;
  EXPECT_EQ(mismatch.json()["error"]["field"], "id") << mismatch.body;
  Advance(2);
  EXPECT_EQ(server_.Get("/v1/services/chat", kTokenB).json()["committed_gpus"], 8);  // 6 + 2 lent
  // Demand drops to 1: the churn limit (2 per step) from the committed 6 shapes the plan.
  update["demand"] = json(std::vector<int>(12, 1));
  ASSERT_EQ(server_.Put("/v1/services/chat", kAdminToken, update.dump()).status, 200);
  Advance(1);  // answers once the plan for the new state is adopted
  plan = server_.Get("/v1/plan", kAdminToken);
  const json& gpus = plan.json()["services"][0]["gpus"];
  EXPECT_EQ(gpus[0].size(), 4u) << plan.body;  // committed 6 at the last step, then 4, 2, 1
  EXPECT_EQ(gpus[1].size(), 2u) << plan.body;
  EXPECT_EQ(gpus[2].size(), 1u) << plan.body;

  // A service whose demand comes from traffic: posted samples feed the forecaster.
  json forecast = {{"id", "search"},
                   {"priority", 5},
                   {"max_gpus", 8},
                   {"forecast", {{"per_gpu_rate", 10}, {"headroom", 0}}}};
  ASSERT_EQ(server_.Post("/v1/services", kAdminToken, forecast.dump()).status, 201);
  json samples = json::array();
  const double start = 1'700'000'000;  // a few days of hourly traffic, 28 requests/s
  for (int h = 0; h < 72; ++h) samples.push_back({{"time", start + 3600.0 * h}, {"rate", 28}});
  Response traffic =
      server_.Post("/v1/services/search/traffic", kAdminToken, json{{"samples", samples}}.dump());
  ASSERT_EQ(traffic.status, 200) << traffic.body;
  EXPECT_EQ(traffic.json()["total_samples"], 72);
  // The p90 of a flat history sits a few percent above it (no hour ahead is known exactly):
  // 28 x 1.06 / 10 per GPU, rounded up.
  for (const json& d : traffic.json()["demand"]) EXPECT_EQ(d, 3);
  Response view = server_.Get("/v1/services/search", kAdminToken);
  EXPECT_EQ(view.json()["demand_source"], "forecast");
  // Samples must move forward in time.
  Response old = server_.Post("/v1/services/search/traffic", kAdminToken,
                              json{{"samples", {{{"time", start}, {"rate", 1}}}}}.dump());
  EXPECT_EQ(old.status, 400);
  EXPECT_EQ(old.json()["error"]["field"], "samples[0].time");
  // The forecast error is scored on samples posted after the forecaster was fitted.
  json later = json::array();
  for (int h = 72; h < 78; ++h) later.push_back({{"time", start + 3600.0 * h}, {"rate", 33}});
  ASSERT_EQ(
      server_.Post("/v1/services/search/traffic", kAdminToken, json{{"samples", later}}.dump())
          .status,
      200);
  const std::string metrics = server_.Get("/metrics", kAdminToken).body;
  EXPECT_NE(metrics.find("ordo_forecast_error_ratio{service=\"search\"}"), std::string::npos)
      << metrics;
}

TEST_F(ServeTest, ClockAdvanceNeedsManualClockAndAdmin) {
  StartServer({}, TestConfig());  // the wall clock
  Response r = server_.Post("/v1/clock/advance", kAdminToken, R"({"steps": 1})");
  EXPECT_EQ(r.status, 409) << r.body;
  // The wall clock committed step 0 when the service started.
  Response committed = server_.Get("/v1/plan/committed", kAdminToken);
  EXPECT_EQ(committed.status, 200) << committed.body;
  EXPECT_EQ(committed.json()["step"], 0);
}

TEST_F(ServeTest, ManualClockIsAdminOnly) {
  StartServer();
  EXPECT_EQ(server_.Post("/v1/clock/advance", kTokenA, R"({"steps": 1})").status, 403);
  EXPECT_EQ(server_.Get("/v1/plan/committed", kAdminToken).status, 404);  // nothing yet
  Advance(3);
  Response history = server_.Get("/v1/plan/history?from=0&to=10", kAdminToken);
  ASSERT_EQ(history.status, 200);
  EXPECT_EQ(history.json()["steps"].size(), 3u);
}

TEST_F(ServeTest, MetricsInPrometheusText) {
  StartServer();
  Submit(kTokenA, Job("m1", 4, 2));
  Submit(kTokenA, Job("m2", 4, 2));
  Submit(kTokenB, Job("m3", 4, 2));
  Advance(1);
  Response r = server_.Get("/metrics", kAdminToken);
  ASSERT_EQ(r.status, 200);
  const std::string& text = r.body;
  for (const char* line :
       {"ordo_jobs_submitted_total{tenant=\"a\"} 2", "ordo_jobs_submitted_total{tenant=\"b\"} 1",
        "ordo_jobs{state=\"running\"} 3", "# TYPE ordo_planning_seconds histogram",
        "ordo_queue_length{kind=\"training\"} 0", "ordo_utilization_ratio 0.75",
        "ordo_realtime_unmet_gpus 0", "# TYPE ordo_store_commit_seconds histogram",
        "# TYPE ordo_build_info gauge"}) {
    EXPECT_NE(text.find(line), std::string::npos) << "missing \"" << line << "\" in\n" << text;
  }
  // Every sample line is `name{labels} value`: a parser's minimum.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    const std::string value = line.substr(space + 1);
    char* end = nullptr;
    std::strtod(value.c_str(), &end);
    EXPECT_TRUE(!value.empty() && end == value.c_str() + value.size()) << line;
    const std::string name = line.substr(0, std::min(line.find('{'), space));
    EXPECT_EQ(name.rfind("ordo_", 0), 0u) << line;
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789:"), std::string::npos)
        << line;
  }
}

TEST_F(ServeTest, RestartResumesWhereItStopped) {
  StartServer();
  Submit(kTokenA, Job("r1", 8, 4));
  Submit(kTokenA, Job("r2", 16, 2));
  Submit(kTokenB, Job("r3", 8, 1));
  Advance(2);
  server_.Delete("/v1/jobs/r2", kTokenA);
  const json jobs_before = server_.Get("/v1/jobs", kAdminToken).json()["jobs"];
  const json health_before = server_.Get("/v1/health", kAdminToken).json();
  const json history_before = server_.Get("/v1/plan/history?from=0&to=10", kAdminToken).json();
  // SIGTERM is a clean exit, and an idle keep-alive connection does not hold it up for long.
  HttpConnection idle = server_.Connect();
  ASSERT_TRUE(idle.Request("GET", "/v1/health",
                           {{"Authorization", std::string("Bearer ") + kAdminToken}}, ""));
  const auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(server_.Terminate(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(15));
  server_.Restart();
  ASSERT_TRUE(server_.running());
  const json jobs_after = server_.Get("/v1/jobs", kAdminToken).json()["jobs"];
  ASSERT_EQ(jobs_after.size(), jobs_before.size());
  for (size_t k = 0; k < jobs_after.size(); ++k) {
    for (const char* key : {"id", "tenant", "state", "submitted_step", "gpus", "duration_steps"}) {
      EXPECT_EQ(jobs_after[k][key], jobs_before[k][key]) << key << " of " << jobs_after[k].dump();
    }
  }
  const json health_after = server_.Get("/v1/health", kAdminToken).json();
  EXPECT_EQ(health_after["next_step"], health_before["next_step"]);
  EXPECT_EQ(server_.Get("/v1/plan/history?from=0&to=10", kAdminToken).json(), history_before);
  // And it carries on: the next step commits.
  EXPECT_EQ(Advance(1)["next_step"], 3);
}

TEST_F(ServeTest, DashboardAssetsAreBuiltIn) {
  StartServer();
  Response page = server_.Get("/", nullptr);
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("/assets/dashboard.js"), std::string::npos);
  Response js = server_.Get("/assets/dashboard.js", nullptr);
  Response css = server_.Get("/assets/dashboard.css", nullptr);
  ASSERT_EQ(js.status, 200);
  ASSERT_EQ(css.status, 200);
  // Nothing is fetched from elsewhere: the only URL in the assets is the SVG namespace.
  for (const std::string* body : {&page.body, &js.body, &css.body}) {
    size_t at = 0;
    while ((at = body->find("http", at)) != std::string::npos) {
      EXPECT_EQ(body->compare(at, 26, "http://www.w3.org/2000/svg"), 0) << body->substr(at, 60);
      ++at;
    }
  }
}

}  // namespace
}  // namespace ordo::testing::e2e
