// `ordo forecast`'s JSON files through the real binary: the repo's examples load, a saved model
// loads back, and a malformed features, history or model file exits 2 with a message naming the
// file and the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

void ExpectBadInput(const CliResult& r, const std::string& file, const std::string& field,
                    const std::string& message_part) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.signal, 0);
  EXPECT_NE(r.err.find("ordo: " + file + ": " + field + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(message_part), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(ForecastFilesTest, TheExampleFeaturesLoad) {
  const std::string features = (SourceDir() / "examples" / "job-features.json").string();
  const CliResult r = RunOrdo({"forecast", "training", "--features", features});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json out = nlohmann::json::parse(r.out);
  EXPECT_GT(out["p50_s"].get<double>(), 0);
  EXPECT_EQ(out["recommended_gpus"].get<int>() & (out["recommended_gpus"].get<int>() - 1), 0);
}

TEST(ForecastFilesTest, MalformedFeaturesNameTheField) {
  TempDir dir;
  const std::string typo = dir.File("typo.json");
  WriteWhole(typo, R"({"method": "lora", "parmas_b": 70, "tokens": 2.5e7})");
  ExpectBadInput(RunOrdo({"forecast", "training", "--features", typo}), typo, "features.parmas_b",
                 R"(did you mean "params_b"?)");
  const std::string type = dir.File("type.json");
  WriteWhole(type, R"({"method": "lora", "params_b": "70", "tokens": 2.5e7})");
  ExpectBadInput(RunOrdo({"forecast", "training", "--features", type}), type, "features.params_b",
                 R"(must be a number (got string "70"))");
}

TEST(ForecastFilesTest, MalformedHistoriesNameTheEntry) {
  TempDir dir;
  const std::string features = (SourceDir() / "examples" / "job-features.json").string();
  const std::string history = dir.File("history.json");
  WriteWhole(history, R"([{"features": {"method": "sft", "params_b": 7, "tokens": 1e9},
                           "duration_s": 3600, "time": "2026-01-05"},
                          {"features": {"method": "sft", "params_b": 7, "tokens": 1e9,
                                        "gpu_count": "8"}, "duration_s": 3600}])");
  ExpectBadInput(RunOrdo({"forecast", "training", "--features", features, "--history", history}),
                 history, "history[1].features.gpu_count", R"(got string "8")");
  const std::string quantization = dir.File("quantization.json");
  WriteWhole(quantization, R"([{"params_b": 7, "algorithm": "awq", "duraton_s": 600}])");
  ExpectBadInput(RunOrdo({"forecast", "quantization", "--params-b", "7", "--algorithm", "awq",
                          "--history", quantization}),
                 quantization, "history[0].duraton_s", R"(did you mean "duration_s"?)");
}

TEST(ForecastFilesTest, SavedModelsLoadBackAndMalformedOnesNameTheField) {
  TempDir dir;
  const std::string features = (SourceDir() / "examples" / "job-features.json").string();
  const std::string history = dir.File("history.json");
  WriteWhole(history, R"([{"features": {"method": "lora", "params_b": 70, "tokens": 2.5e7,
                                        "gpu_type": "H100", "gpu_count": 8},
                           "duration_s": 5000, "time": "2026-01-05T10:00:00Z"}])");
  const std::string model = dir.File("training-model.json");
  const CliResult saved = RunOrdo({"forecast", "training", "--features", features, "--history",
                                   history, "--save-model", model});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const CliResult loaded =
      RunOrdo({"forecast", "training", "--features", features, "--model", model});
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  EXPECT_EQ(loaded.out, saved.out);

  nlohmann::json doc = nlohmann::json::parse(ReadWhole(model));
  doc["options"]["half_life_day"] = 3;
  const std::string edited = dir.File("edited.json");
  WriteWhole(edited, doc.dump());
  ExpectBadInput(RunOrdo({"forecast", "training", "--features", features, "--model", edited}),
                 edited, "options.half_life_day", R"(did you mean "half_life_days"?)");

  // The demand forecaster's model, from the README's rate history.
  const std::string rates = (SourceDir() / "examples" / "rates.csv").string();
  const std::string demand = dir.File("demand-model.json");
  const std::vector<std::string> demand_args = {
      "forecast", "demand", "--per-gpu-rate", "40", "--start", "2026-11-30T00:00:00Z",
      "--steps",  "4",      "--step-minutes", "60"};
  std::vector<std::string> save = demand_args;
  save.insert(save.end(), {"--history", rates, "--save-model", demand});
  const CliResult fitted = RunOrdo(save);
  ASSERT_EQ(fitted.exit_code, 0) << fitted.err;
  std::vector<std::string> load = demand_args;
  load.insert(load.end(), {"--model", demand});
  const CliResult reloaded = RunOrdo(load);
  ASSERT_EQ(reloaded.exit_code, 0) << reloaded.err;
  EXPECT_EQ(reloaded.out, fitted.out);

  nlohmann::json bad = nlohmann::json::parse(ReadWhole(demand));
  bad["history"]["counts"][3] = -1;
  WriteWhole(demand, bad.dump());
  ExpectBadInput(RunOrdo(load), demand, "history.counts[3]", "must be an integer from 0");
}

}  // namespace
}  // namespace ordo::testing
