// Full mode against an exhaustive search on tiny instances, and its guarantees on random ones:
// every plan legal, never below its warm start, the bound above the objective, no output.
#include "ordo/policy/full/full_policy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/fast/fast_policy.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/full_mode.h"
#include "ordo/policy/full/greedy_start.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"
#include "tests/unit/policy/full/brute_force.h"

namespace ordo::policy {
namespace {

using testing::BruteForceOptimum;
using testing::ExpectLegal;
using testing::MakeJob;
using testing::MakeService;
using testing::RandomScenario;
using testing::ScenarioBuilder;
using testing::TinyScenario;

#if defined(ORDO_WITH_CBC)

Plan SolveFull(const Scenario& scenario, double seconds, uint64_t seed = 1,
               bool lend_idle_gpus = true) {
  PolicyOptions options;
  options.time_limit_s = seconds;
  options.seed = seed;
  options.lend_idle_gpus = lend_idle_gpus;
  auto plan = MakeFullPolicy()->Solve(scenario, options);
  EXPECT_TRUE(plan.has_value()) << plan.error().ToString();
  return plan.has_value() ? *plan : Plan{};
}

double Tolerance(double value) { return 1e-6 * std::max(1.0, std::abs(value)); }

TEST(FullPolicy, NameIsTheSpecs) { EXPECT_EQ(MakeFullPolicy()->name(), "ordo-full"); }

TEST(FullPolicy, EffortOutsideItsRangeIsAnErrorNamingIt) {
  // Passed on to the warm start: a bad one is refused, not silently replaced by the greedy start.
  const Scenario s = ScenarioBuilder("effort").Steps(2).Group("a", 1, 4).Build();
  PolicyOptions options;
  options.effort = 0;
  auto plan = MakeFullPolicy()->Solve(s, options);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().field, "effort");
}

// `plan` is legal, its objective is `optimum` (as the metrics compute it), and its bound is at
// least that.
void ExpectOptimum(const Scenario& scenario, const Plan& plan, double optimum, uint64_t seed) {
  ExpectLegal(scenario, plan, seed);
  ASSERT_TRUE(plan.metrics.solver.has_value()) << "seed " << seed;
  EXPECT_NEAR(plan.metrics.objective, optimum, Tolerance(optimum)) << "seed " << seed;
  EXPECT_NEAR(ComputeObjective(scenario, plan), plan.metrics.objective, 1e-9);
  EXPECT_GE(plan.metrics.solver->best_bound, optimum - Tolerance(optimum)) << "seed " << seed;
}

TEST(FullPolicy, EqualsExhaustiveSearchOnTinyInstances) {
  int proven = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const Scenario scenario = TinyScenario(seed);
    const double optimum = BruteForceOptimum(scenario);
    const Plan plan = SolveFull(scenario, 20);
    ExpectOptimum(scenario, plan, optimum, seed);
    proven += plan.metrics.solver && plan.metrics.solver->status == "optimal";
  }
  EXPECT_EQ(proven, 60);  // tiny instances are proven within the limit
}

// With checkpointed jobs the model also decides preemptions and resumes (of running jobs too),
// and still equals the exhaustive search, which preempts on its own reading of the spec.
TEST(FullPolicy, WithCheckpointsEqualsExhaustiveSearchOnTinyInstances) {
  constexpr int kInstances = 80;
  int proven = 0;
  int preempting = 0;
  int gaining = 0;
  for (uint64_t seed = 1; seed <= kInstances; ++seed) {
    const Scenario scenario = TinyScenario(seed, 0.6);
    const double optimum = BruteForceOptimum(scenario);
    const Plan plan = SolveFull(scenario, 20);
    ExpectOptimum(scenario, plan, optimum, seed);
    proven += plan.metrics.solver && plan.metrics.solver->status == "optimal";
    preempting += plan.metrics.preemptions > 0;
    Scenario without = scenario;
    for (Job& job : without.jobs) job.checkpoint.reset();
    const double optimum_without = BruteForceOptimum(without);
    EXPECT_LE(optimum_without, optimum + Tolerance(optimum)) << "seed " << seed;
    gaining += optimum > optimum_without + Tolerance(optimum);
  }
  EXPECT_EQ(proven, kInstances);
  // The instances exercise preemption: some optima need it.
  EXPECT_GT(preempting, 0);
  EXPECT_GT(gaining, 0);
  std::printf("checkpointed tiny instances: %d of %d optima preempt, %d gain by it\n", preempting,
              kInstances, gaining);
}

