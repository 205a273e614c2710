#include "ordo/forecast/training_forecaster.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ordo/forecast/stats.h"
#include "tests/unit/forecast/real_data.h"

namespace ordo::forecast {
namespace {

TrainingFeatures Features(const std::string& json) {
  auto f = ParseTrainingFeatures(json);
  EXPECT_TRUE(f.has_value()) << json << ": " << (f ? "" : f.error().ToString());
  return f.value_or(TrainingFeatures{});
}

double Prior(const std::string& json) { return PhysicalPrior(Features(json))->seconds; }

TEST(TrainingFeatures, ParsesEveryFeature) {
  auto f = ParseTrainingFeatures(R"({
    "method": "RLVR", "params_b": 8, "active_params_b": 8, "trainable_fraction": 1,
    "samples": 1000, "seq_len": 4096, "epochs": 2, "global_batch": 64, "precision": "fp8",
    "gpu_type": "NVIDIA H100-SXM5-80GB", "gpu_count": 16, "tp": 2, "pp": 1, "dp": 8,
    "activation_checkpointing": true, "rollout_tokens": 2048, "generations_per_prompt": 16,
    "gpu_memory_gb": 80, "mfu": 0.35, "overhead_s": 300, "model": "llama-8b",
    "group": "team-a", "x-note": "ignored"})");
  ASSERT_TRUE(f.has_value()) << f.error().ToString();
  EXPECT_EQ(f->method, TrainingMethod::kRlvr);
  EXPECT_EQ(f->precision, Precision::kFp8);
  EXPECT_EQ(f->GpuCount(), 16);
  EXPECT_TRUE(f->activation_checkpointing);
  EXPECT_TRUE(f->HasPhysics());
  // And back.
  auto again = ParseTrainingFeatures(TrainingFeaturesToJson(*f));
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_DOUBLE_EQ(PhysicalPrior(*again)->seconds, PhysicalPrior(*f)->seconds);
}

TEST(TrainingFeatures, BadFeaturesNameTheField) {
  struct Case {
    const char* json;
    const char* field;
  };
  const Case cases[] = {
      {"[1]", "features"},
      {"{", "features"},
      {R"({"method": "magic"})", "features.method"},
      {R"({"method": 3})", "features.method"},
      {R"({"params_b": "seven"})", "features.params_b"},
      {R"({"params_b": -1})", "features.params_b"},
      {R"({"tokens": 0})", "features.tokens"},
      {R"({"trainable_fraction": 1.5})", "features.trainable_fraction"},
      {R"({"gpu_count": 2.5})", "features.gpu_count"},
      {R"({"gpu_count": 8, "tp": 2, "dp": 2})", "features.dp"},
      {R"({"gpu_count": 6, "tp": 4})", "features.gpu_count"},
      {R"({"gpu_type": "H1OO"})", "features.gpu_type"},
      {R"({"precision": "int3"})", "features.precision"},
      {R"({"activation_checkpointing": "yes"})", "features.activation_checkpointing"},
      {R"({"paramz_b": 7})", "features.paramz_b"},
      {R"({"method": "distillation", "params_b": 1, "tokens": 1e9})", "features.teacher_params_b"},
  };
  for (const Case& c : cases) {
    auto f = ParseTrainingFeatures(c.json);
    ASSERT_FALSE(f.has_value()) << c.json;
    EXPECT_EQ(f.error().field, c.field) << c.json << " -> " << f.error().ToString();
    EXPECT_EQ(f.error().code, ErrorCode::kInvalidInput);
  }
}

TEST(PhysicalPrior, FollowsTheFlopsArithmetic) {
  // 6 N T / (GPUs x peak x MFU): 7B, 1e9 tokens, 8 H100 at the MFU given.
  const double s = Prior(R"({"method": "pretrain", "params_b": 7, "tokens": 1e9,
                             "gpu_type": "H100", "gpu_count": 8, "mfu": 0.5})");
  EXPECT_NEAR(s, 6 * 7e9 * 1e9 / (8 * 989e12 * 0.5), 1.0);
}

