#include "ordo/policy/fast/fast_policy.h"

#include <gtest/gtest.h>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/baselines/baselines.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo::policy {
namespace {

using testing::ExpectLegal;
using testing::FindJob;
using testing::FindService;
using testing::MakeJob;
using testing::MakeService;
using testing::ScenarioBuilder;

Plan SolveFast(const Scenario& s, uint64_t seed = 1, int effort = 1, bool lend_idle_gpus = true) {
  EXPECT_TRUE(ValidateScenario(s).has_value()) << ValidateScenario(s).error().ToString();
  PolicyOptions options;
  options.lend_idle_gpus = lend_idle_gpus;
  options.seed = seed;
  options.effort = effort;
  options.time_limit_s = 60;  // never the binding limit in these tests: results stay deterministic
  auto plan = MakeFastPolicy()->Solve(s, options);
  EXPECT_TRUE(plan.has_value());
  ExpectLegal(s, *plan);
  return *plan;
}

std::vector<int> Counts(const ServiceAllocation& a) {
  std::vector<int> counts;
  for (const auto& ids : a.gpus) counts.push_back(static_cast<int>(ids.size()));
  return counts;
}

// A baseline that cannot plan: fast mode must not silently drop the promise measured on it.
class FailingBaseline final : public Policy {
 public:
  [[nodiscard]] std::string_view name() const override { return "reactive"; }
  Result<Plan> Solve(const Scenario& /*scenario*/, const PolicyOptions& /*options*/) override {
    return Fail(Error{ErrorCode::kInternal, "", "solver crashed"});
  }
};

TEST(FastPolicyTest, ABaselineThatFailsFailsFastModeNamingIt) {
  const Scenario s = ScenarioBuilder("guarded")
                         .Steps(6)
                         .Group("a", 1, 8)
                         .Job(MakeJob("j").Gpus(4).Duration(3).Priority(5))
                         .Service(MakeService("chat").Priority(10).Demand({2, 2, 2, 2, 2, 2}))
                         .Build();
  ASSERT_TRUE(ValidateScenario(s).has_value());
  PolicyOptions options;
  options.time_limit_s = 60;
  ASSERT_TRUE(MakeFastPolicy()->Solve(s, options).has_value());
  BaselineFactories factories = InTreeBaselineFactories();
  factories.reactive = [] { return std::make_unique<FailingBaseline>(); };
  const auto failed = MakeFastPolicyWithBaselines(factories)->Solve(s, options);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kInternal);
  EXPECT_NE(failed.error().message.find("baseline reactive failed"), std::string::npos)
      << failed.error().ToString();
  EXPECT_NE(failed.error().message.find("solver crashed"), std::string::npos);
  factories.reactive = nullptr;  // no baseline at all: as loud
  const auto missing = MakeFastPolicyWithBaselines(factories)->Solve(s, options);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("baseline"), std::string::npos);
}

TEST(FastPolicyTest, ServiceRampsUpAheadOfItsPeakWithinTheChurnLimit) {
  const Scenario s =
      ScenarioBuilder("ramp")
          .Steps(6)
          .Group("a", 1, 8)
          .Service(MakeService("chat").Priority(10).Demand({2, 2, 2, 6, 6, 2}).Churn(2).Current(2))
          .Build();
  // The curve as planned; with the loan of idle GPUs, step 0 holds 2 + 2 (headroom_test.cc).
  EXPECT_EQ(Counts(*FindService(SolveFast(s, 1, 1, false), "chat")),
            (std::vector<int>{2, 2, 4, 6, 6, 4}));
  const Plan plan = SolveFast(s);
  EXPECT_EQ(Counts(*FindService(plan, "chat")), (std::vector<int>{4, 2, 4, 6, 6, 4}));
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 0);
}

TEST(FastPolicyTest, ServiceCurveNotPeakReservationLeavesTroughsToBatch) {
  // FIFO would reserve the peak (6) all day; fast mode gives the trough to the 4-GPU job.
  const Scenario s = ScenarioBuilder("trough")
                         .Steps(8)
                         .Group("a", 1, 8)
                         .Service(MakeService("chat").Priority(10).Demand({2, 2, 2, 2, 6, 6, 6, 6}))
                         .Job(MakeJob("batch").Gpus(4).Duration(4).Priority(3))
                         .Build();
  const Plan plan = SolveFast(s);
  ASSERT_TRUE(FindJob(plan, "batch")->started());
  EXPECT_EQ(*FindJob(plan, "batch")->start_step, 0);
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 0);
}

