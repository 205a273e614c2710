// The engine's planning is bounded: a what-if cut short says so and why, an absurd what-if is a 400
// naming the field, Stop() ends whatever planning runs, and the metrics follow Prometheus' naming
// conventions.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "ordo/service/engine.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;
using testing::kA;
using testing::kAdminPrincipal;
using testing::Manual;
using testing::OpenEngine;
using testing::ScratchDir;

json Job(int gpus, int duration, double priority = 1) {
  return {
      {"kind", "training"}, {"priority", priority}, {"gpus", gpus}, {"duration_steps", duration}};
}

/// A job with `shapes` alternative shapes (1, 2, 4, ... GPUs, shorter as they grow).
json ManyShapes(int shapes, int priority) {
  json list = json::array();
  for (int k = 0; k < shapes; ++k) {
    const int gpus = 1 << (k % 4);
    list.push_back({{"gpus", gpus}, {"duration_steps", 2 + (k / 4) + 8 / gpus}});
  }
  return {{"kind", "training"}, {"priority", priority}, {"shapes", list}};
}

/// `jobs` contended jobs for a what-if body.
json Queue(int jobs, int shapes) {
  json list = json::array();
  for (int j = 0; j < jobs; ++j) list.push_back(ManyShapes(shapes, 1 + j % 9));
  return list;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(EngineBounds, WhatIfThatFinishesIsNotCut) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  auto what = testing::WhatIf(*engine, kA, json{{"jobs", {Job(8, 2)}}, {"policy", "fifo"}});
  ASSERT_TRUE(what) << what.error().ToString();
  EXPECT_EQ((*what)["cut"], false);
  EXPECT_FALSE(what->contains("cut_reason"));
}

#if defined(ORDO_WITH_CBC)
TEST(EngineBounds, WhatIfWhoseLimitEndsTheExplanationsSaysHowManyAndGivesNoReason) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  // With a microsecond, every job that waits is past the explanations' deadline (reading the
  // request alone takes longer).
  json jobs = json::array();
  for (int k = 0; k < 6; ++k) jobs.push_back(Job(8, 4));
  auto what = testing::WhatIf(*engine, kA,
                              json{{"jobs", jobs}, {"policy", "fifo"}, {"time_limit_s", 1e-6}});
  ASSERT_TRUE(what) << what.error().ToString();
  EXPECT_EQ((*what)["cut"], true);
  EXPECT_EQ((*what)["cut_reason"]["reason"], "time_limit");
  EXPECT_NE((*what)["cut_reason"]["message"].get<std::string>().find("explanations"),
            std::string::npos)
      << what->dump();
  int waiting = 0;
  for (const json& job : (*what)["jobs"]) {
    if (job["planned_start_step"] == (*what)["x-step"]) continue;
    ++waiting;
    EXPECT_FALSE(job.contains("reason")) << job.dump();
  }
  EXPECT_GT(waiting, 0) << what->dump();
}

TEST(EngineBounds, WhatIfWhoseExplanationsOutgrowTheAnswerIsCutForItsSize) {
  ScratchDir dir;
  EngineOptions options = Manual(dir);
  options.whatif_max_explained_holders = 3;
  auto engine = OpenEngine(testing::Config(), options);
  ASSERT_TRUE(engine);
  // Six 8-GPU jobs of 4 steps on 16 GPUs: four wait, each behind at least one holder.
  json jobs = json::array();
  for (int k = 0; k < 6; ++k) jobs.push_back(Job(8, 4));
  auto what = testing::WhatIf(*engine, kA, json{{"jobs", jobs}, {"policy", "fifo"}});
  ASSERT_TRUE(what) << what.error().ToString();
  EXPECT_EQ((*what)["cut"], true);
  EXPECT_EQ((*what)["cut_reason"]["reason"], "answer_size") << what->dump();
  int explained = 0, unexplained = 0;
  for (const json& job : (*what)["jobs"]) {
    if (job["planned_start_step"] == (*what)["x-step"]) continue;
    job.contains("reason") ? ++explained : ++unexplained;
  }
  EXPECT_GT(explained, 0) << what->dump();
  EXPECT_GT(unexplained, 0) << what->dump();
  EXPECT_NE(engine->MetricsText().find("ordo_whatifs_total{cut=\"answer_size\"} 1"),
            std::string::npos);
}

