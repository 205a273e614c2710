// The pattern model's pieces: which patterns exist, that decisions round-trip through columns,
// that the model's objective is the plan's, the greedy start, the sticky realisation, and LNS.
#include "ordo/policy/full/pattern_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/full/bound.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/greedy_start.h"
#include "ordo/policy/full/lns.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"
#include "tests/unit/policy/full/brute_force.h"

namespace ordo::policy::full {
namespace {

using testing::ExpectLegal;
using testing::MakeJob;
using testing::MakeService;
using testing::RandomScenario;
using testing::ScenarioBuilder;

TEST(CountPatterns, CountsAlignedBlocksStartsAndShapes) {
  // Two nodes of 4 GPUs, 6 steps. "a" (2 GPUs, arrives at 2): 4 blocks x starts 2..5 = 16.
  // "b" (4 or 8 GPUs): 2 blocks x 6 starts + 1 block x 6 starts = 18. "c" wants an H100: none.
  // "r" runs on GPUs 0-3 for steps 0-1, which removes a's and b's patterns over it.
  const Scenario s = ScenarioBuilder("count")
                         .Steps(6)
                         .Group("g", 2, 4)
                         .Job(MakeJob("a").Gpus(2).Duration(1).Arrival(2))
                         .Job(MakeJob("b").Shapes({{4, 1}, {8, 1}}))
                         .Job(MakeJob("c").Gpus(1).Duration(1).GpuType("H100"))
                         .Build();
  ASSERT_TRUE(ValidateScenario(s).has_value());
  const auto blocked = BatchOccupancy(s, nullptr);
  EXPECT_EQ(CountPatterns(s, WholeProblem(s), blocked), 16 + 18);
  EXPECT_EQ(CountPatterns(s, WholeProblem(s), blocked, 10), 11);  // stops once past the cap

  const Scenario r = ScenarioBuilder("count-running")
                         .Steps(6)
                         .Group("g", 2, 4)
                         .Job(MakeJob("a").Gpus(2).Duration(1).Arrival(2))
                         .Job(MakeJob("b").Shapes({{4, 1}, {8, 1}}))
                         .Job(MakeJob("r").Gpus(4).Duration(3).Running(-1, 0))
                         .Build();
  ASSERT_TRUE(ValidateScenario(r).has_value());
  // a: unchanged (starts from 2, r ends at 2) = 16; b: the 4-block at 0 loses starts 0, 1; the
  // 8-block loses starts 0, 1: 18 - 4 = 14.
  EXPECT_EQ(CountPatterns(r, WholeProblem(r), BatchOccupancy(r, nullptr)), 16 + 14);
}

TEST(PatternModel, WindowRestrictsStartsAndGpus) {
  const Scenario s = ScenarioBuilder("window")
                         .Steps(8)
                         .Group("g", 4, 2)
                         .Job(MakeJob("a").Gpus(2).Duration(2))
                         .Build();
  Window w = WholeProblem(s);
  w.first_start = 3;
  w.end_start = 5;
  w.first_gpu = 2;
  w.end_gpu = 6;
  EXPECT_EQ(CountPatterns(s, w, BatchOccupancy(s, nullptr)), 2 * 2);
}

TEST(PatternModel, DecisionsRoundTripAndObjectiveIsThePlans) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    testing::RandomScenarioOptions options;
    options.max_nodes = 6;
    options.max_steps = 24;
    options.max_jobs = 12;
    const Scenario s = RandomScenario(seed, options);
    const Decisions greedy = GreedyDecisions(s);
    const auto blocked = BatchOccupancy(s, nullptr);
    const PatternModel model(s, WholeProblem(s), blocked, RunningReward(s));
    bool complete = false;
    const std::vector<double> x = model.ToColumns(greedy, &complete);
    EXPECT_TRUE(complete) << "seed " << seed;
    EXPECT_TRUE(model.milp().IsFeasible(x))
        << "seed " << seed << " violation " << model.milp().MaxViolation(x);
    const Plan plan = Realize(s, greedy, "greedy");
    ExpectLegal(s, plan, seed);
    EXPECT_NEAR(model.milp().ObjectiveValue(x), ComputeObjective(s, plan), 1e-6) << "seed " << seed;
    EXPECT_NEAR(DecisionsObjective(s, greedy), ComputeObjective(s, plan), 1e-6) << "seed " << seed;
    Decisions back = EmptyDecisions(s);
    model.Apply(x, back);
    EXPECT_EQ(back.jobs, greedy.jobs) << "seed " << seed;
    EXPECT_EQ(back.service_gpus, greedy.service_gpus) << "seed " << seed;
    const Decisions read = DecisionsFromPlan(s, plan);
    EXPECT_EQ(read.jobs, greedy.jobs) << "seed " << seed;
    EXPECT_EQ(read.service_gpus, greedy.service_gpus) << "seed " << seed;
  }
}

