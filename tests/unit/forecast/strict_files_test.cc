// The forecasters' files read strictly, as every ordo reader is (io/json_fields.h): an unknown
// field is an error with "did you mean" (an `x-` extension is not), a wrong type or a value out of
// range names its path, `null` is never "absent", a duplicate key is an error. And every file a
// forecaster writes reads back.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ordo/forecast/demand_forecaster.h"
#include "ordo/forecast/duration_resolver.h"
#include "ordo/forecast/quantization_forecaster.h"
#include "ordo/forecast/training_forecaster.h"
#include "ordo/io/scenario_io.h"

namespace ordo::forecast {
namespace {

constexpr double kMonday = 4 * 86400.0;  // 1970-01-05 00:00 UTC

struct Case {
  std::string json;
  std::string field;
  std::string message_part;  // what the message must contain
};

void ExpectFails(const Result<void>& r, const Case& c) {
  ASSERT_FALSE(r.has_value()) << c.json;
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidInput) << c.json;
  EXPECT_EQ(r.error().field, c.field) << c.json << " -> " << r.error().ToString();
  EXPECT_NE(r.error().message.find(c.message_part), std::string::npos)
      << c.json << " -> " << r.error().ToString();
}

template <typename T>
Result<void> Status(const Result<T>& r) {
  if (!r) return Fail(r.error());
  return {};
}

TEST(StrictFeatures, TrainingFeaturesAreReadStrictly) {
  const Case cases[] = {
      {R"({"parmas_b": 7})", "features.parmas_b", R"(did you mean "params_b"?)"},
      {R"({"method": "sft", "activation_checkpointng": true})", "features.activation_checkpointng",
       R"(did you mean "activation_checkpointing"?)"},
      {R"({"params_b": "seven"})", "features.params_b", R"(must be a number (got string "seven"))"},
      {R"({"params_b": null})", "features.params_b", "(got null)"},
      {R"({"params_b": 7, "params_b": 8})", "features.params_b", "duplicate key"},
      {R"({"tokens": 1e30})", "features.tokens", "<= 1e+18 (got 1e+30)"},
      {R"({"gpu_count": 0})", "features.gpu_count", "integer from 1"},
      {R"({"tp": 2.5})", "features.tp", "must be an integer"},
      {R"({"overhead_s": -1})", "features.overhead_s", ">= 0"},
      {R"({"epochs": 0})", "features.epochs", "> 0"},
      {R"({"activation_checkpointing": 1})", "features.activation_checkpointing",
       "must be true or false"},
      {R"({"model": 7})", "features.model", "must be a string"},
      {R"({"group": ""})", "features.group", "must not be empty"},
      {R"({"gpu_type": "Z80"})", "features.gpu_type", "known: gpu, "},
  };
  for (const Case& c : cases) ExpectFails(Status(ParseTrainingFeatures(c.json)), c);
  // An extension field is not an error.
  auto ok = ParseTrainingFeatures(R"({"method": "sft", "x-owner": {"team": "a"}})");
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
}

TEST(StrictFeatures, QuantizationFeaturesAreReadStrictly) {
  const Case cases[] = {
      {R"({"params_b": 7, "algoritm": "awq"})", "features.algoritm",
       R"(did you mean "algorithm"?)"},
      {R"({"params_b": 7, "algorithm": "awq", "bits": 4})", "features.bits", "unknown field"},
      {R"({"params_b": [7], "algorithm": "awq"})", "features.params_b", "an array"},
      {R"({"params_b": 2e6, "algorithm": "awq"})", "features.params_b", "<= 1000000"},
      {R"({"params_b": 7, "algorithm": "awq", "gpu_type": null})", "features.gpu_type",
       "(got null)"},
  };
  for (const Case& c : cases) ExpectFails(Status(ParseQuantizationFeatures(c.json)), c);
}

// The scenario reader hands a job's features to the forecaster: the path names the job.
TEST(StrictFeatures, AScenarioJobsFeaturesNameTheJob) {
  const std::string scenario = R"({"version": 1, "name": "f", "step_minutes": 60,
      "horizon_steps": 24, "cluster": {"node_groups": [{"name": "g", "nodes": 1,
      "gpus_per_node": 8, "gpu_type": "H100"}]}, "services": [], "jobs": [
      {"id": "a", "kind": "training", "priority": 1, "arrival_step": 0, "gpus": 8,
       "duration_steps": 2},
      {"id": "b", "kind": "training", "priority": 1, "arrival_step": 0, "gpus": 8,
       "features": {"method": "sft", "params_b": "7", "tokens": 5e9}}]})";
  io::ReadOptions options;
  options.resolve_duration = [](const Job& job, std::string_view features, int step_minutes) {
    return ForecastDurationSteps(job, features, step_minutes);
  };
  auto s = io::ParseScenario(scenario, false, options);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().field, "jobs[1].features.params_b") << s.error().ToString();
  EXPECT_NE(s.error().message.find(R"(got string "7")"), std::string::npos);
}

