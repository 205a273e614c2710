// reactive: the spec's four steps, each with hand-computed GPU lists per step.
#include <gtest/gtest.h>

#include "ordo/policy/baselines/baselines.h"
#include "tests/support/builders.h"
#include "tests/unit/policy/baselines/plan_expect.h"

namespace ordo::testing {
namespace {

Plan Reactive(const Scenario& s) { return SolveLegal(*policy::MakeReactivePolicy(), s); }

// 1. "wants its demand at t clamped to [min_gpus, max_gpus], then moved to within
// max_change_per_step of what it held at t-1"; 2. "keeps the lowest `want` of the GPUs it held";
// 3. "takes free GPUs ... from the highest id down".
TEST(ReactiveTest, FollowsDemandWithinBoundsAndChurn) {
  const Scenario s =
      ScenarioBuilder("follow")
          .Steps(5)
          .Group("g", 1, 8)
          .Service(MakeService("chat").Demand({2, 5, 5, 1, 0}).Min(1).Max(4).Churn(2))
          .Build();
  const Plan plan = Reactive(s);
  // Step 0 has no current_gpus: free of the limit. Then 4 (max), 4, 2 (limit), 1 (min).
  EXPECT_EQ(GpusOf(plan, "chat"),
            (std::vector<std::vector<int>>{{6, 7}, {4, 5, 6, 7}, {4, 5, 6, 7}, {4, 5}, {4}}));
}

// "(of current_gpus at step 0, where given)"; at step 0 it holds no ids yet, so it takes them.
TEST(ReactiveTest, StepZeroMovesFromCurrentGpus) {
  const Scenario s = ScenarioBuilder("current")
                         .Steps(3)
                         .Group("g", 1, 8)
                         .Service(MakeService("chat").Demand({6, 6, 6}).Current(2).Churn(1))
                         .Service(MakeService("down").Demand({0, 0, 0}).Current(3).Churn(1))
                         .Build();
  const Plan plan = Reactive(s);
  EXPECT_EQ(GpusOf(plan, "chat"),
            (std::vector<std::vector<int>>{{5, 6, 7}, {4, 5, 6, 7}, {3, 4, 5, 6, 7}}));
  // down: 2 (the highest free after chat's 5-7), then 1 (the lower of the two it held), then 0.
  EXPECT_EQ(GpusOf(plan, "down"), (std::vector<std::vector<int>>{{3, 4}, {3}, {}}));
}

// 3. "takes free GPUs (not held at t by a job or a service) ... getting fewer if fewer are free".
TEST(ReactiveTest, GrowsOnlyIntoFreeGpus) {
  const Scenario s = ScenarioBuilder("grow")
                         .Steps(4)
                         .Group("g", 2, 4)
                         .Service(MakeService("chat").Demand({2, 6, 6, 6}))
                         .Job(MakeJob("a").Gpus(4).Duration(3))
                         .Build();
  const Plan plan = Reactive(s);
  EXPECT_EQ(SlotOf(plan, "a"), Slot(0, 0));
  EXPECT_EQ(GpusOf(plan, "chat"),
            (std::vector<std::vector<int>>{{6, 7}, {4, 5, 6, 7}, {4, 5, 6, 7}, Ids(2, 6)}));
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 4);
}

// Services shrink before any grows, so a GPU one gives back at t is free for another at t.
TEST(ReactiveTest, ServicesShrinkBeforeOthersGrow) {
  const Scenario s = ScenarioBuilder("handover")
                         .Steps(2)
                         .Group("g", 1, 4)
                         .Service(MakeService("grows").Demand({2, 4}))
                         .Service(MakeService("shrinks").Demand({2, 0}))
                         .Build();
  const Plan plan = Reactive(s);
  EXPECT_EQ(GpusOf(plan, "grows"), (std::vector<std::vector<int>>{{2, 3}, {0, 1, 2, 3}}));
  EXPECT_EQ(GpusOf(plan, "shrinks"), (std::vector<std::vector<int>>{{0, 1}, {}}));
}

// 3. "services in file order ... from its matching groups in file order, from the highest id down".
TEST(ReactiveTest, GrowthFollowsFileOrderAndMatchingGroups) {
  // l4: 0-1; h100: 2-5.
  const Scenario s = ScenarioBuilder("groups")
                         .Steps(1)
                         .Group("l4", 1, 2, "L4", 24)
                         .Group("h100", 1, 4, "H100", 80)
                         .Service(MakeService("any").Demand({3}))
                         .Service(MakeService("h").Demand({2}).GpuType("H100"))
                         .Build();
  const Plan plan = Reactive(s);
  EXPECT_EQ(GpusOf(plan, "any"), (std::vector<std::vector<int>>{{0, 1, 5}}));
  EXPECT_EQ(GpusOf(plan, "h"), (std::vector<std::vector<int>>{{3, 4}}));
}

// 4. "jobs that have arrived and not started, by priority (highest first), arrival, file order,
// each start at t on the lowest aligned block that is free at t".
TEST(ReactiveTest, JobsByPriorityOnTheLowestBlockFreeNow) {
  const Scenario s = ScenarioBuilder("jobs")
                         .Steps(4)
                         .Group("g", 2, 4)
                         .Service(MakeService("chat").Demand({2, 2, 2, 2}))
                         .Job(MakeJob("lo").Gpus(4).Duration(2).Priority(1))
                         .Job(MakeJob("hi").Gpus(4).Duration(2).Priority(5))
                         .Job(MakeJob("mid").Gpus(2).Duration(1).Priority(3))
                         .Build();
  const Plan plan = Reactive(s);
  EXPECT_EQ(GpusOf(plan, "chat"), Repeat({6, 7}, 4));
  EXPECT_EQ(SlotOf(plan, "hi"), Slot(0, 0));
  EXPECT_EQ(SlotOf(plan, "mid"), Slot(0, 4));
  EXPECT_EQ(SlotOf(plan, "lo"), Slot(2, 0));  // 4-7 always has chat's 6-7
}

TEST(ReactiveTest, TiesByArrivalThenFileOrder) {
  const Scenario s = ScenarioBuilder("ties")
                         .Steps(4)
                         .Group("g", 1, 4)
                         .Job(MakeJob("a").Gpus(4).Priority(2).Arrival(1))
                         .Job(MakeJob("b").Gpus(4).Priority(2).Arrival(0))
                         .Job(MakeJob("c").Gpus(4).Priority(2).Arrival(0))
                         .Build();
  const Plan plan = Reactive(s);
  EXPECT_EQ(SlotOf(plan, "b"), Slot(0, 0));
  EXPECT_EQ(SlotOf(plan, "c"), Slot(1, 0));
  EXPECT_EQ(SlotOf(plan, "a"), Slot(2, 0));
}

// 4. "(services' later steps are not yet decided)": no reservation, no look-ahead — a job takes
// GPUs a service will want a step later, and the service goes without.
TEST(ReactiveTest, NoLookAheadForServices) {
  const Scenario s = ScenarioBuilder("no-look-ahead")
                         .Steps(3)
                         .Group("g", 1, 8)
                         .Service(MakeService("chat").Demand({0, 8, 8}))
                         .Job(MakeJob("a").Gpus(8).Duration(3))
                         .Build();
  const Plan reactive = Reactive(s);
  EXPECT_EQ(SlotOf(reactive, "a"), Slot(0, 0));
  EXPECT_EQ(GpusOf(reactive, "chat"), Repeat({}, 3));
  EXPECT_EQ(reactive.metrics.realtime_unmet_gpu_steps, 16);
  // The static reservation of the queue policies does the opposite.
  const Plan fifo = SolveLegal(*policy::MakeFifoPolicy(), s);
  EXPECT_EQ(StartOf(fifo, "a"), std::nullopt);
  EXPECT_EQ(GpusOf(fifo, "chat"), Repeat(Ids(0, 8), 3));
}

// "running jobs stay where they are": services and jobs work around them.
TEST(ReactiveTest, RunningJobsKeepTheirGpus) {
  const Scenario s = ScenarioBuilder("running")
                         .Steps(3)
                         .Group("g", 2, 4)
                         .Job(MakeJob("r").Gpus(4).Duration(3).Running(-1, 4))
                         .Service(MakeService("chat").Demand({6, 6, 6}))
                         .Build();
  const Plan plan = Reactive(s);
  EXPECT_EQ(SlotOf(plan, "r"), Slot(-1, 4));
  EXPECT_EQ(GpusOf(plan, "chat"),
            (std::vector<std::vector<int>>{Ids(0, 4), Ids(0, 4), {0, 1, 2, 3, 6, 7}}));
}

// Decision (docs/baselines.md): at step 0 an earlier service does not take a later one's floor.
TEST(ReactiveTest, StepZeroLeavesLaterServicesTheirFloors) {
  const Scenario s = ScenarioBuilder("floors")
                         .Steps(2)
                         .Group("h100", 1, 4, "H100", 80)
                         .Group("l4", 1, 4, "L4", 24)
                         .Service(MakeService("any").Demand({6, 6}))
                         .Service(MakeService("h").Demand({0, 0}).Min(2).GpuType("H100"))
                         .Build();
  const Plan plan = Reactive(s);
  EXPECT_EQ(GpusOf(plan, "any"), Repeat(Ids(2, 6), 2));
  EXPECT_EQ(GpusOf(plan, "h"), Repeat({0, 1}, 2));
}

}  // namespace
}  // namespace ordo::testing