TEST(PatternModel, OverlappingPlacementsAreInfeasible) {
  const Scenario s = ScenarioBuilder("overlap")
                         .Steps(4)
                         .Group("g", 1, 4)
                         .Job(MakeJob("a").Gpus(4).Duration(2))
                         .Job(MakeJob("b").Gpus(2).Duration(2))
                         .Service(MakeService("svc").Demand({1, 1, 1, 1}).Min(1))
                         .Build();
  ASSERT_TRUE(ValidateScenario(s).has_value());
  const PatternModel model(s, WholeProblem(s), BatchOccupancy(s, nullptr), 0);
  Decisions d = EmptyDecisions(s);
  d.service_gpus[0][0] = {1, 1, 1, 1};
  d.jobs[1] = Placement{0, 0, 0};  // b on GPUs 0-1 at steps 0-1
  EXPECT_TRUE(model.milp().IsFeasible(model.ToColumns(d)));
  d.jobs[0] = Placement{0, 1, 0};  // a on all four GPUs at steps 1-2: clashes with b at step 1
  EXPECT_FALSE(model.milp().IsFeasible(model.ToColumns(d)));
  d.jobs[0] = Placement{0, 2, 0};  // after b, but the service needs one GPU at steps 2-3
  EXPECT_FALSE(model.milp().IsFeasible(model.ToColumns(d)));
  d.service_gpus[0][0] = {1, 1, 0, 0};  // below min_gpus
  EXPECT_FALSE(model.milp().IsFeasible(model.ToColumns(d)));
}

TEST(PatternModel, ChurnLimitIsARow) {
  const Scenario s = ScenarioBuilder("churn")
                         .Steps(3)
                         .Group("g", 1, 8)
                         .Service(MakeService("svc").Demand({1, 5, 1}).Churn(2).Current(1))
                         .Build();
  ASSERT_TRUE(ValidateScenario(s).has_value());
  const PatternModel model(s, WholeProblem(s), BatchOccupancy(s, nullptr), 0);
  Decisions d = EmptyDecisions(s);
  d.service_gpus[0][0] = {2, 4, 2};
  EXPECT_TRUE(model.milp().IsFeasible(model.ToColumns(d)));
  d.service_gpus[0][0] = {1, 4, 2};  // +3 in one step
  EXPECT_FALSE(model.milp().IsFeasible(model.ToColumns(d)));
  d.service_gpus[0][0] = {4, 4, 4};  // +3 from current_gpus into step 0
  EXPECT_FALSE(model.milp().IsFeasible(model.ToColumns(d)));
}

TEST(GreedyDecisions, LegalOnRandomScenarios) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Scenario s = RandomScenario(seed);
    const Plan plan = Realize(s, GreedyDecisions(s), "greedy");
    ExpectLegal(s, plan, seed);
  }
}

TEST(Bounds, TrivialAndLpBoundTheOptimum) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Scenario s = testing::TinyScenario(seed);
    const double optimum = testing::BruteForceOptimum(s);
    EXPECT_GE(TrivialBound(s), optimum - 1e-6) << "seed " << seed;
    auto backend = solver::MakeMilpBackend("cbc");
    if (!backend) continue;  // built without CBC
    auto lp = LpBound(s, **backend, 10);
    ASSERT_TRUE(lp.has_value());
    EXPECT_GE(*lp, optimum - 1e-6) << "seed " << seed;
    EXPECT_LE(*lp, TrivialBound(s) + 1e-6) << "seed " << seed;
  }
}

#if defined(ORDO_WITH_CBC)

TEST(ImproveByLns, NeverWorseLegalAndDeterministicForASeed) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const Scenario s = RandomScenario(seed, testing::RandomScenarioOptions{.contended = true});
    const Decisions start = GreedyDecisions(s);
    auto backend = solver::MakeMilpBackend("cbc");
    ASSERT_TRUE(backend.has_value());
    LnsOptions options;
    options.seed = seed;
    options.max_iterations = 3;
    options.target_columns = 300;
    options.nodes_per_solve = 20;
    options.seconds_per_solve = 1000;  // only the node limit: the same work on any machine
    LnsStats first_stats, second_stats;
    const Decisions first = ImproveByLns(s, start, **backend, options, &first_stats);
    const Decisions second = ImproveByLns(s, start, **backend, options, &second_stats);
    EXPECT_EQ(first_stats.iterations, 3);
    EXPECT_GE(first_stats.objective, DecisionsObjective(s, start) - 1e-9) << "seed " << seed;
    EXPECT_NEAR(first_stats.objective, DecisionsObjective(s, first), 1e-6);
    ExpectLegal(s, Realize(s, first, "lns"), seed);
    EXPECT_EQ(first.jobs, second.jobs) << "seed " << seed;
    EXPECT_EQ(first.service_gpus, second.service_gpus) << "seed " << seed;
  }
}

TEST(ImproveByLns, ImprovesAPoorStart) {
  // From an empty plan (no job started, services at their floors), any neighbourhood with a job
  // in it improves.
  const Scenario s = RandomScenario(3, testing::RandomScenarioOptions{.contended = true});
  Decisions start = EmptyDecisions(s);
  start.service_gpus = GreedyServiceCounts(s, BatchOccupancy(s, nullptr));
  auto backend = solver::MakeMilpBackend("cbc");
  ASSERT_TRUE(backend.has_value());
  LnsOptions options;
  options.max_iterations = 4;
  options.target_columns = 300;
  options.seconds_per_solve = 1000;
  options.nodes_per_solve = 20;
  LnsStats stats;
  const Decisions better = ImproveByLns(s, start, **backend, options, &stats);
  EXPECT_GT(stats.improvements, 0);
  EXPECT_GT(DecisionsObjective(s, better), DecisionsObjective(s, start));
  ExpectLegal(s, Realize(s, better, "lns"));
}

#endif

}  // namespace
}  // namespace ordo::policy::full
