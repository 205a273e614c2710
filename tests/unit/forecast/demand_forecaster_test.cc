#include "ordo/forecast/demand_forecaster.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ordo/forecast/stats.h"
#include "tests/unit/forecast/real_data.h"

namespace ordo::forecast {
namespace {

constexpr double kMonday = 4 * 86400.0;  // 1970-01-05 00:00 UTC, a Monday
constexpr double kPi = 3.14159265358979;

// A service with a daily cycle (peak at 14:00, trough at 02:00), quieter weekends, and noise.
double TrueRate(int hour) {
  const int hod = hour % 24;
  const int dow = (hour / 24) % 7;
  const double daily = 1.0 + 0.6 * std::cos(2 * kPi * (hod - 14) / 24.0);
  return 100.0 * daily * (dow >= 5 ? 0.6 : 1.0);
}

std::vector<RatePoint> Synthetic(int hours, unsigned seed = 7, double noise = 0.05) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, noise);
  std::vector<RatePoint> pts;
  for (int h = 0; h < hours; ++h) {
    pts.push_back({kMonday + h * 3600.0, TrueRate(h) * std::exp(n(rng))});
  }
  return pts;
}

TEST(DemandForecaster, LearnsTheWeeklyShapeFromFourWeeks) {
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(Synthetic(4 * 168)).has_value());
  EXPECT_EQ(f.mode(), DemandMode::kWeekly);
  for (int h = 4 * 168; h < 5 * 168; h += 5) {
    auto q = f.Predict(kMonday + h * 3600.0);
    ASSERT_TRUE(q.has_value());
    EXPECT_LE(q->p10, q->p50);
    EXPECT_LE(q->p50, q->p90);
    EXPECT_NEAR(q->p50, TrueRate(h), 0.12 * TrueRate(h)) << "hour " << h;
    EXPECT_LT(q->p10, TrueRate(h) * 1.02) << "hour " << h;
    EXPECT_GT(q->p90, TrueRate(h) * 0.98) << "hour " << h;
  }
  // The weekend is learnt as quieter than the weekdays at the same hour.
  auto wed = f.Predict(kMonday + (4 * 168 + 2 * 24 + 14) * 3600.0);
  auto sat = f.Predict(kMonday + (4 * 168 + 5 * 24 + 14) * 3600.0);
  EXPECT_LT(sat->p50, 0.75 * wed->p50);
}

TEST(DemandForecaster, IntervalsCoverAboutEightyPercentOfHeldOutHours) {
  DemandForecaster f;
  const auto all = Synthetic(6 * 168, 11, 0.15);
  std::vector<RatePoint> fit(all.begin(), all.begin() + 5 * 168);
  ASSERT_TRUE(f.Fit(fit).has_value());
  int covered = 0;
  for (int h = 5 * 168; h < 6 * 168; ++h) {
    auto q = f.Predict(all[static_cast<std::size_t>(h)].time_s);
    const double a = all[static_cast<std::size_t>(h)].rate;
    covered += (a >= q->p10 && a <= q->p90) ? 1 : 0;
  }
  const double coverage = covered / 168.0;
  EXPECT_GT(coverage, 0.65);
  EXPECT_LT(coverage, 0.97);
}

TEST(DemandForecaster, BeatsSameHourLastWeekOnNoisyTraffic) {
  const auto all = Synthetic(3 * 168, 5, 0.25);
  std::vector<RatePoint> fit(all.begin(), all.begin() + 2 * 168);
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(fit).has_value());
  double ours = 0;
  double naive = 0;
  for (int h = 2 * 168; h < 3 * 168; ++h) {
    const double a = all[static_cast<std::size_t>(h)].rate;
    ours += std::fabs(f.Predict(all[static_cast<std::size_t>(h)].time_s)->p50 - a);
    naive += std::fabs(all[static_cast<std::size_t>(h - 168)].rate - a);
  }
  // Last week's hour carries its own noise; the profile averages it away (sqrt(2) in theory,
  // less with two weeks of history).
  EXPECT_LT(ours, 0.9 * naive);
}

