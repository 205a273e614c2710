// fifo, fifo-backfill and priority-backfill: queue order, head-of-line blocking, the "not before
// the previous job's start" rule and conservative backfill, each with a hand-computed plan.
#include <gtest/gtest.h>

#include "ordo/policy/baselines/baselines.h"
#include "tests/support/builders.h"
#include "tests/unit/policy/baselines/plan_expect.h"

namespace ordo::testing {
namespace {

Plan Fifo(const Scenario& s) { return SolveLegal(*policy::MakeFifoPolicy(), s); }
Plan FifoBackfill(const Scenario& s) { return SolveLegal(*policy::MakeFifoBackfillPolicy(), s); }
Plan PriorityBackfill(const Scenario& s) {
  return SolveLegal(*policy::MakePriorityBackfillPolicy(), s);
}

TEST(QueuePoliciesTest, NamesAreTheSpecs) {
  EXPECT_EQ(policy::MakeFifoPolicy()->name(), "fifo");
  EXPECT_EQ(policy::MakeFifoBackfillPolicy()->name(), "fifo-backfill");
  EXPECT_EQ(policy::MakePriorityBackfillPolicy()->name(), "priority-backfill");
  EXPECT_EQ(policy::MakeReactivePolicy()->name(), "reactive");
}

// fifo: "jobs in order of arrival_step (ties: file order)".
TEST(FifoTest, ArrivalOrderThenFileOrder) {
  const Scenario s = ScenarioBuilder("order")
                         .Steps(8)
                         .Group("g", 1, 8)
                         .Job(MakeJob("late").Gpus(8).Duration(2).Arrival(1).Priority(9))
                         .Job(MakeJob("first").Gpus(8).Duration(2))
                         .Job(MakeJob("second").Gpus(8).Duration(2))
                         .Build();
  for (const Plan& plan : {Fifo(s), FifoBackfill(s)}) {
    EXPECT_EQ(SlotOf(plan, "first"), Slot(0, 0));
    EXPECT_EQ(SlotOf(plan, "second"), Slot(2, 0));
    EXPECT_EQ(SlotOf(plan, "late"), Slot(4, 0));
  }
}

// fifo: "the earliest step that is >= its arrival, >= the start of the job placed before it, and
// has a free block".
TEST(FifoTest, NeverStartsBeforeThePreviousJob) {
  // r holds 0-3 at steps 0-2; a (all 8 GPUs) starts at 3; b (1 GPU) fits on 4 at step 1, but fifo
  // keeps it behind a: a holds everything at 3-4, so b starts at 5.
  const Scenario s = ScenarioBuilder("previous")
                         .Steps(8)
                         .Group("g", 2, 4)
                         .Job(MakeJob("r").Gpus(4).Duration(3).Running(0, 0))
                         .Job(MakeJob("a").Gpus(8).Duration(2))
                         .Job(MakeJob("b").Gpus(1).Arrival(1))
                         .Build();
  const Plan fifo = Fifo(s);
  EXPECT_EQ(SlotOf(fifo, "a"), Slot(3, 0));
  EXPECT_EQ(SlotOf(fifo, "b"), Slot(5, 0));
  const Plan backfill = FifoBackfill(s);
  EXPECT_EQ(SlotOf(backfill, "a"), Slot(3, 0));
  EXPECT_EQ(SlotOf(backfill, "b"), Slot(1, 4));
}

// fifo: "A job that cannot start inside the horizon stays unstarted, and so do all jobs after it
// (head-of-line blocking)". fifo-backfill: "Jobs that cannot start inside the horizon are skipped;
// later ones still try."
TEST(FifoTest, HeadOfLineBlocking) {
  const Scenario s = ScenarioBuilder("blocking")
                         .Steps(4)
                         .Group("g", 2, 4)
                         .Job(MakeJob("small").Gpus(1))
                         .Job(MakeJob("huge").Gpus(16).Arrival(1))
                         .Job(MakeJob("tpu").Gpus(1).GpuType("TPU").Arrival(1))
                         .Job(MakeJob("after").Gpus(1).Arrival(2))
                         .Build();
  const Plan fifo = Fifo(s);
  EXPECT_EQ(SlotOf(fifo, "small"), Slot(0, 0));
  EXPECT_EQ(StartOf(fifo, "huge"), std::nullopt);
  EXPECT_EQ(StartOf(fifo, "tpu"), std::nullopt);
  EXPECT_EQ(StartOf(fifo, "after"), std::nullopt);
  EXPECT_EQ(fifo.metrics.jobs_started, 1);
  const Plan backfill = FifoBackfill(s);
  EXPECT_EQ(StartOf(backfill, "huge"), std::nullopt);
  EXPECT_EQ(SlotOf(backfill, "after"), Slot(2, 0));
}

TEST(FifoTest, BlockedByCapacityTooNotOnlyBySize) {
  // r holds 0-3 for the whole horizon: a (8 GPUs) fits the cluster but never starts.
  const Scenario s = ScenarioBuilder("capacity")
                         .Steps(4)
                         .Group("g", 2, 4)
                         .Job(MakeJob("r").Gpus(4).Duration(6).Running(0, 0))
                         .Job(MakeJob("a").Gpus(8))
                         .Job(MakeJob("b").Gpus(1))
                         .Build();
  EXPECT_EQ(StartOf(Fifo(s), "b"), std::nullopt);
  EXPECT_EQ(SlotOf(FifoBackfill(s), "b"), Slot(0, 4));
  EXPECT_EQ(SlotOf(PriorityBackfill(s), "b"), Slot(0, 4));
}

// fifo-backfill: "each job takes the earliest step >= its arrival where a block is free given all
// jobs placed before it" — it never delays a job placed before it.
TEST(BackfillTest, ConservativeBackfillNeverDelaysAnEarlierJob) {
  // r holds 0-3 at steps 0-1, so a (8 GPUs x 2) is planned at 2-3. b (4 x 3) would fit on 4-7 now
  // but would still hold it at step 2: it waits for step 4. c (4 x 2) fits on 4-7 before a.
  const Scenario s = ScenarioBuilder("conservative")
                         .Steps(6)
                         .Group("g", 2, 4)
                         .Job(MakeJob("r").Gpus(4).Duration(3).Running(-1, 0))
                         .Job(MakeJob("a").Gpus(8).Duration(2))
                         .Job(MakeJob("b").Gpus(4).Duration(3))
                         .Job(MakeJob("c").Gpus(4).Duration(2))
                         .Build();
  for (const Plan& plan : {FifoBackfill(s), PriorityBackfill(s)}) {
    EXPECT_EQ(SlotOf(plan, "a"), Slot(2, 0));
    EXPECT_EQ(SlotOf(plan, "b"), Slot(4, 0));
    EXPECT_EQ(SlotOf(plan, "c"), Slot(0, 4));
  }
  const Plan fifo = Fifo(s);
  EXPECT_EQ(SlotOf(fifo, "a"), Slot(2, 0));
  EXPECT_EQ(SlotOf(fifo, "b"), Slot(4, 0));
  EXPECT_EQ(SlotOf(fifo, "c"), Slot(4, 4));
}

TEST(BackfillTest, NeverStartsBeforeArrival) {
  const Scenario s = ScenarioBuilder("arrival")
                         .Steps(6)
                         .Group("g", 1, 4)
                         .Job(MakeJob("a").Gpus(1).Arrival(3))
                         .Job(MakeJob("b").Gpus(4).Duration(2).Arrival(3))
                         .Build();
  const Plan plan = FifoBackfill(s);
  EXPECT_EQ(SlotOf(plan, "a"), Slot(3, 0));
  EXPECT_EQ(SlotOf(plan, "b"), Slot(4, 0));
}

// priority-backfill: "ordered by priority (highest first), then arrival, then file order".
TEST(PriorityBackfillTest, PriorityThenArrivalThenFileOrder) {
  const Scenario s = ScenarioBuilder("priority")
                         .Steps(12)
                         .Group("g", 1, 4)
                         .Job(MakeJob("low").Gpus(4).Duration(2).Priority(1))
                         .Job(MakeJob("mid-late").Gpus(4).Duration(2).Priority(2.5).Arrival(1))
                         .Job(MakeJob("mid-early").Gpus(4).Duration(2).Priority(2.5))
                         .Job(MakeJob("mid-early-2").Gpus(4).Duration(2).Priority(2.5))
                         .Job(MakeJob("top").Gpus(4).Duration(2).Priority(2.6).Arrival(3))
                         .Build();
  const Plan plan = PriorityBackfill(s);
  EXPECT_EQ(SlotOf(plan, "top"), Slot(3, 0));
  EXPECT_EQ(SlotOf(plan, "mid-early"), Slot(0, 0));
  // mid-early-2 fits before top only until step 3: it is placed at 5 (after top), and so on.
  EXPECT_EQ(SlotOf(plan, "mid-early-2"), Slot(5, 0));
  EXPECT_EQ(SlotOf(plan, "mid-late"), Slot(7, 0));
  EXPECT_EQ(SlotOf(plan, "low"), Slot(9, 0));
  // fifo-backfill ignores priorities: arrival then file order.
  const Plan fifo_backfill = FifoBackfill(s);
  EXPECT_EQ(SlotOf(fifo_backfill, "low"), Slot(0, 0));
  EXPECT_EQ(SlotOf(fifo_backfill, "mid-early"), Slot(2, 0));
  EXPECT_EQ(SlotOf(fifo_backfill, "mid-early-2"), Slot(4, 0));
  EXPECT_EQ(SlotOf(fifo_backfill, "mid-late"), Slot(6, 0));
  EXPECT_EQ(SlotOf(fifo_backfill, "top"), Slot(8, 0));
}

TEST(PriorityBackfillTest, MetricsComeFromThePlan) {
  const Scenario s = ScenarioBuilder("metrics")
                         .Steps(4)
                         .Group("g", 1, 4)
                         .Objective(0.5, 8)
                         .Job(MakeJob("a").Gpus(2).Duration(2).Priority(3))
                         .Service(MakeService("chat").Priority(10).Demand({1, 2, 3, 2}))
                         .Build();
  const Plan plan = PriorityBackfill(s);
  // chat reserves 3 ({1, 2, 3}); a (2 GPUs) has no free aligned block left: 0-1 holds GPU 1.
  EXPECT_EQ(StartOf(plan, "a"), std::nullopt);
  EXPECT_EQ(GpusOf(plan, "chat"), Repeat({1, 2, 3}, 4));
  EXPECT_DOUBLE_EQ(plan.metrics.batch_value, 0);
  EXPECT_DOUBLE_EQ(plan.metrics.value, 10.0 * (1 + 2 + 3 + 2));
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 0);
  EXPECT_DOUBLE_EQ(plan.metrics.utilization, 8.0 / 16);
  EXPECT_DOUBLE_EQ(plan.metrics.allocated_utilization, 12.0 / 16);
  EXPECT_GE(plan.metrics.solve_ms, 0);
}

}  // namespace
}  // namespace ordo::testing