TEST(PhysicalPrior, MethodsGpusAndPrecisionMoveItTheRightWay) {
  const std::string base = R"("params_b": 70, "tokens": 1e8, "gpu_type": "H100", )";
  const double full = Prior("{" + base + R"("method": "full_finetune", "gpu_count": 8})");
  const double lora = Prior("{" + base + R"("method": "lora", "gpu_count": 8})");
  const double qlora = Prior("{" + base + R"("method": "qlora", "gpu_count": 8})");
  const double dpo = Prior("{" + base + R"("method": "dpo", "gpu_count": 8})");
  const double rlvr = Prior("{" + base + R"("method": "rlvr", "gpu_count": 8})");
  const double rlhf = Prior("{" + base + R"("method": "rlhf", "gpu_count": 8})");
  const double more = Prior("{" + base + R"("method": "full_finetune", "gpu_count": 64})");
  const double fp8 = Prior("{" + base + R"("method": "full_finetune", "gpu_count": 8,
                                          "precision": "fp8"})");
  const double ckpt = Prior("{" + base + R"("method": "full_finetune", "gpu_count": 8,
                                           "activation_checkpointing": true})");
  EXPECT_LT(lora, 0.75 * full);  // no weight gradients for the frozen base
  EXPECT_GT(qlora, lora);        // dequantisation
  EXPECT_GT(dpo, full);          // the reference model's forward
  EXPECT_GT(rlvr, 4 * full);     // 8 generations per prompt, generated then trained on
  EXPECT_GT(rlhf, full);         // critic, reference, reward and generation
  EXPECT_LT(more, full / 6);     // 8x the GPUs, a little less efficient
  EXPECT_GT(more, full / 8);
  EXPECT_NEAR(fp8, full / 2, full * 0.01);
  EXPECT_NEAR(ckpt, full * 4 / 3, full * 0.01);
  // A slower GPU takes longer.
  EXPECT_GT(Prior(R"({"params_b": 70, "tokens": 1e8, "gpu_type": "A100",
                      "method": "full_finetune", "gpu_count": 8})"),
            2.5 * full);
}

TEST(PhysicalPrior, MissingPhysicsIsAnError) {
  auto p = PhysicalPrior(Features(R"({"method": "sft", "params_b": 7})"));
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().field, "features.tokens");
}

TEST(RecommendGpus, PowerOfTwoFromMemory) {
  // 70B full fine-tune: 16 bytes/param = 1.12 TB of state -> at least 16 x 80 GB.
  auto full = RecommendGpus(Features(R"({"method": "full_finetune", "params_b": 70,
      "seq_len": 4096, "gpu_type": "H100", "activation_checkpointing": true})"));
  ASSERT_TRUE(full.has_value());
  EXPECT_TRUE(full->fits);
  EXPECT_GE(full->gpus, 16);
  EXPECT_EQ(full->gpus & (full->gpus - 1), 0);
  EXPECT_NEAR(full->state_gb, 1120, 1);
  // 13B QLoRA fits on one 24 GB GPU; 13B LoRA in bf16 (26 GB of weights) does not.
  auto qlora = RecommendGpus(Features(R"({"method": "qlora", "params_b": 13, "seq_len": 2048,
      "gpu_type": "L4", "activation_checkpointing": true})"));
  EXPECT_EQ(qlora->gpus, 1);
  auto lora = RecommendGpus(Features(R"({"method": "lora", "params_b": 13, "seq_len": 2048,
      "gpu_type": "L4", "activation_checkpointing": true})"));
  EXPECT_EQ(lora->gpus, 2);
  // Bigger GPUs need fewer of them.
  auto b200 = RecommendGpus(Features(R"({"method": "full_finetune", "params_b": 70,
      "seq_len": 4096, "gpu_type": "B200", "activation_checkpointing": true})"));
  EXPECT_LT(b200->gpus, full->gpus);
  // tp * pp is a floor.
  auto tp = RecommendGpus(Features(R"({"method": "lora", "params_b": 1, "tp": 4,
      "gpu_type": "H100"})"));
  EXPECT_EQ(tp->gpus, 4);
}

