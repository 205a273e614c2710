// Full mode's size estimates (model_size.h) bound the models it builds, and a model over the memory
// budget is not built: full mode returns what fits, legal, and says so in its status.
#include "ordo/policy/full/model_size.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "ordo/core/metrics.h"
#include "ordo/policy/fast/fast_policy.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/full_mode.h"
#include "ordo/policy/full/greedy_start.h"
#include "ordo/policy/full/pattern_model.h"
#include "ordo/policy/full/pooled_model.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo::policy::full {
namespace {

using testing::ExpectLegal;
using testing::RandomScenario;

Scenario Contended(uint64_t seed) {
  testing::RandomScenarioOptions options;
  options.contended = true;
  return RandomScenario(seed, options);
}

TEST(ModelSize, PooledEstimateBoundsTheBuiltModel) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    testing::RandomScenarioOptions options;
    options.max_nodes = 8;
    options.max_steps = 30;
    options.max_jobs = 20;
    options.contended = seed % 2 == 0;
    const Scenario s = RandomScenario(seed, options);
    const PooledModel model(s, BatchOccupancy(s, nullptr), /*integer=*/true);
    const ModelSize size = PooledModelSize(s);
    EXPECT_GE(size.columns, model.milp().num_variables()) << "seed " << seed;
    EXPECT_GE(size.rows, model.milp().num_rows()) << "seed " << seed;
    EXPECT_GE(size.nonzeros, static_cast<double>(model.milp().num_nonzeros())) << "seed " << seed;
    // An upper bound that is not absurdly loose: a model refused should be near the budget.
    EXPECT_LE(size.nonzeros, 2.0 * static_cast<double>(model.milp().num_nonzeros()) + 1000)
        << "seed " << seed;
  }
}

TEST(ModelSize, PatternEstimateBoundsTheBuiltModel) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    testing::RandomScenarioOptions options;
    options.max_nodes = 6;
    options.max_steps = 24;
    options.max_jobs = 14;
    options.contended = seed % 2 == 0;
    const Scenario s = RandomScenario(seed, options);
    const std::vector<uint8_t> running = BatchOccupancy(s, nullptr);
    const Window whole = WholeProblem(s);
    const PatternModel model(s, whole, running, RunningReward(s));
    const ModelSize size = PatternModelSize(s, whole, BlockedIndex(s, running), INT64_MAX);
    EXPECT_EQ(size.columns - ServicePartSize(s).columns, model.num_patterns()) << "seed " << seed;
    EXPECT_GE(size.columns, model.milp().num_variables()) << "seed " << seed;
    EXPECT_GE(size.rows, model.milp().num_rows()) << "seed " << seed;
    EXPECT_GE(size.nonzeros, static_cast<double>(model.milp().num_nonzeros())) << "seed " << seed;
  }
}

TEST(ModelSize, BytesGrowWithTheModel) {
  const ModelSize small{100, 100, 1000};
  const ModelSize large{100, 100, 1'000'000};
  EXPECT_GT(ModelBytes(large), ModelBytes(small));
  // A million non-zeros costs CBC more than a hundred megabytes: far above ordo's own copy.
  EXPECT_GT(ModelBytes(large), 100e6);
}

#if defined(ORDO_WITH_CBC)

/// Full mode with `budget` bytes on a contended instance: the plan, legal, never below fast mode's.
Plan SolveWithBudget(const Scenario& s, int64_t budget, FullModeStats& stats) {
  PolicyOptions options;
  options.time_limit_s = 2;
  options.memory_budget_bytes = budget;
  auto plan = SolveFullMode(s, options, FullModeConfig{}, &stats);
  EXPECT_TRUE(plan.has_value()) << plan.error().ToString();
  if (!plan) return Plan{};
  ExpectLegal(s, *plan);
  PolicyOptions fast_options;
  fast_options.time_limit_s = 0.5;
  auto fast = MakeFastPolicy()->Solve(s, fast_options);
  EXPECT_TRUE(fast.has_value());
  if (fast) {
    EXPECT_GE(plan->metrics.objective, fast->metrics.objective - 1e-6);
  }
  return *plan;
}

