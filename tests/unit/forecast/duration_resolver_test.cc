#include "ordo/forecast/duration_resolver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ordo::forecast {
namespace {

Job MakeJob(JobKind kind, int gpus) {
  Job j;
  j.id = "j";
  j.kind = kind;
  j.shapes = {Shape{gpus, 0}};
  return j;
}

TEST(ForecastDurationSteps, TrainingJobUsesItsShapesGpusAndType) {
  Job job = MakeJob(JobKind::kTraining, 8);
  job.requirement.gpu_type = "H100";
  const std::string features = R"({"method": "sft", "params_b": 7, "tokens": 1e9})";
  auto steps = ForecastDurationSteps(job, features, 60);
  ASSERT_TRUE(steps.has_value()) << steps.error().ToString();
  // The same features with the GPU count and type spelled out give the same answer.
  auto explicit_steps = ForecastDurationSteps(
      MakeJob(JobKind::kTraining, 8),
      R"({"method": "sft", "params_b": 7, "tokens": 1e9, "gpu_count": 8, "gpu_type": "H100"})", 60);
  EXPECT_EQ(*steps, *explicit_steps);
  // Median: the prior, 6 x 7e9 x 1e9 / (8 x 989e12 x MFU), in whole hours, rounded up.
  auto prior = PhysicalPrior(*ParseTrainingFeatures(
      R"({"method": "sft", "params_b": 7, "tokens": 1e9, "gpu_count": 8, "gpu_type": "H100"})"));
  EXPECT_EQ(*steps, static_cast<int>(std::ceil(prior->seconds / 3600)));
  // Fewer GPUs take longer; finer steps count more of them; p90 is longer than p50.
  EXPECT_GT(*ForecastDurationSteps(MakeJob(JobKind::kTraining, 2), features, 60), *steps);
  EXPECT_GT(*ForecastDurationSteps(job, features, 15), *steps);
  DurationResolverOptions p90;
  p90.level = QuantileLevel::kP90;
  EXPECT_GT(*ForecastDurationSteps(job, features, 15, p90),
            *ForecastDurationSteps(job, features, 15));
}

TEST(ForecastDurationSteps, QuantizationAndBatchInferenceJobs) {
  auto q = ForecastDurationSteps(MakeJob(JobKind::kQuantization, 1),
                                 R"({"params_b": 70, "algorithm": "gptq"})", 30);
  ASSERT_TRUE(q.has_value()) << q.error().ToString();
  EXPECT_GE(*q, 2);  // GPTQ on 70B takes well over an hour
  auto bnb = ForecastDurationSteps(MakeJob(JobKind::kQuantization, 1),
                                   R"({"params_b": 7, "algorithm": "bnb"})", 30);
  EXPECT_EQ(*bnb, 1);  // never below one step
  auto inf = ForecastDurationSteps(MakeJob(JobKind::kBatchInference, 4),
                                   R"({"params_b": 8, "tokens": 1e10, "gpu_type": "L40S"})", 60);
  ASSERT_TRUE(inf.has_value()) << inf.error().ToString();
  EXPECT_GE(*inf, 1);
}

TEST(ForecastDurationSteps, BadFeaturesNameTheFeature) {
  struct Case {
    JobKind kind;
    const char* json;
    const char* field;
  };
  const Case cases[] = {
      {JobKind::kTraining, R"({"method": "vibes", "params_b": 7, "tokens": 1})", "method"},
      {JobKind::kTraining, R"({"params_b": 7})", "method"},
      {JobKind::kTraining, R"({"method": "sft", "params_b": 7})", "tokens"},
      {JobKind::kTraining, "nope", ""},
      {JobKind::kQuantization, R"({"params_b": 7})", "algorithm"},
      {JobKind::kQuantization, R"({"params_b": 7, "algorithm": "awq", "bits": 4})", "bits"},
      {JobKind::kQuantization, R"({"algorithm": "awq"})", "params_b"},
  };
  for (const Case& c : cases) {
    auto r = ForecastDurationSteps(MakeJob(c.kind, 1), c.json, 60);
    ASSERT_FALSE(r.has_value()) << c.json;
    EXPECT_EQ(r.error().field, c.field) << c.json << " -> " << r.error().ToString();
  }
  EXPECT_EQ(ForecastDurationSteps(MakeJob(JobKind::kTraining, 1), "{}", 0).error().field,
            "step_minutes");
}

TEST(ForecastDurationSteps, UsesAFittedForecasterWhenGiven) {
  TrainingForecaster slow;
  std::vector<TrainingObservation> hist;
  for (int i = 0; i < 40; ++i) {
    TrainingObservation o;
    o.features = *ParseTrainingFeatures(R"({"method": "sft", "params_b": 7, "tokens": 1e9,
        "gpu_count": 8, "gpu_type": "H100", "model": "m"})");
    o.duration_s = 4 * PhysicalPrior(o.features)->seconds * (1 + 0.01 * (i % 7));
    hist.push_back(o);
  }
  ASSERT_TRUE(slow.Fit(hist).has_value());
  DurationResolverOptions opt;
  opt.training = &slow;
  const std::string f = R"({"method": "sft", "params_b": 7, "tokens": 1e9, "gpu_type": "H100",
                            "model": "m"})";
  const int plain = *ForecastDurationSteps(MakeJob(JobKind::kTraining, 8), f, 10);
  const int learned = *ForecastDurationSteps(MakeJob(JobKind::kTraining, 8), f, 10, opt);
  EXPECT_GT(learned, 3 * plain);
}

}  // namespace
}  // namespace ordo::forecast