TEST(StrictHistories, EntriesAreReadStrictly) {
  const Case training[] = {
      {R"([{"features": {}, "duraton_s": 5}])", "history[0].duraton_s",
       R"(did you mean "duration_s"?)"},
      {R"([{"features": {}, "duration_s": 5}, {"features": {"gpu_count": "8"}, "duration_s": 5}])",
       "history[1].features.gpu_count", R"(got string "8")"},
      {R"([{"features": {}, "duration_s": 0}])", "history[0].duration_s", "> 0"},
      {R"([{"features": {}, "duration_s": 5, "time": true}])", "history[0].time",
       "ISO 8601 string or Unix seconds"},
      {R"([{"features": {}, "duration_s": 5, "time": null}])", "history[0].time", "(got null)"},
      {R"([7])", "history[0]", "must be an observation"},
      {R"({"histroy": []})", "history", "missing required field"},
      {R"({"history": [], "extra": 1})", "extra", "unknown field"},
      {R"({"history": [{"features": {}, "duration_s": 5, "duration_s": 6}]})",
       "history[0].duration_s", "duplicate key"},
      {R"([{"features": {}, "duration_s": 5, "duration_s": 6}])", "history[0].duration_s",
       "duplicate key"},
  };
  for (const Case& c : training) ExpectFails(Status(ParseTrainingHistory(c.json)), c);
  const Case quantization[] = {
      {R"([{"params_b": 7, "algorithm": "awq", "duration_s": 60, "tme": 0}])", "history[0].tme",
       R"(did you mean "time"?)"},
      {R"([{"params_b": 7, "algorithm": "awq", "duration_s": -60}])", "history[0].duration_s",
       "> 0"},
      {R"([{"params_b": 7, "algorithm": "awq", "duration_s": 60, "gpu_type": "Z80"}])",
       "history[0].gpu_type", "unknown GPU type"},
  };
  for (const Case& c : quantization) ExpectFails(Status(ParseQuantizationHistory(c.json)), c);
}

TEST(StrictModels, SavedModelsAreReadStrictly) {
  const Case training[] = {
      {R"({"kind": "training", "version": 1, "histroy": []})", "histroy",
       R"(did you mean "history"?)"},
      {R"({"kind": "training", "version": 1, "options": {"half_life_day": 3}})",
       "options.half_life_day", R"(did you mean "half_life_days"?)"},
      {R"({"kind": "training", "version": 1, "options": {"max_history": 0}})",
       "options.max_history", "integer from 1"},
      {R"({"kind": "training", "version": 1, "options": {"half_life_days": "3"}})",
       "options.half_life_days", R"(got string "3")"},
      {R"({"kind": "training", "version": "1"})", "version", "must be an integer"},
      {R"({"version": 1})", "kind", "missing required field"},
      {R"({"kind": "training", "version": 1, "history": {}})", "history", "must be a list"},
      {R"([1])", "model", "must be a saved model"},
  };
  for (const Case& c : training) {
    TrainingForecaster f;
    ExpectFails(f.Load(c.json), c);
  }
  const Case quantization[] = {
      {R"({"kind": "quantization", "version": 1, "options": {"leave_out_days": 3}})",
       "options.leave_out_days", "unknown field"},
      {R"({"kind": "quantization", "version": 1, "history": [{"params_b": 7}]})",
       "history[0].algorithm", "missing required field"},
  };
  for (const Case& c : quantization) {
    QuantizationForecaster f;
    ExpectFails(f.Load(c.json), c);
  }
  const std::string demand_history =
      R"("history": {"first_hour": 96, "last_time_s": 345600, "rates": [1, null, 2],)";
  const Case demand[] = {
      {R"({"kind": "demand", "version": 1, "options": {"week_half_lives": 2}})",
       "options.week_half_lives", R"(did you mean "week_half_life"?)"},
      {R"({"kind": "demand", "version": 1, "options": {"max_history_weeks": 2.5}})",
       "options.max_history_weeks", "must be an integer"},
      {R"({"kind": "demand", "version": 1, "options": {"method": "profiles"}})", "options.method",
       R"(must be "profile" or "level-shape")"},
      {"{\"kind\": \"demand\", \"version\": 1, " + demand_history + " \"counts\": [1, 0]}}",
       "history.counts", "as long as history.rates"},
      {"{\"kind\": \"demand\", \"version\": 1, " + demand_history + " \"counts\": [1, 0, -1]}}",
       "history.counts[2]", "integer from 0"},
      {"{\"kind\": \"demand\", \"version\": 1, " + demand_history +
           " \"counts\": [1, 0, 1], \"count\": []}}",
       "history.count", R"(did you mean "counts"?)"},
      {R"({"kind": "demand", "version": 1, "history": {"first_hour": 0.5, "last_time_s": 0,
           "rates": [], "counts": []}})",
       "history.first_hour", "must be an integer"},
  };
  for (const Case& c : demand) {
    DemandForecaster f;
    ExpectFails(f.Load(c.json), c);
  }
}