// The hours that start before a time, oldest first; NaN where nothing was observed or kept.
TEST(DemandForecaster, ObservedHourMeansAreTheHoursBeforeATime) {
  const double t0 = 1'699'833'600;  // an hour boundary
  std::vector<RatePoint> points = {{t0 + 600, 10},
                                   {t0 + 1200, 20},           // hour 0: mean 15
                                   {t0 + 3600 * 2 + 5, 40}};  // hour 1 empty, hour 2: 40
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(points).has_value());
  const std::vector<double> upto_2 = f.ObservedHourMeans(t0 + 3600 * 2 + 1, 4);  // hours -1..2
  ASSERT_EQ(upto_2.size(), 4U);
  EXPECT_TRUE(std::isnan(upto_2[0]));  // before the history
  EXPECT_DOUBLE_EQ(upto_2[1], 15);
  EXPECT_TRUE(std::isnan(upto_2[2]));  // no sample
  EXPECT_DOUBLE_EQ(upto_2[3], 40);
  // A time on an hour boundary: that hour has not started before it.
  const std::vector<double> upto_1 = f.ObservedHourMeans(t0 + 3600 * 2, 2);  // hours 0..1
  EXPECT_DOUBLE_EQ(upto_1[0], 15);
  EXPECT_TRUE(std::isnan(upto_1[1]));
  EXPECT_TRUE(f.ObservedHourMeans(t0, 0).empty());
}

TEST(DemandForecaster, CollectionGapsAreMissingNotTraffic) {
  auto pts = Synthetic(2 * 168);
  // Six hours of zeros every day of the second week, at the daily peak.
  for (auto& p : pts) {
    const int h = static_cast<int>((p.time_s - kMonday) / 3600);
    if (h >= 168 && h % 24 >= 11 && h % 24 < 17) p.rate = 0;
  }
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(pts).has_value());
  const int next_peak = 2 * 168 + 14;
  auto q = f.Predict(kMonday + next_peak * 3600.0);
  EXPECT_GT(q->p50, 0.8 * TrueRate(next_peak));
}

TEST(DemandForecaster, SparseSeriesKeepTheirZeros) {
  // Traffic only during working hours: zeros are most hours, and they are real.
  std::vector<RatePoint> pts;
  for (int h = 0; h < 2 * 168; ++h) {
    const bool busy = h % 24 >= 9 && h % 24 < 17;
    pts.push_back({kMonday + h * 3600.0, busy ? 5.0 : 0.0});
  }
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(pts).has_value());
  EXPECT_LT(f.Predict(kMonday + (2 * 168 + 3) * 3600.0)->p50, 0.5);
  EXPECT_GT(f.Predict(kMonday + (2 * 168 + 12) * 3600.0)->p50, 3.0);
}

TEST(DemandForecaster, FlatTrafficGetsAFlatProfile) {
  std::vector<RatePoint> pts;
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 1);
  for (int h = 0; h < 3 * 168; ++h) pts.push_back({kMonday + h * 3600.0, 200 + n(rng)});
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(pts).has_value());
  for (double p : f.profile()) EXPECT_NEAR(p, 1.0, 0.03);
}

TEST(DemandForecaster, FollowsARisingLevel) {
  std::vector<RatePoint> pts;
  for (int h = 0; h < 3 * 168; ++h) {
    pts.push_back({kMonday + h * 3600.0, TrueRate(h) * std::exp(0.03 * h / 24.0)});
  }
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(pts).has_value());
  const int h = 3 * 168 + 14;
  const double last_week = TrueRate(h) * std::exp(0.03 * (h - 168) / 24.0);
  // Above the same hour last week (the level rose by ~23% over the week), not beyond the truth.
  const double p50 = f.Predict(kMonday + h * 3600.0)->p50;
  EXPECT_GT(p50, 1.1 * last_week);
  EXPECT_LT(p50, 1.1 * TrueRate(h) * std::exp(0.03 * h / 24.0));
}

TEST(DemandForecaster, DegradesGracefullyWithLittleHistory) {
  DemandForecaster tiny;
  ASSERT_TRUE(tiny.Fit(Synthetic(10)).has_value());
  EXPECT_EQ(tiny.mode(), DemandMode::kLevel);
  auto q = tiny.Predict(kMonday + 50 * 3600.0);
  ASSERT_TRUE(q.has_value());
  EXPECT_GT(q->p50, 0);
  EXPECT_LE(q->p10, q->p90);

  DemandForecaster days;
  ASSERT_TRUE(days.Fit(Synthetic(3 * 24)).has_value());
  EXPECT_EQ(days.mode(), DemandMode::kDaily);
  // Even from three days, the daily cycle is there: 14:00 above 02:00.
  EXPECT_GT(days.Predict(kMonday + (4 * 24 + 14) * 3600.0)->p50,
            2 * days.Predict(kMonday + (4 * 24 + 2) * 3600.0)->p50);
}

