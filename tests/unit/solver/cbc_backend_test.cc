// CBC adapter: status and objective on small instances whose answer is known (brute force), the
// MIP start, the limits and the stop flag, the LP relaxation, the status mapping table, and that
// nothing reaches standard output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ordo/solver/milp_backend.h"

#if defined(ORDO_WITH_CBC)
#include "ordo/solver/cbc/cbc_backend.h"
#endif

namespace ordo::solver {
namespace {

TEST(MakeMilpBackend, UnknownNameIsNotFound) {
  auto backend = MakeMilpBackend("gurobi");
  ASSERT_FALSE(backend.has_value());
  EXPECT_EQ(backend.error().code, ErrorCode::kNotFound);
}

TEST(RelativeGap, IsRelativeToTheBound) {
  EXPECT_DOUBLE_EQ(RelativeGap(90, 100), 0.1);
  EXPECT_DOUBLE_EQ(RelativeGap(0.5, 0.75), 0.25);  // |bound| < 1: absolute
  EXPECT_EQ(RelativeGap(NAN, 100), kInfinity);
  EXPECT_EQ(RelativeGap(1, kInfinity), kInfinity);
}

#if defined(ORDO_WITH_CBC)

TEST(MapCbcStatus, EveryOutcome) {
  struct Case {
    CbcOutcome outcome;
    ModelStatus expected;
  };
  const Case cases[] = {
      {{0, 0, false, false, true}, ModelStatus::kOptimal},
      {{0, 1, true, false, false}, ModelStatus::kInfeasible},
      {{0, 1, true, false, false, true}, ModelStatus::kOptimal},  // nothing beats the start
      {{1, 4, false, false, false, true}, ModelStatus::kFeasibleAtLimit},
      {{5, 5, false, false, false, true}, ModelStatus::kFeasibleAtLimit},
      {{1, 1, true, false, false, true}, ModelStatus::kOptimal},
      {{2, -1, false, false, false, true}, ModelStatus::kError},
      {{0, 0, false, false, false}, ModelStatus::kInfeasible},
      {{1, 4, false, false, true}, ModelStatus::kFeasibleAtLimit},
      {{1, 4, false, false, false}, ModelStatus::kNoSolutionAtLimit},
      {{1, 3, false, false, true}, ModelStatus::kFeasibleAtLimit},
      {{1, 3, false, false, false}, ModelStatus::kNoSolutionAtLimit},
      {{1, 2, false, false, true}, ModelStatus::kOptimal},  // requested gap reached
      {{1, 6, false, false, true}, ModelStatus::kFeasibleAtLimit},
      {{1, 8, false, false, false}, ModelStatus::kNoSolutionAtLimit},
      {{1, 1, true, false, false}, ModelStatus::kInfeasible},
      {{5, 5, false, false, true}, ModelStatus::kFeasibleAtLimit},
      {{5, 5, false, false, false}, ModelStatus::kNoSolutionAtLimit},
      {{0, 7, false, true, false}, ModelStatus::kUnbounded},
      {{1, 7, false, false, false}, ModelStatus::kUnbounded},
      {{2, -1, false, false, true}, ModelStatus::kError},
      {{2, -1, false, false, false}, ModelStatus::kError},
      {{-1, -1, false, false, false}, ModelStatus::kError},
      {{42, 0, false, false, true}, ModelStatus::kError},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MapCbcStatus(c.outcome), c.expected)
        << "status " << c.outcome.status << " secondary " << c.outcome.secondary_status
        << " has_solution " << c.outcome.has_solution;
  }
}

TEST(MapClpStatus, EveryOutcome) {
  EXPECT_EQ(MapClpStatus({true, false, false, false, false}), ModelStatus::kOptimal);
  EXPECT_EQ(MapClpStatus({false, true, false, false, false}), ModelStatus::kInfeasible);
  EXPECT_EQ(MapClpStatus({false, false, true, false, false}), ModelStatus::kUnbounded);
  EXPECT_EQ(MapClpStatus({false, false, false, true, false}), ModelStatus::kNoSolutionAtLimit);
  EXPECT_EQ(MapClpStatus({false, false, false, false, true}), ModelStatus::kError);
  EXPECT_EQ(MapClpStatus({}), ModelStatus::kError);
}

/// A random two-row 0/1 knapsack and its optimum by enumeration.
struct Knapsack {
  MilpModel model{Sense::kMaximize};
  double optimum = 0;
};

Knapsack RandomKnapsack(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(1, 40), weight(1, 20);
  std::vector<double> v(n), w1(n), w2(n);
  Knapsack k;
  std::vector<Term> row1, row2;
  for (int i = 0; i < n; ++i) {
    v[i] = value(rng);
    w1[i] = weight(rng);
    w2[i] = weight(rng);
    k.model.AddBinary(v[i]);
    row1.push_back({i, w1[i]});
    row2.push_back({i, w2[i]});
  }
  const double cap1 = 3.0 * n, cap2 = 2.5 * n;
  k.model.AddRow(-kInfinity, cap1, row1);
  k.model.AddRow(-kInfinity, cap2, row2);
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    double a = 0, b = 0, val = 0;
    for (int i = 0; i < n; ++i) {
      if ((mask >> i) & 1u) {
        a += w1[i];
        b += w2[i];
        val += v[i];
      }
    }
    if (a <= cap1 && b <= cap2) k.optimum = std::max(k.optimum, val);
  }
  return k;
}