TEST(FastPolicyTest, ShortfallFallsOnTheLowestPriorityService) {
  const Scenario s = ScenarioBuilder("short")
                         .Steps(2)
                         .Group("a", 1, 4)
                         .Service(MakeService("low").Priority(1).Demand({3, 3}))
                         .Service(MakeService("high").Priority(9).Demand({3, 3}))
                         .Build();
  const Plan plan = SolveFast(s);
  EXPECT_EQ(Counts(*FindService(plan, "high")), (std::vector<int>{3, 3}));
  EXPECT_EQ(Counts(*FindService(plan, "low")), (std::vector<int>{1, 1}));
}

TEST(FastPolicyTest, TwoServicesShareScarceGpusWhereThatServesMoreWeightedDemand) {
  // A running job holds 4 of the 8 GPUs at step 0. One service at a time, "high" (priority 14)
  // takes 3 of the 4 and "low" (12, churn 2 from 0) reaches only 1, 3, then 5: 5 unmet
  // GPU-steps of low, 60 x M. Planned together, high gives low one of its GPUs at step 0, so
  // that low's ramp is a step ahead: 1 unmet GPU-step of high and 3 of low, 50 x M.
  const Scenario s =
      ScenarioBuilder("share")
          .Steps(4)
          .Group("a", 1, 8)
          .Objective(0, 1)
          .Service(MakeService("high").Priority(14).Demand({3, 3, 3, 3}))
          .Service(MakeService("low").Priority(12).Demand({4, 5, 5, 5}).Churn(2).Current(0))
          .Job(MakeJob("run").Gpus(4).Duration(3).Priority(1).Running(-2, 0))
          .Build();
  const Plan plan = SolveFast(s);
  EXPECT_EQ(Counts(*FindService(plan, "high")), (std::vector<int>{2, 3, 3, 3}));
  EXPECT_EQ(Counts(*FindService(plan, "low")), (std::vector<int>{2, 4, 5, 5}));
  EXPECT_DOUBLE_EQ(plan.metrics.objective, 4.0 - 50.0);  // the running job earns 4
}

TEST(FastPolicyTest, ServiceKeepsOutOfTheOnlyGroupATypeBoundJobCanUse) {
  // Best fit alone would put the 4-GPU service on the 4-GPU L4 node (it fits exactly), and so
  // would every baseline (the L4 group comes first); the job can run only there. The pack-away
  // variant, or a displacement move, gives it the node and the service the A100s.
  const Scenario s = ScenarioBuilder("pack-away")
                         .Steps(6)
                         .Group("l4", 1, 4, "L4", 24)
                         .Group("a100", 1, 8, "A100", 80)
                         .Service(MakeService("chat").Priority(10).Demand({4, 4, 4, 4, 4, 4}))
                         .Job(MakeJob("l4-job").Gpus(4).Duration(6).Priority(5).GpuType("L4"))
                         .Build();
  const Plan plan = SolveFast(s);
  ASSERT_TRUE(FindJob(plan, "l4-job")->started());
  EXPECT_EQ(*FindJob(plan, "l4-job")->start_step, 0);
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 0);
}