TEST(FullModeBudget, NothingFitsReturnsTheWarmStartWithTheStatus) {
  const Scenario s = Contended(3);
  FullModeStats stats;
  const Plan plan = SolveWithBudget(s, /*budget=*/1, stats);
  ASSERT_TRUE(plan.metrics.solver.has_value());
  EXPECT_TRUE(stats.too_large);
  EXPECT_FALSE(stats.whole);
  EXPECT_EQ(stats.lns.iterations, 0);
  EXPECT_NEAR(plan.metrics.objective, stats.warm_objective, 1e-6);
  if (plan.metrics.solver->gap > 1e-7) {
    EXPECT_EQ(plan.metrics.solver->status, "model_too_large");
  }
  EXPECT_GE(plan.metrics.solver->best_bound, plan.metrics.objective - 1e-9);
}

TEST(FullModeBudget, WholeModelOverTheBudgetFallsBackToNeighbourhoodsThatFit) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Scenario s = Contended(seed);
    // With the default budget this instance's model is solved whole.
    FullModeStats roomy;
    SolveWithBudget(s, kDefaultMemoryBudgetBytes, roomy);
    if (!roomy.whole) continue;
    ++checked;
    // A budget below the whole model's estimate but above a neighbourhood's fixed part.
    const std::vector<uint8_t> running = BatchOccupancy(s, nullptr);
    const ModelSize whole =
        PatternModelSize(s, WholeProblem(s), BlockedIndex(s, running), INT64_MAX);
    const double fixed = BuildGridBytes(s) + 5.0 * s.cluster.total_gpus() * s.horizon_steps +
                         ModelBytes(ServicePartSize(s));
    const double budget = fixed + 0.5 * (BuildAndSolveBytes(s, whole) - fixed);
    ASSERT_LT(fixed, budget) << "seed " << seed;
    FullModeStats stats;
    const Plan plan = SolveWithBudget(s, static_cast<int64_t>(budget), stats);
    EXPECT_TRUE(stats.too_large) << "seed " << seed;
    EXPECT_FALSE(stats.whole) << "seed " << seed;
    EXPECT_GT(stats.lns.iterations, 0) << "seed " << seed;
    EXPECT_GE(plan.metrics.objective, stats.warm_objective - 1e-6) << "seed " << seed;
    ASSERT_TRUE(plan.metrics.solver.has_value());
    if (plan.metrics.solver->gap > 1e-7) {
      EXPECT_EQ(plan.metrics.solver->status, "model_too_large") << "seed " << seed;
    }
  }
  EXPECT_GT(checked, 0) << "no instance was solved whole with the default budget";
}

TEST(FullModeBudget, StopFlagEndsTheCallAtOnce) {
  testing::RandomScenarioOptions options;
  options.min_nodes = 64;
  options.max_nodes = 64;
  options.min_steps = 96;
  options.max_jobs = 60;
  const Scenario s = RandomScenario(11, options);
  std::atomic<bool> stop{true};
  PolicyOptions popts;
  popts.time_limit_s = 600;
  popts.stop = &stop;
  const auto started = std::chrono::steady_clock::now();
  auto plan = SolveFullMode(s, popts, FullModeConfig{});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
  ExpectLegal(s, *plan);
  // A stopped call returns what it has; it does not wait for its ten-minute limit.
  EXPECT_LT(seconds, 60);
}

TEST(GreedyDecisions, PastItsDeadlineStartsNothingMoreAndStaysLegal) {
  const Scenario s = Contended(5);
  const Decisions cut = GreedyDecisions(s, std::chrono::steady_clock::now());
  for (size_t j = 0; j < s.jobs.size(); ++j) EXPECT_FALSE(cut.jobs[j].has_value()) << j;
  ExpectLegal(s, Realize(s, cut, "greedy"));
  const Decisions whole = GreedyDecisions(s);
  int started = 0;
  for (const auto& job : whole.jobs) started += job.has_value();
  EXPECT_GT(started, 0);
}

#endif

}  // namespace
}  // namespace ordo::policy::full