TEST(FullPolicy, HandWorkedExample) {
  // 4 GPUs, 4 steps, no decay. big (4 GPUs x 2 steps, priority 3) = 24 anywhere; small (2 x 4,
  // priority 2) = 16 only from step 0, which leaves big no room; tiny (2 x 2, priority 1) = 4.
  // Best: big [0,2), then small [2,4) (8: two steps inside the horizon) beside tiny [2,4): 36.
  // Small first gives 16 + 4 + big at [2,4)? No: small holds 2 GPUs there. So 20 + 0, or 28.
  const Scenario scenario = ScenarioBuilder("hand")
                                .Steps(4)
                                .Objective(0, 8)
                                .Group("g", 1, 4)
                                .Job(MakeJob("big").Gpus(4).Duration(2).Priority(3))
                                .Job(MakeJob("small").Gpus(2).Duration(4).Priority(2))
                                .Job(MakeJob("tiny").Gpus(2).Duration(2).Priority(1))
                                .Build();
  ASSERT_TRUE(ValidateScenario(scenario).has_value());
  EXPECT_NEAR(BruteForceOptimum(scenario), 36, 1e-9);
  const Plan plan = SolveFull(scenario, 10);
  ExpectLegal(scenario, plan);
  EXPECT_NEAR(plan.metrics.objective, 36, 1e-9);
  EXPECT_EQ(plan.metrics.solver->status, "optimal");
  EXPECT_NEAR(plan.metrics.solver->gap, 0, 1e-6);
}

TEST(FullPolicy, ServiceRampsBeforeItsPeakAndKeepsItsIds) {
  // The service needs 4 GPUs at step 3 and may change by 1 per step from 1: it must ramp from
  // step 0. Batch work fills the rest.
  const Scenario scenario =
      ScenarioBuilder("ramp")
          .Steps(6)
          .Objective(0.5, 8)
          .Group("g", 1, 8)
          .Job(MakeJob("a").Gpus(4).Duration(6).Priority(1))
          .Job(MakeJob("b").Gpus(2).Duration(3).Priority(2))
          .Service(MakeService("chat").Priority(5).Demand({1, 1, 1, 4, 1, 1}).Churn(1).Current(1))
          .Build();
  ASSERT_TRUE(ValidateScenario(scenario).has_value());
  // Without the loan of idle GPUs at step 0 (headroom_test.cc), whose ids are not the solver's.
  const Plan plan = SolveFull(scenario, 10, 1, /*lend_idle_gpus=*/false);
  ExpectLegal(scenario, plan);
  EXPECT_NEAR(plan.metrics.objective, BruteForceOptimum(scenario), 1e-6);
  EXPECT_EQ(plan.metrics.realtime_unmet_gpu_steps, 0);
  // Sticky ids: of the ids held at t-1 that no job holds at t, the service keeps as many as it
  // needs at t.
  const auto& gpus = plan.services.front().gpus;
  const auto job_holds = [&](int id, int t) {
    for (const JobPlacement& p : plan.jobs) {
      if (p.started() && *p.start_step <= t && t < p.end_step() && id >= p.first_gpu &&
          id < p.first_gpu + p.gpus) {
        return true;
      }
    }
    return false;
  };
  for (int t = 1; t < static_cast<int>(gpus.size()); ++t) {
    size_t keepable = 0, kept = 0;
    for (int id : gpus[t - 1]) {
      keepable += !job_holds(id, t);
      kept += std::count(gpus[t].begin(), gpus[t].end(), id);
    }
    EXPECT_EQ(kept, std::min(keepable, gpus[t].size())) << "step " << t;
  }
}