TEST(FastPolicyTest, ServiceMovesBetweenGroupsOverTimeForJobsThatNeedEachGroup) {
  // The 4-GPU service can run anywhere. The L4 job needs the L4 node at steps 0-3, the 8-GPU job
  // the whole A100 node. Reserved per group for the whole horizon, the service holds the L4 node
  // (best fit: the L4 job never runs) or half the A100 node (the 8-GPU job never runs), and a
  // displacement move cannot free the A100 node where both fillers hold it. Reserved in the
  // cluster as a whole, the jobs are placed first and the service moves: A100 at steps 0-3,
  // L4 at 4-7, and only one filler runs.
  const Scenario s = ScenarioBuilder("move")
                         .Steps(8)
                         .Group("l4", 1, 4, "L4", 24)
                         .Group("a100", 1, 8, "A100", 80)
                         .Objective(0, 8)
                         .Service(MakeService("chat").Priority(10).Demand({4, 4, 4, 4, 4, 4, 4, 4}))
                         .Job(MakeJob("l4-job").Gpus(4).Duration(4).Priority(5).GpuType("L4"))
                         .Job(MakeJob("wide").Gpus(8).Duration(4).Priority(3))
                         .Job(MakeJob("filler-1").Gpus(4).Duration(4).Priority(1))
                         .Job(MakeJob("filler-2").Gpus(4).Duration(4).Priority(1))
                         .Build();
  const Plan plan = SolveFast(s);
  ASSERT_TRUE(FindJob(plan, "l4-job")->started());
  ASSERT_TRUE(FindJob(plan, "wide")->started());
  EXPECT_EQ(*FindJob(plan, "l4-job")->start_step, 0);
  EXPECT_EQ(*FindJob(plan, "wide")->start_step, 4);
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 0);
  EXPECT_DOUBLE_EQ(plan.metrics.objective, 5 * 4 * 4 + 3 * 8 * 4 + 1 * 4 * 4);
}

TEST(FastPolicyTest, AValuableJobTakesTheGpusOfAServicesRampWhenThatIsWorthMore) {
  // Serving the step-3 peak in full needs 2 GPUs held at step 2 (churn 2), which keeps the 4-GPU
  // job out of steps 0-2 altogether. The job earns more than the 2 unmet GPU-steps cost (M = 8),
  // and reactive leaves the same 2 unmet, so the promise allows it.
  const Scenario s =
      ScenarioBuilder("ramp-trade")
          .Steps(4)
          .Group("a", 1, 4)
          .Service(MakeService("chat").Priority(1).Demand({0, 0, 0, 4}).Churn(2).Current(0))
          .Job(MakeJob("big").Gpus(4).Duration(3).Priority(10))
          .Build();
  const Plan plan = SolveFast(s);
  ASSERT_TRUE(FindJob(plan, "big")->started());
  EXPECT_EQ(*FindJob(plan, "big")->start_step, 0);
  EXPECT_EQ(Counts(*FindService(plan, "chat")), (std::vector<int>{0, 0, 0, 2}));
}

TEST(FastPolicyTest, AValuableJobGoesFirstAndTheWorkInItsWayMovesAround) {
  // "whole" needs the whole cluster for the whole horizon; it earns 3 x 16 x (7 - 21/7) = 192 with
  // decay 1, more than the service's 10 GPU-steps of demand cost unmet (150). Services first,
  // it never fits; moved to its earliest start beside "small" (step 1) it earns 144 and is not
  // worth it. Committed first, with "small" placed around it (no room), the plan earns 42.
  // Reactive's priority queue runs "small" then "whole" from step 1 and leaves the service all
  // 10 GPU-steps short, so the unmet-demand promise allows it.
  const Scenario s = ScenarioBuilder("whole-first")
                         .Steps(7)
                         .Group("a", 2, 8)
                         .Objective(1, 1)
                         .Service(MakeService("chat").Priority(15).Demand({0, 0, 1, 3, 3, 2, 1}))
                         .Job(MakeJob("small").Gpus(1).Duration(1).Priority(3.75))
                         .Job(MakeJob("whole").Gpus(16).Duration(7).Priority(3))
                         .Build();
  const Plan plan = SolveFast(s);
  ASSERT_TRUE(FindJob(plan, "whole")->started());
  EXPECT_EQ(*FindJob(plan, "whole")->start_step, 0);
  EXPECT_FALSE(FindJob(plan, "small")->started());
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 10);
  EXPECT_DOUBLE_EQ(plan.metrics.objective, 192.0 - 150.0);
}

