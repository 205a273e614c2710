// The spec's rules common to the four baselines ("Reference policies", first paragraph), each with
// a hand-computed plan per policy. GPU ids in comments: "0-3" is GPUs 0, 1, 2, 3.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "ordo/policy/baselines/baselines.h"
#include "tests/support/builders.h"
#include "tests/unit/policy/baselines/plan_expect.h"

namespace ordo::testing {
namespace {

using policy::MakeFifoBackfillPolicy;
using policy::MakeFifoPolicy;
using policy::MakePriorityBackfillPolicy;
using policy::MakeReactivePolicy;

struct Baseline {
  std::string name;
  std::function<std::unique_ptr<Policy>()> make;
};

class CommonRulesTest : public ::testing::TestWithParam<Baseline> {
 protected:
  Plan Solve(const Scenario& scenario) {
    auto policy = GetParam().make();
    EXPECT_EQ(policy->name(), GetParam().name);
    return SolveLegal(*policy, scenario);
  }
  bool Is(const char* name) const { return GetParam().name == name; }
};

// "running jobs stay where they are"; the other jobs plan around them.
TEST_P(CommonRulesTest, RunningJobsStayAndOthersPlanAroundThem) {
  // r holds 4-7 over steps 0-2. a needs all 8 GPUs; b needs 4 for one step.
  const Scenario s = ScenarioBuilder("running")
                         .Steps(8)
                         .Group("g", 2, 4)
                         .Job(MakeJob("r").Gpus(4).Duration(5).Running(-2, 4))
                         .Job(MakeJob("a").Gpus(8).Duration(2))
                         .Job(MakeJob("b").Gpus(4).Duration(1))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(SlotOf(plan, "r"), Slot(-2, 4));
  EXPECT_EQ(SlotOf(plan, "a"), Slot(3, 0));
  if (Is("fifo")) {
    EXPECT_EQ(SlotOf(plan, "b"), Slot(5, 0));  // never before a's start; a holds 0-7 at 3-4
  } else {
    EXPECT_EQ(SlotOf(plan, "b"), Slot(0, 0));  // backfilled / free now
  }
}

// "Starts are steps 0..horizon_steps-1."
TEST_P(CommonRulesTest, StartsLieInsideTheHorizon) {
  const Scenario s = ScenarioBuilder("starts")
                         .Steps(4)
                         .Group("g", 1, 8)
                         .Job(MakeJob("waited").Gpus(1).Arrival(-3))
                         .Job(MakeJob("later").Gpus(1).Arrival(2))
                         .Job(MakeJob("after").Gpus(1).Arrival(4))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(SlotOf(plan, "waited"), Slot(0, 0));
  EXPECT_EQ(SlotOf(plan, "later"), Slot(2, 0));
  EXPECT_EQ(StartOf(plan, "after"), std::nullopt);
  EXPECT_EQ(plan.metrics.jobs_started, 2);
}

// "A job with shapes uses its first shape."
TEST_P(CommonRulesTest, UsesTheFirstShapeOnly) {
  // 0-3 busy until step 2: the first shape (8 GPUs) waits although the second (1 GPU) fits now.
  const Scenario s = ScenarioBuilder("shapes")
                         .Steps(4)
                         .Group("g", 2, 4)
                         .Job(MakeJob("r").Gpus(4).Duration(3).Running(-1, 0))
                         .Job(MakeJob("s").Shapes({{8, 1}, {1, 1}}))
                         .Build();
  const Plan plan = Solve(s);
  const JobPlacement* job = FindJob(plan, "s");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->start_step, 2);
  EXPECT_EQ(job->first_gpu, 0);
  EXPECT_EQ(job->gpus, 8);
  EXPECT_EQ(job->duration_steps, 1);
}

// "the lowest first_gpu (over all matching groups) whose aligned block is free"; rule 3 counts
// alignment from the group's first id.
TEST_P(CommonRulesTest, LowestAlignedBlockCountedFromTheGroupStart) {
  // Group "a" holds 0-1, group "b" holds 2-9: b's 4-GPU blocks are 2-5 and 6-9.
  const Scenario s = ScenarioBuilder("aligned")
                         .Steps(2)
                         .Group("a", 1, 2)
                         .Group("b", 1, 8)
                         .Job(MakeJob("four").Gpus(4))
                         .Job(MakeJob("two").Gpus(2))
                         .Job(MakeJob("four-again").Gpus(4))
                         .Job(MakeJob("one").Gpus(1))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(SlotOf(plan, "four"), Slot(0, 2));
  EXPECT_EQ(SlotOf(plan, "two"), Slot(0, 0));
  EXPECT_EQ(SlotOf(plan, "four-again"), Slot(0, 6));
  EXPECT_EQ(SlotOf(plan, "one"), Slot(1, 0));
}

// Rule 3 and the "matching groups" of the placement rule: gpu_type and min_gpu_memory_gb.
TEST_P(CommonRulesTest, PlacesOnlyOnMatchingGroups) {
  // l4: 0-3 (24 GB); h100: 4-11 (80 GB), GPU 4 held by r at steps 0-2.
  const Scenario s = ScenarioBuilder("types")
                         .Steps(4)
                         .Group("l4", 1, 4, "L4", 24)
                         .Group("h100", 2, 4, "H100", 80)
                         .Job(MakeJob("r").Gpus(1).Duration(3).Running(0, 4))
                         .Job(MakeJob("h").Gpus(2).GpuType("H100"))
                         .Job(MakeJob("m").Gpus(4).MinMemory(40))
                         .Job(MakeJob("any").Gpus(4))
                         .Job(MakeJob("tpu").Gpus(1).GpuType("TPU"))
                         .Build();
  const Plan plan = Solve(s);
  EXPECT_EQ(SlotOf(plan, "h"), Slot(0, 6));  // 4-5 has the running GPU 4
  EXPECT_EQ(SlotOf(plan, "m"), Slot(0, 8));  // 4-7 is taken, and l4 is too small
  EXPECT_EQ(SlotOf(plan, "any"), Slot(0, 0));
  EXPECT_EQ(StartOf(plan, "tpu"), std::nullopt);
}

// "free for the job's whole duration (steps past the horizon count as free)".
TEST_P(CommonRulesTest, BlockFreeForTheWholeDurationAndPastTheHorizonIsFree) {
  // 12 GPUs in 3 nodes of 4; r1 holds 0-3 at steps 0-1, r2 holds 8-11 for the whole horizon.
  // a (8 GPUs) can only use 0-7: from step 2. b (4 GPUs, 3 steps): 4-7 is free at steps 0-1
  // but not at 2 (a), so the queue policies start it at step 4 on 0-3, its last two steps past
  // the horizon. reactive has no look-ahead: b starts on 4-7 at once and a waits for it.
  const Scenario s = ScenarioBuilder("duration")
                         .Steps(5)
                         .Group("g", 3, 4)
                         .Job(MakeJob("r1").Gpus(4).Duration(3).Running(-1, 0))
                         .Job(MakeJob("r2").Gpus(4).Duration(9).Running(-1, 8))
                         .Job(MakeJob("a").Gpus(8).Duration(2))
                         .Job(MakeJob("b").Gpus(4).Duration(3))
                         .Build();
  const Plan plan = Solve(s);
  if (Is("reactive")) {
    EXPECT_EQ(SlotOf(plan, "b"), Slot(0, 4));
    EXPECT_EQ(SlotOf(plan, "a"), Slot(3, 0));
  } else {
    EXPECT_EQ(SlotOf(plan, "a"), Slot(2, 0));
    EXPECT_EQ(SlotOf(plan, "b"), Slot(4, 0));
  }
  EXPECT_EQ(plan.metrics.jobs_completed, Is("reactive") ? 3 : 2);  // r1, a (and b for reactive)
}

INSTANTIATE_TEST_SUITE_P(Baselines, CommonRulesTest,
                         ::testing::Values(Baseline{"fifo", MakeFifoPolicy},
                                           Baseline{"fifo-backfill", MakeFifoBackfillPolicy},
                                           Baseline{"priority-backfill",
                                                    MakePriorityBackfillPolicy},
                                           Baseline{"reactive", MakeReactivePolicy}),
                         [](const ::testing::TestParamInfo<Baseline>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace ordo::testing
