// The simulator's checkpoint semantics: a plan's preemption throws away the work since the last
// save, a resume first pays the restart steps, a job may be preempted again by a later plan, and a
// job may move to another block at the step it leaves its own (migration). Hand-computed cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ordo/sim/sim_metrics.h"
#include "sim_test_util.h"

namespace ordo::sim {
namespace {

using testing::ExpectCommittedLegal;
using testing::MakeWorldJob;
using testing::MustSimulate;
using testing::OutcomeOf;
using testing::SmallWorld;

// One 4-GPU node; "low" (priority 1, 4 GPUs, 10 steps, a save every 3 steps, 1 step to restart)
// arrives first; high-priority 4-GPU jobs of 2 steps arrive at `high_arrivals`.
World LowThenHigh(std::initializer_list<int> high_arrivals) {
  World w = SmallWorld(1, 4, 1, 24);
  WorldJob low = MakeWorldJob("low", 0, 4, 10, 10, 1);
  low.checkpoint = Checkpoint{3, 1};
  w.jobs.push_back(low);
  int n = 0;
  for (int arrival : high_arrivals) {
    w.jobs.push_back(MakeWorldJob("high" + std::to_string(++n), arrival, 4, 2, 2, 10));
  }
  return w;
}

void ExpectStay(const Stay& stay, long long from, long long work_from, long long kept_to,
                long long to) {
  EXPECT_EQ(stay.from, from);
  EXPECT_EQ(stay.work_from, work_from);
  EXPECT_EQ(stay.kept_to, kept_to);
  EXPECT_EQ(stay.to, to);
}

TEST(SimulatorPreemption, ASavedJobLosesWorkSinceItsLastSaveAndPaysItsRestart) {
  const World w = LowThenHigh({5});
  const SimRun run = MustSimulate(w, "priority-preempt");
  ExpectCommittedLegal(w, run, "one preemption");
  // At step 5 "low" has done 5 steps of work, saved 3: 2 are lost. "high1" runs 5-7; "low"
  // resumes at 7, restarts for 1 step and does its 7 steps left: it ends at 15.
  const JobOutcome& low = OutcomeOf(w, run, "low");
  ASSERT_EQ(low.stays.size(), 2U);
  ExpectStay(low.stays[0], 0, 0, 3, 5);
  ExpectStay(low.stays[1], 7, 8, 15, 15);
  EXPECT_EQ(low.preemptions(), 1);
  EXPECT_EQ(low.end_step(), 15);
  EXPECT_EQ(*OutcomeOf(w, run, "high1").start_step(), 5);

  const PeriodMetrics m = ComputeSimMetrics(w, run).total;
  EXPECT_EQ(m.preemptions, 1);
  EXPECT_EQ(m.lost_gpu_steps, 4 * (2 + 1));
  EXPECT_EQ(m.batch_gpu_steps, 4 * 10 + 4 * 2);  // only kept work
  EXPECT_DOUBLE_EQ(m.batch_value, 1.0 * 4 * 10 + 10.0 * 4 * 2);
  EXPECT_EQ(m.jobs_completed, 2);
  EXPECT_DOUBLE_EQ(m.allocated_utilization, (48.0 + 12.0) / (4 * 24));
}

TEST(SimulatorPreemption, AJobPreemptedAgainByALaterPlanKeepsOnlyWhatItSaved) {
  const World w = LowThenHigh({5, 10});
  const SimRun run = MustSimulate(w, "priority-preempt");
  ExpectCommittedLegal(w, run, "two preemptions");
  // Resumed at 7 with 3 saved, restarting until 8; at 10 it has 3 + 2 = 5 done, 3 saved: the
  // second stay keeps nothing. Resumed at 12: restart until 13, 7 steps of work, ends at 20.
  const JobOutcome& low = OutcomeOf(w, run, "low");
  ASSERT_EQ(low.stays.size(), 3U);
  ExpectStay(low.stays[0], 0, 0, 3, 5);
  ExpectStay(low.stays[1], 7, 8, 8, 10);
  ExpectStay(low.stays[2], 12, 13, 20, 20);
  EXPECT_EQ(low.preemptions(), 2);

  const PeriodMetrics m = ComputeSimMetrics(w, run).total;
  EXPECT_EQ(m.preemptions, 2);
  EXPECT_EQ(m.lost_gpu_steps, 4 * (2 + 1 + 2 + 1));
  EXPECT_EQ(m.batch_gpu_steps, 4 * 10 + 2 * 4 * 2);
}

TEST(SimulatorPreemption, WithoutACheckpointTheHighPriorityJobWaits) {
  World w = LowThenHigh({5});
  w.jobs[0].checkpoint.reset();
  const SimRun run = MustSimulate(w, "priority-preempt");
  EXPECT_EQ(OutcomeOf(w, run, "low").stays.size(), 1U);
  EXPECT_EQ(*OutcomeOf(w, run, "high1").start_step(), 10);
  EXPECT_EQ(ComputeSimMetrics(w, run).total.lost_gpu_steps, 0);
}

TEST(SimulatorPreemption, AServiceRiseTakesAJobsBlockUnderReactivePreempt) {
  World w = SmallWorld(1, 4, 1, 24);
  WorldJob low = MakeWorldJob("low", 0, 4, 20, 20, 1);
  low.checkpoint = Checkpoint{3, 1};
  w.jobs.push_back(low);
  WorldService svc;
  svc.id = "svc";
  svc.priority = 5;
  svc.max_gpus = 4;
  svc.demand.assign(24, 4);
  std::fill_n(svc.demand.begin(), 5, 0);  // nothing until step 5, then the whole node
  w.services.push_back(svc);

  const SimRun preempting = MustSimulate(w, "reactive-preempt");
  ExpectCommittedLegal(w, preempting, "reactive-preempt");
  const JobOutcome& o = OutcomeOf(w, preempting, "low");
  ASSERT_EQ(o.stays.size(), 1U);
  ExpectStay(o.stays[0], 0, 0, 3, 5);
  EXPECT_TRUE(o.preempted_now);  // the service keeps the node to the window's end
  EXPECT_FALSE(o.end_step().has_value());
  const PeriodMetrics with = ComputeSimMetrics(w, preempting).total;
  EXPECT_EQ(with.realtime_unmet_gpu_steps, 0);
  EXPECT_EQ(with.preemptions, 1);
  EXPECT_EQ(with.lost_gpu_steps, 4 * 2);
  EXPECT_EQ(with.jobs_completed, 0);

  // Without preemption the service waits for the job's end at step 20.
  const PeriodMetrics without = ComputeSimMetrics(w, MustSimulate(w, "reactive")).total;
  EXPECT_EQ(without.realtime_unmet_gpu_steps, 4 * 15);
  EXPECT_EQ(without.preemptions, 0);
}

// The same node, the service forecast at 0 all day but really needing the node from step 5: only
// a surge re-plan sees it. reactive-preempt then takes the job's block at step 5 itself, as it
// does above for a forecast rise; without surge re-plans the service is never served.
TEST(SimulatorPreemption, ASurgeReplanTakesAJobsBlockAtTheStepOfTheSurge) {
  World w = SmallWorld(1, 4, 1, 24);
  WorldJob low = MakeWorldJob("low", 0, 4, 20, 20, 1);
  low.checkpoint = Checkpoint{3, 1};
  w.jobs.push_back(low);
  WorldService svc;
  svc.id = "svc";
  svc.priority = 5;
  svc.max_gpus = 4;
  svc.forecast_demand.assign(24, 0);
  svc.demand.assign(24, 4);
  std::fill_n(svc.demand.begin(), 5, 0);
  w.services.push_back(svc);

  SimOptions surge;
  surge.replan_on_surge = true;
  const SimRun run = MustSimulate(w, "reactive-preempt", surge);
  ExpectCommittedLegal(w, run, "surge");
  const JobOutcome& o = OutcomeOf(w, run, "low");
  ASSERT_EQ(o.stays.size(), 1U);
  ExpectStay(o.stays[0], 0, 0, 3, 5);
  EXPECT_EQ(run.service_gpus[0][5].size(), 4U);
  EXPECT_EQ(ComputeSimMetrics(w, run).total.realtime_unmet_gpu_steps, 0);

  const SimRun blind = MustSimulate(w, "reactive-preempt");
  EXPECT_EQ(ComputeSimMetrics(w, blind).total.realtime_unmet_gpu_steps, 4 * 19);
  EXPECT_EQ(ComputeSimMetrics(w, blind).total.preemptions, 0);

  // ordo weighs it: the service's unmet GPU-steps cost 8 x 5 each, the job's lost and restart
  // steps 1 each, so it serves the service too, and its plans stay legal.
  const SimRun ordo = MustSimulate(w, "ordo", surge);
  ExpectCommittedLegal(w, ordo, "ordo surge");
  EXPECT_EQ(ComputeSimMetrics(w, ordo).total.realtime_unmet_gpu_steps, 0);
}

// A policy that runs a fixed script: "mover" (2 GPUs, a save every step, 2 restart steps) starts
// on GPUs 0-1 and, in the plan made at step 3, moves to GPUs 2-3 at that very step.
class MigratingPolicy final : public Policy {
 public:
  std::string_view name() const override { return "migrating"; }
  Result<Plan> Solve(const Scenario& scenario, const PolicyOptions&) override {
    ++calls_;
    Plan plan;
    plan.scenario = scenario.name;
    plan.policy = "migrating";
    if (scenario.jobs.empty()) return plan;  // it has ended
    const Job& job = scenario.jobs.at(0);
    JobPlacement p;
    p.id = job.id;
    p.gpus = 2;
    p.duration_steps = job.shapes[0].duration_steps;
    if (!job.running) {
      p.start_step = 0;
      p.first_gpu = 0;
    } else {
      seen.emplace_back(job.running_progress_steps(), job.running->restart_steps_left.value_or(0));
      p.start_step = job.running->start_step;
      p.first_gpu = job.running->first_gpu;
      if (calls_ == 4 && p.first_gpu == 0) {
        p.preempt_step = 0;
        p.resume = ResumePlacement{0, 2};
      }
    }
    plan.jobs.push_back(p);
    return plan;
  }