TEST(CbcBackend, KnapsacksReachTheBruteForceOptimum) {
  CbcBackend cbc;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    Knapsack k = RandomKnapsack(seed, 14);
    k.model.set_objective_offset(seed);  // the offset is carried into objective and bound
    auto result = cbc.Solve(k.model, SolveParams{});
    ASSERT_TRUE(result.has_value()) << result.error().ToString();
    ASSERT_EQ(result->status, ModelStatus::kOptimal) << "seed " << seed;
    EXPECT_NEAR(result->objective, k.optimum + seed, 1e-6) << "seed " << seed;
    EXPECT_NEAR(result->best_bound, k.optimum + seed, 1e-6) << "seed " << seed;
    EXPECT_LE(result->gap, 1e-9);
    EXPECT_TRUE(k.model.IsFeasible(result->solution));
  }
}

TEST(CbcBackend, MinimisationKeepsItsSense) {
  // min 3x + 2y  s.t.  x + y >= 1.5, x, y integer in [0, 3]: optimum 4 at (0, 2).
  MilpModel m(Sense::kMinimize);
  const int x = m.AddVariable(0, 3, 3, true);
  const int y = m.AddVariable(0, 3, 2, true);
  m.AddRow(1.5, kInfinity, {{x, 1}, {y, 1}});
  CbcBackend cbc;
  auto result = cbc.Solve(m, SolveParams{});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, ModelStatus::kOptimal);
  EXPECT_NEAR(result->objective, 4, 1e-9);
  EXPECT_NEAR(result->best_bound, 4, 1e-6);
  EXPECT_NEAR(result->solution[x], 0, 1e-9);
  EXPECT_NEAR(result->solution[y], 2, 1e-9);
}

TEST(CbcBackend, LpInfeasibleModelIsInfeasible) {
  MilpModel m;
  const int x = m.AddBinary(1);
  const int y = m.AddBinary(1);
  m.AddRow(3, kInfinity, {{x, 1}, {y, 1}});
  CbcBackend cbc;
  auto result = cbc.Solve(m, SolveParams{});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, ModelStatus::kInfeasible);
  EXPECT_TRUE(result->solution.empty());
}

TEST(CbcBackend, IntegerInfeasibleModelIsInfeasible) {
  // 2x + 2y = 3 has LP solutions but no integer one.
  MilpModel m;
  const int x = m.AddBinary(1);
  const int y = m.AddBinary(1);
  m.AddRow(3, 3, {{x, 2}, {y, 2}});
  CbcBackend cbc;
  auto result = cbc.Solve(m, SolveParams{});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, ModelStatus::kInfeasible);
}

