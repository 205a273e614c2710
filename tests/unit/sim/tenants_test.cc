// Tenants in worlds and planning priorities in the simulator: shares and max_priority are read
// and checked (errors name the field), a starving job is started by aging, a tenant below its
// share is served first, metrics keep base priorities, and a run is deterministic for a seed.
#include <gtest/gtest.h>

#include <algorithm>

#include "ordo/sim/sim_metrics.h"
#include "ordo/sim/simulator.h"
#include "ordo/sim/world.h"
#include "tests/unit/sim/sim_test_util.h"

namespace ordo::sim {
namespace {

using testing::ExpectCommittedLegal;
using testing::MakeWorldJob;
using testing::MustSimulate;
using testing::OutcomeOf;
using testing::SmallWorld;

constexpr const char* kTenants = R"({
  "version": 1, "name": "two", "step_minutes": 60, "horizon_steps": 4, "days": 1,
  "cluster": {"node_groups": [{"name": "g", "nodes": 2, "gpus_per_node": 4}]},
  "tenants": [{"id": "a", "share": 6, "max_priority": 5}, {"id": "b", "share": "25%"}],
  "jobs": [
    {"id": "j1", "kind": "training", "priority": 5, "arrival_step": 0, "gpus": 2,
     "duration_steps": 2, "tenant": "a"},
    {"id": "j2", "kind": "training", "priority": 9, "arrival_step": 0, "gpus": 2,
     "duration_steps": 2, "tenant": "b"}
  ]
})";

std::string Replace(std::string text, const std::string& before, const std::string& after) {
  const size_t at = text.find(before);
  EXPECT_NE(at, std::string::npos) << before;
  if (at != std::string::npos) text.replace(at, before.size(), after);
  return text;
}

std::string ErrorOf(const std::string& text) {
  auto w = ParseWorld(text);
  return w ? "ok" : w.error().ToString();
}

TEST(WorldTenants, ReadsSharesInGpusOrPercentAndWritesThemBack) {
  auto w = ParseWorld(kTenants);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  ASSERT_EQ(w->tenants.size(), 2u);
  EXPECT_DOUBLE_EQ(w->tenants[0].ShareFraction(8), 0.75);
  EXPECT_DOUBLE_EQ(w->tenants[1].ShareFraction(8), 0.25);
  EXPECT_EQ(w->tenants[0].max_priority, 5);
  EXPECT_EQ(w->jobs[1].tenant, "b");
  const std::string text = WorldToJson(*w);
  auto again = ParseWorld(text);
  ASSERT_TRUE(again.has_value()) << again.error().ToString() << "\n" << text;
  EXPECT_EQ(WorldToJson(*again), text);
}

TEST(WorldTenants, BadConfigNamesTheField) {
  EXPECT_EQ(
      ErrorOf(Replace(kTenants, R"("share": 6)", R"("share": -1)")).rfind("tenants[0].share:", 0),
      0u);
  EXPECT_EQ(ErrorOf(Replace(kTenants, R"("share": 6)", R"("share": 7)"))
                .rfind("tenants[1].share: the tenants' shares sum to 9", 0),
            0u);
  EXPECT_EQ(ErrorOf(Replace(kTenants, R"("25%")", R"("26 %")")).rfind("tenants[1].share:", 0), 0u);
  EXPECT_EQ(ErrorOf(Replace(kTenants, R"("max_priority": 5)", R"("max_priority": 0)"))
                .rfind("tenants[0].max_priority:", 0),
            0u);
  EXPECT_EQ(ErrorOf(Replace(kTenants, R"("priority": 5,)", R"("priority": 6,)"))
                .rfind("jobs[0].priority: is above tenant a's max_priority", 0),
            0u);
  EXPECT_EQ(ErrorOf(Replace(kTenants, R"("tenant": "b")", R"("tenant": "c")"))
                .rfind("jobs[1].tenant:", 0),
            0u);
  EXPECT_EQ(ErrorOf(Replace(kTenants, R"({"id": "b", "share": "25%"})", R"({"id": "a"})"))
                .rfind("tenants[1].id:", 0),
            0u);
}

