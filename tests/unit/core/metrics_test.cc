// ComputeMetrics against spec/formats-v1.md ("Metrics"), every figure computed by hand on the legal
// plan of core_test_util.h (G = 16 GPUs, T = 6 steps, 96 GPU-steps):
//
//   job    prio gpus  steps inside   GPU-steps  batch_value  reward, weight 1 - 0.5 t / 6
//   (twelfths) run     3    2    0, 1           4          12           6 * (12 + 11) / 12 = 11.5
//   train   5    4    1, 2, 3        12         60           20 * (11 + 10 + 9) / 12 = 50
//   quant   2    2    0, 1           4          8            4 * (12 + 11) / 12 = 92 / 12
//   big     1    8    4, 5           16         16           8 * (8 + 7) / 12 = 10
//   late    4    1    5 (6, 7 past)  1          4            4 * 7 / 12 = 28 / 12
//   idle    not started
//   total                            37         100          81.5
//
//   service prio demand         allocated      served  unmet  value
//   chat    10   2 3 5 3 2 2    2 3 4 3 2 2    16      1      160
//   embed   1    1 1 1 0 0 2    1 1 1 1 1 1    4       1      4
//
// utilization = (37 + 20) / 96, allocated_utilization = (37 + 22) / 96, value = 100 + 164,
// objective = 81.5 - 2 * (10 * 1 + 1 * 1) = 59.5, jobs_started = 4 (train, quant, big, late; the
// running job is not counted), jobs_completed = 4 (run, train, quant, big ending at 6; not late).
#include "ordo/core/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/builders.h"
#include "tests/unit/core/core_test_util.h"

