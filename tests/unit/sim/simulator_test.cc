// Small worlds whose outcome is computed by hand: overruns keep their blocks, conflicts force a
// re-plan, early ends idle until the next re-plan, lookahead, commit-whole-plan, unmet demand.
#include "ordo/sim/simulator.h"

#include <gtest/gtest.h>

#include "ordo/sim/sim_metrics.h"
#include "tests/unit/sim/sim_test_util.h"

namespace ordo::sim {
namespace {

using testing::ChurnLimitedChat;
using testing::ExpectCommittedLegal;
using testing::MakeWorldJob;
using testing::MustSimulate;
using testing::OutcomeOf;
using testing::SmallWorld;

std::vector<std::pair<int, Trigger>> Decisions(const SimRun& run) {
  std::vector<std::pair<int, Trigger>> out;
  for (const Decision& d : run.decisions) out.emplace_back(d.step, d.trigger);
  return out;
}

// Two GPUs; job a (forecast 3 steps) really runs 5; b arrives at step 1. Re-planning every step,
// the planner pins a with its duration stretched one step at a time (3, 3, 4, 5) and b can start
// only when a really ends, at step 5.
TEST(Simulator, OverrunKeepsItsBlockAndTheNextJobWaits) {
  World w = SmallWorld(1, 2, 1, 4);
  w.jobs.push_back(MakeWorldJob("a", 0, 2, 5, 3));
  w.jobs.push_back(MakeWorldJob("b", 1, 2, 2, 2));
  SimRun run = MustSimulate(w, "fifo");
  EXPECT_EQ(OutcomeOf(w, run, "a").start_step(), 0);
  EXPECT_EQ(OutcomeOf(w, run, "a").actual_steps, 5);
  EXPECT_EQ(OutcomeOf(w, run, "a").forecast_steps, 3);
  EXPECT_EQ(OutcomeOf(w, run, "b").start_step(), 5);
  EXPECT_EQ(OutcomeOf(w, run, "b").stays.front().first_gpu, 0);
  EXPECT_EQ(run.decisions.size(), 24u);  // every step
  ExpectCommittedLegal(w, run, "overrun");

  // Hand-computed metrics: a 2 GPUs x 5 steps, b 2 x 2, priority 1, 2 GPUs x 24 steps.
  SimMetrics m = ComputeSimMetrics(w, run);
  EXPECT_DOUBLE_EQ(m.total.batch_value, 14);
  EXPECT_DOUBLE_EQ(m.total.value, 14);
  EXPECT_DOUBLE_EQ(m.total.utilization, 14.0 / 48);
  EXPECT_EQ(m.total.jobs_started, 2);
  EXPECT_EQ(m.total.jobs_completed, 2);
  EXPECT_DOUBLE_EQ(m.total.wait_all.mean_hours, 2);  // a waits 0 h, b 4 h
  EXPECT_DOUBLE_EQ(m.total.wait_all.p95_hours, 4);
  EXPECT_EQ(m.total.wait_by_kind[0].jobs, 2);
  EXPECT_EQ(m.total.decisions, 24);
  ASSERT_EQ(m.days.size(), 1u);
  EXPECT_DOUBLE_EQ(m.days[0].value, 14);
}

// Re-planning every 4 steps, no arrival re-plans: the plan of step 0 starts b at 3 (a's forecast
// end). At 3, a still runs: conflict, re-plan (b now at 4); at 4 again (b now at 5); then the
// cadence resumes from 4: 8, 12, 16, 20.
TEST(Simulator, AConflictWithAnOverrunForcesARePlan) {
  World w = SmallWorld(1, 2, 1, 4);
  w.jobs.push_back(MakeWorldJob("a", 0, 2, 5, 3));
  w.jobs.push_back(MakeWorldJob("b", 0, 2, 2, 2));
  SimOptions o;
  o.replan_every = 4;
  o.replan_on_arrival = false;
  SimRun run = MustSimulate(w, "fifo", o);
  EXPECT_EQ(OutcomeOf(w, run, "a").start_step(), 0);
  EXPECT_EQ(OutcomeOf(w, run, "b").start_step(), 5);
  const std::vector<std::pair<int, Trigger>> expected = {
      {0, Trigger::kStart},   {3, Trigger::kConflict}, {4, Trigger::kConflict},
      {8, Trigger::kCadence}, {12, Trigger::kCadence}, {16, Trigger::kCadence},
      {20, Trigger::kCadence}};
  EXPECT_EQ(Decisions(run), expected);
  ExpectCommittedLegal(w, run, "conflict");
}

// a is forecast at 5 steps but ends after 2. With a re-plan every 4 steps its GPUs idle until
// step 4; re-planning every step, b starts at 2.
TEST(Simulator, AnEarlyEndIdlesUntilTheNextRePlan) {
  World w = SmallWorld(1, 2, 1, 4);
  w.jobs.push_back(MakeWorldJob("a", 0, 2, 2, 5));
  w.jobs.push_back(MakeWorldJob("b", 0, 2, 1, 1));
  SimOptions every4;
  every4.replan_every = 4;
  every4.replan_on_arrival = false;
  EXPECT_EQ(OutcomeOf(w, MustSimulate(w, "fifo", every4), "b").start_step(), 4);
  EXPECT_EQ(OutcomeOf(w, MustSimulate(w, "fifo"), "b").start_step(), 2);
}

// Arrival re-plans: b arrives at step 1 on a free node. Re-planning only every 4 steps it waits
// for step 4; with arrival re-plans it starts at 1.
TEST(Simulator, AnArrivalTriggersARePlanWhenAsked) {
  World w = SmallWorld(1, 4, 1, 6);
  w.jobs.push_back(MakeWorldJob("b", 1, 2, 2, 2));
  SimOptions o;
  o.replan_every = 4;
  o.replan_on_arrival = false;
  EXPECT_EQ(OutcomeOf(w, MustSimulate(w, "fifo-backfill", o), "b").start_step(), 4);
  o.replan_on_arrival = true;
  SimRun run = MustSimulate(w, "fifo-backfill", o);
  EXPECT_EQ(OutcomeOf(w, run, "b").start_step(), 1);
  ASSERT_GE(run.decisions.size(), 2u);
  EXPECT_EQ(run.decisions[1].step, 1);
  EXPECT_EQ(run.decisions[1].trigger, Trigger::kArrival);
  EXPECT_EQ(run.decisions[1].jobs_started, 1);
}

// Plan 24 steps once and commit all of it: a job arriving at step 2 is unknown to the plan of step
// 0 and waits for the plan of step 24 — unless the planner sees arrivals inside its horizon.
TEST(Simulator, CommitWholePlanAndArrivalLookahead) {
  World w = SmallWorld(1, 4, 2, 24);
  w.jobs.push_back(MakeWorldJob("late", 2, 4, 3, 3));
  SimOptions o;
  o.replan_every = 24;
  o.replan_on_arrival = false;
  SimRun blind = MustSimulate(w, "ordo", o);
  EXPECT_EQ(OutcomeOf(w, blind, "late").start_step(), 24);
  EXPECT_EQ(blind.decisions.size(), 2u);
  o.arrivals_lookahead = true;
  SimRun seeing = MustSimulate(w, "ordo", o);
  EXPECT_EQ(OutcomeOf(w, seeing, "late").start_step(), 2);
  ExpectCommittedLegal(w, seeing, "lookahead");
}

// Four GPUs, one hourly day, 6-step plans; chat (priority 10, churn 1 GPU a step, 1 held before
// step 0) is forecast 1 2 3 3 1 1 ... but needs 1 3 3 2 1 1 ...
World ForecastMissWorld() {
  World w = SmallWorld(1, 4, 1, 6);
  WorldService s = ChurnLimitedChat(24, 4);
  const std::vector<int> forecast = {1, 2, 3, 3, 1};
  const std::vector<int> actual = {1, 3, 3, 2, 1};
  std::copy(forecast.begin(), forecast.end(), s.forecast_demand.begin());
  std::copy(actual.begin(), actual.end(), s.demand.begin());
  w.services.push_back(s);
  return w;
}

// reactive follows the forecast within the churn limit (1 GPU per step from current_gpus 1):
// forecast 1 2 3 3 1 1 ... gives 1 2 3 3 2 1 ...; the actual demand 1 3 3 2 1 ... is unmet by one
// GPU at step 1 only.
TEST(Simulator, DemandAboveTheCommittedAllocationIsUnmet) {
  const World w = ForecastMissWorld();
  ASSERT_TRUE(ValidateWorld(w).has_value());
  SimRun run = MustSimulate(w, "reactive");
  const std::vector<int> expected = {1, 2, 3, 3, 2, 1, 1};
  for (size_t t = 0; t < expected.size(); ++t) {
    EXPECT_EQ(run.service_gpus[0][t].size(), static_cast<size_t>(expected[t])) << "step " << t;
  }
  SimMetrics m = ComputeSimMetrics(w, run);
  EXPECT_EQ(m.total.realtime_unmet_gpu_steps, 1);
  EXPECT_EQ(m.total.realtime_demand_gpu_steps, 1 + 3 + 3 + 2 + 1 + 19);
  // served: 1 2 3 2 1 + 19 x 1, at priority 10; the unmet GPU-step costs M x 10 = 80.
  EXPECT_DOUBLE_EQ(m.total.service_value, 10.0 * (1 + 2 + 3 + 2 + 1 + 19));
  EXPECT_DOUBLE_EQ(m.total.net_value, 10.0 * 28 - 80);
  ExpectCommittedLegal(w, run, "unmet");
}

// The same world under ordo: the plan of step 0 holds 1 GPU and 2 at step 1, so it lends one idle
// GPU at step 0 (as many as the churn limit lets it give back); from 2, the plan of step 1 may hold
// 3 — the surprise at step 1 is served. Without the loan ordo follows the forecast like reactive.
TEST(Simulator, IdleGpusLentAtTheCommittedStepServeDemandAboveTheForecast) {
  const World w = ForecastMissWorld();
  ASSERT_TRUE(ValidateWorld(w).has_value());
  SimOptions kept;
  kept.lend_idle_gpus = false;
  const SimRun planned = MustSimulate(w, "ordo", kept);
  EXPECT_EQ(ComputeSimMetrics(w, planned).total.realtime_unmet_gpu_steps, 1);
  const SimRun lent = MustSimulate(w, "ordo");
  EXPECT_EQ(lent.service_gpus[0][0].size(), 2U);
  EXPECT_GE(lent.service_gpus[0][1].size(), 3U);
  EXPECT_EQ(ComputeSimMetrics(w, lent).total.realtime_unmet_gpu_steps, 0);
  ExpectCommittedLegal(w, planned, "kept");
  ExpectCommittedLegal(w, lent, "lent");
}

// Forecast 1 GPU all day, actual 2 at steps 1 and 2 (churn 1, current 1, 4 GPUs, no jobs). Without
// surge re-plans reactive and priority-backfill hold 1 throughout: 2 GPU-steps unmet. With them,
// each of steps 1 and 2 is planned again on the observed 2 (triggers cadence then surge) and
// served; at step 3 the actual 1 is met by the plan of step 2 (down by the churn limit), so no
// surge.
World SurgeWorld() {
  World w = SmallWorld(1, 4, 1, 6);
  WorldService s = ChurnLimitedChat(24, 4);
  s.demand[1] = s.demand[2] = 2;
  w.services.push_back(s);
  return w;
}

TEST(Simulator, ASurgeAboveTheAllocationIsPlannedAgainOnTheObservedDemand) {
  const World w = SurgeWorld();
  ASSERT_TRUE(ValidateWorld(w).has_value());
  SimOptions surge;
  surge.replan_on_surge = true;
  for (const char* policy : {"reactive", "priority-backfill"}) {
    const SimRun blind = MustSimulate(w, policy);
    EXPECT_EQ(ComputeSimMetrics(w, blind).total.realtime_unmet_gpu_steps, 2) << policy;
    EXPECT_EQ(blind.decisions.size(), 24U) << policy;

    const SimRun run = MustSimulate(w, policy, surge);
    EXPECT_EQ(ComputeSimMetrics(w, run).total.realtime_unmet_gpu_steps, 0) << policy;
    EXPECT_EQ(run.service_gpus[0][1].size(), 2U) << policy;
    EXPECT_EQ(run.service_gpus[0][2].size(), 2U) << policy;
    EXPECT_EQ(run.service_gpus[0][3].size(), 1U) << policy;
    std::vector<std::pair<int, Trigger>> first_steps(run.decisions.size() > 6 ? 6 : 0);
    for (size_t d = 0; d < first_steps.size(); ++d) {
      first_steps[d] = {run.decisions[d].step, run.decisions[d].trigger};
    }
    const std::vector<std::pair<int, Trigger>> expected = {
        {0, Trigger::kStart},   {1, Trigger::kCadence}, {1, Trigger::kSurge},
        {2, Trigger::kCadence}, {2, Trigger::kSurge},   {3, Trigger::kCadence}};
    EXPECT_EQ(first_steps, expected) << policy;
    EXPECT_EQ(run.decisions.size(), 26U) << policy;
    ExpectCommittedLegal(w, run, policy);
  }
}

// A surge the churn limit cannot follow is re-planned but still unmet: the re-plan tells the
// planner the truth, it does not lift the service's rules.
TEST(Simulator, ASurgeBeyondTheChurnLimitStaysUnmet) {
  World w = SurgeWorld();
  w.services[0].demand[1] = 4;  // from 1 to 4 in one step, churn 1
  SimOptions surge;
  surge.replan_on_surge = true;
  const SimRun run = MustSimulate(w, "reactive", surge);
  EXPECT_EQ(run.service_gpus[0][1].size(), 2U);
  EXPECT_EQ(ComputeSimMetrics(w, run).total.realtime_unmet_gpu_steps, 2);  // 4 - 2 at step 1
  ExpectCommittedLegal(w, run, "churn");
}

// With nothing above the allocation, surge re-plans change nothing: the same decisions and the
// same committed timeline.
TEST(Simulator, NoSurgeNoExtraDecision) {
  const World w = ForecastMissWorld();
  SimOptions surge;
  surge.replan_on_surge = true;
  World exact = w;
  exact.services[0].demand = exact.services[0].forecast_demand;
  for (const char* policy : {"ordo", "reactive", "priority-backfill"}) {
    const SimRun a = MustSimulate(exact, policy);
    const SimRun b = MustSimulate(exact, policy, surge);
    EXPECT_EQ(Decisions(a), Decisions(b)) << policy;
    EXPECT_EQ(a.service_gpus, b.service_gpus) << policy;
  }
}

// A service that rises 3 GPUs in one step under a churn limit of 1, surges re-planned: after the
// first rise, a ramp reserve keeps it 2 GPUs above its forecast (1), so the second rise, a day
// later, is served at once; without the reserve both rises are unmet by 2 GPUs (1 + the churn
// limit against 4). Two-step jobs arriving faster than the cluster serves them keep every other
// GPU busy (no idle GPU is lent to the service) and free some at every step.
World RampWorld() {
  World w = SmallWorld(1, 8, 2, 6);
  WorldService s = ChurnLimitedChat(48, 8);
  s.demand[3] = 4;
  s.demand[30] = 4;
  w.services.push_back(s);
  for (int t = 0; t < 48; ++t) {
    for (int k = 0; k < 5; ++k) {
      w.jobs.push_back(MakeWorldJob("j" + std::to_string(t) + "-" + std::to_string(k), t, 1, 2, 2));
    }
  }
  return w;
}

TEST(Simulator, ARampReserveServesARiseLikeTheLastOne) {
  const World w = RampWorld();
  ASSERT_TRUE(ValidateWorld(w).has_value());
  SimOptions surge;
  surge.replan_on_surge = true;
  SimOptions reserve = surge;
  reserve.planning = priority::PlanningOptions{};  // base priorities: only the reserve differs
  reserve.planning->ramp_reserve_hours = 48;
  for (const char* policy : {"ordo", "priority-backfill"}) {
    const SimRun blind = MustSimulate(w, policy, surge);
    const SimRun run = MustSimulate(w, policy, reserve);
    const auto unmet_at = [&](const SimRun& r, int step) {
      return w.services[0].demand[step] - static_cast<int>(r.service_gpus[0][step].size());
    };
    EXPECT_EQ(unmet_at(blind, 3), 2) << policy;  // 1 + churn 1 against 4
    EXPECT_EQ(unmet_at(blind, 30), 2) << policy;
    EXPECT_EQ(unmet_at(run, 3), 2) << policy;  // nothing seen yet: no reserve
    EXPECT_EQ(unmet_at(run, 30), 0) << policy;
    // Before the first rise the two runs are the same; after it the service stays at 1 + 2.
    for (int t = 0; t < 3; ++t) {
      EXPECT_EQ(run.service_gpus[0][t], blind.service_gpus[0][t]) << policy << " step " << t;
    }
    for (int t = 8; t < 48; ++t) {
      EXPECT_GE(run.service_gpus[0][t].size(), 3U) << policy << " step " << t;
    }
    EXPECT_LT(ComputeSimMetrics(w, run).total.realtime_unmet_gpu_steps,
              ComputeSimMetrics(w, blind).total.realtime_unmet_gpu_steps)
        << policy;
    ExpectCommittedLegal(w, run, policy);
  }
}

// The window is hours of actual demand: a rise older than it no longer counts.
TEST(Simulator, ARampReserveForgetsRisesOlderThanItsWindow) {
  const World w = RampWorld();
  SimOptions reserve;
  reserve.replan_on_surge = true;
  reserve.planning = priority::PlanningOptions{};
  reserve.planning->ramp_reserve_hours =
      12;  // the rise at step 3 is out of the window from step 16 on
  const SimRun run = MustSimulate(w, "ordo", reserve);
  EXPECT_GE(run.service_gpus[0][8].size(), 3U);
  EXPECT_EQ(run.service_gpus[0][24].size(), 1U);
  EXPECT_EQ(w.services[0].demand[30] - static_cast<int>(run.service_gpus[0][30].size()), 2);
}

TEST(Simulator, RejectsANegativeRampReserve) {
  const World w = RampWorld();
  auto policy = testing::MakePolicy("ordo");
  SimOptions o;
  o.planning = priority::PlanningOptions{};
  o.planning->ramp_reserve_hours = -1;
  auto run = Simulate(w, *policy, o);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().field, "ramp_reserve_hours");
}

// A service's current_gpus at each re-plan is what it held at the step before: the churn limit is
// kept across re-plans, so the committed timeline never jumps.
TEST(Simulator, ChurnLimitHoldsAcrossRePlans) {
  World w = SmallWorld(1, 8, 1, 4);
  WorldService s;
  s.id = "svc";
  s.priority = 5;
  s.max_gpus = 8;
  s.max_change_per_step = 1;
  s.demand.assign(24, 1);
  for (int t = 6; t < 12; ++t) s.demand[t] = 8;  // a peak beyond the 4-step horizon at first
  w.services.push_back(s);
  for (const char* policy : {"ordo", "reactive", "priority-backfill"}) {
    SimRun run = MustSimulate(w, policy);
    for (int t = 1; t < 24; ++t) {
      const int a = static_cast<int>(run.service_gpus[0][t - 1].size());
      const int b = static_cast<int>(run.service_gpus[0][t].size());
      EXPECT_LE(std::abs(a - b), 1) << policy << " step " << t;
    }
    ExpectCommittedLegal(w, run, policy);
  }
}

TEST(Simulator, RejectsAZeroCadence) {
  World w = SmallWorld(1, 2, 1, 4);
  auto policy = testing::MakePolicy("fifo");
  SimOptions o;
  o.replan_every = 0;
  auto run = Simulate(w, *policy, o);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().field, "replan_every");
}

// Jobs arriving after the window are not part of the run.
TEST(Simulator, JobsAfterTheWindowAreIgnored) {
  World w = SmallWorld(1, 2, 1, 4);
  w.jobs.push_back(MakeWorldJob("in", 23, 1, 1, 1));
  w.jobs.push_back(MakeWorldJob("out", 24, 1, 1, 1));
  SimRun run = MustSimulate(w, "fifo");
  ASSERT_EQ(run.jobs.size(), 1u);
  EXPECT_EQ(OutcomeOf(w, run, "in").start_step(), 23);
}

}  // namespace
}  // namespace ordo::sim
