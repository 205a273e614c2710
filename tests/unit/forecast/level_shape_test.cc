#include "ordo/forecast/level_shape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ordo/forecast/demand_forecaster.h"

namespace ordo::forecast {
namespace {

constexpr int64_t kMondayHour = 96;  // 1970-01-05 00:00 UTC
constexpr double kPi = 3.14159265358979;

// A daily cycle (peak 14:00) with quieter weekends (when `weekend`): mean about 1 over a week.
double Shape(int hour, bool weekend = true) {
  const int hod = hour % 24;
  const int dow = (hour / 24) % 7;
  const double week = weekend ? (dow >= 5 ? 0.7 : 1.1) : 1.0;
  return (1.0 + 0.5 * std::cos(2 * kPi * (hod - 14) / 24.0)) * week;
}

// `days` of hourly rates: 100 x shape x (1 + weekly_growth)^(weeks) x noise.
std::vector<RatePoint> Series(int days, double weekly_growth, double noise, unsigned seed,
                              bool weekend = true) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, noise);
  std::vector<RatePoint> out;
  for (int h = 0; h < days * 24; ++h) {
    const double level = 100 * std::pow(1 + weekly_growth, h / 168.0);
    out.push_back({(kMondayHour + h) * 3600.0, level * Shape(h, weekend) * std::exp(n(rng))});
  }
  return out;
}

DemandForecaster LevelShape() {
  DemandOptions o;
  o.method = DemandMethod::kLevelShape;
  return DemandForecaster(o);
}

double MeanP50(const DemandForecaster& f, int first_hour, int hours) {
  double s = 0;
  for (int h = first_hour; h < first_hour + hours; ++h) {
    s += f.Predict((kMondayHour + h) * 3600.0)->p50;
  }
  return s / hours;
}

TEST(LevelShapeForecaster, GrowthOfThirtyPercentAWeekIsForecastAboveLastWeek) {
  // Under three weeks of a young service growing 30% a week: next week must be forecast above
  // last week's level (and near the true one), not pulled down towards the quieter first weeks.
  for (int days : {10, 14, 20}) {
    const auto pts = Series(days, 0.3, 0.05, 3);
    DemandForecaster f = LevelShape();
    ASSERT_TRUE(f.Fit(pts).has_value());
    double last_week = 0;
    for (int i = days * 24 - 168; i < days * 24; ++i) last_week += pts[i].rate / 168;
    double truth = 0;
    for (int h = days * 24; h < days * 24 + 168; ++h) {
      truth += 100 * std::pow(1.3, h / 168.0) * Shape(h) / 168;
    }
    const double forecast = MeanP50(f, days * 24, 168);
    EXPECT_GT(forecast, 1.15 * last_week) << days << " days of history";
    EXPECT_NEAR(forecast, truth, 0.12 * truth) << days << " days of history";
    // From two weeks on the daily levels carry the trend's evidence past the weekday effect.
    if (days >= 14) EXPECT_GT(f.level_shape().slope_per_day, 0.02) << days << " days of history";
  }
}

// Traffic whose deviations from its shape persist (log AR(1), 0.9 an hour), as real traffic off
// its profile does, then a surge in the last three hours: the next hours are forecast up with it,
// the day after barely. Without persistence in the history (white noise), a surge is not carried.
TEST(LevelShapeForecaster, ASurgeInTheLastHoursCarriesIntoTheNextOnes) {
  for (const bool persistent : {true, false}) {
    std::mt19937 rng(5);
    std::normal_distribution<double> n(0, 1);
    std::vector<RatePoint> pts;
    double x = 0;
    const int hours = 14 * 24;
    for (int h = 0; h < hours; ++h) {
      x = persistent ? 0.9 * x + std::sqrt(1 - 0.81) * 0.1 * n(rng) : 0.1 * n(rng);
      pts.push_back({(kMondayHour + h) * 3600.0, 100 * Shape(h) * std::exp(x)});
    }
    std::vector<RatePoint> surged = pts;
    for (int h = hours - 3; h < hours; ++h) surged[static_cast<std::size_t>(h)].rate *= 2;
    DemandForecaster calm = LevelShape();
    DemandForecaster surge = LevelShape();
    ASSERT_TRUE(calm.Fit(pts).has_value());
    ASSERT_TRUE(surge.Fit(surged).has_value());
    const auto ratio = [&](int ahead) {
      const double t = (kMondayHour + hours - 1 + ahead) * 3600.0;
      return surge.Predict(t)->p50 / calm.Predict(t)->p50;
    };
    if (persistent) {
      EXPECT_GT(calm.level_shape().persistence, 0.5);
      EXPECT_GT(ratio(1), 1.4) << "the next hour follows the surge";
      EXPECT_GT(ratio(1), ratio(6));
      EXPECT_LT(ratio(30), 1.15) << "a day later it has mostly decayed";
    } else {
      EXPECT_LT(calm.level_shape().persistence, 0.3);
      EXPECT_LT(ratio(1), 1.3) << "white noise: a surge says little about the next hour";
    }
  }
}

TEST(LevelShapeForecaster, ALevelShiftDropsTheOldLevel) {
  // Ten days at 100, then a migration doubles the traffic for three days.
  std::vector<RatePoint> pts = Series(13, 0.0, 0.05, 5);
  for (int h = 10 * 24; h < 13 * 24; ++h) pts[h].rate *= 2;
  DemandForecaster f = LevelShape();
  ASSERT_TRUE(f.Fit(pts).has_value());
  EXPECT_EQ(f.level_shape().shift_hour, kMondayHour + 10 * 24);
  // The step is measured in log(rate + eps), which a doubling moves by a little under log 2.
  EXPECT_GT(f.level_shape().shift_size, 0.5);
  EXPECT_LT(f.level_shape().shift_size, std::log(2.0) + 0.05);
  double truth = 0;
  for (int h = 13 * 24; h < 20 * 24; ++h) truth += 200 * Shape(h) / 168;
  // The old level would give about half of this; three days after the shift leave the weekday
  // effect estimated from windows that straddle it, hence the 15% tolerance.
  EXPECT_NEAR(MeanP50(f, 13 * 24, 168), truth, 0.15 * truth);
  // A step is not a trend.
  EXPECT_EQ(f.level_shape().slope_per_day, 0.0);
}