TEST(DemandForecaster, SubHourlyPointsAreAveragedIntoHours) {
  std::vector<RatePoint> pts;
  for (int m = 0; m < 3 * 24 * 6; ++m) {
    pts.push_back({kMonday + m * 600.0, m % 2 == 0 ? 90.0 : 110.0});
  }
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(pts).has_value());
  EXPECT_NEAR(f.Predict(kMonday + 4 * 86400.0)->p50, 100.0, 5.0);
}

TEST(DemandForecaster, RefitAppendsAndRejectsThePast) {
  const auto all = Synthetic(3 * 168);
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(std::vector<RatePoint>(all.begin(), all.begin() + 168)).has_value());
  EXPECT_EQ(f.mode(), DemandMode::kDaily);
  ASSERT_TRUE(f.Refit(std::vector<RatePoint>(all.begin() + 168, all.end())).has_value());
  EXPECT_EQ(f.mode(), DemandMode::kWeekly);
  auto old = f.Refit(std::vector<RatePoint>(all.begin(), all.begin() + 2));
  ASSERT_FALSE(old.has_value());
  EXPECT_EQ(old.error().field, "history[0].time");
}

TEST(DemandForecaster, SaveAndLoadPredictTheSame) {
  DemandOptions opt;
  opt.week_half_life = 3;
  DemandForecaster f(opt);
  ASSERT_TRUE(f.Fit(Synthetic(2 * 168 + 30)).has_value());
  const std::string saved = f.Save();
  DemandForecaster g;
  ASSERT_TRUE(g.Load(saved).has_value());
  EXPECT_DOUBLE_EQ(g.options().week_half_life, 3);
  for (int h = 2 * 168; h < 3 * 168; h += 7) {
    const double t = kMonday + h * 3600.0;
    EXPECT_DOUBLE_EQ(f.Predict(t)->p50, g.Predict(t)->p50);
    EXPECT_DOUBLE_EQ(f.Predict(t)->p90, g.Predict(t)->p90);
  }
}

TEST(DemandForecaster, LoadRejectsBadModelsNamingTheField) {
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(Synthetic(48)).has_value());
  const double before = f.Predict(kMonday + 60 * 3600.0)->p50;
  struct Case {
    std::string json;
    const char* field;
  };
  const Case cases[] = {
      {"not json", "model"},
      {R"({"kind": "training", "version": 1})", "kind"},
      {R"({"kind": "demand", "version": 2})", "version"},
      {R"({"kind": "demand", "version": 1, "options": {"week_half_lives": 2}})",
       "options.week_half_lives"},
      {R"({"kind": "demand", "version": 1, "options": {"trend_damping": 3}})",
       "options.trend_damping"},
      {R"({"kind": "demand", "version": 1})", "history"},
      {R"({"kind": "demand", "version": 1, "history": {"first_hour": 0, "last_time_s": 0,
           "rates": [1, "x"], "counts": [1, 1]}})",
       "history.rates[1]"},
  };
  for (const Case& c : cases) {
    auto r = f.Load(c.json);
    ASSERT_FALSE(r.has_value()) << c.json;
    EXPECT_EQ(r.error().field, c.field) << c.json << " -> " << r.error().ToString();
  }
  // A failed load leaves the forecaster as it was.
  EXPECT_DOUBLE_EQ(f.Predict(kMonday + 60 * 3600.0)->p50, before);
}

TEST(DemandForecaster, BadHistoryIsAnErrorNeverACrash) {
  DemandForecaster f;
  EXPECT_FALSE(f.Fit(std::vector<RatePoint>{}).has_value());
  EXPECT_FALSE(f.Fit(std::vector<RatePoint>{{10, 1}, {5, 1}}).has_value());
  EXPECT_FALSE(f.Fit(std::vector<RatePoint>{{0, NAN}}).has_value());
  auto all_gaps = f.Fit(std::vector<RatePoint>{{0, 0}, {3600, 0}});
  EXPECT_TRUE(all_gaps.has_value()) << "all-zero traffic is sparse, hence real";
  EXPECT_FALSE(DemandForecaster().Predict(0).has_value()) << "unfitted";
}

TEST(GpusForRate, CoversTheRateWithHeadroom) {
  EXPECT_EQ(GpusForRate(0, 10, 0.2), 0);
  EXPECT_EQ(GpusForRate(100, 10, 0), 10);
  EXPECT_EQ(GpusForRate(100, 10, 0.2), 12);
  EXPECT_EQ(GpusForRate(101, 10, 0), 11);
  EXPECT_EQ(GpusForRate(100.0000000001, 10, 0), 10);
  EXPECT_EQ(GpusForRate(1, 10, 0), 1);
}