TEST(FastPolicyTest, WithNoPenaltyTheServiceSpendsReactivesBudgetWhereBatchWorkEarnsLeast) {
  // M = 0: unmet demand costs nothing, but the promise allows only reactive's 3 unmet GPU-steps
  // (it serves step 0 and leaves 4-6 short). With decay 1 an early GPU-step earns batch work the
  // most, so the service priced to that budget serves step 6 instead of step 0: "first" (9 x 2)
  // starts at 0, not 1, and "fill" runs at 2-5. The plan earns 9 x 17/9 + 4 x 22/9 + 10 x 3/9 =
  // 30.11 against 26.83 with the service's GPU at step 0.
  const Scenario s = ScenarioBuilder("priced-budget")
                         .Steps(9)
                         .Group("g0", 1, 1)
                         .Objective(1, 0)
                         .Service(MakeService("chat")
                                      .Priority(12)
                                      .Demand({1, 0, 0, 0, 1, 1, 1, 0, 0})
                                      .Churn(3)
                                      .Current(0))
                         .Job(MakeJob("first").Gpus(1).Duration(2).Priority(9).Arrival(-3))
                         .Job(MakeJob("fill").Gpus(1).Duration(4).Priority(4).Arrival(1))
                         .Job(MakeJob("late").Gpus(1).Duration(4).Priority(4.25).Arrival(3))
                         .Job(MakeJob("top").Gpus(1).Duration(2).Priority(10).Arrival(6))
                         .Build();
  auto reactive = MakeReactivePolicy()->Solve(s, PolicyOptions{});
  ASSERT_TRUE(reactive.has_value());
  ASSERT_EQ(reactive->metrics.realtime_unmet_gpu_steps, 3);
  const Plan plan = SolveFast(s);
  EXPECT_EQ(Counts(*FindService(plan, "chat")), (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 3);
  EXPECT_EQ(*FindJob(plan, "first")->start_step, 0);
  EXPECT_EQ(*FindJob(plan, "fill")->start_step, 2);
  EXPECT_NEAR(plan.metrics.objective, 17.0 + 4.0 * 22 / 9 + 10.0 * 3 / 9, 1e-9);
}

TEST(FastPolicyTest, TheVariantChosenKeepsReactivesUnmetBudget) {
  // M = 0: unmet demand costs nothing in the objective, so the services-after-batch variant has
  // the best objective (its 16 x 5 job from step 0 leaves 5 GPU-steps unmet) but breaks the
  // budget of reactive's 3. Chosen by objective alone, it was refused by the promise check and the
  // plan fell back to reactive's own (326.325, "wide" from step 3). Judged with the budget, a
  // variant that keeps it is searched: "wide" starts at step 2 and the plan earns more.
  const Scenario s =
      ScenarioBuilder("budget-first")
          .Steps(8)
          .Group("g0", 2, 8)
          .Objective(0.9, 0)
          .Service(
              MakeService("chat").Priority(15).Demand({2, 2, 1, 0, 0, 0, 1, 2}).Current(7).Max(14))
          .Job(MakeJob("pair").Gpus(2).Duration(2).Priority(3).Arrival(-11))
          .Job(MakeJob("wide").Gpus(16).Duration(5).Priority(9).Arrival(-3))
          .Job(MakeJob("flash").Gpus(16).Duration(1).Priority(2).Arrival(-9))
          .Build();
  auto reactive = MakeReactivePolicy()->Solve(s, PolicyOptions{});
  ASSERT_TRUE(reactive.has_value());
  ASSERT_EQ(reactive->metrics.realtime_unmet_gpu_steps, 3);
  const Plan plan = SolveFast(s);
  EXPECT_LE(plan.metrics.realtime_unmet_gpu_steps, 3);
  ASSERT_TRUE(FindJob(plan, "wide")->started());
  EXPECT_LT(*FindJob(plan, "wide")->start_step, *FindJob(*reactive, "wide")->start_step);
  EXPECT_GT(plan.metrics.objective, reactive->metrics.objective + 50);
}

TEST(FastPolicyTest, HighPriorityArrivingLaterIsNotBlockedByLowPriorityWork) {
  // FIFO starts "low" (8 GPUs, 10 steps) at 0 and "high" waits until 10. Fast mode plans the
  // horizon: "high" runs at its arrival (2), "low" where it does not block it.
  const Scenario s = ScenarioBuilder("order")
                         .Steps(12)
                         .Group("a", 1, 8)
                         .Job(MakeJob("low").Gpus(8).Duration(10).Priority(1))
                         .Job(MakeJob("high").Gpus(8).Duration(4).Priority(10).Arrival(2))
                         .Build();
  const Plan plan = SolveFast(s);
  EXPECT_EQ(*FindJob(plan, "high")->start_step, 2);
}

TEST(FastPolicyTest, RunningJobsStayWhereTheyAre) {
  const Scenario s = ScenarioBuilder("run")
                         .Steps(6)
                         .Group("a", 1, 8)
                         .Job(MakeJob("r").Gpus(4).Duration(5).Priority(1).Running(-2, 4))
                         .Job(MakeJob("n").Gpus(4).Duration(2).Priority(5))
                         .Build();
  const Plan plan = SolveFast(s);
  EXPECT_EQ(FindJob(plan, "r")->first_gpu, 4);
  EXPECT_EQ(*FindJob(plan, "r")->start_step, -2);
  EXPECT_EQ(FindJob(plan, "n")->first_gpu, 0);
}

TEST(FastPolicyTest, PicksTheShapeWithMoreReward) {
  const Scenario s = ScenarioBuilder("shapes")
                         .Steps(4)
                         .Group("a", 1, 8)
                         .Job(MakeJob("q").Shapes({{1, 2}, {8, 4}}).Priority(2))
                         .Build();
  const Plan plan = SolveFast(s);
  EXPECT_EQ(FindJob(plan, "q")->gpus, 8);
}

TEST(FastPolicyTest, ExplainsWhyAJobWaits) {
  const Scenario s = ScenarioBuilder("why")
                         .Steps(10)
                         .Group("a", 1, 8)
                         .Job(MakeJob("big").Gpus(8).Duration(5).Priority(9))
                         .Job(MakeJob("small").Gpus(4).Duration(2).Priority(1))
                         .Job(MakeJob("later").Gpus(1).Duration(1).Priority(1).Arrival(7))
                         .Build();
  PolicyOptions options;
  options.explain = true;
  const Plan plan = *MakeFastPolicy()->Solve(s, options);
  ASSERT_EQ(plan.explanations.size(), 2u);
  EXPECT_EQ(plan.explanations[0].id, "small");
  // The holder is planned work of higher priority: under ordo that is "lower value than the
  // planned work" (docs/explanations.md), with the holder still named.
  EXPECT_EQ(plan.explanations[0].reason, WaitReason::kLowValue);
  EXPECT_EQ(plan.explanations[0].blocking_id, "big");
  EXPECT_EQ(plan.explanations[0].planned_start, 5);
  EXPECT_EQ(plan.explanations[1].reason, WaitReason::kNotArrived);
}

TEST(FastPolicyTest, RandomScenariosGiveLegalDeterministicPlans) {
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    testing::RandomScenarioOptions options;
    options.contended = seed % 3 == 0;
    const Scenario s = testing::RandomScenario(seed, options);
    const Plan a = SolveFast(s, seed);
    const Plan b = SolveFast(s, seed);
    ASSERT_EQ(a.jobs.size(), b.jobs.size());
    for (size_t j = 0; j < a.jobs.size(); ++j) {
      ASSERT_EQ(a.jobs[j].start_step, b.jobs[j].start_step) << "seed " << seed;
      ASSERT_EQ(a.jobs[j].first_gpu, b.jobs[j].first_gpu) << "seed " << seed;
    }
    for (size_t i = 0; i < a.services.size(); ++i) {
      ASSERT_EQ(a.services[i].gpus, b.services[i].gpus) << "seed " << seed;
    }
    const Metrics m = ComputeMetrics(s, a);
    EXPECT_DOUBLE_EQ(m.objective, a.metrics.objective) << "seed " << seed;
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "first failing seed " << seed;
      return;
    }
  }
}