  /// (progress_steps, restart_steps_left) the running job showed at each re-plan after step 0.
  std::vector<std::pair<int, int>> seen;

 private:
  int calls_ = 0;
};

TEST(SimulatorPreemption, AJobMovesToAnotherBlockAtTheStepItLeavesItsOwn) {
  World w = SmallWorld(1, 4, 1, 24);
  WorldJob mover = MakeWorldJob("mover", 0, 2, 6, 6);
  mover.checkpoint = Checkpoint{1, 2};
  w.jobs.push_back(mover);
  MigratingPolicy policy;
  auto run = Simulate(w, policy, SimOptions{});
  ASSERT_TRUE(run) << run.error().ToString();
  ExpectCommittedLegal(w, *run, "migration");
  // 3 steps of work saved at step 3; on GPUs 2-3 it restarts for 2 steps, then works 3 more.
  const JobOutcome& o = OutcomeOf(w, *run, "mover");
  ASSERT_EQ(o.stays.size(), 2U);
  ExpectStay(o.stays[0], 0, 0, 3, 3);
  ExpectStay(o.stays[1], 3, 5, 8, 8);
  EXPECT_EQ(o.stays[1].first_gpu, 2);
  // What the planner was told at steps 1-6: progress 1, 2, 3 on the first block; then on the
  // new block progress 3 with 1 restart step left, 3 with none, 4.
  ASSERT_GE(policy.seen.size(), 6U);
  const std::vector<std::pair<int, int>> told(policy.seen.begin(), policy.seen.begin() + 6);
  EXPECT_EQ(told,
            (std::vector<std::pair<int, int>>{{1, 0}, {2, 0}, {3, 0}, {3, 1}, {3, 0}, {4, 0}}));
  EXPECT_EQ(ComputeSimMetrics(w, *run).total.lost_gpu_steps, 2 * 2);
}

}  // namespace
}  // namespace ordo::sim