TEST(CbcBackend, UnboundedModelIsUnbounded) {
  MilpModel m(Sense::kMaximize);
  const int x = m.AddVariable(0, kInfinity, 1, true);
  const int y = m.AddVariable(0, kInfinity, 1, false);
  m.AddRow(-kInfinity, 4, {{x, 1}, {y, -1}});
  CbcBackend cbc;
  auto result = cbc.Solve(m, SolveParams{});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, ModelStatus::kUnbounded);
}

TEST(CbcBackend, InvalidModelIsAnInputError) {
  MilpModel m;
  m.AddVariable(1, 0, 1, true);
  CbcBackend cbc;
  auto result = cbc.Solve(m, SolveParams{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidInput);
  EXPECT_EQ(result.error().field, "variables[0].lower");
}

TEST(CbcBackend, MipStartOfTheWrongSizeIsAnInputError) {
  Knapsack k = RandomKnapsack(3, 6);
  SolveParams params;
  params.mip_start = {1, 0};
  CbcBackend cbc;
  auto result = cbc.Solve(k.model, params);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().field, "mip_start");
}

TEST(CbcBackend, ZeroTimeWithoutStartHasNoSolution) {
  Knapsack k = RandomKnapsack(5, 14);
  SolveParams params;
  params.time_limit_s = 0;
  CbcBackend cbc;
  auto result = cbc.Solve(k.model, params);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, ModelStatus::kNoSolutionAtLimit);
  EXPECT_TRUE(result->solution.empty());
}

TEST(CbcBackend, ZeroTimeWithStartReturnsTheStart) {
  Knapsack k = RandomKnapsack(5, 14);
  SolveParams params;
  params.time_limit_s = 0;
  params.mip_start.assign(14, 0.0);
  params.mip_start[2] = 1;  // one item always fits
  CbcBackend cbc;
  auto result = cbc.Solve(k.model, params);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->mip_start_accepted);
  EXPECT_EQ(result->status, ModelStatus::kFeasibleAtLimit);
  EXPECT_EQ(result->solution, params.mip_start);
  EXPECT_NEAR(result->objective, k.model.ObjectiveValue(params.mip_start), 1e-9);
  // The root LP (solved before the deadline is looked at) is the only bound proven.
  EXPECT_GE(result->best_bound, k.optimum - 1e-6);
}

TEST(CbcBackend, RaisedStopFlagStopsWithTheStart) {
  Knapsack k = RandomKnapsack(6, 14);
  const std::atomic<bool> stop{true};
  SolveParams params;
  params.stop = &stop;
  params.mip_start.assign(14, 0.0);
  CbcBackend cbc;
  auto result = cbc.Solve(k.model, params);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, ModelStatus::kFeasibleAtLimit);
  EXPECT_NEAR(result->objective, 0, 1e-9);
}

TEST(CbcBackend, InfeasibleStartIsIgnored) {
  Knapsack k = RandomKnapsack(7, 12);
  SolveParams params;
  params.mip_start.assign(12, 1.0);  // everything: over both capacities
  CbcBackend cbc;
  auto result = cbc.Solve(k.model, params);
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(result->mip_start_accepted);
  EXPECT_EQ(result->status, ModelStatus::kOptimal);
  EXPECT_NEAR(result->objective, k.optimum, 1e-6);
}

TEST(CbcBackend, OptimalStartStaysOptimal) {
  Knapsack k = RandomKnapsack(8, 12);
  CbcBackend cbc;
  auto first = cbc.Solve(k.model, SolveParams{});
  ASSERT_TRUE(first.has_value());
  SolveParams params;
  params.mip_start = first->solution;
  auto second = cbc.Solve(k.model, params);
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->mip_start_accepted);
  EXPECT_EQ(second->status, ModelStatus::kOptimal);
  EXPECT_NEAR(second->objective, k.optimum, 1e-6);
}

