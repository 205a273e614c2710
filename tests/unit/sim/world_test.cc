// The world format: reading, writing, errors that name the field, and the noise models.
#include "ordo/sim/world.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "ordo/sim/random_world.h"

namespace ordo::sim {
namespace {

constexpr const char* kSmall = R"({
  "version": 1, "name": "tiny", "step_minutes": 60, "horizon_steps": 4, "days": 1,
  "cluster": {"node_groups": [{"name": "g", "nodes": 1, "gpus_per_node": 4}]},
  "jobs": [
    {"id": "a", "kind": "training", "priority": 3, "arrival_step": 2, "gpus": 2,
     "duration_steps": 5, "forecast_duration_steps": 4},
    {"id": "b", "kind": "quantization", "priority": 1, "arrival_step": 0,
     "shapes": [{"gpus": 1, "duration_steps": 4}, {"gpus": 2, "duration_steps": 2}]}
  ],
  "services": [
    {"id": "chat", "priority": 10, "min_gpus": 1, "max_change_per_step": 1,
     "rate": [100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
              200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 250],
     "per_gpu_rate": 100, "headroom": 0.2}
  ]
})";

std::string WithField(std::string text, const std::string& before, const std::string& after) {
  const size_t at = text.find(before);
  EXPECT_NE(at, std::string::npos) << before;
  if (at != std::string::npos) text.replace(at, before.size(), after);
  return text;
}

TEST(WorldFormat, ReadsAWorld) {
  auto w = ParseWorld(kSmall);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->name, "tiny");
  EXPECT_EQ(w->window_steps(), 24);
  EXPECT_EQ(w->cluster.total_gpus(), 4);
  ASSERT_EQ(w->jobs.size(), 2u);
  EXPECT_EQ(w->jobs[0].shapes[0].forecast_duration_steps, 4);
  EXPECT_EQ(w->jobs[1].kind, JobKind::kQuantization);
  EXPECT_EQ(w->jobs[1].shapes.size(), 2u);
  ASSERT_EQ(w->services.size(), 1u);
  EXPECT_EQ(w->services[0].max_gpus, 4);  // the cluster size by default
  EXPECT_DOUBLE_EQ(w->services[0].per_gpu_rate, 100);
}

TEST(WorldFormat, WritesWhatItReads) {
  auto w = ParseWorld(kSmall);
  ASSERT_TRUE(w.has_value());
  const std::string text = WorldToJson(*w);
  auto again = ParseWorld(text);
  ASSERT_TRUE(again.has_value()) << again.error().ToString() << "\n" << text;
  EXPECT_EQ(WorldToJson(*again), text);
  // A generated world with noise models and several groups, too.
  RandomWorldOptions o;
  o.seed = 9;
  o.groups = 2;
  o.nodes = 3;
  o.services = 2;
  o.duration_noise = 0.3;
  o.traffic_noise = 0.2;
  o.requirement_fraction = 0.5;
  const World r = RandomWorld(o);
  auto back = ParseWorld(WorldToJson(r));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(WorldToJson(*back), WorldToJson(r));
}

TEST(WorldFormat, ErrorsNameTheField) {
  struct Case {
    std::string before, after, field;
  };
  const std::vector<Case> cases = {
      {R"("days": 1)", R"("days": 1, "dayz": 2)", "dayz"},
      {R"("gpus": 2,)", R"("gpus": 3,)", "jobs[0].gpus"},
      {R"("forecast_duration_steps": 4)", R"("forecast_duration_steps": 0)",
       "jobs[0].forecast_duration_steps"},
      {R"("kind": "quantization")", R"("kind": "quantisation")", "jobs[1].kind"},
      {R"({"gpus": 2, "duration_steps": 2})", R"({"gpus": 2, "duration_steps": "2"})",
       "jobs[1].shapes[1].duration_steps"},
      {R"("arrival_step": 0)", R"("arrival_step": -1)", "jobs[1].arrival_step"},
      {R"("per_gpu_rate": 100, )", "", "services[0].per_gpu_rate"},
      {R"("rate": [100, 100,)", R"("rate": [100,)", "services[0].rate"},
      {R"("min_gpus": 1)", R"("min_gpus": 1, "demand": [1])", "services[0].rate"},
      {R"("min_gpus": 1)", R"("min_gpus": 5)", "services[0].min_gpus"},
      {R"("step_minutes": 60)", R"("step_minutes": 7)", "step_minutes"},
      {R"("id": "b")", R"("id": "a")", "jobs[1].id"},
      {R"("version": 1)", R"("version": 2)", "version"},
  };
  for (const Case& c : cases) {
    auto w = ParseWorld(WithField(kSmall, c.before, c.after));
    ASSERT_FALSE(w.has_value()) << c.after;
    EXPECT_EQ(w.error().field, c.field) << w.error().ToString();
  }
  EXPECT_FALSE(ParseWorld("{").has_value());
  EXPECT_FALSE(ParseWorld("[]").has_value());
}