TEST(FullPolicy, NeverBelowItsWarmStartsOnRandomInstances) {
  for (uint64_t seed = 1; seed <= 35; ++seed) {
    testing::RandomScenarioOptions options;
    options.max_nodes = 6;
    options.max_steps = 24;
    options.max_jobs = 14;
    // Seeds past 25 have checkpointed jobs: fast mode's warm start then preempts, and full mode
    // reads its preemptions back, searches with them and keeps the guarantees.
    if (seed > 25) options.checkpoint_fraction = 0.5;
    const Scenario scenario = RandomScenario(seed, options);
    const Plan warm = full::Realize(scenario, full::GreedyDecisions(scenario), "greedy");
    ExpectLegal(scenario, warm, seed);
    PolicyOptions fast_options;
    fast_options.seed = seed;
    auto fast = MakeFastPolicy()->Solve(scenario, fast_options);
    ASSERT_TRUE(fast.has_value());
    const Plan plan = SolveFull(scenario, 0.5, seed);
    ExpectLegal(scenario, plan, seed);
    const double warm_objective =
        std::max(ComputeObjective(scenario, warm), ComputeObjective(scenario, *fast));
    EXPECT_GE(plan.metrics.objective, warm_objective - Tolerance(warm_objective))
        << "seed " << seed;
    ASSERT_TRUE(plan.metrics.solver.has_value());
    EXPECT_GE(plan.metrics.solver->best_bound, plan.metrics.objective - 1e-9) << "seed " << seed;
    EXPECT_GE(plan.metrics.solver->gap, 0);
    EXPECT_TRUE(plan.metrics.solver->status == "optimal" ||
                plan.metrics.solver->status == "feasible")
        << "seed " << seed << ": " << plan.metrics.solver->status;
  }
}

TEST(FullPolicy, ProvenOptimumReportsNoGap) {
  // Contended seed 7: the services' floors leave one GPU per step and no job fits in one, so 0 is
  // optimal although the LP relaxation is 144.6; the report must say optimal with no gap.
  const Scenario scenario = RandomScenario(7, testing::RandomScenarioOptions{.contended = true});
  const Plan plan = SolveFull(scenario, 20);
  ExpectLegal(scenario, plan);
  EXPECT_EQ(plan.metrics.solver->status, "optimal");
  EXPECT_NEAR(plan.metrics.solver->best_bound, plan.metrics.objective, 1e-6);
  EXPECT_NEAR(plan.metrics.solver->gap, 0, 1e-9);
}

TEST(FullPolicy, EmptyAndServiceOnlyScenarios) {
  const Scenario empty = ScenarioBuilder("empty").Steps(4).Group("g", 1, 4).Build();
  Plan plan = SolveFull(empty, 5);
  ExpectLegal(empty, plan);
  EXPECT_EQ(plan.metrics.objective, 0);
  EXPECT_EQ(plan.metrics.solver->status, "optimal");

  // A service alone, with more demand than GPUs: it gets all four at every step.
  const Scenario service_only = ScenarioBuilder("service-only")
                                    .Steps(4)
                                    .Objective(0.5, 8)
                                    .Group("g", 1, 4)
                                    .Service(MakeService("chat").Priority(2).Demand({6, 6, 6, 6}))
                                    .Build();
  ASSERT_TRUE(ValidateScenario(service_only).has_value());
  plan = SolveFull(service_only, 5);
  ExpectLegal(service_only, plan);
  EXPECT_NEAR(plan.metrics.objective, -8.0 * 2 * 2 * 4, 1e-9);
  EXPECT_EQ(plan.metrics.solver->status, "optimal");
}

TEST(FullPolicy, ZeroTimeReturnsTheLegalWarmStart) {
  const Scenario scenario = RandomScenario(7, testing::RandomScenarioOptions{.contended = true});
  const Plan warm = full::Realize(scenario, full::GreedyDecisions(scenario), "greedy");
  const Plan plan = SolveFull(scenario, 0);
  ExpectLegal(scenario, plan);
  EXPECT_GE(plan.metrics.objective, ComputeObjective(scenario, warm) - 1e-6);
  EXPECT_EQ(plan.policy, "ordo-full");
  EXPECT_GE(plan.metrics.solver->best_bound, plan.metrics.objective);
}

