// The static peak reservation shared by fifo, fifo-backfill and priority-backfill: each sentence of
// the spec's paragraph, with the exact GPU ids per step, through all three policies.
#include "ordo/policy/baselines/static_reservation.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "ordo/policy/baselines/baselines.h"
#include "tests/support/builders.h"
#include "tests/unit/policy/baselines/plan_expect.h"

namespace ordo::testing {
namespace {

using policy::ComputeStaticReservation;

struct QueueBaseline {
  std::string name;
  std::function<std::unique_ptr<Policy>()> make;
};

class StaticReservationTest : public ::testing::TestWithParam<QueueBaseline> {
 protected:
  Plan Solve(const Scenario& scenario) {
    auto policy = GetParam().make();
    return SolveLegal(*policy, scenario);
  }
  bool Is(const char* name) const { return GetParam().name == name; }
};

// "its peak demand over the horizon clamped to [min_gpus, max_gpus] ... inside a group from its
// highest id down ... allocated all of them at every step ... closed to jobs at every step".
TEST_P(StaticReservationTest, PeakOnTheHighestIdsAtEveryStepClosedToJobs) {
  const Scenario s = ScenarioBuilder("peak")
                         .Steps(3)
                         .Group("g", 2, 4)
                         .Service(MakeService("chat").Demand({1, 3, 2}))
                         .Job(MakeJob("b").Gpus(4))
                         .Job(MakeJob("c").Gpus(2))
                         .Job(MakeJob("d").Gpus(1))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(GpusOf(plan, "chat"), Repeat({5, 6, 7}, 3));
  EXPECT_EQ(SlotOf(plan, "b"), Slot(0, 0));
  EXPECT_EQ(SlotOf(plan, "c"), Slot(1, 0));  // 4-5 has the reserved GPU 5
  if (Is("fifo")) {
    EXPECT_EQ(SlotOf(plan, "d"), Slot(1, 2));  // not before c's start
  } else {
    EXPECT_EQ(SlotOf(plan, "d"), Slot(0, 4));
  }
  // chat's demand is 1, 3, 2 and it holds 3 throughout: 3 idle reserved GPU-steps.
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 0);
  EXPECT_DOUBLE_EQ(plan.metrics.allocated_utilization - plan.metrics.utilization, 3.0 / 24);
}

TEST_P(StaticReservationTest, ClampsThePeakToMinAndMax) {
  const Scenario s = ScenarioBuilder("clamp")
                         .Steps(2)
                         .Group("g", 1, 8)
                         .Service(MakeService("idle").Demand({0, 0}).Min(2))
                         .Service(MakeService("capped").Demand({1, 5}).Max(3))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(GpusOf(plan, "idle"), Repeat({6, 7}, 2));
  EXPECT_EQ(GpusOf(plan, "capped"), Repeat({3, 4, 5}, 2));
}

// "taken from GPUs that no running job uses at any step of the horizon — services in file order,
// matching groups in file order, and inside a group from its highest id down (fewer if fewer
// exist)".
TEST_P(StaticReservationTest, SkipsRunningGpusAndFollowsFileOrder) {
  // h100: 0-3, a100: 4-7. r holds GPU 3 at step 0 only, which still excludes it.
  const Scenario s = ScenarioBuilder("order")
                         .Steps(3)
                         .Group("h100", 1, 4, "H100", 80)
                         .Group("a100", 1, 4, "A100", 80)
                         .Job(MakeJob("r").Gpus(1).Duration(1).Running(0, 3))
                         .Service(MakeService("s1").Demand({3, 1, 1}))
                         .Service(MakeService("s2").Demand({2, 2, 2}).GpuType("H100"))
                         .Service(MakeService("s3").Demand({0, 2, 0}))
                         .Job(MakeJob("a").Gpus(1))
                         .Job(MakeJob("h").Gpus(1).GpuType("H100"))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(GpusOf(plan, "s1"), Repeat({0, 1, 2}, 3));
  EXPECT_EQ(GpusOf(plan, "s2"), Repeat({}, 3));  // h100 has nothing left: fewer (none)
  EXPECT_EQ(GpusOf(plan, "s3"), Repeat({6, 7}, 3));
  EXPECT_EQ(SlotOf(plan, "a"), Slot(0, 4));
  EXPECT_EQ(SlotOf(plan, "h"), Slot(1, 3));  // GPU 3 is free once r ends; never reserved
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 6);
}

TEST_P(StaticReservationTest, FewerWhenFewerExist) {
  const Scenario s = ScenarioBuilder("fewer")
                         .Steps(2)
                         .Group("g", 1, 4)
                         .Service(MakeService("big").Demand({10, 2}))
                         .Job(MakeJob("a").Gpus(1))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(GpusOf(plan, "big"), Repeat({0, 1, 2, 3}, 2));
  EXPECT_EQ(StartOf(plan, "a"), std::nullopt);
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 6);
}

