#include "ordo/forecast/evaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/forecast/real_data.h"

namespace ordo::forecast {
namespace {

constexpr double kPi = 3.14159265358979;

EvalSeries Periodic(const std::string& name, int days, double noise, unsigned seed,
                    bool weekend = true) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, noise);
  EvalSeries s{name, "synthetic", 96, {}};
  for (int h = 0; h < days * 24; ++h) {
    const double shape = 1.0 + 0.5 * std::cos(2 * kPi * (h % 24 - 14) / 24.0);
    const double week = weekend ? ((h / 24) % 7 >= 5 ? 0.7 : 1.1) : 1.0;
    s.hours.push_back(50 * shape * week * std::exp(n(rng)));
  }
  return s;
}

const EvalCategory& Find(const EvalReport& r, const std::string& name) {
  for (const auto& c : r.categories) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no category " << name;
  return r.categories.front();
}

TEST(EvaluateDemand, CountsEveryOriginCutAndVariant) {
  EvalOptions o;
  o.forecaster.method = DemandMethod::kLevelShape;
  auto r = EvaluateDemand({Periodic("a", 16, 0.0, 1, false)}, o);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  // Origins at days 7..15 (9), 3 cuts, 5 variants.
  EXPECT_EQ(r->forecasts, 9 * 3 * 5);
  EXPECT_EQ(r->categories.front().name, "overall");
  const auto& flat = Find(*r, "as recorded");
  EXPECT_EQ(flat.forecasts, 27);
  // Hours: origins 7..9 score 7 days, 10..15 score what is left (6..1 days).
  EXPECT_EQ(flat.ordo.hours, 3 * (3 * 168 + 24 * (6 + 5 + 4 + 3 + 2 + 1)));
  EXPECT_EQ(flat.seasonal_naive.hours, flat.ordo.hours);
  // A noiseless daily cycle: seasonal naive is exact, and so (nearly) is level x shape.
  EXPECT_NEAR(flat.seasonal_naive.MaePercent(), 0.0, 1e-9);
  EXPECT_LT(flat.ordo.MaePercent(), 2.0);
  for (const char* name :
       {"trend -20%/week", "trend +20%/week", "trend +40%/week", "level shift x1.5 3 days back",
        "history 7 days", "history 14 days", "history all days", "source synthetic"}) {
    EXPECT_GT(Find(*r, name).forecasts, 0) << name;
  }
}

TEST(EvaluateDemand, TheLevelShapeForecasterFollowsTrendsTheNaiveForecastLags) {
  EvalOptions o;
  o.forecaster.method = DemandMethod::kLevelShape;
  o.history_days = {0};
  auto r = EvaluateDemand({Periodic("a", 21, 0.05, 2), Periodic("b", 21, 0.05, 3)}, o);
  ASSERT_TRUE(r.has_value());
  const auto& up = Find(*r, "trend +40%/week");
  EXPECT_LT(up.ordo.MaePercent(), up.seasonal_naive.MaePercent());
  const auto& shift = Find(*r, "level shift x1.5 3 days back");
  EXPECT_LT(shift.ordo.MaePercent(), shift.seasonal_naive.MaePercent());
  const std::string table = FormatEvalReport(*r);
  EXPECT_NE(table.find("| overall |"), std::string::npos);
  EXPECT_NE(table.find("level-shape"), std::string::npos);
}

TEST(EvaluateDemand, BadOptionsNameTheOption) {
  EvalOptions o;
  o.horizon_days = 9;
  auto r = EvaluateDemand({Periodic("a", 10, 0, 1)}, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "horizon_days");
  o = EvalOptions{};
  o.history_days = {-1};
  EXPECT_EQ(EvaluateDemand({}, o).error().field, "history_days");
}

TEST(EvalParsers, ReadTheTracesAndNameBadRows) {
  std::string models = "model,category,hour_index,mean_rate_rps\n";
  for (int h = 0; h < 14 * 24; ++h) {
    models += "m-a,language," + std::to_string(h) + "," + (h == 5 ? "0" : "100") + "\n";
  }
  for (int h = 0; h < 24; ++h) models += "m-short,language," + std::to_string(h) + ",3\n";
  auto m = ParseServeGenModels(models);
  ASSERT_TRUE(m.has_value()) << m.error().ToString();
  ASSERT_EQ(m->size(), 1u);  // m-short has under 14 days
  EXPECT_EQ(m->front().hours.size(), 14u * 24);
  EXPECT_TRUE(std::isnan(m->front().hours[5]));  // a zero hour in a busy series is a gap

  std::string clients = "model,client_id,hour_index,mean_rate_rps\n";
  for (int h = 0; h < 14 * 24; ++h) {
    clients += "m-a,1," + std::to_string(h) + ",2\n";
    if (h % 3 == 0) clients += "m-a,2," + std::to_string(h) + ",1\n";  // not busy
  }
  auto c = ParseServeGenClients(clients, *m);
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ(c->front().name, "m-a/1");
  EXPECT_TRUE(std::isnan(c->front().hours[5]));  // the model's gap

  auto bad = ParseDlrmApps("app_name,hour_index,alive_hn_gpu_instances\napp_0,0,12\napp_0,1,x\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "rows[1].alive_hn_gpu_instances");
  auto missing = ParseDlrmApps("app,hour_index\n");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().field, "app_name");
}

TEST(EvaluateDemandRealData, ServeGenModelsBeatSeasonalNaive) {
  const auto dir = testing::RealDataDir();
  if (!dir)
    GTEST_SKIP() << "../shared/data not found (set ORDO_SOURCE_DIR); real-data test skipped";
  const auto path = *dir / "inference" / "servegen_rate_hourly.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  auto series = ParseServeGenModels(testing::ReadText(path));
  ASSERT_TRUE(series.has_value()) << series.error().ToString();
  ASSERT_EQ(series->size(), 3u);  // m-large, m-mid, m-small (the others cover one day)
  EvalOptions o;
  o.forecaster.method = DemandMethod::kLevelShape;
  auto r = EvaluateDemand(*series, o);
  ASSERT_TRUE(r.has_value());
  const auto& all = r->categories.front();
  EXPECT_LT(all.ordo.MaePercent(), all.seasonal_naive.MaePercent());
  EXPECT_LT(all.ordo.PinballPercent(), all.seasonal_naive.PinballPercent());
  EXPECT_GT(all.ordo.CoveragePercent(), 65);
}

}  // namespace
}  // namespace ordo::forecast
