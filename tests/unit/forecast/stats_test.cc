#include "ordo/forecast/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ordo/forecast/correction_model.h"

namespace ordo::forecast {
namespace {

TEST(Quantile, InterpolatesBetweenOrderStatistics) {
  const std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(Quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(Quantile(v, 1), 5);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.25), 2);
  EXPECT_TRUE(std::isnan(Quantile(std::vector<double>{}, 0.5)));
}

TEST(WeightedQuantile, HeavierValuesPullTheQuantile) {
  const std::vector<double> v = {1, 2, 3};
  EXPECT_DOUBLE_EQ(WeightedQuantile(v, std::vector<double>{1, 1, 1}, 0.5), 2);
  EXPECT_GT(WeightedQuantile(v, std::vector<double>{1, 1, 10}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(WeightedQuantile(v, std::vector<double>{0, 1, 0}, 0.9), 2);
  EXPECT_TRUE(std::isnan(WeightedQuantile(v, std::vector<double>{0, 0, 0}, 0.5)));
}

TEST(Pinball, PenalisesEachSideByItsQuantile) {
  EXPECT_DOUBLE_EQ(Pinball(10, 8, 0.9), 0.9 * 2);
  EXPECT_DOUBLE_EQ(Pinball(10, 12, 0.9), 0.1 * 2);
  EXPECT_DOUBLE_EQ(Pinball(10, 10, 0.5), 0);
}

TEST(FitRidge, RecoversALineAndItsLeverage) {
  // y = 1 + 2x, no noise, no penalty: exact, and leave-one-out residuals are 0.
  std::vector<double> x, y, w;
  for (int i = 0; i < 10; ++i) {
    x.insert(x.end(), {1.0, static_cast<double>(i)});
    y.push_back(1 + 2.0 * i);
    w.push_back(1);
  }
  const RidgeFit fit = FitRidge(x, y, w, std::vector<double>{0, 0});
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.beta[0], 1, 1e-6);
  EXPECT_NEAR(fit.beta[1], 2, 1e-6);
  double sum_h = 0;
  for (double h : fit.leverage) sum_h += h;
  EXPECT_NEAR(sum_h, 2, 1e-6);  // trace of the hat matrix = number of columns
  // A big penalty shrinks the slope towards 0.
  EXPECT_LT(FitRidge(x, y, w, std::vector<double>{0, 1e6}).beta[1], 0.1);
}

TEST(CorrectionModel, ShrinksSmallGroupsAndWidensForTheUnseen) {
  std::vector<CorrectionSample> s;
  for (int i = 0; i < 200; ++i) {
    CorrectionSample c;
    c.x = {static_cast<double>(i % 3)};
    const bool big = i < 190;
    c.key1 = big ? "big" : "small";
    c.key2 = c.key1 + (i % 2 ? "a" : "b");
    c.y = (big ? 0.5 : 2.0) + 0.1 * ((i * 7) % 5 - 2);
    s.push_back(c);
  }
  CorrectionModel m;
  m.Fit(s);
  const auto big = m.Predict({1}, "big", "biga");
  const auto small = m.Predict({1}, "small", "smalla");
  const auto unseen = m.Predict({1}, "other", "othera");
  EXPECT_EQ(big.seen, 2);
  EXPECT_EQ(unseen.seen, 0);
  EXPECT_NEAR(big.q[1], 0.5, 0.1);
  EXPECT_GT(small.q[1], 1.0);  // ten samples move it most of the way...
  EXPECT_LT(small.q[1], 2.0);  // ...but not all
  EXPECT_GT(unseen.q[2] - unseen.q[0], big.q[2] - big.q[0]);
}

}  // namespace
}  // namespace ordo::forecast
