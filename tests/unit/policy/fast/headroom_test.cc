#include "ordo/policy/common/headroom.h"

#include <gtest/gtest.h>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/common/plan_builder.h"
#include "ordo/policy/fast/fast_policy.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo::policy {
namespace {

using testing::ExpectLegal;
using testing::FindService;
using testing::Ids;
using testing::MakeJob;
using testing::MakeService;
using testing::ScenarioBuilder;

// A plan of `s` whose services hold exactly `counts[i]` GPUs at every step, highest ids first,
// beside its running jobs.
Plan PlanWithCounts(const Scenario& s, const std::vector<int>& counts) {
  Plan plan = MakeEmptyPlan(s, "ordo");
  int next = s.cluster.total_gpus();
  for (size_t i = 0; i < counts.size(); ++i) {
    next -= counts[i];
    for (auto& step : plan.services[i].gpus) step = Ids(next, counts[i]);
  }
  return plan;
}

TEST(LendIdleGpus, AChurnLimitedServiceGetsWhatItCanGiveBackInOneStep) {
  // 8 idle GPUs; chat holds 2 and may move by 2 a step: at most 2 + 2 at step 0 (from its count
  // at step 1, and from current_gpus).
  const Scenario s = ScenarioBuilder("churn")
                         .Steps(3)
                         .Group("a", 1, 8)
                         .Service(MakeService("chat").Demand({2, 2, 2}).Churn(2).Current(2))
                         .Build();
  Plan plan = PlanWithCounts(s, {2});
  LendIdleGpus(s, plan);
  const ServiceAllocation& chat = *FindService(plan, "chat");
  EXPECT_EQ(chat.gpus[0], (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(chat.gpus[1], Ids(6, 2));  // later steps are left to the next plan
  EXPECT_EQ(chat.gpus[2], Ids(6, 2));
  EXPECT_TRUE(CheckPlan(s, plan).empty());
}

TEST(LendIdleGpus, CurrentGpusBindsWhenBelowTheNextStep) {
  // current 1, churn 1: step 0 may hold at most 2 even though step 1 plans 3.
  const Scenario s = ScenarioBuilder("current")
                         .Steps(2)
                         .Group("a", 1, 8)
                         .Service(MakeService("chat").Demand({2, 3}).Churn(1).Current(1))
                         .Build();
  Plan plan = MakeEmptyPlan(s, "ordo");
  plan.services[0].gpus = {Ids(7, 1), Ids(5, 3)};
  LendIdleGpus(s, plan);
  EXPECT_EQ(plan.services[0].gpus[0].size(), 2U);
  EXPECT_TRUE(CheckPlan(s, plan).empty());
}

TEST(LendIdleGpus, WithoutAChurnLimitTheLargestRiseOfTheDemandIsLent) {
  // Demand rises by at most 3 in a step: 2 held + 3 lent; max_gpus caps the other service.
  const Scenario s = ScenarioBuilder("rise")
                         .Steps(4)
                         .Group("a", 2, 8)
                         .Service(MakeService("chat").Priority(10).Demand({2, 3, 6, 6}))
                         .Service(MakeService("code").Priority(5).Demand({1, 5, 9, 9}).Max(2))
                         .Build();
  Plan plan = PlanWithCounts(s, {2, 1});
  LendIdleGpus(s, plan);
  EXPECT_EQ(FindService(plan, "chat")->gpus[0].size(), 5U);
  EXPECT_EQ(FindService(plan, "code")->gpus[0].size(), 2U);
  EXPECT_TRUE(CheckPlan(s, plan).empty());
}

TEST(LendIdleGpus, HigherPriorityFirstAndOnlyIdleGpusOfAGroupItMayUse) {
  // Group "a" (GPUs 0-7): a running job holds 0-3, chat-low holds 6-7. Group "b" (8-15) is
  // idle but chat-high may only use type A. Idle in "a": 4 and 5, both to chat-high.
  const Scenario s =
      ScenarioBuilder("types")
          .Steps(2)
          .Group("a", 1, 8, "A")
          .Group("b", 1, 8, "B")
          .Job(MakeJob("run").Gpus(4).Duration(4).Running(0, 0))
          .Service(MakeService("chat-low").Priority(2).Demand({2, 2}).GpuType("A").Churn(4))
          .Service(MakeService("chat-high").Priority(9).Demand({0, 0}).GpuType("A").Churn(4))
          .Build();
  Plan plan = MakeEmptyPlan(s, "ordo");
  plan.services[0].gpus = {Ids(6, 2), Ids(6, 2)};
  LendIdleGpus(s, plan);
  EXPECT_EQ(FindService(plan, "chat-high")->gpus[0], (std::vector<int>{4, 5}));
  EXPECT_EQ(FindService(plan, "chat-low")->gpus[0], Ids(6, 2));
  EXPECT_TRUE(CheckPlan(s, plan).empty());
}

TEST(LendIdleGpus, GpusFreeAtTheNextStepAreLentFirst) {
  // A job starts at step 1 on GPUs 4-7: the one GPU chat may borrow is taken from 0-3.
  const Scenario s = ScenarioBuilder("next")
                         .Steps(3)
                         .Group("a", 1, 8)
                         .Job(MakeJob("later").Gpus(4).Duration(2).Arrival(1))
                         .Service(MakeService("chat").Demand({0, 0, 0}).Churn(1))
                         .Build();
  Plan plan = MakeEmptyPlan(s, "ordo");
  plan.jobs[0].start_step = 1;
  plan.jobs[0].first_gpu = 4;
  plan.jobs[0].gpus = 4;
  plan.jobs[0].duration_steps = 2;
  LendIdleGpus(s, plan);
  EXPECT_EQ(FindService(plan, "chat")->gpus[0], (std::vector<int>{3}));
  EXPECT_TRUE(CheckPlan(s, plan).empty());
}

// On random instances, fast mode with the loan against fast mode without: only step 0 of the
// services differs, by added GPUs only; the plan stays legal; objective and value never fall and
// unmet demand never rises.
TEST(LendIdleGpusProperty, OnlyAddsGpusAtStepZeroAndNeverCostsValue) {
  int lent_instances = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    testing::RandomScenarioOptions random;
    random.contended = seed % 2 == 0;
    const Scenario s = testing::RandomScenario(seed, random);
    PolicyOptions options;
    options.time_limit_s = 60;
    options.lend_idle_gpus = false;
    auto kept = MakeFastPolicy()->Solve(s, options);
    options.lend_idle_gpus = true;
    auto lent = MakeFastPolicy()->Solve(s, options);
    ASSERT_TRUE(kept && lent) << "seed " << seed;
    ExpectLegal(s, *lent, seed);
    EXPECT_GE(lent->metrics.objective, kept->metrics.objective - 1e-6) << "seed " << seed;
    EXPECT_GE(lent->metrics.value, kept->metrics.value - 1e-6) << "seed " << seed;
    EXPECT_LE(lent->metrics.realtime_unmet_gpu_steps, kept->metrics.realtime_unmet_gpu_steps)
        << "seed " << seed;
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      EXPECT_EQ(lent->jobs[j].start_step, kept->jobs[j].start_step) << "seed " << seed;
      EXPECT_EQ(lent->jobs[j].first_gpu, kept->jobs[j].first_gpu) << "seed " << seed;
    }
    bool any = false;
    for (size_t i = 0; i < s.services.size(); ++i) {
      const auto& before = kept->services[i].gpus;
      const auto& after = lent->services[i].gpus;
      for (int t = 1; t < s.horizon_steps; ++t) {
        EXPECT_EQ(after[t], before[t]) << "seed " << seed;
      }
      for (int gpu : before[0]) {
        EXPECT_TRUE(std::binary_search(after[0].begin(), after[0].end(), gpu)) << "seed " << seed;
      }
      any = any || after[0].size() > before[0].size();
    }
    lent_instances += any ? 1 : 0;
  }
  // The loan is not vacuous: most of these instances have idle GPUs at step 0.
  EXPECT_GT(lent_instances, 50);
}

}  // namespace
}  // namespace ordo::policy
