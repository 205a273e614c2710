// Fragmentation and shape-mismatch waiting (docs/cli.md, "Metrics") on plans small enough to count
// by hand.
#include "ordo/report/wait_metrics.h"

#include <gtest/gtest.h>

#include "tests/support/builders.h"

namespace ordo::report {
namespace {

using testing::MakeJob;
using testing::ScenarioBuilder;

JobPlacement At(std::string id, int start, int first_gpu, int gpus, int duration) {
  return JobPlacement{std::move(id), start, first_gpu, gpus, duration};
}
JobPlacement Unstarted(std::string id) {
  return JobPlacement{std::move(id), std::nullopt, 0, 0, 0};
}

// 8 GPUs on one node, 2 steps; x holds [2, 4) and y holds [4, 6): 4 GPUs are free (0, 1, 6, 7)
// but no aligned block of 4 is.
Scenario TwoBlockers(bool with_small_job) {
  ScenarioBuilder b("frag");
  b.Steps(2).Group("n", 1, 8);
  b.Job(MakeJob("x").Gpus(2).Duration(2)).Job(MakeJob("y").Gpus(2).Duration(2));
  b.Job(MakeJob("big").Gpus(4).Duration(1));
  if (with_small_job) b.Job(MakeJob("small").Gpus(1).Duration(1).Arrival(1));
  return b.Build();
}

Plan TwoBlockersPlan(bool with_small_job) {
  Plan plan;
  plan.jobs = {At("x", 0, 2, 2, 2), At("y", 0, 4, 2, 2), Unstarted("big")};
  if (with_small_job) plan.jobs.push_back(Unstarted("small"));
  return plan;
}

TEST(WaitMetricsTest, FreeGpusOutsideAnyFreeBlockAreFragmented) {
  const WaitMetrics m = ComputeWaitMetrics(TwoBlockers(false), TwoBlockersPlan(false));
  EXPECT_EQ(m.fragmented_gpu_steps, 8);  // 4 free GPUs at each of 2 steps
  EXPECT_DOUBLE_EQ(m.fragmentation, 8.0 / 16.0);
  EXPECT_EQ(m.waiting_job_steps, 2);
  EXPECT_EQ(m.shape_mismatch_job_steps, 2);  // 4 free GPUs, no free block of 4
  EXPECT_DOUBLE_EQ(m.shape_mismatch_share.value(), 1.0);
}

// A 1-GPU job waiting from step 1 could use any free GPU then: nothing is fragmented at step 1.
TEST(WaitMetricsTest, AWaitingJobThatFitsMakesFreeGpusUsable) {
  const WaitMetrics m = ComputeWaitMetrics(TwoBlockers(true), TwoBlockersPlan(true));
  EXPECT_EQ(m.fragmented_gpu_steps, 4);  // step 0 only
  EXPECT_EQ(m.waiting_job_steps, 3);     // big at 0 and 1, small at 1
  EXPECT_EQ(m.shape_mismatch_job_steps, 2);
  EXPECT_DOUBLE_EQ(m.shape_mismatch_share.value(), 2.0 / 3.0);
}

// Waiting for capacity is not a shape mismatch; with no GPU free nothing is fragmented.
TEST(WaitMetricsTest, AFullClusterIsCapacityNotShape) {
  const Scenario s = ScenarioBuilder("full")
                         .Steps(3)
                         .Group("n", 1, 4)
                         .Job(MakeJob("a").Gpus(4).Duration(2))
                         .Job(MakeJob("b").Gpus(2).Duration(1))
                         .Build();
  Plan plan;
  plan.jobs = {At("a", 0, 0, 4, 2), At("b", 2, 0, 2, 1)};
  const WaitMetrics m = ComputeWaitMetrics(s, plan);
  EXPECT_EQ(m.waiting_job_steps, 2);  // b at steps 0 and 1
  EXPECT_EQ(m.shape_mismatch_job_steps, 0);
  EXPECT_EQ(m.fragmented_gpu_steps, 0);  // at step 2 nobody waits
  EXPECT_DOUBLE_EQ(m.shape_mismatch_share.value(), 0.0);
}

TEST(WaitMetricsTest, NothingWaitingMeansNoShareAndNoFragmentation) {
  const Scenario s = ScenarioBuilder("idle")
                         .Steps(2)
                         .Group("n", 1, 4)
                         .Job(MakeJob("a").Gpus(1).Duration(1))
                         .Build();
  Plan plan;
  plan.jobs = {At("a", 0, 0, 1, 1)};
  const WaitMetrics m = ComputeWaitMetrics(s, plan);
  EXPECT_EQ(m.waiting_job_steps, 0);
  EXPECT_FALSE(m.shape_mismatch_share.has_value());
  EXPECT_EQ(m.fragmented_gpu_steps, 0);
}

// A job that may only use H100s waits while the A100 node is idle: the free A100s count toward its
// size, so that wait is a shape (type) mismatch, and the idle A100s are fragmented.
TEST(WaitMetricsTest, GpuTypeCountsAsShape) {
  const Scenario s = ScenarioBuilder("types")
                         .Steps(1)
                         .Group("h", 1, 2, "H100")
                         .Group("a", 1, 2, "A100")
                         .Job(MakeJob("run").Gpus(2).Duration(1).GpuType("H100"))
                         .Job(MakeJob("wait").Gpus(2).Duration(1).GpuType("H100"))
                         .Build();
  Plan plan;
  plan.jobs = {At("run", 0, 0, 2, 1), Unstarted("wait")};
  const WaitMetrics m = ComputeWaitMetrics(s, plan);
  EXPECT_EQ(m.shape_mismatch_job_steps, 1);
  EXPECT_EQ(m.fragmented_gpu_steps, 2);
  EXPECT_DOUBLE_EQ(m.fragmentation, 0.5);
}

// Services occupy what they list; a running job never waits; unknown ids are ignored.
TEST(WaitMetricsTest, ServicesOccupyAndRunningJobsNeverWait) {
  const Scenario s = ScenarioBuilder("svc")
                         .Steps(2)
                         .Group("n", 1, 4)
                         .Job(MakeJob("r").Gpus(2).Duration(3).Running(-1, 0))
                         .Job(MakeJob("w").Gpus(2).Duration(1))
                         .Service(testing::MakeService("s").Demand({1, 1}).Max(4))
                         .Build();
  Plan plan;
  plan.jobs = {At("r", -1, 0, 2, 3), Unstarted("w"), At("ghost", 0, 0, 4, 2)};
  plan.services = {ServiceAllocation{"s", {{2}, {3}}}};
  const WaitMetrics m = ComputeWaitMetrics(s, plan);
  // w waits at both steps; 1 GPU is free each step (fewer than 2): capacity, not shape.
  EXPECT_EQ(m.waiting_job_steps, 2);
  EXPECT_EQ(m.shape_mismatch_job_steps, 0);
  EXPECT_EQ(m.fragmented_gpu_steps, 2);  // the one free GPU at each step is in no free block of 2
}

// Waits on a plan counted by hand: 30-minute steps, horizon 10 steps (5 h). Jobs: a (priority 2,
// queued 4 steps before the plan, starts at 2: 3 h), b (priority 5, arrives 1, starts 1: 0 h),
// c (priority 9, arrives 0, starts 6: 3 h), d (priority 9, arrives 2, never started: 10 - 2 = 8
// steps = 4 h), r (running: not counted).
TEST(JobWaitsTest, MeanP95NeverStartedAndClasses) {
  ScenarioBuilder b("waits");
  b.Steps(10).StepMinutes(30).Group("n", 1, 8);
  b.Job(MakeJob("a").Gpus(1).Duration(1).Priority(2).Arrival(-4));
  b.Job(MakeJob("b").Gpus(1).Duration(1).Priority(5).Arrival(1));
  b.Job(MakeJob("c").Gpus(1).Duration(1).Priority(9));
  b.Job(MakeJob("d").Gpus(8).Duration(1).Priority(9).Arrival(2));
  b.Job(MakeJob("r").Gpus(1).Duration(3).Priority(1).Running(-1, 7));
  Plan plan;
  plan.jobs = {At("a", 2, 0, 1, 1), At("b", 1, 1, 1, 1), At("c", 6, 2, 1, 1), Unstarted("d"),
               At("r", -1, 7, 1, 3)};
  const JobWaits w = ComputeJobWaits(b.Build(), plan);
  EXPECT_EQ(w.all.jobs, 4);
  EXPECT_EQ(w.all.never_started, 1);
  EXPECT_DOUBLE_EQ(w.all.mean_hours, (3.0 + 0 + 3 + 4) / 4);
  EXPECT_DOUBLE_EQ(w.all.p95_hours, 4);  // nearest rank: ceil(0.95 x 4) = 4th of 0, 3, 3, 4
  EXPECT_EQ(w.by_class[0].jobs, 1);
  EXPECT_DOUBLE_EQ(w.by_class[0].p95_hours, 3);
  EXPECT_EQ(w.by_class[1].jobs, 1);
  EXPECT_DOUBLE_EQ(w.by_class[1].mean_hours, 0);
  EXPECT_EQ(w.by_class[2].jobs, 2);
  EXPECT_EQ(w.by_class[2].never_started, 1);
  EXPECT_DOUBLE_EQ(w.by_class[2].mean_hours, 3.5);
  EXPECT_DOUBLE_EQ(w.by_class[2].p95_hours, 4);
}

}  // namespace
}  // namespace ordo::report
