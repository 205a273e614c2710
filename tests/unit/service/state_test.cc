#include "ordo/service/state.h"

#include <gtest/gtest.h>

#include "ordo/core/check_plan.h"
#include "ordo/core/validate.h"
#include "ordo/policy/registry.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

JobRecord Pending(int64_t seq, const std::string& id, int gpus, int duration, int64_t submitted) {
  JobRecord r;
  r.seq = seq;
  r.tenant = "a";
  r.job.id = id;
  r.job.shapes = {Shape{gpus, duration}};
  r.submitted_step = submitted;
  return r;
}

TEST(ServiceState, BuildScenarioPinsRunningJobsAndShiftsTime) {
  const ServiceConfig config = testing::Config(2, 6);
  State state;
  state.next_step = 10;
  state.PutJob(Pending(1, "waiting", 4, 2, 7));
  JobRecord running = Pending(2, "running", 8, 5, 6);
  running.state = JobState::kRunning;
  running.start_step = 8;
  running.first_gpu = 8;
  running.shape = Shape{8, 5};
  state.PutJob(running);
  JobRecord done = Pending(3, "done", 1, 1, 2);
  done.state = JobState::kDone;
  state.PutJob(done);
  ServiceRecord svc;
  svc.service.id = "chat";
  svc.service.priority = 3;
  svc.service.max_gpus = 16;
  svc.service.demand = {1, 2, 3, 4, 5, 6};
  svc.anchor_step = 8;  // demand[0] is step 8, so step 10 is demand[2]
  svc.committed_gpus = 2;
  state.services.push_back(svc);

  const Scenario s = BuildScenario(state, Frame{&config.base});
  ASSERT_EQ(s.jobs.size(), 2u);  // the done job is gone
  EXPECT_EQ(s.jobs[0].id, "waiting");
  EXPECT_EQ(s.jobs[0].arrival_step, -3);
  EXPECT_FALSE(s.jobs[0].running);
  EXPECT_EQ(s.jobs[1].id, "running");
  ASSERT_TRUE(s.jobs[1].running);
  EXPECT_EQ(s.jobs[1].running->start_step, -2);
  EXPECT_EQ(s.jobs[1].running->first_gpu, 8);
  ASSERT_EQ(s.services.size(), 1u);
  EXPECT_EQ(s.services[0].demand, (std::vector<int>{3, 4, 5, 6, 1, 2}));  // the profile repeats
  EXPECT_EQ(s.services[0].current_gpus, 2);
  EXPECT_TRUE(ValidateScenario(s)) << ValidateScenario(s).error().ToString();

  // Without new starts, pending jobs are left out.
  EXPECT_EQ(BuildScenario(state, Frame{&config.base}, false).jobs.size(), 1u);
}

TEST(ServiceState, CommitStepStartsFinishesAndRecords) {
  const ServiceConfig config = testing::Config(1, 4);
  State state;
  state.PutJob(Pending(1, "one-step", 4, 1, 0));
  state.PutJob(Pending(2, "long", 4, 3, 0));
  state.PutJob(Pending(3, "later", 8, 2, 0));
  ServiceRecord svc;
  svc.service.id = "chat";
  svc.service.priority = 2;
  svc.service.max_gpus = 8;
  svc.service.demand = {0, 0, 0, 0};
  state.services.push_back(svc);
  const Scenario scenario = BuildScenario(state, Frame{&config.base});
  auto policy = MakeInTreeRegistry().Create("priority-backfill");
  ASSERT_TRUE(policy);
  auto plan = (*policy)->Solve(scenario, {});
  ASSERT_TRUE(plan);
  ASSERT_TRUE(CheckPlan(scenario, *plan).empty());

  std::vector<int64_t> changed;
  const CommittedStep step = CommitStep(state, scenario, *plan, "test", changed);
  EXPECT_EQ(step.step, 0);
  EXPECT_EQ(state.next_step, 1);
  EXPECT_EQ(state.FindJob("one-step")->state, JobState::kDone);
  EXPECT_EQ(state.FindJob("one-step")->finished_step, 1);
  EXPECT_EQ(state.FindJob("long")->state, JobState::kRunning);
  EXPECT_EQ(state.FindJob("long")->start_step, 0);
  EXPECT_EQ(state.FindJob("later")->state, JobState::kPending);  // no room at step 0
  EXPECT_EQ(state.active.size(), 2u);
  EXPECT_EQ(step.jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(step.utilization, 1.0);  // 8 of 8 GPUs doing batch work
  EXPECT_DOUBLE_EQ(step.value, 8.0);        // priority 1 x 8 GPUs
  EXPECT_EQ(state.services[0].committed_gpus, 0);
  EXPECT_EQ(state.recent.size(), 1u);

  // The next scenario pins `long` where it runs.
  const Scenario next = BuildScenario(state, Frame{&config.base});
  const Job* pinned = nullptr;
  for (const Job& j : next.jobs) {
    if (j.id == "long") pinned = &j;
  }
  ASSERT_NE(pinned, nullptr);
  ASSERT_TRUE(pinned->running);
  EXPECT_EQ(pinned->running->start_step, -1);
}

TEST(ServiceState, DemandProfileRepeatsBothWays) {
  ServiceRecord r;
  r.service.demand = {1, 2, 3};
  r.anchor_step = 5;
  EXPECT_EQ(r.DemandAt(5), 1);
  EXPECT_EQ(r.DemandAt(7), 3);
  EXPECT_EQ(r.DemandAt(8), 1);
  EXPECT_EQ(r.DemandAt(4), 3);
  // A forecast, where there is one, wins only for a service on traffic.
  r.forecast_demand = {9, 9};
  r.forecast_base = 5;
  EXPECT_EQ(r.DemandAt(5), 1);
}

TEST(ServiceState, JobStateNamesRoundTrip) {
  for (JobState s :
       {JobState::kPending, JobState::kRunning, JobState::kDone, JobState::kCancelled}) {
    EXPECT_EQ(ParseJobState(JobStateName(s)), s);
  }
  EXPECT_FALSE(ParseJobState("queued"));
}

}  // namespace
}  // namespace ordo::service
