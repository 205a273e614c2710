// The plan reader and writer: round trips (explanations and the solver report included), the
// spec's shape of the text, and strict structure errors with their paths.
#include "ordo/io/plan_io.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ordo::io {
namespace {

using nlohmann::json;

Plan SamplePlan() {
  Plan plan;
  plan.scenario = "training-heavy";
  plan.policy = "ordo-full";
  plan.jobs = {JobPlacement{"train-a", 0, 0, 4, 6}, JobPlacement{"quant-b", std::nullopt, 0, 0, 0},
               JobPlacement{"train-c", -5, 8, 8, 10}, JobPlacement{"ckpt-d", 1, 4, 4, 8}};
  plan.jobs.back().preempt_step = 3;
  plan.jobs.back().resume = ResumePlacement{5, 12};
  plan.jobs[2].preempt_step = 0;  // a running job given back at once, not resumed
  plan.services = {ServiceAllocation{"chat", {{4, 5}, {4, 5, 6}, {}, {7}}}};
  plan.metrics.utilization = 0.1 + 0.2;
  plan.metrics.allocated_utilization = 2.0 / 3.0;
  plan.metrics.value = 1234.5;
  plan.metrics.batch_value = 1000;
  plan.metrics.objective = -17.25;
  plan.metrics.realtime_unmet_gpu_steps = 3;
  plan.metrics.jobs_started = 1;
  plan.metrics.jobs_completed = 2;
  plan.metrics.preemptions = 2;
  plan.metrics.lost_gpu_steps = 12;
  plan.metrics.solve_ms = 0.125;
  plan.metrics.solver = SolverReport{"time_limit", 1300.5, 0.0512, 4096};
  plan.explanations = {
      JobExplanation{"quant-b", std::nullopt, WaitReason::kGpuType, "", "no A10 GPU is free"},
      JobExplanation{"train-a", 3, WaitReason::kBlockedByJob, "train-c", "waits for train-c"}};
  return plan;
}

void ExpectSamePlan(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.scenario, b.scenario);
  EXPECT_EQ(a.policy, b.policy);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    EXPECT_EQ(a.jobs[j].id, b.jobs[j].id);
    EXPECT_EQ(a.jobs[j].start_step, b.jobs[j].start_step);
    if (a.jobs[j].started()) {
      EXPECT_EQ(a.jobs[j].first_gpu, b.jobs[j].first_gpu);
      EXPECT_EQ(a.jobs[j].gpus, b.jobs[j].gpus);
      EXPECT_EQ(a.jobs[j].duration_steps, b.jobs[j].duration_steps);
    }
    EXPECT_EQ(a.jobs[j].preempt_step, b.jobs[j].preempt_step);
    EXPECT_EQ(a.jobs[j].resume, b.jobs[j].resume);
  }
  ASSERT_EQ(a.services.size(), b.services.size());
  for (size_t i = 0; i < a.services.size(); ++i) {
    EXPECT_EQ(a.services[i].id, b.services[i].id);
    EXPECT_EQ(a.services[i].gpus, b.services[i].gpus);
  }
  const Metrics& m = a.metrics;
  const Metrics& n = b.metrics;
  EXPECT_EQ(m.utilization, n.utilization);
  EXPECT_EQ(m.allocated_utilization, n.allocated_utilization);
  EXPECT_EQ(m.value, n.value);
  EXPECT_EQ(m.batch_value, n.batch_value);
  EXPECT_EQ(m.objective, n.objective);
  EXPECT_EQ(m.realtime_unmet_gpu_steps, n.realtime_unmet_gpu_steps);
  EXPECT_EQ(m.jobs_started, n.jobs_started);
  EXPECT_EQ(m.jobs_completed, n.jobs_completed);
  EXPECT_EQ(m.preemptions, n.preemptions);
  EXPECT_EQ(m.lost_gpu_steps, n.lost_gpu_steps);
  EXPECT_EQ(m.solve_ms, n.solve_ms);
  ASSERT_EQ(m.solver.has_value(), n.solver.has_value());
  if (m.solver) {
    EXPECT_EQ(m.solver->status, n.solver->status);
    EXPECT_EQ(m.solver->best_bound, n.solver->best_bound);
    EXPECT_EQ(m.solver->gap, n.solver->gap);
    EXPECT_EQ(m.solver->nodes, n.solver->nodes);
  }
  ASSERT_EQ(a.explanations.size(), b.explanations.size());
  for (size_t k = 0; k < a.explanations.size(); ++k) {
    EXPECT_EQ(a.explanations[k].id, b.explanations[k].id);
    EXPECT_EQ(a.explanations[k].planned_start, b.explanations[k].planned_start);
    EXPECT_EQ(a.explanations[k].reason, b.explanations[k].reason);
    EXPECT_EQ(a.explanations[k].blocking_id, b.explanations[k].blocking_id);
    EXPECT_EQ(a.explanations[k].message, b.explanations[k].message);
  }
}