TEST(StrictModels, ExtensionsAndTheFittedBlockAreAccepted) {
  TrainingForecaster f;
  auto ok = f.Load(R"({"kind": "training", "version": 1, "x-saved-by": "a tool",
                       "options": {"x-note": 1}, "fitted": {"anything": [1, 2]},
                       "history": [{"features": {"gpu_count": 2}, "duration_s": 60,
                                    "x-job": "j1"}]})");
  ASSERT_TRUE(ok.has_value()) << ok.error().ToString();
  EXPECT_EQ(f.history().size(), 1u);
}

// Everything a forecaster writes, it reads back: every training feature, times, options, and a
// demand history with hours that saw no observation (written as null).
TEST(RoundTrip, TrainingModelWithEveryFeatureReadsBack) {
  auto every = ParseTrainingFeatures(R"({
    "method": "rlhf", "params_b": 8, "active_params_b": 8, "trainable_fraction": 0.5,
    "tokens": 4e6, "samples": 1000, "seq_len": 4096, "epochs": 2, "global_batch": 64,
    "precision": "fp8", "gpu_type": "H100", "gpu_count": 16, "tp": 2, "pp": 2, "dp": 4,
    "activation_checkpointing": true, "flops_per_sample": 1e12, "rollout_tokens": 2048,
    "generations_per_prompt": 4, "teacher_params_b": 70, "critic_params_b": 7,
    "reward_params_b": 7, "gpu_memory_gb": 80, "mfu": 0.35, "peak_tflops": 900,
    "overhead_s": 300, "model": "llama-8b", "group": "team-a"})");
  ASSERT_TRUE(every.has_value()) << every.error().ToString();
  TrainingOptions options;
  options.half_life_days = 30.5;
  options.leave_out_days = 0;
  options.max_history = 100;
  TrainingForecaster f(options);
  std::vector<TrainingObservation> history;
  for (int i = 0; i < 12; ++i) {
    TrainingObservation o;
    o.features = *every;
    o.features.gpu_count = 16;
    o.duration_s = 3600.0 * (1 + 0.1 * (i % 4));
    if (i % 2 == 0) o.time_s = 1.7e9 + i * 86400.0;
    history.push_back(o);
  }
  // One history-only observation (no physics): its features are nearly empty.
  TrainingObservation bare;
  bare.features.model = "mystery";
  bare.duration_s = 120;
  history.push_back(bare);
  ASSERT_TRUE(f.Fit(history).has_value());
  const std::string saved = f.Save();
  TrainingForecaster g;
  auto loaded = g.Load(saved);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(g.Save(), saved);
  EXPECT_DOUBLE_EQ(g.Predict(*every)->p50, f.Predict(*every)->p50);
  // A saved model serves as a history file of its kind, and of no other.
  auto as_history = ParseTrainingHistory(saved);
  ASSERT_TRUE(as_history.has_value()) << as_history.error().ToString();
  EXPECT_EQ(as_history->size(), history.size());
  EXPECT_EQ(ParseQuantizationHistory(saved).error().field, "kind");
}

TEST(RoundTrip, QuantizationModelReadsBack) {
  QuantizationOptions options;
  options.half_life_days = 12.25;
  options.max_history = 7;
  QuantizationForecaster f(options);
  std::vector<QuantizationObservation> history;
  for (int i = 0; i < 5; ++i) {
    QuantizationObservation o;
    o.query = {13.5, QuantAlgorithm::kAwq, "H100", i % 2 ? "llama-13b" : ""};
    o.duration_s = 1800 + 60.0 * i;
    if (i % 2) o.time_s = 1.7e9 + i * 3600.0;
    history.push_back(o);
  }
  ASSERT_TRUE(f.Fit(history).has_value());
  const std::string saved = f.Save();
  QuantizationForecaster g;
  auto loaded = g.Load(saved);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
  EXPECT_EQ(g.Save(), saved);
}

TEST(RoundTrip, DemandModelsWithEmptyHoursReadBack) {
  for (const DemandMethod method : {DemandMethod::kProfile, DemandMethod::kLevelShape}) {
    DemandOptions options;
    options.method = method;
    options.max_history_weeks = 3;
    options.trend_damping = 0.25;
    DemandForecaster f(options);
    std::vector<RatePoint> points;
    for (int h = 0; h < 10 * 24; ++h) {
      if (h % 17 == 5) continue;  // an hour without observations: saved as null
      points.push_back({kMonday + h * 3600.0, 50 + 20 * std::sin(h / 3.8)});
    }
    ASSERT_TRUE(f.Fit(points).has_value());
    const std::string saved = f.Save();
    ASSERT_NE(saved.find("null"), std::string::npos);
    DemandForecaster g;
    auto loaded = g.Load(saved);
    ASSERT_TRUE(loaded.has_value()) << loaded.error().ToString();
    EXPECT_EQ(g.Save(), saved);
  }
}

}  // namespace
}  // namespace ordo::forecast
