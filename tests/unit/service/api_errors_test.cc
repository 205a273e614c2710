// Every error path of the HTTP API, in process through the routes (OnHead, then Handle, as the
// transport calls them): the status, the field and the message each request is refused with. The
// contract (docs/openapi.yaml) and the clients depend on these; the engine reports domain error
// codes and api.cc maps them, so this table is what must not move when either side changes.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ordo/service/api.h"
#include "ordo/service/http/message.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;
using testing::kAdmin;
using testing::kTokenA;
using testing::kTokenB;
using testing::ScratchDir;

struct Call {
  const char* method;
  std::string target;
  const char* token;  // nullptr: no Authorization header
  std::string body;
};

struct Refusal {
  int status;
  std::string field;
  std::string message;  // a part of the message
};

class ApiErrors : public ::testing::Test {
 protected:
  // A config whose tenant b may not submit above priority 5.
  void Open(EngineOptions options) {
    json config = testing::ConfigJson();
    config["tenants"][1]["max_priority"] = 5;
    auto parsed = ParseServiceConfig(config.dump(), false);
    ASSERT_TRUE(parsed) << parsed.error().ToString();
    engine_ = testing::OpenEngine(*parsed, std::move(options));
    ASSERT_TRUE(engine_);
    server_ = std::make_unique<HttpServer>(*engine_, testing::QuietLogger(), HttpOptions{});
  }

  http::Response Send(const Call& call) {
    http::Request request;
    request.method = call.method;
    request.target = call.target;
    http::SplitTarget(call.target, request.path, request.query);
    if (call.token != nullptr) {
      request.headers.emplace_back("Authorization", std::string("Bearer ") + call.token);
    }
    request.body = call.body;
    if (std::optional<http::Response> early = server_->OnHead(request)) return *early;
    return server_->Handle(request);
  }

  // Sends `call` and checks it is refused as `want`, with the error body's shape.
  void ExpectRefused(const Call& call, const Refusal& want) {
    const http::Response res = Send(call);
    const std::string what = std::string(call.method) + " " + call.target + " " + call.body;
    EXPECT_EQ(res.status, want.status) << what << " -> " << res.body;
    const json body = json::parse(res.body, nullptr, false);
    ASSERT_TRUE(body.is_object() && body.contains("error")) << what << " -> " << res.body;
    ASSERT_EQ(body["error"].size(), 2u) << res.body;
    EXPECT_EQ(body["error"]["field"], want.field) << what << " -> " << res.body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(want.message), std::string::npos)
        << what << " -> " << res.body;
  }

  json Ok(const Call& call, int status = 200) {
    const http::Response res = Send(call);
    EXPECT_EQ(res.status, status) << call.method << " " << call.target << " -> " << res.body;
    return json::parse(res.body, nullptr, false);
  }

  ScratchDir dir_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<HttpServer> server_;
};

std::string Job(const std::string& id, int gpus, int duration, double priority = 1) {
  json job = {
      {"kind", "training"}, {"priority", priority}, {"gpus", gpus}, {"duration_steps", duration}};
  if (!id.empty()) job["id"] = id;
  return job.dump();
}

std::string Service(const std::string& id) {
  return json{{"id", id},
              {"priority", 5},
              {"min_gpus", 0},
              {"max_gpus", 2},
              {"demand", std::vector<int>(12, 1)}}
      .dump();
}

using Cases = std::vector<std::pair<Call, Refusal>>;