TEST(WorldFormat, ExtensionFieldsAreIgnored) {
  auto w = ParseWorld(WithField(kSmall, R"("days": 1)", R"("days": 1, "x-note": {"a": 1})"));
  EXPECT_TRUE(w.has_value());
}

TEST(ResolveWorld, RatesBecomeGpusWithHeadroom) {
  auto w = ParseWorld(kSmall);
  ASSERT_TRUE(w.has_value());
  auto r = ResolveWorld(*w);
  ASSERT_TRUE(r.has_value());
  const ResolvedService& s = r->services[0];
  // ceil(100 * 1.2 / 100) = 2; ceil(200 * 1.2 / 100) = 3; ceil(250 * 1.2 / 100) = 3.
  EXPECT_EQ(s.actual[0], 2);
  EXPECT_EQ(s.actual[12], 3);
  EXPECT_EQ(s.actual[23], 3);
  // The horizon past the window repeats the last day.
  ASSERT_EQ(s.actual.size(), 28u);
  EXPECT_EQ(s.actual[24], 2);
  EXPECT_EQ(s.forecast, s.actual);  // no forecast, no noise: the planner is told the truth
  EXPECT_EQ(r->jobs[0].shapes[0].forecast_steps, 4);  // explicit
  EXPECT_EQ(r->jobs[1].shapes[1].forecast_steps, 2);  // exact without duration_noise
}

TEST(ResolveWorld, DurationNoiseIsPerJobAndDeterministic) {
  auto w = ParseWorld(kSmall);
  ASSERT_TRUE(w.has_value());
  w->jobs[0].shapes[0].forecast_duration_steps.reset();
  w->jobs[0].shapes[0].duration_steps = 1000;
  w->jobs[1].shapes[0].duration_steps = 1000;
  w->jobs[1].shapes[1].duration_steps = 500;
  w->duration_noise = DurationNoise{0.3, 42};
  auto r1 = ResolveWorld(*w);
  ASSERT_TRUE(r1.has_value());
  const int a = r1->jobs[0].shapes[0].forecast_steps;
  EXPECT_NE(a, 1000);
  // One factor per job: both shapes of b move together.
  const double fb0 = r1->jobs[1].shapes[0].forecast_steps / 1000.0;
  const double fb1 = r1->jobs[1].shapes[1].forecast_steps / 500.0;
  EXPECT_NEAR(fb0, fb1, 0.01);
  // A job's noise does not depend on the others: drop b, a's forecast stays.
  World only_a = *w;
  only_a.jobs.pop_back();
  auto r2 = ResolveWorld(only_a);
  ASSERT_TRUE(r2.has_value());
  EXPECT_EQ(r2->jobs[0].shapes[0].forecast_steps, a);
  // Another seed, another forecast.
  w->duration_noise->seed = 43;
  EXPECT_NE(ResolveWorld(*w)->jobs[0].shapes[0].forecast_steps, a);
}