TEST(EngineBounds, FullWhatIfOverTheMemoryBudgetIsCutAndSaysWhy) {
  ScratchDir dir;
  EngineOptions options = Manual(dir);
  options.whatif_memory_budget_bytes = 1;  // no model fits: the answer is the warm start
  auto engine = OpenEngine(testing::Config(), options);
  ASSERT_TRUE(engine);
  auto what = testing::WhatIf(
      *engine, kA, json{{"jobs", Queue(20, 4)}, {"policy", "ordo-full"}, {"time_limit_s", 2}});
  ASSERT_TRUE(what) << what.error().ToString();
  EXPECT_EQ((*what)["cut"], true);
  EXPECT_EQ((*what)["cut_reason"]["reason"], "memory_budget") << what->dump();
  EXPECT_EQ((*what)["plan"]["metrics"]["status"], "model_too_large") << what->dump();
  EXPECT_NE(engine->MetricsText().find("ordo_whatifs_total{cut=\"memory_budget\"} 1"),
            std::string::npos);
}

TEST(EngineBounds, StopEndsAFullWhatIfInFlight) {
  ScratchDir dir;
  EngineOptions options = Manual(dir);
  options.max_whatif_time_limit_s = 300;
  auto engine = OpenEngine(testing::Config(8, 48), options);
  ASSERT_TRUE(engine);
  const auto started = std::chrono::steady_clock::now();
  auto answer = std::async(std::launch::async, [&] {
    return testing::WhatIf(
        *engine, kA, json{{"jobs", Queue(300, 8)}, {"policy", "ordo-full"}, {"time_limit_s", 300}});
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  engine->Stop();
  // Far below the five minutes the what-if asked for: Stop() reached the solver.
  ASSERT_EQ(answer.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_LT(SecondsSince(started), 120);
  // The plan it had is not explained: the answer is that the service is going away.
  auto what = answer.get();
  ASSERT_FALSE(what);
  EXPECT_EQ(testing::Status(what), 503);
  EXPECT_NE(what.error().message.find("shutting down"), std::string::npos);
}

TEST(EngineBounds, StopEndsFullModesBackgroundRun) {
  ScratchDir dir;
  EngineOptions options = Manual(dir);
  options.full_time_limit_s = 300;
  auto engine = OpenEngine(testing::Config(8, 48), options);
  ASSERT_TRUE(engine);
  const json queue = Queue(200, 8);
  for (const json& job : queue) ASSERT_TRUE(testing::SubmitJob(*engine, kA, job));
  const auto started = std::chrono::steady_clock::now();
  auto outcome = std::async(std::launch::async, [&] { return engine->RunFullModeOnce(); });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  engine->Stop();
  ASSERT_EQ(outcome.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_LT(SecondsSince(started), 120);
}
#endif

TEST(EngineBounds, WhatIfWithTooManyShapesIs400NamingJobs) {
  ScratchDir dir;
  EngineOptions options = Manual(dir);
  options.max_whatif_shapes = 10;
  auto engine = OpenEngine(testing::Config(), options);
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::WhatIf(*engine, kA, json{{"jobs", Queue(2, 4)}}));
  auto what = testing::WhatIf(*engine, kA, json{{"jobs", Queue(3, 4)}});
  ASSERT_FALSE(what);
  EXPECT_EQ(testing::Status(what), 400);
  EXPECT_EQ(what.error().field, "jobs");
  EXPECT_NE(what.error().message.find("12 job shapes"), std::string::npos) << what.error().message;
}

TEST(EngineBounds, MetricsFollowPrometheusNaming) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, Job(8, 2)));
  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 1));
  ASSERT_TRUE(testing::WhatIf(*engine, kA, json{{"jobs", {Job(8, 2)}}}));
  const std::string text = engine->MetricsText();
  std::map<std::string, std::string> types;
  std::set<std::string> sampled;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      types[name] = type;
    } else if (!line.empty() && line[0] != '#') {
      sampled.insert(line.substr(0, line.find_first_of("{ ")));
    }
  }
  ASSERT_FALSE(types.empty());
  const auto ends_with = [](const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& [name, type] : types) {
    // Counters end in _total and only counters do.
    EXPECT_EQ(type == "counter", ends_with(name, "_total")) << name << " is a " << type;
    // Base units, no precomputed rates: a rate is the query's job (rate() over a counter).
    for (const char* banned :
         {"_rate", "_per_", "_milliseconds", "_ms", "_minutes", "_percent", "_mb"}) {
      EXPECT_EQ(name.find(banned), std::string::npos) << name;
    }
    // Shares of something are ratios.
    if (name.find("utilization") != std::string::npos || name.find("error") != std::string::npos) {
      EXPECT_TRUE(ends_with(name, "_ratio")) << name;
    }
  }
  EXPECT_EQ(types["ordo_build_info"], "gauge");
  EXPECT_NE(text.find("ordo_build_info{version=\""), std::string::npos) << text;
  EXPECT_TRUE(sampled.count("ordo_utilization_ratio")) << text;
  EXPECT_TRUE(sampled.count("ordo_plan_utilization_ratio")) << text;
  EXPECT_TRUE(sampled.count("ordo_committed_value_total")) << text;
  EXPECT_TRUE(sampled.count("ordo_whatifs_total")) << text;
}

}  // namespace
}  // namespace ordo::service