// With tenant a's job `a1` and the service `chat` in place, nothing committed yet.
Cases HeadAndJobCases() {
  return {
      // Routing and authentication, decided from the head.
      {{"GET", "/v1/nothing", kTokenA, ""}, {404, "", "no such route: GET /v1/nothing"}},
      {{"GET", "/v1/jobs", nullptr, ""}, {401, "Authorization", "missing bearer token"}},
      {{"GET", "/v1/jobs", "not-a-token", ""}, {401, "Authorization", "unknown bearer token"}},
      {{"GET", "/metrics", kTokenA, ""}, {403, "", "use the admin token"}},
      // Jobs.
      {{"POST", "/v1/jobs", kTokenA, ""}, {400, "", "the body must be a JSON object"}},
      {{"POST", "/v1/jobs", kTokenA, "{\"kind\": "}, {400, "", "invalid JSON"}},
      {{"POST", "/v1/jobs", kTokenA, "[1]"}, {400, "", "a job must be a JSON object"}},
      {{"POST", "/v1/jobs", kTokenA, Job("x", 3, 1)}, {400, "gpus", ""}},
      {{"POST", "/v1/jobs", kTokenA, Job("x", 32, 1)}, {400, "gpus", ""}},
      {{"POST", "/v1/jobs", kTokenA, R"({"kind": "training", "priority": 1, "gpus": 1})"},
       {400, "duration_steps", ""}},
      {{"POST", "/v1/jobs", kTokenA, Job("a1", 8, 2)},
       {409, "id", "you already have a job with id \"a1\""}},
      {{"POST", "/v1/jobs", kTokenB, Job("hi", 1, 1, 9)}, {400, "priority", "max_priority"}},
      {{"GET", "/v1/jobs?state=bogus", kTokenA, ""},
       {400, "state", "must be pending, running, done or cancelled"}},
      {{"GET", "/v1/jobs?limit=0", kTokenA, ""}, {400, "limit", "must be an integer from 1"}},
      {{"GET", "/v1/jobs?cursor=x", kTokenA, ""}, {400, "cursor", "must be an integer"}},
      {{"GET", "/v1/jobs/a1", kTokenB, ""}, {404, "id", "no job \"a1\""}},
      {{"GET", "/v1/jobs/a/a1", kTokenB, ""}, {404, "id", "no job \"a/a1\""}},
      {{"DELETE", "/v1/jobs/a1", kTokenB, ""}, {404, "id", "no job \"a1\""}},
      {{"GET", "/v1/jobs/bad%20id", kTokenA, ""}, {400, "id", "must be 1 to 128 letters"}},
      {{"GET", "/v1/jobs/a1/more", kTokenA, ""}, {404, "id", "no job \"a1/more\""}},
      {{"GET", "/v1/services/chat/more", kTokenA, ""}, {404, "", "no such route"}},
  };
}

Cases ServiceAndPlanCases() {
  return {
      // Services: permission is asked after the JSON parses and before its content is read.
      {{"POST", "/v1/services", kTokenA, Service("s2")},
       {403, "", "registering or changing a service needs the admin token"}},
      {{"POST", "/v1/services", kTokenA, "{\"id\": "}, {400, "", "invalid JSON"}},
      {{"POST", "/v1/services", kTokenA, "{}"}, {403, "", "needs the admin token"}},
      {{"POST", "/v1/services", kAdmin, Service("chat")},
       {409, "id", "a service with id \"chat\" already exists"}},
      {{"PUT", "/v1/services/nope", kAdmin, Service("nope")}, {404, "id", "no service \"nope\""}},
      {{"PUT", "/v1/services/chat", kAdmin, Service("other")},
       {400, "id", "must equal the id in the path"}},
      {{"PUT", "/v1/services/chat", kTokenB, Service("chat")}, {403, "", "needs the admin token"}},
      {{"GET", "/v1/services/nope", kTokenA, ""}, {404, "id", "no service \"nope\""}},
      {{"POST", "/v1/services/chat/traffic", kTokenA, R"({"samples": []})"},
       {403, "", "posting traffic needs the admin token"}},
      {{"POST", "/v1/services/chat/traffic", kAdmin, R"({"samples": []})"},
       {400, "samples", "must list at least one sample"}},
      {{"POST", "/v1/services/chat/traffic", kAdmin, R"({"samples": [{"rate": 1}]})"},
       {400, "samples[0].time", ""}},
      {{"POST", "/v1/services/chat/traffic", kAdmin,
        R"({"samples": [{"time": 10, "rate": 1}, {"time": 5, "rate": 1}]})"},
       {400, "samples[1].time", "times must increase"}},
      {{"POST", "/v1/services/nope/traffic", kAdmin, R"({"samples": [{"time": 1, "rate": 1}]})"},
       {404, "id", "no service \"nope\""}},
      // The plan and its history.
      {{"GET", "/v1/plan/committed", kTokenA, ""}, {404, "", "no step has been committed yet"}},
      {{"GET", "/v1/plan/history?from=5&to=2", kTokenA, ""}, {400, "to", "must be >= from"}},
      {{"GET", "/v1/plan/history?to=x", kTokenA, ""}, {400, "to", "must be an integer"}},
      {{"GET", "/v1/plan/history?from=0&to=20000", kTokenA, ""}, {400, "to", "at most"}},
      {{"GET", "/v1/dashboard?history=-1", kTokenA, ""}, {400, "history", ""}},
  };
}