TEST(LevelShapeForecaster, FlatNoiseHasNoTrendAndNoShift) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    DemandForecaster f = LevelShape();
    ASSERT_TRUE(f.Fit(Series(21, 0.0, 0.2, seed)).has_value());
    EXPECT_EQ(f.level_shape().slope_per_day, 0.0) << "seed " << seed;
    EXPECT_EQ(f.level_shape().shift_hour, -1) << "seed " << seed;
    EXPECT_NEAR(MeanP50(f, 21 * 24, 168), 100 * 0.9857, 8) << "seed " << seed;
  }
}

TEST(LevelShapeForecaster, QuantilesWidenWithTheHorizonAndWithShortHistory) {
  // No weekly shape, so 14:00 has the same median every day and only the spread changes.
  DemandForecaster f = LevelShape();
  ASSERT_TRUE(f.Fit(Series(21, 0.0, 0.15, 9, false)).has_value());
  double prev = 0;
  for (int day = 0; day < 7; ++day) {
    const int h = 21 * 24 + day * 24 + 14;  // 14:00 each day ahead
    const auto q = *f.Predict((kMondayHour + h) * 3600.0);
    ASSERT_LE(q.p10, q.p50);
    ASSERT_LE(q.p50, q.p90);
    // The spread the forecaster models, in log(rate + eps).
    const double eps = f.level_shape().eps;
    const double width = std::log((q.p90 + eps) / (q.p10 + eps));
    EXPECT_GE(width, prev - 1e-12) << "day " << day;
    prev = width;
  }
  const auto near = *f.Predict((kMondayHour + 21 * 24 + 14) * 3600.0);
  const auto far = *f.Predict((kMondayHour + 27 * 24 + 14) * 3600.0);
  EXPECT_GT(std::log(far.p90 / far.p10), std::log(near.p90 / near.p10));
  // Seven days of the same traffic: wider than twenty-one.
  const auto all = Series(21, 0.0, 0.15, 9, false);
  DemandForecaster short_f = LevelShape();
  ASSERT_TRUE(short_f.Fit(std::span(all).subspan(14 * 24)).has_value());
  const auto s = *short_f.Predict((kMondayHour + 21 * 24 + 14) * 3600.0);
  EXPECT_GT(std::log(s.p90 / s.p10), std::log(near.p90 / near.p10));
}

TEST(LevelShapeForecaster, APureShapeTimesAConstantIsForecastClosely) {
  DemandForecaster f = LevelShape();
  ASSERT_TRUE(f.Fit(Series(14, 0.0, 0.0, 1)).has_value());
  EXPECT_EQ(f.mode(), DemandMode::kWeekly);
  for (int h = 14 * 24; h < 21 * 24; h += 7) {
    // Not exact: the shape is learnt in log(rate + eps), where hour and weekday do not quite add.
    EXPECT_NEAR(f.Predict((kMondayHour + h) * 3600.0)->p50, 100 * Shape(h), 0.04 * 100 * Shape(h))
        << "hour " << h;
  }
}

TEST(LevelShapeForecaster, UnderADayForecastsTheLevelsOwnSpread) {
  DemandForecaster f = LevelShape();
  const auto day = Series(1, 0.0, 0.1, 2);
  ASSERT_TRUE(f.Fit(std::span(day).first(10)).has_value());
  EXPECT_EQ(f.mode(), DemandMode::kLevel);
  const auto q = *f.Predict((kMondayHour + 40) * 3600.0);
  EXPECT_LT(q.p10, q.p90);
}

TEST(LevelShapeForecaster, SaveLoadAndSetMethodKeepTheMethod) {
  DemandForecaster f = LevelShape();
  ASSERT_TRUE(f.Fit(Series(15, 0.2, 0.1, 4)).has_value());
  const std::string saved = f.Save();
  EXPECT_NE(saved.find("\"level-shape\""), std::string::npos);
  DemandForecaster g;
  ASSERT_TRUE(g.Load(saved).has_value());
  EXPECT_EQ(g.options().method, DemandMethod::kLevelShape);
  const double t = (kMondayHour + 16 * 24 + 3) * 3600.0;
  EXPECT_DOUBLE_EQ(g.Predict(t)->p50, f.Predict(t)->p50);
  EXPECT_DOUBLE_EQ(g.Predict(t)->p90, f.Predict(t)->p90);
  // Switching back to the profile method refits the same history with it.
  ASSERT_TRUE(g.SetMethod(DemandMethod::kProfile).has_value());
  DemandForecaster p;
  ASSERT_TRUE(p.Fit(Series(15, 0.2, 0.1, 4)).has_value());
  EXPECT_DOUBLE_EQ(g.Predict(t)->p50, p.Predict(t)->p50);
  // An unknown method in a saved model is an error naming the field.
  std::string bad = saved;
  bad.replace(bad.find("\"level-shape\""), 13, "\"magic\"");
  DemandForecaster h;
  const auto err = h.Load(bad);
  ASSERT_FALSE(err.has_value());
  EXPECT_EQ(err.error().field, "options.method");
}

}  // namespace
}  // namespace ordo::forecast
