// `ordo forecast eval`: the rolling-origin evaluation on a small synthetic data directory made here
// (so it runs without ../shared), bad input naming the file, and the real ServeGen per-model
// series when ../shared/data is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

// Parses the row of `category` in the evaluation's table: its MAE triple (ordo, seasonal naive,
// scaled naive) and its targets column. False when the row is absent.
struct Row {
  double mae[3] = {0, 0, 0};
  double coverage = 0;
  std::string targets;
};

bool FindRow(const std::string& out, const std::string& category, Row& row) {
  const std::string head = "| " + category + " |";
  const size_t at = out.find(head);
  if (at == std::string::npos) return false;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  long long forecasts = 0, hours = 0;
  double pinball[3], cov[3];
  char targets[128] = {0};
  const std::string format =
      head + " %lld | %lld | %lf / %lf / %lf | %lf / %lf / %lf | " + "%lf / %lf / %lf | %127[^|]";
  const int n = std::sscanf(line.c_str(), format.c_str(), &forecasts, &hours, &row.mae[0],
                            &row.mae[1], &row.mae[2], &pinball[0], &pinball[1], &pinball[2],
                            &cov[0], &cov[1], &cov[2], targets);
  if (n != 12) return false;
  row.coverage = cov[0];
  row.targets = targets;
  while (!row.targets.empty() && row.targets.back() == ' ') row.targets.pop_back();
  return true;
}

// Three weeks of one model's hourly rate: a daily curve, a quieter weekend and a little
// deterministic wobble; the level steps up by half after day 15 (a launch).
std::string SyntheticServeGen() {
  std::string csv = "model,category,hour_index,day_index,hour_of_day,mean_rate_rps\n";
  const double kPi = 3.14159265358979;
  for (int h = 0; h < 21 * 24; ++h) {
    const int day = h / 24;
    const double weekend = day % 7 >= 5 ? 0.7 : 1.0;
    const double level = day >= 15 ? 150 : 100;
    const double rate = level * weekend * (1 + 0.4 * std::sin(2 * kPi * (h % 24) / 24.0)) *
                        (1 + 0.05 * std::sin(h * 2.3));
    csv += "m-syn,language," + std::to_string(h) + "," + std::to_string(day) + "," +
           std::to_string(h % 24) + "," + std::to_string(rate) + "\n";
  }
  return csv;
}

TEST(ForecastEvalCommand, ScoresASyntheticSeriesAgainstBothBaselines) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "inference");
  WriteWhole(dir.File("inference/servegen_rate_hourly.csv"), SyntheticServeGen());
  const CliResult r = RunOrdo({"forecast", "eval", "--data", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Forecaster `level-shape`: 1 series"), std::string::npos) << r.out;
  // The files it did not find are named, not silently skipped.
  EXPECT_NE(r.out.find("servegen_clients_hourly.csv.gz is absent"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alibaba_dlrm_app_gpu_hourly.csv.gz is absent"), std::string::npos);
  Row overall, shift, model;
  ASSERT_TRUE(FindRow(r.out, "overall", overall)) << r.out;
  ASSERT_TRUE(FindRow(r.out, "source servegen-model", model)) << r.out;
  // On a clean weekly series with a level shift, level x shape beats the same hour last week.
  EXPECT_LT(overall.mae[0], overall.mae[1]) << r.out;
  EXPECT_GT(overall.coverage, 50) << r.out;
  EXPECT_EQ(model.mae[0], overall.mae[0]) << "one source: its row is the overall row\n" << r.out;

  // The older weekly-profile forecaster is scored by the same table.
  const CliResult p =
      RunOrdo({"forecast", "eval", "--data", dir.path().string(), "--method", "profile"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("Forecaster `profile`: 1 series"), std::string::npos) << p.out;
  Row profile;
  ASSERT_TRUE(FindRow(p.out, "overall", profile)) << p.out;
  EXPECT_EQ(profile.mae[1], overall.mae[1]) << "the baselines do not depend on the method";
  EXPECT_NE(profile.mae[0], overall.mae[0]);
}

TEST(ForecastEvalCommand, BadInputNamesTheFileOrOption) {
  TempDir dir;
  const CliResult missing = RunOrdo({"forecast", "eval", "--data", dir.File("no-such-directory")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--data"), std::string::npos) << missing.err;

  std::filesystem::create_directories(dir.path() / "inference");
  const CliResult empty = RunOrdo({"forecast", "eval", "--data", dir.path().string()});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_NE(empty.out.find("nothing evaluated"), std::string::npos) << empty.out;

  WriteWhole(dir.File("inference/servegen_rate_hourly.csv"),
             "model,hour_index,mean_rate_rps\nm-syn,0,not-a-number\n");
  const CliResult bad = RunOrdo({"forecast", "eval", "--data", dir.path().string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.err.find("servegen_rate_hourly.csv"), std::string::npos) << bad.err;

  const CliResult method =
      RunOrdo({"forecast", "eval", "--data", dir.path().string(), "--method", "arima"});
  EXPECT_EQ(method.exit_code, 2);
  EXPECT_NE(method.err.find("--method"), std::string::npos) << method.err;
}

// The real ServeGen per-model series (the clients and DLRM files are left out, so that the test
// stays short in a sanitizer build): the targets hold for them.
TEST(ForecastEvalCommand, RealServeGenModelsMeetTheTargets) {
  const std::filesystem::path shared =
      std::filesystem::weakly_canonical(SourceDir()).parent_path() / "shared" / "data" /
      "inference";
  const std::filesystem::path csv = shared / "servegen_rate_hourly.csv";
  if (!std::filesystem::exists(csv)) {
    GTEST_SKIP() << csv.string() << " is absent (../shared/data is not checked out beside the "
                 << "source tree): the evaluation on the real traces is not run";
  }
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "inference");
  std::filesystem::copy_file(csv, dir.File("inference/servegen_rate_hourly.csv"));
  const CliResult r = RunOrdo({"forecast", "eval", "--data", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Row overall;
  ASSERT_TRUE(FindRow(r.out, "overall", overall)) << r.out;
  EXPECT_LT(overall.mae[0], std::min(overall.mae[1], overall.mae[2])) << r.out;
  EXPECT_GE(overall.coverage, 75) << r.out;
  EXPECT_LE(overall.coverage, 90) << r.out;
}

}  // namespace
}  // namespace ordo::testing