TEST(FastPolicyTest, LargerInstancesGetMoreMovesAroundTheJobsThatLoseMost) {
  // Two contended instances of full mode's quality loop with 36 and 37 jobs: with four moves
  // (as on the smallest instances) fast mode's plans earned 1,091.7 and 2,666.8: the move that
  // pays comes after the first four. With one move per four jobs (up to eight here) they earn more
  // than 1,150 and 3,000 (the optima under the promises are 1,256.1 and 3,900.0).
  const Plan small = SolveFast(testing::RandomScenario(32, {.contended = true}), 32);
  const Plan large = SolveFast(testing::RandomScenario(174, {.contended = true}), 174);
  EXPECT_GT(small.metrics.objective, 1'150.0);
  EXPECT_GT(large.metrics.objective, 3'000.0);
}

TEST(FastPolicyTest, MoreEffortSearchesFurtherDeterministically) {
  // 40 random contended instances: at effort 4 every plan is legal and repeatable, none is below
  // effort 1's by more than rounding on most of them, and the mean objective is strictly higher
  // (the perturbations go on from where effort 1 stops; a different service variant may win).
  double mean_1 = 0, mean_4 = 0;
  int better = 0, worse = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Scenario s = testing::RandomScenario(seed, {.contended = true});
    const Plan one = SolveFast(s, seed, 1);
    const Plan four = SolveFast(s, seed, 4);
    const Plan again = SolveFast(s, seed, 4);
    EXPECT_DOUBLE_EQ(four.metrics.objective, again.metrics.objective) << "seed " << seed;
    mean_1 += one.metrics.objective / 40;
    mean_4 += four.metrics.objective / 40;
    better += four.metrics.objective > one.metrics.objective + 1e-6;
    worse += four.metrics.objective < one.metrics.objective - 1e-6;
  }
  EXPECT_GT(mean_4, mean_1);
  EXPECT_GT(better, worse);
}

TEST(FastPolicyTest, EffortOutsideItsRangeIsAnErrorNamingIt) {
  const Scenario s = ScenarioBuilder("effort").Steps(2).Group("a", 1, 4).Build();
  for (int effort : {0, -1, kMaxEffort + 1}) {
    PolicyOptions options;
    options.effort = effort;
    auto plan = MakeFastPolicy()->Solve(s, options);
    ASSERT_FALSE(plan.has_value()) << effort;
    EXPECT_EQ(plan.error().field, "effort");
  }
}

// A valuable arrival behind a long, low-priority checkpointed job: fast mode preempts the job at
// a checkpoint (nothing lost but the restart step), runs the arrival, and resumes the job; the
// objective beats the same scenario without the checkpoint, where the arrival waits.
TEST(FastPolicyTest, PreemptsACheckpointedLowPriorityJobForAValuableArrival) {
  auto build = [](bool checkpoint) {
    auto r = MakeJob("r").Gpus(8).Duration(30).Priority(1).Running(-6, 0);
    if (checkpoint) r.Checkpointed(2, 1);
    return ScenarioBuilder("arrival")
        .Steps(12)
        .Group("g", 1, 8)
        .Job(r)
        .Job(MakeJob("w").Gpus(8).Duration(4).Priority(9).Arrival(1))
        .Build();
  };
  const Scenario with = build(true);
  const Plan plan = SolveFast(with);
  const JobPlacement* r = FindJob(plan, "r");
  const JobPlacement* w = FindJob(plan, "w");
  ASSERT_TRUE(r != nullptr && w != nullptr);
  ASSERT_TRUE(r->preempt_step.has_value());
  EXPECT_EQ(w->start_step, r->preempt_step);
  EXPECT_GE(*w->start_step, 1);
  ASSERT_TRUE(r->resume.has_value());
  EXPECT_EQ(r->resume->start_step, *w->start_step + 4);
  EXPECT_EQ(plan.metrics.preemptions, 1);
  const Plan without = SolveFast(build(false));
  EXPECT_FALSE(FindJob(without, "w")->started());
  EXPECT_GT(plan.metrics.objective, without.metrics.objective);
}

// A job worth less per GPU-step than the running one does not preempt it.
TEST(FastPolicyTest, DoesNotPreemptForALowerPriorityArrival) {
  const Scenario s =
      ScenarioBuilder("no-gain")
          .Steps(12)
          .Group("g", 1, 8)
          .Job(MakeJob("r").Gpus(8).Duration(30).Priority(5).Running(-6, 0).Checkpointed(2, 1))
          .Job(MakeJob("w").Gpus(8).Duration(4).Priority(3).Arrival(1))
          .Build();
  const Plan plan = SolveFast(s);
  EXPECT_EQ(plan.metrics.preemptions, 0);
}

}  // namespace
}  // namespace ordo::policy
