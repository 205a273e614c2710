// priority-preempt and reactive-preempt (docs/baselines.md, "The preempting peers"), each rule
// with a hand-computed plan.
#include <gtest/gtest.h>

#include "ordo/policy/baselines/baselines.h"
#include "tests/support/builders.h"
#include "tests/unit/policy/baselines/plan_expect.h"

namespace ordo::testing {
namespace {

Plan PriorityPreempt(const Scenario& s) {
  return SolveLegal(*policy::MakePriorityPreemptPolicy(), s);
}
Plan ReactivePreempt(const Scenario& s) {
  return SolveLegal(*policy::MakeReactivePreemptPolicy(), s);
}

TEST(PreemptPeersTest, NamesAreTheSpecs) {
  EXPECT_EQ(policy::MakePriorityPreemptPolicy()->name(), "priority-preempt");
  EXPECT_EQ(policy::MakeReactivePreemptPolicy()->name(), "reactive-preempt");
}

// r (8 GPUs, priority 1, running since -2, checkpoint every 3, restart 1) holds the node; w
// (4 GPUs, priority 5) arrives at 1 and cannot start: it takes block 0 at 1. r has done 3 steps
// by then (saved 3), is requeued and resumes where the node is whole again, at 3, for
// 1 + 10 - 3 = 8 steps.
TEST(PriorityPreemptTest, TakesTheLowestBlockFromALowerPriorityCheckpointedJob) {
  const Scenario s =
      ScenarioBuilder("take")
          .Steps(8)
          .Group("g", 1, 8)
          .Job(MakeJob("r").Gpus(8).Duration(10).Priority(1).Running(-2, 0).Checkpointed(3, 1))
          .Job(MakeJob("w").Gpus(4).Duration(2).Priority(5).Arrival(1))
          .Build();
  const Plan plan = PriorityPreempt(s);
  const JobPlacement* r = FindJob(plan, "r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->preempt_step, 1);
  ASSERT_TRUE(r->resume.has_value());
  EXPECT_EQ(*r->resume, (ResumePlacement{3, 0}));
  EXPECT_EQ(SlotOf(plan, "w"), Slot(1, 0));
  EXPECT_EQ(plan.metrics.preemptions, 1);
}

// Equal priority, or no checkpoint, protects a running job: w waits as in priority-backfill.
TEST(PriorityPreemptTest, NeverTakesFromEqualPriorityOrUncheckpointedJobs) {
  for (const bool checkpoint : {false, true}) {
    JobBuilder r = MakeJob("r").Gpus(8).Duration(10).Priority(checkpoint ? 5 : 1).Running(-2, 0);
    if (checkpoint) r.Checkpointed(3, 1);
    const Scenario s = ScenarioBuilder("keep")
                           .Steps(12)
                           .Group("g", 1, 8)
                           .Job(r)
                           .Job(MakeJob("w").Gpus(4).Duration(2).Priority(5).Arrival(1))
                           .Build();
    const Plan plan = PriorityPreempt(s);
    EXPECT_FALSE(FindJob(plan, "r")->preempt_step.has_value()) << checkpoint;
    EXPECT_EQ(SlotOf(plan, "w"), Slot(8, 0)) << checkpoint;
  }
}

// r1 and r2 (priority 3, checkpointed) fill the node; the service wants 2 GPUs at step 1. The
// later started r1 goes (ties on priority: the latest start), the service takes its highest ids
// 3 and 2, and r1 cannot resume while they are held.
TEST(ReactivePreemptTest, ServicePreemptsTheLatestStartedOfTheLowestPriority) {
  const Scenario s =
      ScenarioBuilder("autoscale")
          .Steps(4)
          .Group("g", 1, 8)
          .Job(MakeJob("r2").Gpus(4).Duration(10).Priority(3).Running(-3, 4).Checkpointed(2, 0))
          .Job(MakeJob("r1").Gpus(4).Duration(10).Priority(3).Running(-1, 0).Checkpointed(2, 0))
          .Service(MakeService("s").Priority(9).Demand({0, 2, 2, 2}))
          .Build();
  const Plan plan = ReactivePreempt(s);
  EXPECT_EQ(FindJob(plan, "r1")->preempt_step, 1);
  EXPECT_FALSE(FindJob(plan, "r1")->resume.has_value());
  EXPECT_FALSE(FindJob(plan, "r2")->preempt_step.has_value());
  EXPECT_EQ(GpusOf(plan, "s"), (std::vector<std::vector<int>>{{}, {2, 3}, {2, 3}, {2, 3}}));
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 0);
}

// A preempted job waits in the queue and resumes, in the same step, on another free block
// (migration): the service may use only group "a", where r runs; it preempts r at step 1, takes
// 0-3, and r resumes at once on group "b": 1 restart step, then the 10 - 3 steps left after its
// save at progress 3.
TEST(ReactivePreemptTest, PreemptedJobResumesElsewhereInTheSameStep) {
  const Scenario s =
      ScenarioBuilder("migrate")
          .Steps(4)
          .Group("a", 1, 4, "A", 80)
          .Group("b", 1, 4, "B", 80)
          .Job(MakeJob("r").Gpus(4).Duration(10).Priority(2).Running(-2, 0).Checkpointed(3, 1))
          .Service(MakeService("s").Priority(9).GpuType("A").Demand({0, 4, 4, 4}))
          .Build();
  const Plan plan = ReactivePreempt(s);
  const JobPlacement* r = FindJob(plan, "r");
  EXPECT_EQ(r->preempt_step, 1);
  ASSERT_TRUE(r->resume.has_value());
  EXPECT_EQ(*r->resume, (ResumePlacement{1, 4}));
  EXPECT_EQ(GpusOf(plan, "s"),
            (std::vector<std::vector<int>>{{}, {0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}}));
  // Nothing is lost but the restart step at 1 (4 GPU-steps): step 0's work is saved.
  EXPECT_EQ(plan.metrics.lost_gpu_steps, 4);
}

}  // namespace
}  // namespace ordo::testing