Cases WhatIfAndClockCases() {
  return {
      // What-ifs.
      {{"POST", "/v1/whatif", kTokenA, R"({"bogus": 1})"}, {400, "bogus", ""}},
      {{"POST", "/v1/whatif", kTokenA, R"({"policy": "nope"})"}, {400, "policy", "nope"}},
      {{"POST", "/v1/whatif", kTokenA, R"({"time_limit_s": 0})"}, {400, "time_limit_s", ""}},
      {{"POST", "/v1/whatif", kTokenA, R"({"jobs": [)" + Job("w", 3, 1) + "]}"},
       {400, "jobs[0].gpus", ""}},
      {{"POST", "/v1/whatif", kTokenA, R"({"jobs": [)" + Job("a1", 1, 1) + "]}"},
       {400, "jobs[0].id", "you already have a job with id \"a1\""}},
      {{"POST", "/v1/whatif", kTokenB, R"({"jobs": [)" + Job("w", 1, 1, 9) + "]}"},
       {400, "jobs[0].priority", "max_priority"}},
      {{"POST", "/v1/whatif", kTokenB, R"({"cancel": ["a1"]})"},
       {400, "cancel[0]", "no pending or running job \"a1\""}},
      {{"POST", "/v1/whatif", kTokenA, R"({"services": [{"id": "s"}]})"},
       {403, "services", "changing services needs the admin token"}},
      {{"POST", "/v1/whatif", kAdmin, R"({"services": [{"id": "s"}]})"},
       {400, "services[0].priority", "missing required field"}},
      // The clock.
      {{"POST", "/v1/clock/advance", kTokenA, R"({"steps": 1})"},
       {403, "", "advancing the clock needs the admin token"}},
      {{"POST", "/v1/clock/advance", kAdmin, R"({"steps": 0})"}, {400, "steps", ""}},
      {{"POST", "/v1/clock/advance", kAdmin, R"({"steps": 1, "x": 2})"}, {400, "x", ""}},
  };
}

TEST_F(ApiErrors, EveryRefusalKeepsItsStatusFieldAndMessage) {
  EngineOptions options = testing::Manual(dir_);
  options.max_active_jobs = 3;
  Open(options);
  ASSERT_TRUE(engine_);
  Ok({"POST", "/v1/jobs", kTokenA, Job("a1", 8, 2)}, 201);
  Ok({"POST", "/v1/services", kAdmin, Service("chat")}, 201);
  for (const Cases& cases : {HeadAndJobCases(), ServiceAndPlanCases(), WhatIfAndClockCases()}) {
    for (const auto& [call, want] : cases) ExpectRefused(call, want);
  }

  // The queue's limit (3 active jobs), then a finished job cannot be cancelled.
  Ok({"POST", "/v1/jobs", kTokenA, Job("short", 1, 1)}, 201);
  Ok({"POST", "/v1/jobs", kTokenB, Job("b1", 1, 1)}, 201);
  ExpectRefused({"POST", "/v1/jobs", kTokenA, Job("more", 1, 1)},
                {429, "", "the queue is full (3 pending or running jobs)"});
  Ok({"POST", "/v1/clock/advance", kAdmin, R"({"steps": 3})"});
  ExpectRefused({"DELETE", "/v1/jobs/short", kTokenA, ""}, {409, "id", "job \"short\" is done"});

  // A stopped engine takes no changes.
  engine_->Stop();
  ExpectRefused({"POST", "/v1/jobs", kTokenA, Job("late", 1, 1)},
                {503, "", "the service is not accepting changes"});
}

TEST_F(ApiErrors, TheWallClockCannotBeAdvancedByHand) {
  EngineOptions options = testing::Manual(dir_);
  options.manual_clock = false;
  Open(options);
  ASSERT_TRUE(engine_);
  ExpectRefused({"POST", "/v1/clock/advance", kAdmin, R"({"steps": 1})"},
                {409, "", "the service runs on the wall clock"});
}

// Probes need no token and learn nothing but a status word; /readyz turns 503 when the engine
// stops.
TEST_F(ApiErrors, ProbesAreOpenAndCarryOnlyAStatusWord) {
  Open(testing::Manual(dir_));
  ASSERT_TRUE(engine_);
  for (const char* path : {"/healthz", "/readyz"}) {
    const http::Response res = Send({"GET", path, nullptr, ""});
    EXPECT_EQ(res.status, 200) << path;
    const json body = json::parse(res.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << res.body;
    EXPECT_EQ(body.size(), 1u) << res.body;
    EXPECT_TRUE(body.contains("status")) << res.body;
  }
  engine_->Stop();
  const http::Response ready = Send({"GET", "/readyz", nullptr, ""});
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(json::parse(ready.body, nullptr, false), json({{"status", "unavailable"}}));
  EXPECT_EQ(Send({"GET", "/healthz", nullptr, ""}).status, 200);
}

}  // namespace
}  // namespace ordo::service