TEST(FullPolicy, RaisedStopFlagReturnsAtOnceWithALegalPlan) {
  const Scenario scenario = RandomScenario(8, testing::RandomScenarioOptions{.contended = true});
  const std::atomic<bool> stop{true};
  PolicyOptions options;
  options.time_limit_s = 60;
  options.stop = &stop;
  auto plan = MakeFullPolicy()->Solve(scenario, options);
  ASSERT_TRUE(plan.has_value());
  ExpectLegal(scenario, *plan);
  EXPECT_LT(plan->metrics.solve_ms, 30'000);  // far from the 60 s limit, whatever the machine
}

TEST(FullPolicy, SameSeedSamePlanWhenProven) {
  const Scenario scenario = TinyScenario(17);
  const Plan a = SolveFull(scenario, 20, 3);
  const Plan b = SolveFull(scenario, 20, 3);
  ASSERT_EQ(a.metrics.solver->status, "optimal");
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    EXPECT_EQ(a.jobs[j].start_step, b.jobs[j].start_step);
    EXPECT_EQ(a.jobs[j].first_gpu, b.jobs[j].first_gpu);
  }
  for (size_t s = 0; s < a.services.size(); ++s) EXPECT_EQ(a.services[s].gpus, b.services[s].gpus);
}

TEST(FullPolicy, LargeNeighbourhoodPathKeepsTheGuarantees) {
  // Forced onto LNS (no whole model): legal, never below the warm start, a bound above it.
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const Scenario scenario =
        RandomScenario(seed, testing::RandomScenarioOptions{.contended = true});
    PolicyOptions options;
    options.time_limit_s = 1;
    options.seed = seed;
    full::FullModeConfig config;
    config.max_whole_columns = 0;
    config.lns.target_columns = 300;
    full::FullModeStats stats;
    auto plan = full::SolveFullMode(scenario, options, config, &stats);
    ASSERT_TRUE(plan.has_value());
    EXPECT_FALSE(stats.whole);
    ExpectLegal(scenario, *plan, seed);
    EXPECT_GE(plan->metrics.objective, stats.warm_objective - Tolerance(stats.warm_objective));
    EXPECT_GE(plan->metrics.solver->best_bound, plan->metrics.objective);
    EXPECT_EQ(plan->metrics.solver->nodes, 0);
  }
}

/// Fifo's value and reactive's unmet GPU-steps: fast mode's two promises on `scenario`.
Promises BaselinePromises(const Scenario& scenario) {
  auto fifo = MakeFifoPolicy()->Solve(scenario, PolicyOptions{});
  auto reactive = MakeReactivePolicy()->Solve(scenario, PolicyOptions{});
  EXPECT_TRUE(fifo.has_value() && reactive.has_value());
  if (!fifo || !reactive) return {};
  return {fifo->metrics.value, reactive->metrics.realtime_unmet_gpu_steps};
}

void ExpectKeeps(const Scenario& scenario, const Plan& plan, const Promises& promises,
                 uint64_t seed) {
  const Metrics m = ComputeMetrics(scenario, plan);
  EXPECT_GE(m.value, promises.min_value - Tolerance(promises.min_value)) << "seed " << seed;
  EXPECT_LE(m.realtime_unmet_gpu_steps, promises.max_unmet_gpu_steps) << "seed " << seed;
}

TEST(FullPolicy, UnderPromisesKeepsThemAndLiesBetweenFastModeAndTheOptimum) {
  // Fast mode keeps its promises, so the constrained model is feasible: its optimum is at least
  // fast mode's objective and at most the unconstrained optimum.
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Scenario scenario = TinyScenario(seed);
    const Promises promises = BaselinePromises(scenario);
    PolicyOptions options;
    options.time_limit_s = 20;
    options.seed = seed;
    auto fast = MakeFastPolicy()->Solve(scenario, options);
    ASSERT_TRUE(fast.has_value());
    full::FullModeConfig config;
    config.promises = promises;
    auto plan = full::SolveFullMode(scenario, options, config);
    ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
    ExpectLegal(scenario, *plan, seed);
    ExpectKeeps(scenario, *plan, promises, seed);
    EXPECT_EQ(plan->metrics.solver->status, "optimal") << "seed " << seed;
    const double fast_objective = ComputeObjective(scenario, *fast);
    EXPECT_GE(plan->metrics.objective, fast_objective - Tolerance(fast_objective))
        << "seed " << seed;
    const double optimum = BruteForceOptimum(scenario);
    EXPECT_LE(plan->metrics.objective, optimum + Tolerance(optimum)) << "seed " << seed;
  }
}