TEST(PlanIoTest, RoundTripsInEveryLayoutAndAsYaml) {
  const Plan plan = SamplePlan();
  for (int indent : {-1, 0, 2}) {
    const std::string text = WritePlan(plan, indent);
    for (bool yaml : {false, true}) {
      auto again = ParsePlan(text, yaml);
      ASSERT_TRUE(again.has_value()) << again.error().ToString() << "\n" << text;
      ExpectSamePlan(*again, plan);
    }
  }
}

TEST(PlanIoTest, WritesTheSpecShape) {
  const json j = json::parse(WritePlan(SamplePlan()));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["jobs"][0], json::parse(R"({"id": "train-a", "start_step": 0, "first_gpu": 0,
                                          "gpus": 4, "duration_steps": 6})"));
  // An unstarted job is its id and a null start, nothing else.
  EXPECT_EQ(j["jobs"][1], json::parse(R"({"id": "quant-b", "start_step": null})"));
  EXPECT_EQ(j["jobs"][3], json::parse(R"({"id": "ckpt-d", "start_step": 1, "first_gpu": 4,
      "gpus": 4, "duration_steps": 8, "preempt_step": 3,
      "resume": {"start_step": 5, "first_gpu": 12}})"));
  EXPECT_EQ(j["jobs"][2]["preempt_step"], 0);
  EXPECT_FALSE(j["jobs"][2].contains("resume"));
  EXPECT_EQ(j["metrics"]["preemptions"], 2);
  EXPECT_EQ(j["metrics"]["lost_gpu_steps"], 12);
  EXPECT_EQ(j["services"][0]["gpus"], json::parse("[[4, 5], [4, 5, 6], [], [7]]"));
  EXPECT_EQ(j["metrics"]["status"], "time_limit");
  EXPECT_EQ(j["metrics"]["nodes"], 4096);
  EXPECT_EQ(j["metrics"]["batch_value"], 1000);
  EXPECT_TRUE(j["metrics"]["batch_value"].is_number_integer());
  EXPECT_EQ(j["x-explain"][0], json::parse(R"({"id": "quant-b", "planned_start": null,
      "reason": "gpu_type", "blocking_id": "", "message": "no A10 GPU is free"})"));
  EXPECT_EQ(j["x-explain"][1]["reason"], "blocked_by_job");
}

TEST(PlanIoTest, OptionalPartsAreLeftOutWhenAbsent) {
  Plan plan = SamplePlan();
  plan.metrics.solver.reset();
  plan.explanations.clear();
  const json j = json::parse(WritePlan(plan));
  EXPECT_FALSE(j.contains("x-explain"));
  EXPECT_FALSE(j["metrics"].contains("status"));
  EXPECT_FALSE(j["metrics"].contains("gap"));
  auto again = ParsePlan(WritePlan(plan), false);
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->metrics.solver.has_value());
  EXPECT_TRUE(again->explanations.empty());
}