TEST(ResolveWorld, DurationNoiseHasTheRequestedSpread) {
  World w;
  w.step_minutes = 60;
  w.horizon_steps = 4;
  w.days = 1;
  w.cluster.groups.push_back(NodeGroup{"g", 1, 8, "gpu", 80});
  w.cluster.Index();
  for (int j = 0; j < 4000; ++j) {
    WorldJob job;
    job.id = "j" + std::to_string(j);
    job.shapes.push_back(WorldShape{1, 10000, std::nullopt});
    w.jobs.push_back(job);
  }
  w.duration_noise = DurationNoise{0.3, 7};
  auto r = ResolveWorld(w);
  ASSERT_TRUE(r.has_value());
  double sum = 0, sum2 = 0;
  for (const ResolvedJob& j : r->jobs) {
    const double x = std::log(j.shapes[0].forecast_steps / 10000.0);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / 4000, sd = std::sqrt(sum2 / 4000 - mean * mean);
  EXPECT_NEAR(mean, 0, 0.03);  // median-unbiased
  EXPECT_NEAR(sd, 0.3, 0.03);
}

TEST(ResolveWorld, TrafficNoiseMovesRealityOffTheCurve) {
  auto w = ParseWorld(kSmall);
  ASSERT_TRUE(w.has_value());
  w->services[0].rate.assign(24, 1000);
  w->traffic_noise = TrafficNoise{0.3, 0.8, 5};
  auto r = ResolveWorld(*w);
  ASSERT_TRUE(r.has_value());
  const ResolvedService& s = r->services[0];
  EXPECT_EQ(s.forecast[0], 12);  // the curve itself: ceil(1000 * 1.2 / 100)
  int differ = 0;
  for (size_t t = 0; t < s.actual.size(); ++t) differ += s.actual[t] != s.forecast[t];
  EXPECT_GT(differ, 10);
  EXPECT_EQ(ResolveWorld(*w)->services[0].actual, s.actual);  // deterministic
  // Told the p90: the curve x exp(0.3 x 1.2816) = 1468.9 rps, ceil(1468.9 * 1.2 / 100) = 18 GPUs,
  // with reality unchanged.
  w->traffic_noise->planner_quantile = 0.9;
  auto p90 = ResolveWorld(*w);
  EXPECT_EQ(p90->services[0].forecast[0], 18);
  EXPECT_EQ(p90->services[0].actual, s.actual);
  int covered = 0;
  for (size_t t = 0; t < s.actual.size(); ++t) covered += p90->services[0].actual[t] <= 18;
  EXPECT_GT(covered, static_cast<int>(s.actual.size()) / 2);
  w->traffic_noise->planner_quantile = 0.5;
  // An explicit forecast means the world gives both curves: no noise is added.
  w->services[0].forecast_rate.assign(24, 900);
  auto r2 = ResolveWorld(*w);
  EXPECT_EQ(r2->services[0].actual[0], 12);
  EXPECT_EQ(r2->services[0].forecast[0], 11);  // ceil(900 * 1.2 / 100) = 11 (10.8)
}

// A forecaster fitted on a week at 100 rps, then the window runs at 200 rps: the first forecast is
// about 100 rps (10 GPUs at 10 rps per GPU); refitted every 6 hours on what it sees, it forecasts
// more and more (its level follows the recent hours). The same world gives the same forecasts.
TEST(ResolveWorld, TheForecasterInTheLoopLearnsALevelShift) {
  World w;
  w.step_minutes = 60;
  w.horizon_steps = 12;
  w.days = 3;
  w.cluster.groups.push_back(NodeGroup{"g", 4, 8, "gpu", 80});
  w.cluster.Index();
  WorldService s;
  s.id = "chat";
  s.priority = 10;
  s.rate.assign(72, 200);
  s.per_gpu_rate = 10;
  ServiceForecaster f;
  f.quantile = forecast::QuantileLevel::kP50;
  f.history_rate.assign(7 * 24, 100);
  f.refit_every_steps = 6;
  s.forecaster = f;
  w.services.push_back(s);
  ASSERT_TRUE(ValidateWorld(w).has_value());
  auto r = ResolveWorld(w);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const ResolvedService& rs = r->services[0];
  EXPECT_EQ(rs.refit_every, 6);
  ASSERT_EQ(rs.vintages.size(), 12u);
  EXPECT_EQ(rs.actual[0], 20);
  EXPECT_NEAR(rs.PlannerForecast(0, 0), 10, 1);
  EXPECT_NEAR(rs.PlannerForecast(5, 11), 10, 1);
  EXPECT_GE(rs.PlannerForecast(30, 30), rs.PlannerForecast(0, 0) + 2);
  EXPECT_GE(rs.PlannerForecast(66, 66), rs.PlannerForecast(30, 30));
  EXPECT_EQ(rs.forecast[30], rs.PlannerForecast(30, 30));
  // A plan made at step 32 sees the vintage of step 30 for its whole horizon.
  EXPECT_EQ(rs.PlannerForecast(32, 43), rs.vintages[5][13]);
  EXPECT_EQ(ResolveWorld(w)->services[0].vintages, rs.vintages);
  // Written and read back, the forecaster is the same.
  auto back = ParseWorld(WorldToJson(w));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(WorldToJson(*back), WorldToJson(w));
}

// Two weeks of a daily curve whose level doubled three days before the window (a launch), and
// the window at the new level. Hour h of the history or window, at `level` rps.
double DailyRate(int hour, double level) {
  const double kPi = 3.14159265358979;
  const double wiggle = 0.03 * std::sin(hour * 1.7);  // not perfectly periodic
  return level * (1 + 0.3 * std::sin(2 * kPi * (hour % 24) / 24.0) + wiggle);
}

World LevelShiftWorld(std::optional<forecast::DemandMethod> method) {
  World w;
  w.step_minutes = 60;
  w.horizon_steps = 24;
  w.days = 1;
  w.cluster.groups.push_back(NodeGroup{"g", 8, 8, "gpu", 80});
  w.cluster.Index();
  WorldService s;
  s.id = "chat";
  s.priority = 10;
  s.per_gpu_rate = 10;
  s.headroom = 0.2;
  const int history_hours = 14 * 24;
  for (int t = 0; t < 48; ++t) s.rate.push_back(DailyRate(history_hours + t, 200));
  ServiceForecaster f;  // the default quantile: p90
  if (method) f.method = *method;
  for (int h = 0; h < history_hours; ++h) {
    f.history_rate.push_back(DailyRate(h, h < 11 * 24 ? 100 : 200));
  }
  s.forecaster = f;
  w.services.push_back(s);
  return w;
}

// The planner's demand for a service with a forecaster is the level-shape forecaster's p90, in
// GPUs: it follows the new level after a shift, a few percent above it. The weekly-profile
// forecaster (still selectable as model "weekly-profile") does not: its backtest saw the shift as
// error, so its p90 reserves far more than the new level (and its median lags below it).
TEST(ResolveWorld, PlannerDemandIsTheLevelShapeP90) {
  const World w = LevelShiftWorld(std::nullopt);
  ASSERT_EQ(w.services[0].forecaster->method, forecast::DemandMethod::kLevelShape);
  ASSERT_EQ(w.services[0].forecaster->quantile, forecast::QuantileLevel::kP90);
  ASSERT_TRUE(ValidateWorld(w).has_value());
  auto r = ResolveWorld(w);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  auto old = ResolveWorld(LevelShiftWorld(forecast::DemandMethod::kProfile));
  ASSERT_TRUE(old.has_value()) << old.error().ToString();

  // The same forecaster, fitted outside the simulator on the same history.
  std::vector<forecast::RatePoint> history;
  const auto& rates = w.services[0].forecaster->history_rate;
  for (size_t i = 0; i < rates.size(); ++i) {
    history.push_back({w.start_time_s - static_cast<double>(rates.size() - i) * 3600, rates[i]});
  }
  forecast::DemandOptions options;
  options.method = forecast::DemandMethod::kLevelShape;
  forecast::DemandForecaster level_shape(options);
  ASSERT_TRUE(level_shape.Fit(history).has_value());

  const ResolvedService& rs = r->services[0];
  const ResolvedService& rs_old = old->services[0];
  int old_far_above = 0;
  for (int k = 0; k < w.horizon_steps; ++k) {
    const double hour = w.start_time_s + k * 3600.0;
    auto q = level_shape.Predict(hour);
    ASSERT_TRUE(q.has_value());
    // The plan made at step 0 is told the p90, turned into GPUs with the service's headroom.
    EXPECT_EQ(rs.PlannerForecast(0, k), GpusForRate(q->p90, 10, 0.2)) << "step " << k;
    // It covers the new level (the step's actual demand) and stays close to it ...
    EXPECT_GE(rs.PlannerForecast(0, k), rs.actual[k]) << "step " << k;
    EXPECT_LE(rs.PlannerForecast(0, k), 1.25 * rs.actual[k] + 1) << "step " << k;
    // ... where the weekly profile's p90 is far above it.
    if (rs_old.PlannerForecast(0, k) > 1.4 * rs.actual[k]) ++old_far_above;
  }
  EXPECT_GE(old_far_above, w.horizon_steps / 2);
  // The method is written as the world's `model` and read back.
  auto back = ParseWorld(WorldToJson(LevelShiftWorld(forecast::DemandMethod::kProfile)));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->services[0].forecaster->method, forecast::DemandMethod::kProfile);
  back = ParseWorld(WorldToJson(w));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->services[0].forecaster->method, forecast::DemandMethod::kLevelShape);
}

