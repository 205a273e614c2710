#include "ordo/policy/fast/churn_dp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

namespace ordo::policy::fast {
namespace {

// A pair's gain as the planner's is built: each service earns its weight per unit of demand
// served and pays a small cost per GPU held.
struct PairGains {
  std::vector<int> demand_i, demand_j;
  double weight_i = 1, weight_j = 1, held = 0.01;

  [[nodiscard]] double I(int t, int a) const {
    return weight_i * std::min(a, demand_i[t]) - held * a;
  }
  [[nodiscard]] double J(int t, int b) const {
    return weight_j * std::min(b, demand_j[t]) - held * b;
  }
  // Each term as the callable PairStepBound takes, and their sum as BestPairCurves takes it.
  [[nodiscard]] auto GainI() const {
    return [this](int t, int a) { return I(t, a); };
  }
  [[nodiscard]] auto GainJ() const {
    return [this](int t, int b) { return J(t, b); };
  }
  [[nodiscard]] auto Gain() const {
    return [this](int t, int a, int b) { return I(t, a) + J(t, b); };
  }
};

// Bounds whose tops are the highest of each service's ceilings, with one churn limit for both.
PairBounds MakeBounds(std::vector<int> lo_i, std::vector<int> hi_i, std::vector<int> lo_j,
                      std::vector<int> hi_j, std::vector<int> room, int churn) {
  PairBounds bounds;
  bounds.top_i = *std::max_element(hi_i.begin(), hi_i.end());
  bounds.top_j = *std::max_element(hi_j.begin(), hi_j.end());
  bounds.lo_i = std::move(lo_i);
  bounds.hi_i = std::move(hi_i);
  bounds.lo_j = std::move(lo_j);
  bounds.hi_j = std::move(hi_j);
  bounds.room = std::move(room);
  bounds.churn_i = bounds.churn_j = churn;
  return bounds;
}

// Every pair of curves within the bounds, by enumeration: the most they earn, or kNone when no
// curve meets every bound.
double BruteForce(const PairBounds& bounds, int horizon, const PairGains& g) {
  double best = kNone;
  auto walk = [&](auto& self, int t, int prev_a, int prev_b, double sum) -> void {
    if (t == horizon) {
      best = std::max(best, sum);
      return;
    }
    for (int a = bounds.lo_i[t]; a <= bounds.hi_i[t]; ++a) {
      for (int b = bounds.lo_j[t]; b <= bounds.hi_j[t]; ++b) {
        if (a + b > bounds.room[t]) continue;
        if (t > 0 &&
            (std::abs(a - prev_a) > bounds.churn_i || std::abs(b - prev_b) > bounds.churn_j)) {
          continue;
        }
        self(self, t + 1, a, b, sum + g.I(t, a) + g.J(t, b));
      }
    }
  };
  walk(walk, 0, 0, 0, 0.0);
  return best;
}

// Two steps, no churn limit that binds, no holding cost: at step 0 the room of 3 serves i's
// demand of 2 first (weight 2), and j's with the one GPU left; at step 1 i has no demand but a
// floor of 1, which leaves j 2 of the 3 GPUs it asks for.
TEST(PairStepBoundTest, SumsEachStepsBestPairWithinTheRoom) {
  const PairBounds bounds = MakeBounds({0, 1}, {3, 3}, {0, 0}, {3, 3}, {3, 3}, 3);
  const PairGains g{{2, 0}, {2, 3}, 2.0, 1.0, 0.0};
  // Step 0: a = 2 earns 4, b = 1 earns 1. Step 1: a = 1 (its floor) earns 0, b = 2 earns 2.
  const std::optional<double> bound = PairStepBound(bounds, 2, g.GainI(), g.GainJ());
  ASSERT_TRUE(bound.has_value());
  EXPECT_DOUBLE_EQ(*bound, 7.0);
}

TEST(PairStepBoundTest, IsEmptyWhereTheFloorsDoNotFitTheRoom) {
  // Step 1: floors of 2 + 2 in a room of 3.
  const PairBounds bounds = MakeBounds({1, 2}, {2, 2}, {1, 2}, {2, 2}, {4, 3}, 2);
  const PairGains g{{1, 1}, {1, 1}};
  EXPECT_FALSE(PairStepBound(bounds, 2, g.GainI(), g.GainJ()).has_value());
  EXPECT_FALSE(BestPairCurves(bounds, 2, g.Gain()).has_value());
}

// On random small bounds, against enumeration: the program finds the best pair of curves, and the
// bound is never below it (so a pair the bound rules out never had a better pair of curves), and
// is empty only where the program finds none.
TEST(PairStepBoundTest, NeverBelowTheBestPairOfCurvesOnRandomBounds) {
  std::mt19937 rng(7);
  auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int tighter = 0, empty = 0;
  for (int instance = 0; instance < 400; ++instance) {
    const int horizon = draw(1, 4);
    PairBounds bounds;
    bounds.top_i = draw(0, 3);
    bounds.top_j = draw(0, 3);
    bounds.churn_i = draw(0, 3);
    bounds.churn_j = draw(0, 3);
    PairGains g;
    g.weight_i = draw(1, 4);
    g.weight_j = draw(1, 4);
    for (int t = 0; t < horizon; ++t) {
      bounds.lo_i.push_back(draw(0, bounds.top_i));
      bounds.hi_i.push_back(draw(bounds.lo_i[t], bounds.top_i));
      bounds.lo_j.push_back(draw(0, bounds.top_j));
      bounds.hi_j.push_back(draw(bounds.lo_j[t], bounds.top_j));
      bounds.room.push_back(draw(0, bounds.top_i + bounds.top_j));
      g.demand_i.push_back(draw(0, 4));
      g.demand_j.push_back(draw(0, 4));
    }
    const double exact = BruteForce(bounds, horizon, g);
    const std::optional<PairCurves> curves = BestPairCurves(bounds, horizon, g.Gain());
    const std::optional<double> bound = PairStepBound(bounds, horizon, g.GainI(), g.GainJ());
    ASSERT_EQ(curves.has_value(), exact != kNone) << "instance " << instance;
    if (!bound) {
      ASSERT_FALSE(curves.has_value()) << "instance " << instance;
      ++empty;
      continue;
    }
    if (!curves) continue;  // the churn limits, not the room, leave no curves
    EXPECT_NEAR(curves->value, exact, 1e-9) << "instance " << instance;
    EXPECT_GE(*bound, curves->value) << "instance " << instance;
    if (*bound < exact + 1.0) ++tighter;
  }
  // The instances exercise both sides: steps with no room for the floors, and bounds close to
  // the best curves.
  EXPECT_GT(empty, 20);
  EXPECT_GT(tighter, 100);
}

}  // namespace
}  // namespace ordo::policy::fast
