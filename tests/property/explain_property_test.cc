// Every explanation of every policy's plan on random scenarios is a checked fact: the explainer
// (policy/common/explain.h) against the independent checker (tests/support/explanation_check.h).
// Each instance plans with fifo, fifo-backfill, priority-backfill, reactive and ordo; every 25th
// also with ordo-full (a MILP, so fewer). Half the instances are small contended ones, where jobs
// wait and services bind. Failures name the seed and the policy.
//
// ORDO_PROPERTY_INSTANCES sets the instance count (default 300 keeps the dev build's run short;
// docs/explanations.md gives the 10,000-instance run).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "ordo/core/check_plan.h"
#include "ordo/policy/common/explain.h"
#include "ordo/policy/registry.h"
#include "tests/support/explanation_check.h"
#include "tests/support/random_scenario.h"

namespace ordo::testing {
namespace {

int InstanceCount() {
  const char* env = std::getenv("ORDO_PROPERTY_INSTANCES");
  return env != nullptr ? std::max(1, std::atoi(env)) : 300;
}

TEST(ExplainProperty, EveryExplanationOfEveryPolicyIsAFact) {
  const PolicyRegistry registry = MakeInTreeRegistry();
  const int instances = InstanceCount();
  long long explained = 0, spans = 0;
  int failures = 0;
  for (int k = 1; k <= instances && failures < 5; ++k) {
    const uint64_t seed = static_cast<uint64_t>(k);
    RandomScenarioOptions options;
    options.contended = k % 2 == 0;
    options.max_nodes = 16;
    options.max_steps = 48;
    options.max_jobs = 30;
    const Scenario scenario = RandomScenario(seed, options);
    std::vector<std::string> policies = {"fifo", "fifo-backfill", "priority-backfill", "reactive",
                                         "ordo"};
    if (k % 25 == 0) policies.push_back("ordo-full");
    for (const std::string& name : policies) {
      auto policy = registry.Create(name);
      ASSERT_TRUE(policy) << name;
      PolicyOptions popts;
      popts.time_limit_s = name == "ordo-full" ? 0.2 : 1.0;
      auto plan = (*policy)->Solve(scenario, popts);
      ASSERT_TRUE(plan) << "seed " << seed << " " << name << ": " << plan.error().ToString();
      ASSERT_TRUE(CheckPlan(scenario, *plan).empty()) << "seed " << seed << " " << name;
      const std::vector<JobExplanation> explanations = policy::ExplainPlan(scenario, *plan);
      const std::vector<std::string> problems = CheckExplanations(scenario, *plan, explanations);
      if (!problems.empty()) {
        ++failures;
        ADD_FAILURE() << "seed " << seed << " policy " << name << ": " << problems.front() << " ("
                      << problems.size() << " problems)";
      }
      explained += static_cast<long long>(explanations.size());
      for (const JobExplanation& e : explanations) spans += static_cast<long long>(e.spans.size());
    }
  }
  std::printf("%d instances: %lld explanations, %lld spans checked\n", instances, explained, spans);
}

// A bound on the holders named leaves out whole explanations, never part of one: the bounded
// list is the unbounded one's prefix that fits the bound, and the next explanation would not.
TEST(ExplainProperty, AHolderBudgetKeepsTheWholeExplanationsThatFit) {
  const PolicyRegistry registry = MakeInTreeRegistry();
  auto holders_of = [](const JobExplanation& e) {
    int64_t n = 0;
    for (const WaitSpan& span : e.spans) n += static_cast<int64_t>(span.holders.size());
    return n;
  };
  int bounded_short = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    RandomScenarioOptions options;
    options.contended = true;
    const Scenario scenario = RandomScenario(seed, options);
    auto policy = registry.Create("ordo");
    ASSERT_TRUE(policy);
    auto plan = (*policy)->Solve(scenario, PolicyOptions{});
    ASSERT_TRUE(plan);
    const std::vector<JobExplanation> all = policy::ExplainPlan(scenario, *plan);
    int64_t total = 0;
    for (const JobExplanation& e : all) total += holders_of(e);
    const int64_t budget = total / 2;
    const std::vector<JobExplanation> some =
        policy::ExplainPlan(scenario, *plan, {.max_holders = budget});
    ASSERT_LE(some.size(), all.size()) << "seed " << seed;
    int64_t named = 0;
    for (size_t k = 0; k < some.size(); ++k) {
      EXPECT_EQ(some[k].id, all[k].id) << "seed " << seed;
      EXPECT_EQ(some[k].message, all[k].message) << "seed " << seed;
      named += holders_of(some[k]);
    }
    EXPECT_LE(named, budget) << "seed " << seed;
    if (some.size() < all.size()) {
      ++bounded_short;
      EXPECT_GT(named + holders_of(all[some.size()]), budget) << "seed " << seed;
    }
  }
  EXPECT_GT(bounded_short, 20);
}

// The checker is not a rubber stamp: a wrong holder, a span cut short and a false peak are caught.
TEST(ExplainProperty, TheCheckerCatchesFalseClaims) {
  const PolicyRegistry registry = MakeInTreeRegistry();
  int caught_holder = 0, caught_gap = 0, tried = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    RandomScenarioOptions options;
    options.contended = true;
    const Scenario scenario = RandomScenario(seed, options);
    auto policy = registry.Create("priority-backfill");
    ASSERT_TRUE(policy);
    auto plan = (*policy)->Solve(scenario, PolicyOptions{});
    ASSERT_TRUE(plan);
    for (JobExplanation e : policy::ExplainPlan(scenario, *plan)) {
      if (e.spans.empty()) continue;
      ++tried;
      JobExplanation cut = e;
      cut.spans.back().to_step -= 1;
      if (!CheckExplanation(scenario, *plan, cut).empty()) ++caught_gap;
      for (WaitSpan& span : e.spans) {
        for (WaitHolder& h : span.holders) {
          if (h.service) continue;
          // Another job that is not a holder of this span: the explanation now names it instead.
          for (const Job& other : scenario.jobs) {
            bool holder = false;
            for (const WaitHolder& x : span.holders) holder = holder || x.id == other.id;
            if (!holder && other.id != e.id) {
              h.id = other.id;
              break;
            }
          }
        }
      }
      e.message = policy::ExplanationMessage(e, plan->policy, policy::NameEveryHolder);
      bool renamed = false;
      for (const WaitSpan& span : e.spans) {
        for (const WaitHolder& h : span.holders) renamed = renamed || !h.service;
      }
      if (renamed && !CheckExplanation(scenario, *plan, e).empty()) ++caught_holder;
    }
  }
  EXPECT_GT(tried, 20);
  EXPECT_EQ(caught_gap, tried);
  EXPECT_GT(caught_holder, 10);
}

}  // namespace
}  // namespace ordo::testing