TEST(CbcBackend, KnownBoundProvesAStartThatReachesIt) {
  // No time to search: the start alone, proven optimal by a bound known from elsewhere.
  for (const Sense sense : {Sense::kMaximize, Sense::kMinimize}) {
    Knapsack k = RandomKnapsack(8, 12);
    CbcBackend cbc;
    auto first = cbc.Solve(k.model, SolveParams{});
    ASSERT_TRUE(first.has_value());
    MilpModel model = k.model;
    if (sense == Sense::kMinimize) {
      // The same knapsack as minimise -value: the known bound is -optimum.
      model = MilpModel(Sense::kMinimize);
      for (int j = 0; j < k.model.num_variables(); ++j) model.AddBinary(-k.model.objective()[j]);
      for (int r = 0; r < k.model.num_rows(); ++r) {
        std::vector<Term> terms;
        for (int64_t i = k.model.row_start()[r]; i < k.model.row_start()[r + 1]; ++i) {
          terms.push_back({k.model.row_index()[i], k.model.row_value()[i]});
        }
        model.AddRow(k.model.row_lower()[r], k.model.row_upper()[r], terms);
      }
    }
    const double optimum = sense == Sense::kMaximize ? k.optimum : -k.optimum;
    SolveParams params;
    params.time_limit_s = 0;
    params.mip_start = first->solution;
    auto without = cbc.Solve(model, params);
    ASSERT_TRUE(without.has_value());
    EXPECT_EQ(without->status, ModelStatus::kFeasibleAtLimit);  // the root LP is no proof
    params.known_bound = optimum;
    auto with = cbc.Solve(model, params);
    ASSERT_TRUE(with.has_value());
    EXPECT_EQ(with->status, ModelStatus::kOptimal);
    EXPECT_NEAR(with->objective, optimum, 1e-6);
    EXPECT_NEAR(with->best_bound, optimum, 1e-6);
    EXPECT_LE(with->gap, 1e-9);
    // With time, the search is skipped altogether: the start already reaches the bound.
    params.time_limit_s = kInfinity;
    auto skipped = cbc.Solve(model, params);
    ASSERT_TRUE(skipped.has_value());
    EXPECT_EQ(skipped->status, ModelStatus::kOptimal);
    EXPECT_EQ(skipped->nodes, 0);
  }
}

TEST(CbcBackend, KnownBoundTightensTheReportedBoundOnly) {
  Knapsack k = RandomKnapsack(9, 14);
  CbcBackend cbc;
  SolveParams params;
  params.mip_start.assign(14, 0.0);
  // Looser than what CBC proves: CBC's bound stays.
  params.known_bound = 1e6;
  auto loose = cbc.Solve(k.model, params);
  ASSERT_TRUE(loose.has_value());
  EXPECT_EQ(loose->status, ModelStatus::kOptimal);
  EXPECT_NEAR(loose->best_bound, k.optimum, 1e-6);
  // No time: tighter than anything CBC proved, not reached by the start (0): the bound, still no
  // proof.
  params.time_limit_s = 0;
  params.known_bound = k.optimum;
  auto tight = cbc.Solve(k.model, params);
  ASSERT_TRUE(tight.has_value());
  EXPECT_NEAR(tight->best_bound, k.optimum, 1e-9);
  EXPECT_EQ(tight->status, ModelStatus::kFeasibleAtLimit);
  EXPECT_NEAR(tight->gap, RelativeGap(0, k.optimum), 1e-12);
  // Without any solution the bound is still reported.
  params.mip_start.clear();
  auto none = cbc.Solve(k.model, params);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->status, ModelStatus::kNoSolutionAtLimit);
  EXPECT_NEAR(none->best_bound, k.optimum, 1e-9);
  // Searching with it, CBC still finds the optimum and proves it.
  params.time_limit_s = kInfinity;
  auto searched = cbc.Solve(k.model, params);
  ASSERT_TRUE(searched.has_value());
  EXPECT_EQ(searched->status, ModelStatus::kOptimal);
  EXPECT_NEAR(searched->objective, k.optimum, 1e-6);
}

TEST(CbcBackend, ModelWithoutIntegersIsItsLp) {
  // max x + y  s.t.  2x + 2y <= 3, continuous: 1.5; and the empty model: its offset.
  MilpModel m(Sense::kMaximize);
  m.AddVariable(0, 1, 1, false);
  m.AddVariable(0, 1, 1, false);
  m.AddRow(-kInfinity, 3, {{0, 2.0}, {1, 2.0}});
  CbcBackend cbc;
  auto result = cbc.Solve(m, SolveParams{});
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, ModelStatus::kOptimal);
  EXPECT_NEAR(result->objective, 1.5, 1e-9);
  EXPECT_NEAR(result->best_bound, 1.5, 1e-9);
  MilpModel empty(Sense::kMaximize);
  empty.set_objective_offset(7);
  auto none = cbc.Solve(empty, SolveParams{});
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->status, ModelStatus::kOptimal);
  EXPECT_NEAR(none->objective, 7, 1e-9);
  EXPECT_TRUE(none->solution.empty());
}