// "except where current_gpus and max_change_per_step forbid it at first: then its count moves from
// current_gpus towards the reservation by the limit each step, and it is allocated the highest ids
// of its reservation" — the unallocated reserved GPUs stay closed to jobs.
TEST_P(StaticReservationTest, RampsUpFromCurrentOnTheHighestIds) {
  const Scenario s =
      ScenarioBuilder("ramp-up")
          .Steps(4)
          .Group("g", 1, 8)
          .Service(MakeService("chat").Demand({6, 6, 6, 6}).Min(1).Current(2).Churn(2))
          .Job(MakeJob("a").Gpus(2))
          .Job(MakeJob("b").Gpus(2))
          .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(GpusOf(plan, "chat"),
            (std::vector<std::vector<int>>{{4, 5, 6, 7}, Ids(2, 6), Ids(2, 6), Ids(2, 6)}));
  EXPECT_EQ(SlotOf(plan, "a"), Slot(0, 0));
  EXPECT_EQ(SlotOf(plan, "b"), Slot(1, 0));  // 2-3 are reserved although unallocated at step 0
}

TEST_P(StaticReservationTest, RampsDownFromAboveTheReservation) {
  // Reservation 3 ({13, 14, 15}) but the count may only fall by 2 from 8: 6, 4, 3, 3. The GPUs
  // above the reservation come from the free ones, highest id down, and only at those steps.
  const Scenario s = ScenarioBuilder("ramp-down")
                         .Steps(4)
                         .Group("g", 2, 8)
                         .Service(MakeService("chat").Demand({3, 3, 3, 3}).Current(8).Churn(2))
                         .Job(MakeJob("a").Gpus(8).Duration(3))
                         .Job(MakeJob("x").Gpus(4))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(GpusOf(plan, "chat"),
            (std::vector<std::vector<int>>{Ids(10, 6), Ids(12, 4), Ids(13, 3), Ids(13, 3)}));
  EXPECT_EQ(SlotOf(plan, "a"), Slot(0, 0));
  EXPECT_EQ(SlotOf(plan, "x"), Slot(1, 8));  // 8-11 is free once chat drops 10 and 11
}

TEST_P(StaticReservationTest, NoRampWithoutBothCurrentAndLimit) {
  // current_gpus without a limit, or a limit without current_gpus (step 0 is free of it).
  const Scenario s = ScenarioBuilder("no-ramp")
                         .Steps(3)
                         .Group("g", 1, 8)
                         .Service(MakeService("a").Demand({3, 3, 3}).Current(1))
                         .Service(MakeService("b").Demand({2, 2, 2}).Churn(1))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(GpusOf(plan, "a"), Repeat({5, 6, 7}, 3));
  EXPECT_EQ(GpusOf(plan, "b"), Repeat({3, 4}, 3));
}

// Decision (docs/baselines.md): an earlier service's peak does not take a later service's floor.
TEST_P(StaticReservationTest, LeavesLaterServicesTheirFloors) {
  // Read literally, "any" would reserve 3, 2, 1, 0, 7, 6, 5, 4 and "h" (H100 only, min 2) would get
  // nothing, an illegal plan. "any" passes over H100 GPUs 1 and 0 instead.
  const Scenario s = ScenarioBuilder("floors")
                         .Steps(2)
                         .Group("h100", 1, 4, "H100", 80)
                         .Group("l4", 1, 4, "L4", 24)
                         .Service(MakeService("any").Demand({8, 8}))
                         .Service(MakeService("h").Demand({0, 0}).Min(2).GpuType("H100"))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(GpusOf(plan, "any"), Repeat(Ids(2, 6), 2));
  EXPECT_EQ(GpusOf(plan, "h"), Repeat({0, 1}, 2));
}

INSTANTIATE_TEST_SUITE_P(
    Queues, StaticReservationTest,
    ::testing::Values(QueueBaseline{"fifo", policy::MakeFifoPolicy},
                      QueueBaseline{"fifo-backfill", policy::MakeFifoBackfillPolicy},
                      QueueBaseline{"priority-backfill", policy::MakePriorityBackfillPolicy}),
    [](const ::testing::TestParamInfo<QueueBaseline>& info) {
      std::string name = info.param.name;
      for (char& c : name) c = c == '-' ? '_' : c;
      return name;
    });

TEST(ComputeStaticReservationTest, ListsTheReservationInTheOrderTaken) {
  const Scenario s = ScenarioBuilder("taken")
                         .Steps(2)
                         .Group("a", 1, 2)
                         .Group("b", 1, 4)
                         .Service(MakeService("s").Demand({4, 1}).Current(1).Churn(1))
                         .Build();
  const policy::StaticReservation r = ComputeStaticReservation(s);
  ASSERT_EQ(r.reserved.size(), 1u);
  EXPECT_EQ(r.reserved[0], (std::vector<int>{1, 0, 5, 4}));
  // Count 2 then 3, on the numerically highest ids of the reservation.
  EXPECT_EQ(r.allocated[0], (std::vector<std::vector<int>>{{4, 5}, {1, 4, 5}}));
}

}  // namespace
}  // namespace ordo::testing