TEST(ForecastSteps, OneEntryPerStepWithGpusFromTheP90) {
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(Synthetic(2 * 168)).has_value());
  auto steps = ForecastSteps(f, kMonday + 2 * 168 * 3600.0, 12, 120, 20, 0.25);
  ASSERT_TRUE(steps.has_value());
  ASSERT_EQ(steps->size(), 12u);
  for (std::size_t i = 0; i < steps->size(); ++i) {
    const DemandStep& s = (*steps)[i];
    EXPECT_DOUBLE_EQ(s.start_s, kMonday + 2 * 168 * 3600.0 + i * 7200.0);
    EXPECT_LE(s.rate_p50, s.rate_p90 + 1e-9);
    EXPECT_EQ(s.gpus, GpusForRate(s.rate_p90, 20, 0.25));
  }
  // Half-hour steps inside one hour share that hour's forecast.
  auto half = ForecastSteps(f, kMonday + 2 * 168 * 3600.0, 2, 30, 20, 0);
  EXPECT_DOUBLE_EQ((*half)[0].rate_p90, (*half)[1].rate_p90);
}

TEST(ForecastSteps, BadArgumentsNameTheArgument) {
  DemandForecaster f;
  ASSERT_TRUE(f.Fit(Synthetic(48)).has_value());
  EXPECT_EQ(ForecastSteps(f, 0, 0, 60, 1, 0).error().field, "steps");
  EXPECT_EQ(ForecastSteps(f, 0, 3, 0, 1, 0).error().field, "step_minutes");
  EXPECT_EQ(ForecastSteps(f, 0, 3, 60, 0, 0).error().field, "per_gpu_rate");
  EXPECT_EQ(ForecastSteps(f, 0, 3, 60, 1, -0.5).error().field, "headroom");
}

TEST(HourOfWeek, MondayMidnightIsZero) {
  EXPECT_EQ(HourOfWeek(static_cast<int64_t>(kMonday / 3600)), 0);
  EXPECT_EQ(HourOfWeek(static_cast<int64_t>(kMonday / 3600) + 167), 167);
  EXPECT_EQ(HourOfWeek(static_cast<int64_t>(kMonday / 3600) - 1), 167);
}

// ServeGen's m-small (real traffic): fit on week one, forecast week two.
TEST(DemandForecasterRealData, ServeGenWeekTwoBeatsSameHourLastWeek) {
  const auto dir = testing::RealDataDir();
  if (!dir)
    GTEST_SKIP() << "../shared/data not found (set ORDO_SOURCE_DIR); real-data test skipped";
  const auto rows = testing::ReadCsv(*dir / "inference" / "servegen_rate_hourly.csv");
  ASSERT_FALSE(rows.empty());
  const int cm = testing::Column(rows[0], "model");
  const int ch = testing::Column(rows[0], "hour_index");
  const int cr = testing::Column(rows[0], "mean_rate_rps");
  ASSERT_GE(cm, 0);
  for (const char* model : {"m-large", "m-mid", "m-small"}) {
    std::vector<double> series(336, NAN);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      if (rows[i][static_cast<std::size_t>(cm)] != model) continue;
      const int h = std::stoi(rows[i][static_cast<std::size_t>(ch)]);
      if (h < 336)
        series[static_cast<std::size_t>(h)] = std::stod(rows[i][static_cast<std::size_t>(cr)]);
    }
    std::vector<RatePoint> week1;
    std::vector<double> w1;
    for (int h = 0; h < 168; ++h) {
      week1.push_back({kMonday + h * 3600.0, series[static_cast<std::size_t>(h)]});
      w1.push_back(series[static_cast<std::size_t>(h)]);
    }
    const double gap = 0.05 * Median(w1);
    DemandForecaster f;
    ASSERT_TRUE(f.Fit(week1).has_value()) << model;
    double ours = 0, naive = 0;
    int covered = 0, n = 0;
    for (int h = 168; h < 336; ++h) {
      const double a = series[static_cast<std::size_t>(h)];
      if (a < gap) continue;  // a collection gap in the actuals is not scored
      const auto q = f.Predict(kMonday + h * 3600.0);
      ours += Pinball(a, q->p10, 0.1) + Pinball(a, q->p50, 0.5) + Pinball(a, q->p90, 0.9);
      naive += 3 * Pinball(a, series[static_cast<std::size_t>(h - 168)], 0.5);
      covered += (a >= q->p10 && a <= q->p90) ? 1 : 0;
      ++n;
    }
    EXPECT_LT(ours, naive) << model;
    EXPECT_GT(covered, 0.5 * n) << model;
  }
}

}  // namespace
}  // namespace ordo::forecast