TEST(CbcBackend, LpRelaxationGivesTheFractionalOptimum) {
  // max x + y  s.t.  2x + 2y <= 3: the LP reaches 1.5, the integers only 1.
  MilpModel m(Sense::kMaximize);
  const int x = m.AddBinary(1);
  const int y = m.AddBinary(1);
  m.AddRow(-kInfinity, 3, {{x, 2}, {y, 2}});
  m.set_objective_offset(10);
  CbcBackend cbc;
  auto lp = cbc.SolveLpRelaxation(m, SolveParams{});
  ASSERT_TRUE(lp.has_value());
  EXPECT_EQ(lp->status, ModelStatus::kOptimal);
  EXPECT_NEAR(lp->objective, 11.5, 1e-9);
  EXPECT_NEAR(lp->best_bound, 11.5, 1e-9);
  auto mip = cbc.Solve(m, SolveParams{});
  ASSERT_TRUE(mip.has_value());
  EXPECT_EQ(mip->status, ModelStatus::kOptimal);
  EXPECT_NEAR(mip->objective, 11, 1e-9);
  // Proven optimal: the bound is the optimum, not the looser root LP.
  EXPECT_NEAR(mip->best_bound, 11, 1e-6);
  EXPECT_LE(mip->gap, 1e-6);
  SolveParams from_optimum;
  from_optimum.mip_start = mip->solution;
  auto again = cbc.Solve(m, from_optimum);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, ModelStatus::kOptimal);
  EXPECT_NEAR(again->best_bound, 11, 1e-6);
}

TEST(CbcBackend, LpRelaxationStatuses) {
  CbcBackend cbc;
  MilpModel infeasible;
  const int x = infeasible.AddBinary(1);
  infeasible.AddRow(2, kInfinity, {{x, 1}});
  auto a = cbc.SolveLpRelaxation(infeasible, SolveParams{});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, ModelStatus::kInfeasible);

  MilpModel unbounded(Sense::kMaximize);
  unbounded.AddVariable(0, kInfinity, 1, false);
  auto b = cbc.SolveLpRelaxation(unbounded, SolveParams{});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->status, ModelStatus::kUnbounded);
}

/// Runs fn with file descriptor 1 redirected to a temporary file; returns what reached it.
template <typename Fn>
std::string CaptureStdout(Fn&& fn) {
  std::fflush(stdout);
  FILE* sink = std::tmpfile();
  const int saved = dup(1);
  dup2(fileno(sink), 1);
  fn();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::string text;
  std::rewind(sink);
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, sink)) > 0) text.append(buffer, n);
  std::fclose(sink);
  return text;
}

TEST(CbcBackend, NeverPrintsToStandardOutput) {
  CbcBackend cbc;
  std::string log;
  const std::string printed = CaptureStdout([&] {
    Knapsack k = RandomKnapsack(11, 16);
    SolveParams params;
    params.log_level = 3;  // verbose: every message must still go to the log, not stdout
    auto result = cbc.Solve(k.model, params);
    ASSERT_TRUE(result.has_value());
    log = result->log;
    auto lp = cbc.SolveLpRelaxation(k.model, params);
    ASSERT_TRUE(lp.has_value());
    log += lp->log;
  });
  EXPECT_EQ(printed, "");
  EXPECT_NE(log, "");  // the messages were captured instead
}

#else

TEST(MakeMilpBackend, CbcIsUnavailableWithoutCbc) {
  auto backend = MakeMilpBackend("cbc");
  ASSERT_FALSE(backend.has_value());
  EXPECT_EQ(backend.error().code, ErrorCode::kUnavailable);
}

#endif

}  // namespace
}  // namespace ordo::solver