// A synthetic cluster whose jobs run `slowdown` times longer than the prior, with noise.
std::vector<TrainingObservation> History(int n, double slowdown, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, 0.2);
  const char* methods[] = {"sft", "lora", "pretrain", "dpo"};
  const int gpus[] = {8, 16, 32, 64};
  std::vector<TrainingObservation> out;
  for (int i = 0; i < n; ++i) {
    const char* m = methods[i % 4];
    const int g = gpus[(i / 4) % 4];
    const double params = 7.0 * (1 + (i / 16) % 3);
    TrainingObservation o;
    o.features = Features(std::string(R"({"method": ")") + m + R"(", "params_b": )" +
                          std::to_string(params) + R"(, "tokens": 2e8, "gpu_type": "H100",
                          "gpu_count": )" +
                          std::to_string(g) + R"(, "model": "m)" + std::to_string(i % 6) + R"("})");
    o.duration_s = PhysicalPrior(o.features)->seconds * slowdown * std::exp(noise(rng));
    o.time_s = 1.7e9 + i * 3600.0;
    out.push_back(std::move(o));
  }
  return out;
}

TEST(TrainingForecaster, WithoutHistoryItIsThePriorWithADefaultSpread) {
  TrainingForecaster f;
  const TrainingFeatures q = Features(R"({"method": "sft", "params_b": 7, "tokens": 1e9,
                                          "gpu_type": "H100", "gpu_count": 8})");
  auto r = f.Forecast(q);
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->seconds.p50, *r->prior_s, 1e-6 * *r->prior_s);
  EXPECT_LT(r->seconds.p10, 0.6 * r->seconds.p50);
  EXPECT_GT(r->seconds.p90, 1.6 * r->seconds.p50);
  EXPECT_EQ(r->history, 0);
}

TEST(TrainingForecaster, LearnsASystematicSlowdownAndCalibratesItsSpread) {
  const auto all = History(240, 2.0, 1);
  const std::vector<TrainingObservation> train(all.begin(), all.begin() + 200);
  TrainingForecaster f;
  ASSERT_TRUE(f.Fit(train).has_value());
  int covered = 0;
  double log_err = 0;
  for (std::size_t i = 200; i < all.size(); ++i) {
    auto r = f.Forecast(all[i].features);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->seen, 2);
    covered += all[i].duration_s >= r->seconds.p10 && all[i].duration_s <= r->seconds.p90;
    log_err += std::fabs(std::log(r->seconds.p50 / all[i].duration_s));
  }
  EXPECT_GE(covered, 26);  // of 40: 80% nominal, with slack for 40 draws
  EXPECT_LE(covered, 39);
  EXPECT_LT(log_err / 40, 0.25);
  // An unseen model still gets the cluster-wide slowdown, with a wider interval.
  auto fresh = f.Forecast(Features(R"({"method": "sft", "params_b": 13, "tokens": 2e8,
      "gpu_type": "H100", "gpu_count": 8, "model": "brand-new"})"));
  EXPECT_EQ(fresh->seen, 0);
  EXPECT_NEAR(std::log(fresh->seconds.p50 / *fresh->prior_s), std::log(2.0), 0.3);
}

TEST(TrainingForecaster, HistoryOnlyJobsUseSimilarJobs) {
  std::vector<TrainingObservation> hist;
  for (int i = 0; i < 300; ++i) {
    TrainingObservation o;
    o.features.gpu_count = i % 2 ? 8 : 1;
    o.features.group = i % 3 ? "cluster-a" : "cluster-b";
    // Cluster b's jobs run three times longer; 8-GPU jobs twice as long as 1-GPU jobs.
    o.duration_s = 1000.0 * (i % 3 ? 1 : 3) * (i % 2 ? 2 : 1) * (1 + 0.1 * (i % 5));
    hist.push_back(o);
  }
  TrainingForecaster f;
  ASSERT_TRUE(f.Fit(hist).has_value());
  TrainingFeatures a1, b8;
  a1.gpu_count = 1;
  a1.group = "cluster-a";
  b8.gpu_count = 8;
  b8.group = "cluster-b";
  auto qa = f.Predict(a1);
  auto qb = f.Predict(b8);
  ASSERT_TRUE(qa.has_value() && qb.has_value());
  EXPECT_NEAR(qa->p50, 1200, 250);
  EXPECT_NEAR(qb->p50, 7200, 1500);
  EXPECT_LT(qa->p10, qa->p50);
  EXPECT_GT(qa->p90, qa->p50);
}

