#include "ordo/policy/fast/preemption_move.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/common/plan_builder.h"
#include "tests/support/builders.h"

namespace ordo::policy {
namespace {

using testing::FindJob;
using testing::FindService;
using testing::Ids;
using testing::MakeJob;
using testing::MakeService;
using testing::ScenarioBuilder;

const auto kNever = [] { return false; };

// One node of 8 GPUs held by two running jobs: `low` (priority 1, checkpoint every step, restart
// 1) on 0-3 and `high` (priority 9, no checkpoint) on 4-7. chat (priority 10) needs 4 GPUs at
// steps 2-5. Left alone it goes unmet (16 GPU-steps at M x 10 each); low gives its block back at
// 2 (no work lost), chat holds it for its peak and low resumes at 6.
Scenario PeakBehindRunningJobs() {
  return ScenarioBuilder("peak")
      .Steps(8)
      .Objective(0.5, 8)
      .Group("a", 1, 8)
      .Job(MakeJob("low").Gpus(4).Duration(30).Priority(1).Running(-2, 0).Checkpointed(1, 1))
      .Job(MakeJob("high").Gpus(4).Duration(30).Priority(9).Running(-2, 4))
      .Service(MakeService("chat").Priority(10).Demand({0, 0, 4, 4, 4, 4, 0, 0}))
      .Build();
}

TEST(PreemptForServices, ACheckpointedJobGivesItsGpusToAServicePeakAndResumesAfter) {
  const Scenario s = PeakBehindRunningJobs();
  ASSERT_TRUE(ValidateScenario(s).has_value()) << ValidateScenario(s).error().ToString();
  const Plan plan = MakeEmptyPlan(s, "ordo");  // the running jobs kept, chat given nothing
  ASSERT_TRUE(CheckPlan(s, plan).empty());
  ASSERT_EQ(ComputeMetrics(s, plan).realtime_unmet_gpu_steps, 16);
  const auto better = PreemptForServices(s, plan, Promises{}, kNever);
  ASSERT_TRUE(better.has_value());
  EXPECT_TRUE(CheckPlan(s, *better).empty());
  const JobPlacement& low = *FindJob(*better, "low");
  ASSERT_TRUE(low.preempt_step.has_value());
  EXPECT_EQ(*low.preempt_step, 2);
  ASSERT_TRUE(low.resume.has_value());
  EXPECT_EQ(low.resume->start_step, 6);
  EXPECT_EQ(low.resume->first_gpu, 0);
  EXPECT_FALSE(FindJob(*better, "high")->preempt_step.has_value());
  const ServiceAllocation& chat = *FindService(*better, "chat");
  for (int t = 2; t < 6; ++t) EXPECT_EQ(chat.gpus[t], Ids(0, 4)) << "step " << t;
  EXPECT_EQ(better->metrics.realtime_unmet_gpu_steps, 0);
  EXPECT_GT(better->metrics.objective, ComputeObjective(s, plan));
  EXPECT_EQ(better->metrics.preemptions, 1);
}

TEST(PreemptForServices, NothingWhenTheOnlyVictimHasNoCheckpointOrNoDemandIsUnmet) {
  Scenario s = PeakBehindRunningJobs();
  Scenario no_checkpoint = s;
  no_checkpoint.jobs[0].checkpoint.reset();
  EXPECT_FALSE(
      PreemptForServices(no_checkpoint, MakeEmptyPlan(no_checkpoint, "ordo"), Promises{}, kNever));
  Scenario no_peak = s;
  no_peak.services[0].demand.assign(8, 0);
  EXPECT_FALSE(PreemptForServices(no_peak, MakeEmptyPlan(no_peak, "ordo"), Promises{}, kNever));
}

TEST(PreemptForServices, AServiceWorthLessThanTheWorkItWouldDisplaceLeavesThePlan) {
  // M = 0: unmet demand costs nothing, so preempting low only loses its work.
  Scenario s = PeakBehindRunningJobs();
  s.objective.unmet_penalty_multiplier = 0;
  EXPECT_FALSE(PreemptForServices(s, MakeEmptyPlan(s, "ordo"), Promises{}, kNever));
}

// Two nodes of 8 GPUs, each half held by a running job of priority 5 that saves every step and
// restarts at once: r0 on 0-3, r1 on 8-11. w (8 GPUs, priority 5, 6 steps) finds no whole node
// until one ends at 10. Neither job has a lower priority than w, so only a migration helps: r0
// (the first candidate; r1's move is worth the same) moves to 12-15 at step 0, with no work lost
// and no restart, and w takes node 0 at once.
TEST(PreemptWherePays, AMigrationMakesANodeWholeForAWideJob) {
  const Scenario s =
      ScenarioBuilder("migrate")
          .Steps(12)
          .Objective(0.5, 8)
          .Group("a", 2, 8)
          .Job(MakeJob("r0").Gpus(4).Duration(12).Priority(5).Running(-2, 0).Checkpointed(1, 0))
          .Job(MakeJob("r1").Gpus(4).Duration(14).Priority(5).Running(-2, 8).Checkpointed(1, 0))
          .Job(MakeJob("w").Gpus(8).Duration(6).Priority(5))
          .Build();
  ASSERT_TRUE(ValidateScenario(s).has_value()) << ValidateScenario(s).error().ToString();
  Plan plan = MakeEmptyPlan(s, "ordo");
  JobPlacement& w = plan.jobs[2];  // w after r0 ends, on node 0
  w.start_step = 10;
  w.first_gpu = 0;
  w.gpus = 8;
  w.duration_steps = 6;
  ASSERT_TRUE(CheckPlan(s, plan).empty()) << FormatViolation(CheckPlan(s, plan)[0]);

  const auto better = PreemptWherePays(s, plan, Promises{}, kNever);
  ASSERT_TRUE(better.has_value());
  EXPECT_TRUE(CheckPlan(s, *better).empty());
  const JobPlacement& moved = *FindJob(*better, "r0");
  ASSERT_TRUE(moved.preempt_step.has_value());
  EXPECT_EQ(*moved.preempt_step, 0);
  ASSERT_TRUE(moved.resume.has_value());
  EXPECT_EQ(moved.resume->start_step, 0);
  EXPECT_EQ(moved.resume->first_gpu, 12);
  EXPECT_EQ(FindJob(*better, "w")->start_step, 0);
  EXPECT_EQ(FindJob(*better, "w")->first_gpu, 0);
  EXPECT_FALSE(FindJob(*better, "r1")->preempt_step.has_value());
  EXPECT_EQ(better->metrics.lost_gpu_steps, 0);
  EXPECT_GT(better->metrics.objective, ComputeObjective(s, plan));
}

// One node held by r (priority 4, checkpointed, 30 steps); w (8 GPUs, 4 steps) arrives at 1 and
// waits for it. Priority 7 is r's class (4-7): no preemption. Priority 8 is a class above: r
// gives the node back at a checkpoint and resumes after w.
TEST(PreemptWherePays, OnlyAcrossPriorityClasses) {
  for (const double w_priority : {7.0, 8.0}) {
    const Scenario s =
        ScenarioBuilder("classes")
            .Steps(12)
            .Group("g", 1, 8)
            .Job(MakeJob("r").Gpus(8).Duration(30).Priority(4).Running(-6, 0).Checkpointed(2, 1))
            .Job(MakeJob("w").Gpus(8).Duration(4).Priority(w_priority).Arrival(1))
            .Build();
    const Plan plan = MakeEmptyPlan(s, "ordo");  // r runs on, w waits
    const auto better = PreemptWherePays(s, plan, Promises{}, kNever);
    if (w_priority < 8) {
      EXPECT_FALSE(better.has_value()) << "priority " << w_priority;
      continue;
    }
    ASSERT_TRUE(better.has_value());
    EXPECT_TRUE(CheckPlan(s, *better).empty());
    const JobPlacement& r = *FindJob(*better, "r");
    ASSERT_TRUE(r.preempt_step.has_value());
    EXPECT_EQ(FindJob(*better, "w")->start_step, r.preempt_step);
    EXPECT_EQ(better->metrics.preemptions, 1);
  }
}

// r (8 GPUs, priority 5, saves every 2 steps) borrows beyond its tenant's share, its priority
// scaled by 1/1024; w (priority 5, the same class) is within its share. w takes r's node when it
// needs the whole node; a 4-GPU w would leave half of it to fragments, so r keeps it; without
// borrowing the class rule alone leaves r running.
TEST(PreemptWherePays, AJobWithinItsShareTakesBackABorrowedBlockAsWideAsItNeeds) {
  for (const int w_gpus : {8, 4}) {
    for (const bool borrowing : {true, false}) {
      Scenario s =
          ScenarioBuilder("reclaim")
              .Steps(12)
              .Group("g", 1, 8)
              .Job(MakeJob("r").Gpus(8).Duration(30).Priority(5).Running(-6, 0).Checkpointed(2, 1))
              .Job(MakeJob("w").Gpus(w_gpus).Duration(4).Priority(5).Arrival(1))
              .Build();
      if (borrowing) {
        s.jobs[0].borrowing_factor = 1.0 / 1024;
        s.jobs[0].priority *= s.jobs[0].borrowing_factor;
      }
      const auto better = PreemptWherePays(s, MakeEmptyPlan(s, "ordo"), Promises{}, kNever);
      const std::string label = std::to_string(w_gpus) + (borrowing ? " borrowing" : " lent");
      if (!borrowing || w_gpus < 8) {
        EXPECT_FALSE(better.has_value()) << label;
        continue;
      }
      ASSERT_TRUE(better.has_value()) << label;
      EXPECT_TRUE(CheckPlan(s, *better).empty());
      const JobPlacement& r = *FindJob(*better, "r");
      ASSERT_TRUE(r.preempt_step.has_value());
      EXPECT_EQ(FindJob(*better, "w")->start_step, r.preempt_step);
    }
  }
}

// The priority class is judged before the share guarantee's scaling: a borrowing priority-9 job
// (scaled to 9/1024, below class 1-3) is not a lower class than a priority-5 job; and a 4-GPU job
// does not reclaim its 8-GPU block.
TEST(PreemptWherePays, ClassesAreJudgedOnUnscaledPriorities) {
  Scenario s =
      ScenarioBuilder("scaled")
          .Steps(12)
          .Group("g", 1, 8)
          .Job(MakeJob("r").Gpus(8).Duration(30).Priority(9).Running(-6, 0).Checkpointed(2, 1))
          .Job(MakeJob("w").Gpus(4).Duration(4).Priority(5).Arrival(1))
          .Build();
  s.jobs[0].borrowing_factor = 1.0 / 1024;
  s.jobs[0].priority *= s.jobs[0].borrowing_factor;
  EXPECT_DOUBLE_EQ(s.jobs[0].unscaled_priority(), 9);
  EXPECT_FALSE(PreemptWherePays(s, MakeEmptyPlan(s, "ordo"), Promises{}, kNever).has_value());
}

// The work a preemption for a service throws away is charged at the victim's priority x GPUs x
// steps lost, beyond what the objective sees of it (the resumed stay's extra steps, here past the
// horizon). chat (priority 10, M = 3) needs 4 GPUs at step 0 only; low (priority 9, 4 GPUs,
// checkpoint every 4, restart 1) has done 3 steps since its last save. Preempting it at 0 raises
// the objective (120 of chat's penalty saved, low's steps 0-1 lost) but not by the 9 x 4 x 3 =
// 108 its lost work is charged; saved at step 0, the same low gives its block back.
TEST(PreemptForServices, WorkThrownAwayIsChargedBeyondWhatTheObjectiveSees) {
  Scenario s =
      ScenarioBuilder("one-step peak")
          .Steps(8)
          .Objective(0.5, 3)
          .Group("a", 1, 4)
          .Job(MakeJob("low").Gpus(4).Duration(30).Priority(9).Running(-3, 0).Checkpointed(4, 1))
          .Service(MakeService("chat").Priority(10).Demand({4, 0, 0, 0, 0, 0, 0, 0}))
          .Build();
  ASSERT_TRUE(ValidateScenario(s).has_value()) << ValidateScenario(s).error().ToString();
  const Plan left = MakeEmptyPlan(s, "ordo");
  // The lossy preemption by hand: it is legal and the objective alone would take it.
  Plan lossy = left;
  lossy.jobs[0].preempt_step = 0;
  lossy.jobs[0].resume = ResumePlacement{1, 0};
  lossy.services[0].gpus[0] = Ids(0, 4);
  ASSERT_TRUE(CheckPlan(s, lossy).empty()) << CheckPlan(s, lossy).front().message;
  const double gain = ComputeObjective(s, lossy) - ComputeObjective(s, left);
  ASSERT_GT(gain, 0);
  ASSERT_LT(gain, 9 * 4 * 3);
  EXPECT_FALSE(PreemptForServices(s, left, Promises{}, kNever).has_value());

  s.jobs[0].running->progress_steps = 4;  // a checkpoint at step 0: nothing is lost
  const auto better = PreemptForServices(s, MakeEmptyPlan(s, "ordo"), Promises{}, kNever);
  ASSERT_TRUE(better.has_value());
  EXPECT_TRUE(CheckPlan(s, *better).empty());
  EXPECT_EQ(FindJob(*better, "low")->preempt_step, 0);
  EXPECT_EQ(better->metrics.realtime_unmet_gpu_steps, 0);
}

// A borrowing job is weighed against a service's unmet demand at its unscaled priority: the
// scaling orders tenants' batch work, it does not make borrowed work cheaper than a service's.
TEST(PreemptForServices, ABorrowingJobIsWeighedAtItsUnscaledPriority) {
  Scenario s = PeakBehindRunningJobs();
  s.objective.unmet_penalty_multiplier = 0.01;  // unmet chat worth less than low's lost work
  const Plan left = MakeEmptyPlan(s, "ordo");
  ASSERT_FALSE(PreemptForServices(s, left, Promises{}, kNever).has_value());
  Job& low =
      *std::find_if(s.jobs.begin(), s.jobs.end(), [](const Job& j) { return j.id == "low"; });
  low.borrowing_factor = 1.0 / 1024;
  low.priority *= low.borrowing_factor;
  EXPECT_FALSE(PreemptForServices(s, left, Promises{}, kNever).has_value());
}

// A ramp reserve is headroom above the forecast: no job is preempted for it, but one still is for
// the forecast demand under it.
TEST(PreemptForServices, NoJobIsPreemptedForAServicesReserveAlone) {
  Scenario all_reserve = PeakBehindRunningJobs();
  all_reserve.services[0].reserve = {0, 0, 4, 4, 4, 4, 0, 0};  // the forecast is 0 throughout
  EXPECT_EQ(all_reserve.services[0].forecast_demand(3), 0);
  EXPECT_FALSE(
      PreemptForServices(all_reserve, MakeEmptyPlan(all_reserve, "ordo"), Promises{}, kNever));

  Scenario half = PeakBehindRunningJobs();
  half.services[0].reserve = {0, 0, 2, 2, 2, 2, 0, 0};  // a forecast of 2 at steps 2-5
  const auto better = PreemptForServices(half, MakeEmptyPlan(half, "ordo"), Promises{}, kNever);
  ASSERT_TRUE(better.has_value());
  EXPECT_TRUE(CheckPlan(half, *better).empty());
  EXPECT_EQ(FindJob(*better, "low")->preempt_step, 2);
}

}  // namespace
}  // namespace ordo::policy
