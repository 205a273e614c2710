#include "ordo/policy/fast/neighbourhood_search.h"

#include <gtest/gtest.h>

#include <chrono>

#include "ordo/core/metrics.h"
#include "ordo/policy/fast/service_variants.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo::policy::fast {
namespace {

using testing::ExpectLegal;

struct Searched {
  Outcome before;
  Outcome after;
};

// A weak start (services first, two greedy passes), then the loop with `budget` from it.
Searched Search(const Scenario& s, uint64_t seed, long long budget, long long unmet_slack) {
  PolicyOptions options;
  options.seed = seed;
  const SearchContext ctx(s, options, Clock::now() + std::chrono::minutes(1));
  const BatchPasses batch(ctx, s.objective.time_decay);
  Searched result;
  result.before = PlanVariant(ctx, batch, ServiceVariant{}, 2);
  result.after = result.before;
  const long long unmet_limit = UnmetSteps(s, result.before.counts) + unmet_slack;
  SearchNeighbourhoods(ctx, batch, budget, unmet_limit, result.after);
  return result;
}

// On contended random instances the loop never returns less than it was given, never leaves more
// unmet real-time demand than its cap, its plans are legal, and its objective is the metrics'
// own (up to the running jobs' reward, the same in both plans); it improves most starts.
TEST(NeighbourhoodSearchTest, RaisesTheObjectiveOfWeakStartsWithinTheUnmetCap) {
  int improved = 0, services_moved = 0;
  constexpr int kInstances = 60;
  for (uint64_t seed = 1; seed <= kInstances; ++seed) {
    const Scenario s = testing::RandomScenario(seed, {.contended = true});
    const long long slack = seed % 2 == 0 ? 0 : 10;
    const Searched r = Search(s, seed, NeighbourhoodBudget(s.jobs.size(), 1), slack);
    ASSERT_GE(r.after.objective, r.before.objective - 1e-9) << "seed " << seed;
    EXPECT_LE(UnmetSteps(s, r.after.counts), UnmetSteps(s, r.before.counts) + slack)
        << "seed " << seed;
    const Plan before = Assemble(s, r.before.pass.placements, r.before.counts);
    const Plan after = Assemble(s, r.after.pass.placements, r.after.counts);
    ExpectLegal(s, after, seed);
    EXPECT_NEAR(ComputeMetrics(s, after).objective - ComputeMetrics(s, before).objective,
                r.after.objective - r.before.objective, 1e-6)
        << "seed " << seed;
    improved += r.after.objective > r.before.objective + 1e-6;
    services_moved += r.after.counts != r.before.counts;
  }
  EXPECT_GE(improved, kInstances * 2 / 3);
  EXPECT_GE(services_moved, kInstances / 5);  // the services planned again, not only the jobs
}

TEST(NeighbourhoodSearchTest, TheSameSeedGivesTheSameSolution) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const Scenario s = testing::RandomScenario(seed, {.contended = true});
    const Searched a = Search(s, seed, 4'000, 0);
    const Searched b = Search(s, seed, 4'000, 0);
    EXPECT_EQ(a.after.objective, b.after.objective) << "seed " << seed;
    EXPECT_EQ(a.after.counts, b.after.counts) << "seed " << seed;
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      EXPECT_EQ(a.after.pass.placements[j].start_step, b.after.pass.placements[j].start_step);
      EXPECT_EQ(a.after.pass.placements[j].first_gpu, b.after.pass.placements[j].first_gpu);
      EXPECT_EQ(a.after.pass.placements[j].shape, b.after.pass.placements[j].shape);
    }
  }
}

TEST(NeighbourhoodSearchTest, MoreBudgetFindsAtLeastAsMuchOnAverage) {
  double small = 0, large = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Scenario s = testing::RandomScenario(seed, {.contended = true});
    small += Search(s, seed, 500, 0).after.objective;
    large += Search(s, seed, 20'000, 0).after.objective;
  }
  EXPECT_GT(large, small);
}

TEST(NeighbourhoodSearchTest, TheBudgetGrowsWithTheJobsAndStopsWhereAnIterationCostsTooMuch) {
  EXPECT_EQ(NeighbourhoodBudget(0, 1), 0);
  EXPECT_EQ(NeighbourhoodBudget(1, 1), 0);  // nothing to exchange
  EXPECT_GT(NeighbourhoodBudget(16, 1), 0);
  EXPECT_GT(NeighbourhoodBudget(30, 1), NeighbourhoodBudget(16, 1));
  EXPECT_EQ(NeighbourhoodBudget(30, 4), 4 * NeighbourhoodBudget(30, 1));
  EXPECT_EQ(NeighbourhoodBudget(10'000, 1), 0);  // one iteration puts 10,000 jobs back
}

}  // namespace
}  // namespace ordo::policy::fast