TEST(PlanIoTest, ReadsTheSpecExample) {
  auto plan = ParsePlan(R"({
    "version": 1, "scenario": "training-heavy", "policy": "ordo",
    "jobs": [
      {"id": "train-a", "start_step": 0, "first_gpu": 0, "gpus": 4, "duration_steps": 6},
      {"id": "quant-b", "start_step": null}
    ],
    "services": [{"id": "chat", "gpus": [[4, 5], [4, 5]]}],
    "metrics": {"utilization": 0.0, "allocated_utilization": 0.0, "value": 0.0, "batch_value": 0.0,
                "objective": 0.0, "realtime_unmet_gpu_steps": 0, "jobs_started": 0,
                "jobs_completed": 0, "solve_ms": 0.0},
    "x-generator": {"name": "someone else's tool"}
  })",
                        false);
  ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
  EXPECT_EQ(plan->jobs.size(), 2u);
  EXPECT_FALSE(plan->jobs[1].started());
  EXPECT_EQ(plan->services[0].gpus[1], (std::vector<int>{4, 5}));
}

TEST(PlanIoTest, MetricsAreOptional) {
  auto plan = ParsePlan(R"({"version": 1, "scenario": "", "policy": "", "jobs": [],
                            "services": []})",
                        false);
  ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
  EXPECT_EQ(plan->metrics.value, 0);
}

TEST(PlanIoTest, TopLevelMustBeAnObject) {
  for (const char* text : {"[]", "1", "\"plan\"", "null"}) {
    auto plan = ParsePlan(text, false);
    ASSERT_FALSE(plan.has_value()) << text;
    EXPECT_EQ(plan.error().field, "");
    EXPECT_NE(plan.error().message.find("object"), std::string::npos) << plan.error().message;
  }
}

TEST(PlanIoTest, WaitReasonNamesRoundTrip) {
  for (int r = 0; r <= 7; ++r) {
    const auto reason = static_cast<WaitReason>(r);
    EXPECT_NE(WaitReasonName(reason), "unknown");
    EXPECT_EQ(ParseWaitReason(WaitReasonName(reason)), reason);
  }
  EXPECT_FALSE(ParseWaitReason("blocked").has_value());
}

struct BadPlan {
  std::string name;
  std::string from;  // replaced in the valid plan text below
  std::string to;
  std::string field;
  std::string word;
};

const std::string kValidPlan =
    R"({"version":1,"scenario":"s","policy":"p","jobs":[{"id":"a","start_step":2,"first_gpu":4,)"
    R"("gpus":4,"duration_steps":3},{"id":"b","start_step":null}],"services":[{"id":"c",)"
    R"("gpus":[[1,2],[3]]}],"metrics":{"value":1.5,"jobs_started":1},)"
    R"("x-explain":[{"id":"b","planned_start":null,"reason":"gpu_type","blocking_id":"",)"
    R"("message":"m"}]})";

class MalformedPlanTest : public ::testing::TestWithParam<BadPlan> {};