// One 8-GPU node. A priority-1 job needing all 8 GPUs arrives first; 4-GPU priority-5 jobs of 2
// steps arrive every step. Priority-backfill, planning at base priorities, never drains the node
// for the big job. With aging (1/h, cap 10) its planning priority overtakes the stream's and the
// node is drained for it.
World StarvingWorld() {
  World w = SmallWorld(1, 8, 1, 8);
  w.jobs.push_back(MakeWorldJob("big", 0, 8, 2, 2, 1));
  for (int t = 0; t < 24; ++t) {
    w.jobs.push_back(MakeWorldJob("s" + std::to_string(t), t, 4, 2, 2, 5));
  }
  return w;
}

TEST(PlanningPriority, AgingStartsAJobThatBasePrioritiesStarve) {
  const World w = StarvingWorld();
  const SimRun base = MustSimulate(w, "priority-backfill");
  EXPECT_FALSE(OutcomeOf(w, base, "big").start_step().has_value());

  SimOptions o;
  o.planning = priority::PlanningOptions{};
  o.planning->aging = {1, 10};
  const SimRun aged = MustSimulate(w, "priority-backfill", o);
  ExpectCommittedLegal(w, aged, "aging");
  const JobOutcome& big = OutcomeOf(w, aged, "big");
  ASSERT_TRUE(big.start_step().has_value());
  // Its planning priority 1 + hours waited reaches the stream's 5 at step 4 at the earliest; the
  // stream jobs that queue behind it age too (5 x (1 + hours)), so it wins a few steps later.
  EXPECT_GE(*big.start_step(), 4);
  EXPECT_LE(*big.start_step(), 12);

  // Metrics are in base priorities: the big job's 16 GPU-steps count 1 each, the stream's 5.
  const SimMetrics m = ComputeSimMetrics(w, aged);
  double expected = 0;
  for (const JobOutcome& jo : aged.jobs) {
    if (!jo.start_step()) continue;
    const int steps = std::min(jo.actual_steps, aged.steps - *jo.start_step());
    expected += w.jobs[jo.world_index].priority * jo.gpus * steps;
  }
  EXPECT_DOUBLE_EQ(m.total.batch_value, expected);
  EXPECT_EQ(m.total.wait_by_class[0].jobs, 1);  // the big job, priority 1
  EXPECT_EQ(m.total.wait_by_class[0].unstarted, 0);
  EXPECT_DOUBLE_EQ(m.total.wait_by_class[0].mean_hours, *big.start_step());
  EXPECT_EQ(m.total.wait_by_class[1].jobs, 24);  // the stream, priority 5
  EXPECT_EQ(m.total.wait_by_class[2].jobs, 0);
}

// One 8-GPU node shared 50/50. Tenant b's first job holds the whole node for steps
// 0-5; at step 3 b's second job and a's job (both 8 GPUs, priority 1, b's listed first) arrive.
// At base priorities the tie goes to world order (b); with fair share b, far above its share,
// plans at a lower priority than a, which has used nothing: a starts at 6, b after it.
World SharedWorld() {
  World w = SmallWorld(1, 8, 1, 8);
  w.tenants.push_back(WorldTenant{"a", 50, true, std::nullopt});
  w.tenants.push_back(WorldTenant{"b", 4, false, std::nullopt});
  w.jobs.push_back(MakeWorldJob("b0", 0, 8, 6, 6, 1));
  w.jobs.push_back(MakeWorldJob("b1", 3, 8, 2, 2, 1));
  w.jobs.push_back(MakeWorldJob("a1", 3, 8, 2, 2, 1));
  w.jobs[0].tenant = w.jobs[1].tenant = "b";
  w.jobs[2].tenant = "a";
  return w;
}

