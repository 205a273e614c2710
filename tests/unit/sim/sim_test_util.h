// Small world builders and checks shared by the simulator's tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/registry.h"
#include "ordo/sim/simulator.h"
#include "ordo/sim/world.h"

namespace ordo::sim::testing {

/// One group of `nodes` x `gpus_per_node`, no jobs or services, 60-minute steps.
inline World SmallWorld(int nodes, int gpus_per_node, int days, int horizon_steps) {
  World w;
  w.name = "small";
  w.step_minutes = 60;
  w.horizon_steps = horizon_steps;
  w.days = days;
  w.cluster.groups.push_back(NodeGroup{"g", nodes, gpus_per_node, "gpu", 80});
  w.cluster.Index();
  return w;
}

/// "chat", priority 10, a churn limit of 1 from 1 GPU, at most `max_gpus`: demand and forecast of
/// 1 GPU for `steps` steps. Tests set the steps they are about.
inline WorldService ChurnLimitedChat(int steps, int max_gpus) {
  WorldService s;
  s.id = "chat";
  s.priority = 10;
  s.max_gpus = max_gpus;
  s.max_change_per_step = 1;
  s.current_gpus = 1;
  s.forecast_demand.assign(steps, 1);
  s.demand.assign(steps, 1);
  return s;
}

inline WorldJob MakeWorldJob(std::string id, int arrival, int gpus, int actual, int forecast,
                             double priority = 1, JobKind kind = JobKind::kTraining) {
  WorldJob j;
  j.id = std::move(id);
  j.kind = kind;
  j.priority = priority;
  j.arrival_step = arrival;
  j.shapes.push_back(WorldShape{gpus, actual, forecast});
  return j;
}

inline std::unique_ptr<Policy> MakePolicy(const std::string& name) {
  auto p = MakeInTreeRegistry().Create(name);
  EXPECT_TRUE(p.has_value()) << name;
  return p ? std::move(*p) : nullptr;
}

inline SimRun MustSimulate(const World& w, const std::string& policy, const SimOptions& o = {}) {
  auto p = MakePolicy(policy);
  auto run = Simulate(w, *p, o);
  EXPECT_TRUE(run.has_value()) << (run ? "" : run.error().ToString());
  return run ? std::move(*run) : SimRun{};
}

/// Every committed step passes the spec's rules: the committed timeline as one scenario + plan.
inline void ExpectCommittedLegal(const World& w, const SimRun& run, const std::string& context) {
  CommittedTimeline t = BuildCommittedTimeline(w, run);
  auto valid = ValidateScenario(t.scenario);
  ASSERT_TRUE(valid.has_value()) << context << ": " << valid.error().ToString();
  for (const Violation& v : CheckPlan(t.scenario, t.plan)) {
    ADD_FAILURE() << context << " (" << run.policy << "): " << FormatViolation(v);
  }
}

inline const JobOutcome& OutcomeOf(const World& w, const SimRun& run, const std::string& id) {
  for (const JobOutcome& o : run.jobs) {
    if (w.jobs[o.world_index].id == id) return o;
  }
  static JobOutcome none;
  ADD_FAILURE() << "no job " << id;
  return none;
}

}  // namespace ordo::sim::testing