TEST_P(MalformedPlanTest, NamesFieldAndReason) {
  const BadPlan& c = GetParam();
  std::string text = kValidPlan;
  const size_t at = text.find(c.from);
  ASSERT_NE(at, std::string::npos) << c.from;
  text.replace(at, c.from.size(), c.to);
  auto plan = ParsePlan(text, false);
  ASSERT_FALSE(plan.has_value()) << text;
  EXPECT_EQ(plan.error().field, c.field) << plan.error().ToString();
  EXPECT_NE(plan.error().message.find(c.word), std::string::npos) << plan.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedPlanTest,
    ::testing::Values(
        BadPlan{"Version2", "\"version\":1", "\"version\":2", "version", "unsupported"},
        BadPlan{"VersionMissing", "\"version\":1,", "", "version", "missing"},
        BadPlan{"UnknownTop", "\"policy\":\"p\"", "\"policy\":\"p\",\"polcy\":1", "polcy",
                "unknown"},
        BadPlan{"JobsMissing", "\"jobs\":", "\"x-jobs\":", "jobs", "missing"},
        BadPlan{"StartStepString", "\"start_step\":2", "\"start_step\":\"2\"", "jobs[0].start_step",
                "integer"},
        BadPlan{"StartStepFraction", "\"start_step\":2", "\"start_step\":2.5", "jobs[0].start_step",
                "integer"},
        BadPlan{"StartStepMissing", "\"start_step\":null", "\"x\":0", "jobs[1].x", "unknown"},
        BadPlan{"StartStepAbsent", ",\"start_step\":null", "", "jobs[1].start_step", "null"},
        BadPlan{"StartedWithoutGpus", "\"gpus\":4,", "", "jobs[0].gpus", "missing"},
        BadPlan{"NegativeFirstGpu", "\"first_gpu\":4", "\"first_gpu\":-4", "jobs[0].first_gpu",
                "from 0"},
        BadPlan{"HugeDuration", "\"duration_steps\":3", "\"duration_steps\":1e30",
                "jobs[0].duration_steps", "1e+30"},
        BadPlan{"UnknownJobField", "\"id\":\"a\"", "\"id\":\"a\",\"end\":5", "jobs[0].end",
                "unknown"},
        BadPlan{"PreemptStepString", "\"duration_steps\":3",
                "\"duration_steps\":3,\"preempt_step\":\"4\"", "jobs[0].preempt_step", "integer"},
        BadPlan{"ResumeNotObject", "\"duration_steps\":3", "\"duration_steps\":3,\"resume\":4",
                "jobs[0].resume", "object"},
        BadPlan{"ResumeWithoutStart", "\"duration_steps\":3",
                "\"duration_steps\":3,\"preempt_step\":3,\"resume\":{\"first_gpu\":0}",
                "jobs[0].resume.start_step", "missing"},
        BadPlan{"ResumeNegativeFirstGpu", "\"duration_steps\":3",
                "\"duration_steps\":3,\"preempt_step\":3,\"resume\":{\"start_step\":3,"
                "\"first_gpu\":-1}",
                "jobs[0].resume.first_gpu", "from 0"},
        BadPlan{"ResumeUnknownField", "\"duration_steps\":3",
                "\"duration_steps\":3,\"preempt_step\":3,\"resume\":{\"start_step\":3,"
                "\"first_gpu\":0,\"gpus\":4}",
                "jobs[0].resume.gpus", "unknown"},
        BadPlan{"GpuIdString", "[[1,2]", "[[1,\"2\"]", "services[0].gpus[0][1]", "integer"},
        BadPlan{"GpuIdNegative", "[[1,2]", "[[1,-2]", "services[0].gpus[0][1]", "from 0"},
        BadPlan{"StepNotList", "[[1,2],[3]]", "[[1,2],3]", "services[0].gpus[1]", "list"},
        BadPlan{"ServiceGpusMissing", "\"gpus\":[[", "\"x-gpus\":[[", "services[0].gpus",
                "missing"},
        BadPlan{"MetricString", "\"value\":1.5", "\"value\":\"1.5\"", "metrics.value", "number"},
        BadPlan{"MetricNegativeCount", "\"jobs_started\":1", "\"jobs_started\":-1",
                "metrics.jobs_started", "from 0"},
        BadPlan{"UnknownMetric", "\"value\":1.5", "\"value\":1.5,\"speed\":2", "metrics.speed",
                "unknown"},
        BadPlan{"UnknownReason", "\"reason\":\"gpu_type\"", "\"reason\":\"busy\"",
                "x-explain[0].reason", "blocked_by_job"},
        BadPlan{"ExplainNotList", "\"x-explain\":[", "\"x-explain\":\"none\",\"x-old\":[",
                "x-explain", "list"},
        BadPlan{"DuplicateKey", "\"scenario\":\"s\"", "\"scenario\":\"s\",\"scenario\":\"t\"",
                "scenario", "duplicate"},
        BadPlan{"Truncated", "\"message\":\"m\"}]}", "\"message\":\"m\"}]", "", "parse error"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ordo::io