TEST(PlanningPriority, ATenantBelowItsShareIsServedFirst) {
  const World w = SharedWorld();
  ASSERT_TRUE(ValidateWorld(w));
  const SimRun base = MustSimulate(w, "priority-backfill");
  EXPECT_EQ(OutcomeOf(w, base, "b1").start_step(), 6);
  EXPECT_EQ(OutcomeOf(w, base, "a1").start_step(), 8);

  SimOptions o;
  o.planning = priority::PlanningOptions{};  // fair share only: no aging, no bound
  const SimRun fair = MustSimulate(w, "priority-backfill", o);
  ExpectCommittedLegal(w, fair, "fair share");
  EXPECT_EQ(OutcomeOf(w, fair, "a1").start_step(), 6);
  EXPECT_EQ(OutcomeOf(w, fair, "b1").start_step(), 8);

  // Tenant metrics of the fair run: a held 8 GPUs for 2 steps and had 8 GPUs of work from step 3
  // to 8 (waiting, then running): demand 40, entitled min(8, 4) x 5 = 20 GPU-hours.
  const SimMetrics m = ComputeSimMetrics(w, fair);
  ASSERT_EQ(m.total.tenants.size(), 2u);
  EXPECT_DOUBLE_EQ(m.total.tenants[0].gpu_hours, 16);
  EXPECT_DOUBLE_EQ(m.total.tenants[0].demand_gpu_hours, 40);
  EXPECT_DOUBLE_EQ(m.total.tenants[0].entitled_gpu_hours, 20);
  // b: b0 8 x 6, b1 waiting 3..8 then running 8..10: held 48 + 16, demand 48 + 40 + 16.
  EXPECT_DOUBLE_EQ(m.total.tenants[1].gpu_hours, 64);
  EXPECT_DOUBLE_EQ(m.total.tenants[1].demand_gpu_hours, 104);
}

TEST(PlanningPriority, BadOptionsAreAnInputError) {
  const World w = SharedWorld();
  SimOptions o;
  o.planning = priority::PlanningOptions{};
  o.planning->aging.cap = 0.5;
  auto p = testing::MakePolicy("ordo");
  auto run = Simulate(w, *p, o);
  ASSERT_FALSE(run.has_value());
  EXPECT_EQ(run.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(run.error().field, "aging.cap");
}

TEST(PlanningPriority, OrdoWithPlanningPrioritiesIsDeterministicForASeed) {
  World w = StarvingWorld();
  w.tenants.push_back(WorldTenant{"a", 4, false, std::nullopt});
  w.tenants.push_back(WorldTenant{"b", 4, false, std::nullopt});
  for (size_t j = 0; j < w.jobs.size(); ++j) w.jobs[j].tenant = j % 3 == 0 ? "a" : "b";
  SimOptions o;
  o.planning = priority::DefaultPlanningOptions();
  o.seed = 7;
  // Fast mode is deterministic when it is not cut short by its deadline (fast_policy.cc).
  o.time_limit_s = 60;
  const SimRun one = MustSimulate(w, "ordo", o);
  const SimRun two = MustSimulate(w, "ordo", o);
  ExpectCommittedLegal(w, one, "ordo with planning priorities");
  ASSERT_EQ(one.jobs.size(), two.jobs.size());
  for (size_t k = 0; k < one.jobs.size(); ++k) {
    EXPECT_EQ(one.jobs[k].start_step(), two.jobs[k].start_step()) << k;
    EXPECT_EQ(one.jobs[k].stays.empty(), two.jobs[k].stays.empty()) << k;
    if (!one.jobs[k].stays.empty()) {
      EXPECT_EQ(one.jobs[k].stays.front().first_gpu, two.jobs[k].stays.front().first_gpu) << k;
    }
    EXPECT_EQ(one.jobs[k].shape, two.jobs[k].shape) << k;
  }
  EXPECT_EQ(one.decisions.size(), two.decisions.size());
}

}  // namespace
}  // namespace ordo::sim