TEST(FullPolicy, PromisesBindWhereTheOptimumBreaksThem) {
  // Contended seed 29 (docs/full-mode.md, quality loop): the optimum, 692.38, leaves more real-time
  // demand unmet than reactive does; under the promises the optimum is lower and keeps them.
  const Scenario scenario = RandomScenario(29, testing::RandomScenarioOptions{.contended = true});
  const Promises promises = BaselinePromises(scenario);
  const Plan free = SolveFull(scenario, 30);
  ASSERT_EQ(free.metrics.solver->status, "optimal");
  EXPECT_GT(ComputeMetrics(scenario, free).realtime_unmet_gpu_steps, promises.max_unmet_gpu_steps);
  PolicyOptions options;
  options.time_limit_s = 30;
  full::FullModeConfig config;
  config.promises = promises;
  auto bound = full::SolveFullMode(scenario, options, config);
  ASSERT_TRUE(bound.has_value());
  ExpectLegal(scenario, *bound);
  ExpectKeeps(scenario, *bound, promises, 29);
  EXPECT_EQ(bound->metrics.solver->status, "optimal");
  EXPECT_LT(bound->metrics.objective, free.metrics.objective - 1);
}

TEST(FullPolicy, PromisesNeedTheWholeModel) {
  const Scenario scenario = RandomScenario(3, testing::RandomScenarioOptions{.contended = true});
  PolicyOptions options;
  options.time_limit_s = 1;
  full::FullModeConfig config;
  config.max_whole_columns = 0;
  config.promises = BaselinePromises(scenario);
  auto plan = full::SolveFullMode(scenario, options, config);
  ASSERT_FALSE(plan.has_value());
  EXPECT_NE(plan.error().ToString().find("promises"), std::string::npos) << plan.error().ToString();
}

TEST(FullPolicy, ExplainsWhenAsked) {
  // Two jobs want the only 4-GPU node at step 0: one must wait, and says why.
  const Scenario scenario = ScenarioBuilder("explain")
                                .Steps(4)
                                .Group("g", 1, 4)
                                .Job(MakeJob("a").Gpus(4).Duration(2).Priority(2))
                                .Job(MakeJob("b").Gpus(4).Duration(2).Priority(1))
                                .Build();
  PolicyOptions options;
  options.time_limit_s = 5;
  options.explain = true;
  auto plan = MakeFullPolicy()->Solve(scenario, options);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->explanations.size(), 1u);
  EXPECT_EQ(plan->explanations[0].id, "b");
  // "a" is planned work of higher priority: "lower value than the planned work", naming "a".
  EXPECT_EQ(plan->explanations[0].reason, WaitReason::kLowValue);
  EXPECT_EQ(plan->explanations[0].blocking_id, "a");
  options.explain = false;
  plan = MakeFullPolicy()->Solve(scenario, options);
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(plan->explanations.empty());
}

TEST(LpRelaxationBound, BoundsTheOptimum) {
  for (uint64_t seed = 1; seed <= 15; ++seed) {
    const Scenario scenario = TinyScenario(seed);
    auto bound = LpRelaxationBound(scenario, 10);
    ASSERT_TRUE(bound.has_value()) << bound.error().ToString();
    const double optimum = BruteForceOptimum(scenario);
    EXPECT_GE(*bound, optimum - Tolerance(optimum)) << "seed " << seed;
  }
}

TEST(LpRelaxationBound, NegativeTimeIsAnInputError) {
  auto bound = LpRelaxationBound(TinyScenario(1), -1);
  ASSERT_FALSE(bound.has_value());
  EXPECT_EQ(bound.error().field, "time_limit_s");
}

TEST(FullPolicy, NeverPrintsToStandardOutput) {
  const Scenario scenario = RandomScenario(11, testing::RandomScenarioOptions{.contended = true});
  std::fflush(stdout);
  FILE* sink = std::tmpfile();
  const int saved = dup(1);
  dup2(fileno(sink), 1);
  PolicyOptions options;
  options.time_limit_s = 1;
  auto plan = MakeFullPolicy()->Solve(scenario, options);
  auto bound = LpRelaxationBound(scenario, 1);
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  const long printed = std::ftell(sink);
  std::fclose(sink);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(printed, 0);
}

#else

TEST(FullPolicy, UnavailableWithoutCbc) {
  const Scenario scenario = TinyScenario(1);
  auto plan = MakeFullPolicy()->Solve(scenario, PolicyOptions{});
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code, ErrorCode::kUnavailable);
}

#endif

}  // namespace
}  // namespace ordo::policy
