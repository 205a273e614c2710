// Full mode's heavy checks (ctest label `slow`, run on the release build): many more tiny
// instances against the exhaustive search, contended instances through both paths (whole model
// and LNS), and a 512-GPU instance through LNS.
#include <gtest/gtest.h>

#include <cmath>

#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/fast/fast_policy.h"
#include "ordo/policy/full/full_mode.h"
#include "ordo/policy/full/full_policy.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"
#include "tests/unit/policy/full/brute_force.h"

namespace ordo::policy {
namespace {

#if defined(ORDO_WITH_CBC)

double Tolerance(double value) { return 1e-6 * std::max(1.0, std::abs(value)); }

TEST(FullPolicySlow, EqualsExhaustiveSearchOnManyTinyInstances) {
  for (uint64_t seed = 1000; seed < 1400; ++seed) {
    const Scenario scenario = testing::TinyScenario(seed);
    const double optimum = testing::BruteForceOptimum(scenario);
    PolicyOptions options;
    options.time_limit_s = 30;
    auto plan = MakeFullPolicy()->Solve(scenario, options);
    ASSERT_TRUE(plan.has_value());
    testing::ExpectLegal(scenario, *plan, seed);
    EXPECT_NEAR(plan->metrics.objective, optimum, Tolerance(optimum)) << "seed " << seed;
    EXPECT_EQ(plan->metrics.solver->status, "optimal") << "seed " << seed;
  }
}

void CheckBothPaths(const Scenario& scenario, uint64_t seed, double seconds) {
  PolicyOptions fast_options;
  fast_options.seed = seed;
  auto fast = MakeFastPolicy()->Solve(scenario, fast_options);
  ASSERT_TRUE(fast.has_value());
  const double fast_objective = ComputeObjective(scenario, *fast);
  for (const bool whole : {true, false}) {
    PolicyOptions options;
    options.seed = seed;
    options.time_limit_s = seconds;
    full::FullModeConfig config;
    if (!whole) config.max_whole_columns = 0;
    full::FullModeStats stats;
    auto plan = full::SolveFullMode(scenario, options, config, &stats);
    ASSERT_TRUE(plan.has_value());
    testing::ExpectLegal(scenario, *plan, seed);
    EXPECT_GE(plan->metrics.objective, stats.warm_objective - Tolerance(stats.warm_objective));
    EXPECT_GE(stats.warm_objective, fast_objective - Tolerance(fast_objective)) << "seed " << seed;
    EXPECT_GE(plan->metrics.solver->best_bound, plan->metrics.objective) << "seed " << seed;
  }
}

TEST(FullPolicySlow, ContendedInstancesThroughBothPaths) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const Scenario scenario = testing::RandomScenario(seed, {.contended = true});
    CheckBothPaths(scenario, seed, 5);
  }
}

TEST(FullPolicySlow, LargeRandomClusters) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    testing::RandomScenarioOptions options;
    options.min_nodes = 32;
    options.max_nodes = 64;
    options.max_jobs = 200;
    const Scenario scenario = testing::RandomScenario(seed, options);
    CheckBothPaths(scenario, seed, 10);
  }
}

#endif

}  // namespace
}  // namespace ordo::policy