TEST(TrainingForecaster, NoPhysicsAndNoHistoryIsAnError) {
  TrainingForecaster f;
  TrainingFeatures q;
  q.gpu_count = 8;
  auto r = f.Predict(q);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "features.method");
}

TEST(TrainingForecaster, RefitAddsToTheHistory) {
  const auto all = History(80, 3.0, 2);
  TrainingForecaster f;
  ASSERT_TRUE(f.Fit({all.begin(), all.begin() + 40}).has_value());
  ASSERT_TRUE(f.Refit({all.begin() + 40, all.end()}).has_value());
  EXPECT_EQ(f.history().size(), 80u);
  auto r = f.Forecast(all.front().features);
  EXPECT_NEAR(std::log(r->seconds.p50 / *r->prior_s), std::log(3.0), 0.3);
}

TEST(TrainingForecaster, SaveAndLoadPredictTheSame) {
  TrainingForecaster f;
  ASSERT_TRUE(f.Fit(History(60, 1.5, 3)).has_value());
  TrainingForecaster g;
  ASSERT_TRUE(g.Load(f.Save()).has_value());
  const TrainingFeatures q = History(1, 1, 9).front().features;
  EXPECT_DOUBLE_EQ(f.Predict(q)->p50, g.Predict(q)->p50);
  EXPECT_DOUBLE_EQ(f.Predict(q)->p90, g.Predict(q)->p90);
  auto bad = g.Load(R"({"kind": "training", "version": 1, "history": [{"features": {}}]})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "history[0].duration_s");
}

TEST(ParseTrainingHistory, ErrorsNameTheEntry) {
  struct Case {
    const char* json;
    const char* field;
  };
  const Case cases[] = {
      {R"({"a": 1})", "history"},
      {R"([{"features": {"method": "sft"}, "duration_s": -5}])", "history[0].duration_s"},
      {R"([{"features": {}, "duration_s": 5}, {"duration_s": 5}])", "history[1].features"},
      {R"([{"features": {"method": "nope"}, "duration_s": 5}])", "history[0].features.method"},
      {R"([{"features": {}, "duration_s": 5, "time": "soon"}])", "history[0].time"},
      {R"([{"features": {}, "duration_s": 5, "extra": 1}])", "history[0].extra"},
  };
  for (const Case& c : cases) {
    auto h = ParseTrainingHistory(c.json);
    ASSERT_FALSE(h.has_value()) << c.json;
    EXPECT_EQ(h.error().field, c.field) << c.json << " -> " << h.error().ToString();
  }
  auto ok = ParseTrainingHistory(
      R"({"history": [{"features": {"gpu_count": 2}, "duration_s": 60, "time": "2024-01-01"}]})");
  ASSERT_TRUE(ok.has_value());
  EXPECT_DOUBLE_EQ(*(*ok)[0].time_s, 1704067200);
}

// MLPerf Training (real runs): fit on the rounds before the newest, score the newest round's runs
// of benchmarks seen before, against the median of similar runs. A subsample keeps it fast.
TEST(TrainingForecasterRealData, MlperfNewestRoundBeatsMedianOfSimilarRuns) {
  const auto dir = testing::RealDataDir();
  if (!dir)
    GTEST_SKIP() << "../shared/data not found (set ORDO_SOURCE_DIR); real-data test skipped";
  const auto rows = testing::ReadCsv(*dir / "jobs" / "mlperf_training_runs.csv");
  ASSERT_GT(rows.size(), 1000u);
  const auto& h = rows[0];
  const int c_round = testing::Column(h, "round"), c_bench = testing::Column(h, "benchmark"),
            c_status = testing::Column(h, "run_status"), c_div = testing::Column(h, "division"),
            c_acc = testing::Column(h, "total_accelerators"),
            c_gpu = testing::Column(h, "accelerator_model_name"),
            c_time = testing::Column(h, "run_time_s"),
            c_start = testing::Column(h, "run_start_unix_ms");
  ASSERT_GE(c_start, 0);
  // Only the LLM benchmarks, whose size and method are plain from their names.
  struct Spec {
    const char* bench;
    const char* json;
  };
  const Spec specs[] = {
      {"llama2_70b_lora", R"("method": "lora", "params_b": 70, "samples": 3500, "seq_len": 8192)"},
      {"gpt3", R"("method": "cpt", "params_b": 175, "samples": 6e5, "seq_len": 2048)"},
      {"llama31_405b", R"("method": "cpt", "params_b": 405, "samples": 3.7e5, "seq_len": 8192)"},
      {"bert", R"("method": "pretrain", "params_b": 0.34, "samples": 2e6, "seq_len": 512)"},
  };
  std::vector<TrainingObservation> train, test;
  std::map<std::string, std::vector<double>> similar;
  int row_index = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.size() < h.size() || r[static_cast<std::size_t>(c_status)] != "success" ||
        r[static_cast<std::size_t>(c_div)] != "closed" ||
        !FindGpu(r[static_cast<std::size_t>(c_gpu)])) {
      continue;
    }
    const Spec* spec = nullptr;
    for (const Spec& s : specs) {
      if (r[static_cast<std::size_t>(c_bench)] == s.bench) spec = &s;
    }
    const std::string acc = r[static_cast<std::size_t>(c_acc)];
    if (spec == nullptr || acc.empty() || acc == "0") continue;
    const bool newest = r[static_cast<std::size_t>(c_round)] == "v5.1";
    if (!newest && ++row_index % 3 != 0) continue;  // subsample the history
    TrainingObservation o;
    o.features = Features(std::string("{") + spec->json + R"(, "precision": "fp8", "gpu_count": )" +
                          acc + R"(, "gpu_type": ")" + r[static_cast<std::size_t>(c_gpu)] +
                          R"(", "model": ")" + spec->bench + R"("})");
    o.duration_s = std::stod(r[static_cast<std::size_t>(c_time)]);
    o.time_s = std::stod(r[static_cast<std::size_t>(c_start)]) / 1000;
    const std::string key = std::string(spec->bench) + "|" + acc;
    if (newest) {
      test.push_back(std::move(o));
    } else {
      similar[key].push_back(o.duration_s);
      similar[spec->bench].push_back(o.duration_s);
      train.push_back(std::move(o));
    }
  }
  ASSERT_GT(train.size(), 200u);
  ASSERT_GT(test.size(), 100u);
  TrainingForecaster f;
  ASSERT_TRUE(f.Fit(train).has_value());
  double ours = 0, naive = 0;
  int covered = 0;
  for (const auto& o : test) {
    const auto q = f.Forecast(o.features, o.time_s);
    ASSERT_TRUE(q.has_value());
    const std::string key = o.features.model + "|" + std::to_string(o.features.GpuCount());
    const auto& sim = similar.count(key) ? similar[key] : similar[o.features.model];
    const double med = Median(sim);
    const double a = o.duration_s;
    ours += Pinball(a, q->seconds.p10, 0.1) + Pinball(a, q->seconds.p50, 0.5) +
            Pinball(a, q->seconds.p90, 0.9);
    naive += 3 * Pinball(a, med, 0.5);
    covered += a >= q->seconds.p10 && a <= q->seconds.p90;
  }
  EXPECT_LT(ours, 0.7 * naive);
  EXPECT_GT(covered, static_cast<int>(0.6 * static_cast<double>(test.size())));
}

}  // namespace
}  // namespace ordo::forecast
