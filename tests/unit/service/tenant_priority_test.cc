// Tenants' max_priority, shares and planning priorities in the service: a submission above the
// cap is refused naming `priority`; waiting jobs age and tenants below their share are planned
// first (priority/planning_priority.h, the simulator's arithmetic); reported value stays in base
// priorities.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ordo/service/engine.h"
#include "ordo/service/state.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;
using testing::JobBody;
using testing::kA;
using testing::kAdminPrincipal;
using testing::kB;
using testing::Manual;
using testing::OpenEngine;
using testing::ScratchDir;

ServiceConfig ConfigWith(const std::function<void(json&)>& edit) {
  json doc = testing::ConfigJson();  // 16 GPUs, 12 one-hour steps
  edit(doc);
  auto config = ParseServiceConfig(doc.dump(), false);
  EXPECT_TRUE(config) << config.error().ToString();
  return *config;
}

int64_t PlannedStart(Engine& engine, const Principal& who, const std::string& id) {
  auto view = engine.GetJob(who, id);
  EXPECT_TRUE(view) << id;
  if (!view || (*view)["planned_start_step"].is_null()) return -1;
  return (*view)["planned_start_step"].get<int64_t>();
}

TEST(TenantPriority, ASubmissionAboveMaxPriorityIs400NamingPriority) {
  ScratchDir dir;
  auto engine =
      OpenEngine(ConfigWith([](json& d) { d["tenants"][0]["max_priority"] = 5; }), Manual(dir));
  ASSERT_TRUE(engine);
  auto above = testing::SubmitJob(*engine, kA, JobBody("high", 1, 1, 6));
  ASSERT_FALSE(above);
  EXPECT_EQ(testing::Status(above), 400);
  EXPECT_EQ(above.error().field, "priority");
  EXPECT_NE(above.error().message.find("max_priority"), std::string::npos);
  EXPECT_TRUE(testing::SubmitJob(*engine, kA, JobBody("at-cap", 1, 1, 5)));
  // Another tenant has no cap; the admin none either.
  EXPECT_TRUE(testing::SubmitJob(*engine, kB, JobBody("b-high", 1, 1, 9)));
  EXPECT_TRUE(testing::SubmitJob(*engine, kAdminPrincipal, JobBody("admin-high", 1, 1, 10)));
  // A what-if cannot ask for more than a submission could.
  auto whatif = testing::WhatIf(*engine, kA, json{{"jobs", {JobBody("w", 1, 1, 7)}}});
  ASSERT_FALSE(whatif);
  EXPECT_EQ(testing::Status(whatif), 400);
  EXPECT_EQ(whatif.error().field, "jobs[0].priority");
}

