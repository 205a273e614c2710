// The pooled model (block positions dropped): every plan maps onto it with its own objective, its
// optimum bounds the exact one, and a solution pinned back into the pattern model (Window::pinned)
// packs into blocks.
#include "ordo/policy/full/pooled_model.h"

#include <gtest/gtest.h>

#include "ordo/core/metrics.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/greedy_start.h"
#include "ordo/policy/full/pattern_model.h"
#include "ordo/solver/milp_backend.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"
#include "tests/unit/policy/full/brute_force.h"

namespace ordo::policy::full {
namespace {

using testing::MakeJob;
using testing::RandomScenario;
using testing::ScenarioBuilder;

TEST(PooledModel, EveryPlanIsASolutionWithItsObjective) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    testing::RandomScenarioOptions options;
    options.max_nodes = 6;
    options.max_steps = 24;
    options.max_jobs = 12;
    options.contended = seed % 2 == 0;
    const Scenario s = RandomScenario(seed, options);
    const Decisions greedy = GreedyDecisions(s);
    const PooledModel model(s, BatchOccupancy(s, nullptr), /*integer=*/true);
    const std::vector<double> x = model.ToColumns(greedy);
    EXPECT_TRUE(model.milp().IsFeasible(x))
        << "seed " << seed << " violation " << model.milp().MaxViolation(x);
    EXPECT_NEAR(model.milp().ObjectiveValue(x), DecisionsObjective(s, greedy), 1e-6)
        << "seed " << seed;
    // Read back, each started job keeps its shape, start and group.
    const auto placements = model.Placements(x);
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      ASSERT_EQ(placements[j].has_value(), greedy.jobs[j].has_value()) << "seed " << seed;
      if (!greedy.jobs[j]) continue;
      EXPECT_EQ(placements[j]->shape, greedy.jobs[j]->shape);
      EXPECT_EQ(placements[j]->start, greedy.jobs[j]->start);
      EXPECT_EQ(placements[j]->group, s.cluster.group_of(greedy.jobs[j]->first_gpu));
    }
  }
}

TEST(PinnedWindow, KeepsShapeStartAndGroupAndDropsTheUnpinned) {
  // Two groups of one 4-GPU node; "a" may take 2 or 4 GPUs, "b" 2; 6 steps.
  const Scenario s = ScenarioBuilder("pinned")
                         .Steps(6)
                         .Group("x", 1, 4)
                         .Group("y", 1, 4)
                         .Job(MakeJob("a").Shapes({{2, 2}, {4, 1}}))
                         .Job(MakeJob("b").Gpus(2).Duration(1))
                         .Build();
  const auto blocked = BatchOccupancy(s, nullptr);
  Window w = WholeProblem(s);
  w.pinned.assign(s.jobs.size(), std::nullopt);
  w.pinned[0] = GroupPlacement{/*shape=*/0, /*start=*/3, /*group=*/1};
  // a: the two 2-GPU blocks of group y at step 3; b: none.
  EXPECT_EQ(CountPatterns(s, w, blocked), 2);
  const PatternModel model(s, w, blocked, 0);
  for (int c = 0; c < model.num_patterns(); ++c) {
    EXPECT_EQ(model.pattern(c).job, 0);
    EXPECT_EQ(model.pattern(c).shape, 0);
    EXPECT_EQ(model.pattern(c).start, 3);
    EXPECT_EQ(s.cluster.group_of(model.pattern(c).first_gpu), 1);
  }
}

#if defined(ORDO_WITH_CBC)

TEST(PooledModel, OptimumBoundsTheExactOneAndPacksOnTinyInstances) {
  auto backend = solver::MakeMilpBackend("cbc");
  ASSERT_TRUE(backend.has_value());
  int packed_whole = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const Scenario s = testing::TinyScenario(seed);
    const double optimum = testing::BruteForceOptimum(s);
    const auto blocked = BatchOccupancy(s, nullptr);
    const PooledModel pooled(s, blocked, /*integer=*/true);
    auto result = (*backend)->Solve(pooled.milp(), solver::SolveParams{});
    ASSERT_TRUE(result.has_value());
    ASSERT_EQ(result->status, solver::ModelStatus::kOptimal) << "seed " << seed << result->log;
    EXPECT_GE(result->objective, optimum - 1e-6) << "seed " << seed;
    // Its LP relaxation bounds it in turn.
    auto lp = (*backend)->SolveLpRelaxation(PooledModel(s, blocked, false).milp(), {});
    ASSERT_TRUE(lp.has_value());
    EXPECT_GE(lp->objective, result->objective - 1e-6) << "seed " << seed;

    // Pinned back, the pattern model places only the pooled choices; what it packs is a legal
    // plan no better than the pooled optimum, and exactly it when everything packs.
    Window pack = WholeProblem(s);
    pack.pinned = pooled.Placements(result->solution);
    const PatternModel packing(s, pack, blocked, RunningReward(s));
    auto packed = (*backend)->Solve(packing.milp(), solver::SolveParams{});
    ASSERT_TRUE(packed.has_value());
    ASSERT_TRUE(solver::HasSolution(packed->status)) << "seed " << seed;
    Decisions d = EmptyDecisions(s);
    packing.Apply(packed->solution, d);
    const Plan plan = Realize(s, d, "packed");
    testing::ExpectLegal(s, plan, seed);
    EXPECT_LE(ComputeObjective(s, plan), result->objective + 1e-6) << "seed " << seed;
    EXPECT_LE(ComputeObjective(s, plan), optimum + 1e-6) << "seed " << seed;
    if (std::abs(ComputeObjective(s, plan) - result->objective) < 1e-6) {
      ++packed_whole;
      EXPECT_NEAR(result->objective, optimum, 1e-6) << "seed " << seed;
    }
  }
  // Tiny clusters rarely fragment: nearly every pooled optimum packs (and is then the optimum).
  EXPECT_GE(packed_whole, 20);
}

#endif

}  // namespace
}  // namespace ordo::policy::full