TEST(WorldFormat, ForecasterErrorsNameTheField) {
  const std::string fc = R"("forecaster": {"quantile": "p90", "history_rate": [1, 2, 3]})";
  auto ok = ParseWorld(WithField(kSmall, R"("headroom": 0.2)", R"("headroom": 0.2, )" + fc));
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
  EXPECT_EQ(ok->services[0].forecaster->history_rate.size(), 3u);
  auto bad = ParseWorld(WithField(kSmall, R"("headroom": 0.2)",
                                  R"("headroom": 0.2, "forecaster": {"quantile": "p99",
                                      "history_rate": [1]})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "services[0].forecaster.quantile");
  bad = ParseWorld(WithField(kSmall, R"("headroom": 0.2)", R"("headroom": 0.2, "forecaster": {})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "services[0].forecaster.history_rate");
  bad = ParseWorld(
      WithField(kSmall, R"("headroom": 0.2)", R"("headroom": 0.2, "forecast_rate": [1], )" + fc));
  ASSERT_FALSE(bad.has_value());
  bad = ParseWorld(WithField(kSmall, R"("headroom": 0.2)",
                             R"("headroom": 0.2, "forecaster": {"model": "arima",
                                 "history_rate": [1]})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "services[0].forecaster.model");
  EXPECT_NE(bad.error().message.find("level-shape"), std::string::npos) << bad.error().message;
  ok = ParseWorld(WithField(kSmall, R"("headroom": 0.2)",
                            R"("headroom": 0.2, "forecaster": {"model": "weekly-profile",
                                "history_rate": [1]})"));
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
  EXPECT_EQ(ok->services[0].forecaster->method, forecast::DemandMethod::kProfile);
}

TEST(WorldFormat, StartTimeIsReadAsIsoOrSeconds) {
  auto w = ParseWorld(
      WithField(kSmall, R"("days": 1)", R"("days": 1, "start_time": "2024-05-06T00:00:00Z")"));
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_DOUBLE_EQ(w->start_time_s, 1714953600);
  w = ParseWorld(WithField(kSmall, R"("days": 1)", R"("days": 1, "start_time": 1714953600)"));
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->start_time_s, 1714953600);
  auto bad = ParseWorld(WithField(kSmall, R"("days": 1)", R"("days": 1, "start_time": "May")"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "start_time");
}

TEST(GpusForRate, RoundsUpAndKeepsZero) {
  EXPECT_EQ(GpusForRate(0, 10, 0.2), 0);
  EXPECT_EQ(GpusForRate(10, 10, 0), 1);
  EXPECT_EQ(GpusForRate(10.5, 10, 0), 2);
  EXPECT_EQ(GpusForRate(50, 10, 0.2), 6);
}

}  // namespace
}  // namespace ordo::sim