// The arithmetic on a hand-computed case: rate 0.25/h, cap 4, weight 1; 16 GPUs, one-hour steps.
TEST(TenantPriority, PlanningScenarioAgesAndAppliesFairShare) {
  Scenario base;
  base.step_minutes = 60;
  base.horizon_steps = 12;
  Tenancy tenancy;
  tenancy.options = priority::OnlinePlanningOptions();
  tenancy.options.aging = {0.25, 4};
  tenancy.options.fair_share = {24, 4, 1};
  tenancy.names = {"a", "b"};
  tenancy.shares = {0.5, 0.25};
  ASSERT_TRUE(ParseServiceConfig(testing::ConfigJson().dump(), false));
  base.cluster = testing::Config().base.cluster;
  const Frame frame{&base, &tenancy};

  State state;
  state.next_step = 4;
  auto add = [&](int64_t seq, const std::string& id, const std::string& tenant, double priority,
                 int64_t submitted, JobState job_state) {
    JobRecord r;
    r.seq = seq;
    r.tenant = tenant;
    r.job.id = QualifiedJobId(tenant, id);
    r.job.priority = priority;
    r.job.shapes = {Shape{8, 2}};
    r.submitted_step = submitted;
    r.state = job_state;
    if (job_state == JobState::kRunning) {
      r.start_step = 3;
      r.shape = Shape{8, 2};
    }
    state.PutJob(r);
  };
  add(1, "old", "a", 2, 0, JobState::kPending);       // waited 4 h
  add(2, "new", "b", 3, 4, JobState::kPending);       // waited 0 h
  add(3, "run", "a", 5, 3, JobState::kRunning);       // running: base priority
  add(4, "mine", "admin", 7, 0, JobState::kPending);  // no tenant: no fair share
  // Tenant a held 8 of 16 GPUs for one hour: usage 0.5, exactly its share.
  CommittedStep step;
  step.step = 3;
  step.jobs = {{"a/run", 0, 8}};
  RecordUsage(state, step, frame);
  ASSERT_TRUE(state.usage);
  EXPECT_DOUBLE_EQ(state.usage->UsageFraction(0), 0.5);
  EXPECT_DOUBLE_EQ(state.usage->UsageFraction(1), 0);

  const Scenario scenario = BuildScenario(state, frame);
  const Scenario planned = PlanningScenario(scenario, state, frame);
  auto priority_of = [&](const Scenario& s, const std::string& id) {
    for (const ordo::Job& job : s.jobs) {
      if (job.id == id) return job.priority;
    }
    ADD_FAILURE() << id;
    return 0.0;
  };
  // a/old: 2 x age (1 + 0.25 x 4 = 2) x fair share 2^(1 - 0.5/0.5) = 1 -> 4.
  EXPECT_DOUBLE_EQ(priority_of(planned, "a/old"), 4);
  // b/new: 3 x age 1 x fair share 2^(1 - 0/0.25) = 2 -> 6.
  EXPECT_DOUBLE_EQ(priority_of(planned, "b/new"), 6);
  EXPECT_DOUBLE_EQ(priority_of(planned, "a/run"), 5);
  // admin/mine: 7 x age 2 x 1 -> 14.
  EXPECT_DOUBLE_EQ(priority_of(planned, "admin/mine"), 14);
  // The scenario the values are reported on keeps the base priorities.
  EXPECT_DOUBLE_EQ(priority_of(scenario, "a/old"), 2);
  EXPECT_DOUBLE_EQ(priority_of(scenario, "b/new"), 3);

  // The share guarantee: a's share (8 GPUs) is held by a/run, so a/old (8) borrows; b's share is
  // 4 GPUs and b/new needs 8, so it borrows too; a/run and admin/mine (no tenant) do not.
  tenancy.options.borrowing_factor = 0.5;
  const Scenario guaranteed = PlanningScenario(scenario, state, frame);
  EXPECT_DOUBLE_EQ(priority_of(guaranteed, "a/old"), 4 * 0.5);
  EXPECT_DOUBLE_EQ(priority_of(guaranteed, "b/new"), 6 * 0.5);
  EXPECT_DOUBLE_EQ(priority_of(guaranteed, "a/run"), 5);
  EXPECT_DOUBLE_EQ(priority_of(guaranteed, "admin/mine"), 14);
  tenancy.shares = {1.0, 0.0};  // a's share is the cluster, b has none: nobody borrows
  const Scenario roomy = PlanningScenario(scenario, state, frame);
  // a/old: 2 x age 2 x fair share 2^(1 - 0.5/1); b/new: 3, no share no factor.
  EXPECT_DOUBLE_EQ(priority_of(roomy, "a/old"), 4 * std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(priority_of(roomy, "b/new"), 3);
}

// L (priority 1) waits behind a 6-step blocker; at step 5 H (priority 2) arrives. Aged by 5 hours
// L plans at 1 x 2.25 > 2 and runs first; without aging H does. The step L runs is reported at
// its base priority.
TEST(TenantPriority, WaitingJobsAgeInTheService) {
  for (const bool aging : {true, false}) {
    SCOPED_TRACE(aging ? "aging" : "no aging");
    ScratchDir dir;
    auto engine = OpenEngine(ConfigWith([&](json& d) {
                               d["planning"] = {{"aging", {{"rate_per_hour", aging ? 0.25 : 0}}}};
                             }),
                             Manual(dir));
    ASSERT_TRUE(engine);
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("blocker", 16, 6, 10)));
    ASSERT_TRUE(testing::SubmitJob(*engine, kB, JobBody("low", 16, 1, 1)));
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 5));
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("high", 16, 1, 2)));
    ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
    EXPECT_EQ(PlannedStart(*engine, kB, "low"), aging ? 6 : 7);
    EXPECT_EQ(PlannedStart(*engine, kA, "high"), aging ? 7 : 6);
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 3));
    auto history = engine->HistoryJson(kAdminPrincipal, 6, 8);
    ASSERT_TRUE(history);
    ASSERT_EQ((*history)["steps"].size(), 2u);
    // 16 GPUs at base priority 1 (L) or 2 (H): never L's planning priority 2.25.
    EXPECT_DOUBLE_EQ((*history)["steps"][0]["value"].get<double>(), aging ? 16 : 32);
    EXPECT_DOUBLE_EQ((*history)["steps"][1]["value"].get<double>(), aging ? 32 : 16);
  }
}

// Tenant a used the whole cluster for 4 hours (share 8 of 16); b used nothing (share 8). At step
// 4 both submit a 16-GPU job, a's at priority 4, b's at 3: fair share plans b's first (3 x 2 >
// 4 x 0.5); without it (weight 0) a's goes first.
TEST(TenantPriority, ATenantBelowItsShareIsServedFirst) {
  for (const bool fair : {true, false}) {
    SCOPED_TRACE(fair ? "fair share" : "no fair share");
    ScratchDir dir;
    auto engine = OpenEngine(ConfigWith([&](json& d) {
                               d["tenants"][0]["share"] = 8;
                               d["tenants"][1]["share"] = "50%";
                               d["planning"] = {{"fair_share", {{"weight", fair ? 1 : 0}}}};
                             }),
                             Manual(dir));
    ASSERT_TRUE(engine);
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("first", 16, 4, 5)));
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 4));
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("a-more", 16, 1, 4)));
    ASSERT_TRUE(testing::SubmitJob(*engine, kB, JobBody("b-turn", 16, 1, 3)));
    ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
    EXPECT_EQ(PlannedStart(*engine, kB, "b-turn"), fair ? 4 : 5);
    EXPECT_EQ(PlannedStart(*engine, kA, "a-more"), fair ? 5 : 4);
  }
}

}  // namespace
}  // namespace ordo::service