namespace ordo::testing {
namespace {

constexpr double kTolerance = 1e-9;

struct MetricCase {
  std::string name;
  std::function<double(const Metrics&)> get;
  double expected;
};

class MetricTest : public ::testing::TestWithParam<MetricCase> {};

TEST_P(MetricTest, MatchesTheHandComputedValue) {
  // The instantiation names the plan: LegalPlan or PreemptPlan.
  const bool preempt =
      std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name())
          .starts_with("PreemptPlan");
  const Metrics m = preempt ? ComputeMetrics(PreemptScenario(), PreemptPlan())
                            : ComputeMetrics(LegalScenario(), LegalPlan());
  EXPECT_NEAR(GetParam().get(m), GetParam().expected, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(
    LegalPlan, MetricTest,
    ::testing::Values(
        MetricCase{"utilization", [](const Metrics& m) { return m.utilization; }, 57.0 / 96},
        MetricCase{"allocated_utilization",
                   [](const Metrics& m) { return m.allocated_utilization; }, 59.0 / 96},
        MetricCase{"batch_value", [](const Metrics& m) { return m.batch_value; }, 100},
        MetricCase{"value", [](const Metrics& m) { return m.value; }, 264},
        MetricCase{"objective", [](const Metrics& m) { return m.objective; }, 59.5},
        MetricCase{"realtime_unmet_gpu_steps",
                   [](const Metrics& m) { return double(m.realtime_unmet_gpu_steps); }, 2},
        MetricCase{"jobs_started", [](const Metrics& m) { return double(m.jobs_started); }, 4},
        MetricCase{"jobs_completed", [](const Metrics& m) { return double(m.jobs_completed); }, 4}),
    [](const auto& info) { return info.param.name; });

// Kept work on the preemption plan of core_test_util.h (G = 10, T = 10: 100 GPU-steps; weight
// 1 - t / 20):
//
//   job    prio gpus  kept steps       kept GPU-steps  batch_value  restart+lost GPU-steps
//   ckpt   2    2     0 1 6 7 8 9      12              24           2 (lost 2) + 2 (restart 5)
//   urgent 9    2     3 4              4               36           0
//   held   3    2     2 3 4 5          8               24           4 (restart 0, 1)
//   runpre 1    2     8 9              4               4            2 (lost 0) + 2 (restart 7)
//   total                              28              88           12
//
// reward: ckpt 4 * (6 - 31/20) = 17.8, urgent 18 * (2 - 7/20) = 29.7, held 6 * (4 - 14/20) = 19.8,
// runpre 2 * (2 - 17/20) = 2.3: 69.6. No services: objective = reward, value = batch_value.
// jobs_completed: ckpt (its resumed stay ends at 10), urgent (5), held (6); not runpre (13).
INSTANTIATE_TEST_SUITE_P(
    PreemptPlan, MetricTest,
    ::testing::Values(
        MetricCase{"utilization", [](const Metrics& m) { return m.utilization; }, 28.0 / 100},
        MetricCase{"allocated_utilization",
                   [](const Metrics& m) { return m.allocated_utilization; }, 40.0 / 100},
        MetricCase{"batch_value", [](const Metrics& m) { return m.batch_value; }, 88},
        MetricCase{"value", [](const Metrics& m) { return m.value; }, 88},
        MetricCase{"objective", [](const Metrics& m) { return m.objective; }, 69.6},
        MetricCase{"preemptions", [](const Metrics& m) { return double(m.preemptions); }, 2},
        MetricCase{"lost_gpu_steps", [](const Metrics& m) { return double(m.lost_gpu_steps); }, 12},
        MetricCase{"jobs_started", [](const Metrics& m) { return double(m.jobs_started); }, 2},
        MetricCase{"jobs_completed", [](const Metrics& m) { return double(m.jobs_completed); }, 3}),
    [](const auto& info) { return info.param.name; });

// The objective under other weights: the reward with decay alpha, less M times the unmet
// service GPU-steps weighted by priority (here 10 * 1 + 1 * 1 = 11).
struct ObjectiveCase {
  std::string name;
  double time_decay;
  double unmet_penalty_multiplier;
  double expected;
};

class ObjectiveTest : public ::testing::TestWithParam<ObjectiveCase> {};

TEST_P(ObjectiveTest, RewardsDecayAndPenaltiesScale) {
  Scenario scenario = LegalScenario();
  scenario.objective = Objective{GetParam().time_decay, GetParam().unmet_penalty_multiplier};
  EXPECT_NEAR(ComputeMetrics(scenario, LegalPlan()).objective, GetParam().expected, kTolerance);
  EXPECT_NEAR(ComputeObjective(scenario, LegalPlan()), GetParam().expected, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Weights, ObjectiveTest,
    ::testing::Values(
        // No decay: the reward is batch_value.
        ObjectiveCase{"NoDecay", 0, 2, 100 - 22}, ObjectiveCase{"NoPenalty", 0.5, 0, 81.5},
        // alpha = 1, weights 1 - t / 6 in sixths: run 2 * 3 * 11 / 6 = 11, train 20 * 12 / 6 = 40,
        // quant 4 * 11 / 6, big 8 * 3 / 6 = 4, late 4 * 1 / 6: 63 in all; penalty 8 * 11.
        ObjectiveCase{"FullDecayDefaultPenalty", 1, 8, 63 - 88}),
    [](const auto& info) { return info.param.name; });

TEST(MetricsTest, PlacementOrderDoesNotMatter) {
  Plan plan = LegalPlan();
  std::reverse(plan.jobs.begin(), plan.jobs.end());
  std::reverse(plan.services.begin(), plan.services.end());
  const Metrics a = ComputeMetrics(LegalScenario(), LegalPlan());
  const Metrics b = ComputeMetrics(LegalScenario(), plan);
  EXPECT_DOUBLE_EQ(a.objective, b.objective);
  EXPECT_DOUBLE_EQ(a.value, b.value);
  EXPECT_DOUBLE_EQ(a.utilization, b.utilization);
  EXPECT_EQ(a.jobs_completed, b.jobs_completed);
}

TEST(MetricsTest, SolveTimeAndSolverReportAreKept) {
  Plan plan = LegalPlan();
  plan.metrics.solve_ms = 12.5;
  plan.metrics.solver = SolverReport{"optimal", 59.5, 0, 3};
  plan.metrics.objective = -1;  // recomputed, never copied
  const Metrics m = ComputeMetrics(LegalScenario(), plan);
  EXPECT_EQ(m.solve_ms, 12.5);
  ASSERT_TRUE(m.solver.has_value());
  EXPECT_EQ(m.solver->status, "optimal");
  EXPECT_NEAR(m.objective, 59.5, kTolerance);
}

TEST(MetricsTest, AServiceThePlanOmitsHasAllItsDemandUnmet) {
  Plan plan = LegalPlan();
  plan.services.pop_back();  // embed: demand 1 1 1 0 0 2, priority 1
  const Metrics m = ComputeMetrics(LegalScenario(), plan);
  EXPECT_EQ(m.realtime_unmet_gpu_steps, 1 + 5);
  EXPECT_NEAR(m.objective, 81.5 - 2 * (10 * 1 + 5), kTolerance);
  EXPECT_NEAR(m.value, 100 + 160, kTolerance);
}

// jobs_started and jobs_completed, one job at a time on a 3-step horizon.
struct CountCase {
  std::string name;
  JobBuilder job;
  std::optional<int> start_step;
  int started;
  int completed;
};

class JobCountTest : public ::testing::TestWithParam<CountCase> {};

TEST_P(JobCountTest, CountsAsTheSpecSays) {
  const CountCase& c = GetParam();
  const Scenario scenario = ScenarioBuilder("one").Steps(3).Group("g", 1, 4).Job(c.job).Build();
  const Job& job = scenario.jobs.front();
  Plan plan;
  plan.jobs = {JobPlacement{job.id, c.start_step, 0, job.shapes.front().gpus,
                            job.shapes.front().duration_steps}};
  ASSERT_TRUE(CheckPlan(scenario, plan).empty());
  const Metrics m = ComputeMetrics(scenario, plan);
  EXPECT_EQ(m.jobs_started, c.started);
  EXPECT_EQ(m.jobs_completed, c.completed);
}

INSTANTIATE_TEST_SUITE_P(
    OneJob, JobCountTest,
    ::testing::Values(
        CountCase{"RunningEndsInside", MakeJob("j").Gpus(2).Duration(3).Running(-1, 0), -1, 0, 1},
        CountCase{"RunningEndsPastTheHorizon", MakeJob("j").Gpus(2).Duration(9).Running(-1, 0), -1,
                  0, 0},
        CountCase{"EndsAtTheHorizon", MakeJob("j").Gpus(2).Duration(2), 1, 1, 1},
        CountCase{"EndsPastTheHorizon", MakeJob("j").Gpus(2).Duration(2), 2, 1, 0},
        CountCase{"NotStarted", MakeJob("j").Gpus(2).Duration(2), std::nullopt, 0, 0},
        // Running with progress 1 of 3 since step -1 and 2 restart steps left: ends at 4.
        CountCase{"RunningWithRestartEndsPastTheHorizon",
                  MakeJob("j").Gpus(2).Duration(3).Running(-1, 0).Progress(1, 2), -1, 0, 0},
        // Running since -5 on a 6-step job, progress 4 (it was preempted before): ends at 2.
        CountCase{"RunningWithProgressEndsInside",
                  MakeJob("j").Gpus(2).Duration(6).Running(-5, 0).Progress(4), -5, 0, 1}),
    [](const auto& info) { return info.param.name; });

TEST(MetricsTest, APreemptedJobNotResumedKeepsOnlyItsSavedWorkAndDoesNotComplete) {
  // Every 2 steps saved: preempted at 3 of 4, steps 0 and 1 kept, step 2 lost.
  const Scenario scenario = ScenarioBuilder("one")
                                .Steps(4)
                                .Group("g", 1, 1)
                                .Objective(0, 8)
                                .Job(MakeJob("j").Duration(4).Priority(5).Checkpointed(2, 1))
                                .Build();
  Plan plan;
  plan.jobs = {Preempted(JobPlacement{"j", 0, 0, 1, 4}, 3, std::nullopt)};
  ASSERT_TRUE(CheckPlan(scenario, plan).empty());
  const Metrics m = ComputeMetrics(scenario, plan);
  EXPECT_NEAR(m.batch_value, 10, kTolerance);
  EXPECT_NEAR(m.objective, 10, kTolerance);
  EXPECT_EQ(m.lost_gpu_steps, 1);
  EXPECT_NEAR(m.utilization, 2.0 / 4, kTolerance);
  EXPECT_NEAR(m.allocated_utilization, 3.0 / 4, kTolerance);
  EXPECT_EQ(m.preemptions, 1);
  EXPECT_EQ(m.jobs_started, 1);
  EXPECT_EQ(m.jobs_completed, 0);
}

}  // namespace
}  // namespace ordo::testing
