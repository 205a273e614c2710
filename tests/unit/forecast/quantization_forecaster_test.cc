#include "ordo/forecast/quantization_forecaster.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ordo::forecast {
namespace {

QuantizationQuery Query(double params_b, QuantAlgorithm a, std::string gpu = "A100") {
  QuantizationQuery q;
  q.params_b = params_b;
  q.algorithm = a;
  q.gpu_type = std::move(gpu);
  return q;
}

TEST(QuantizationForecaster, CalibrationMatchesThePublishedFigures) {
  const QuantizationForecaster f;
  // Every published figure lies within the forecaster's p10-p90 or close to it (x2).
  for (const PublishedFigure& p : PublishedQuantizationFigures()) {
    auto q = f.Predict(Query(p.params_b, p.algorithm, p.gpu_type));
    ASSERT_TRUE(q.has_value()) << p.source;
    EXPECT_GT(p.seconds, q->p10 / 2) << p.source;
    EXPECT_LT(p.seconds, q->p90 * 2) << p.source;
  }
  // GPTQ on OPT-175B took 4.2 h on one A100.
  auto gptq175 = f.Predict(Query(175, QuantAlgorithm::kGptq));
  EXPECT_GT(gptq175->p50, 2.5 * 3600);
  EXPECT_LT(gptq175->p50, 6.0 * 3600);
}

TEST(QuantizationForecaster, SizeAlgorithmAndGpuMoveItTheRightWay) {
  const QuantizationForecaster f;
  const double gptq7 = f.Predict(Query(7, QuantAlgorithm::kGptq))->p50;
  const double gptq70 = f.Predict(Query(70, QuantAlgorithm::kGptq))->p50;
  const double bnb70 = f.Predict(Query(70, QuantAlgorithm::kBitsandbytes))->p50;
  const double awq70 = f.Predict(Query(70, QuantAlgorithm::kAwq))->p50;
  const double gptq70_h100 = f.Predict(Query(70, QuantAlgorithm::kGptq, "H100"))->p50;
  const double gptq70_t4 = f.Predict(Query(70, QuantAlgorithm::kGptq, "T4"))->p50;
  EXPECT_NEAR(gptq70 / gptq7, 10, 0.01);  // linear in parameters
  EXPECT_LT(bnb70, gptq70 / 20);          // bitsandbytes quantizes while loading: minutes at most
  EXPECT_GT(awq70, gptq70 / 4);
  EXPECT_LT(gptq70_h100, gptq70);
  EXPECT_GT(gptq70_t4, gptq70);
  auto q = f.Predict(Query(70, QuantAlgorithm::kAwq));
  EXPECT_LT(q->p10, q->p50);
  EXPECT_GT(q->p90, q->p50);
}

TEST(QuantizationForecaster, RefitsFromHistory) {
  QuantizationForecaster f;
  const double before = f.Predict(Query(13, QuantAlgorithm::kAwq, "H100"))->p50;
  std::vector<QuantizationObservation> hist;
  for (int i = 0; i < 30; ++i) {
    QuantizationObservation o;
    o.query = Query(7.0 + i % 5, QuantAlgorithm::kAwq, "H100");
    o.duration_s = 3 * f.Calibrated(o.query).value() * (1 + 0.05 * (i % 3));
    o.time_s = 1.7e9 + i * 86400.0;
    hist.push_back(o);
  }
  ASSERT_TRUE(f.Fit(hist).has_value());
  const double after = f.Predict(Query(13, QuantAlgorithm::kAwq, "H100"))->p50;
  EXPECT_NEAR(after / before, 3, 0.6);
  // Another algorithm takes part of the lesson (the cluster may be slow for every algorithm),
  // shrunk, and is less sure of it.
  QuantizationForecaster fresh;
  const auto gptq = f.Predict(Query(13, QuantAlgorithm::kGptq));
  const double moved = gptq->p50 / fresh.Predict(Query(13, QuantAlgorithm::kGptq))->p50;
  EXPECT_GT(moved, 1.0);
  EXPECT_LT(moved, 2.5);
  const auto awq = f.Predict(Query(13, QuantAlgorithm::kAwq, "H100"));
  EXPECT_GT(gptq->p90 / gptq->p10, awq->p90 / awq->p10);
  // Save and load.
  QuantizationForecaster g;
  ASSERT_TRUE(g.Load(f.Save()).has_value());
  EXPECT_DOUBLE_EQ(g.Predict(Query(13, QuantAlgorithm::kAwq, "H100"))->p50, after);
}

TEST(QuantizationForecaster, BadInputNamesTheField) {
  const QuantizationForecaster f;
  EXPECT_EQ(f.Predict(Query(0, QuantAlgorithm::kGptq)).error().field, "params_b");
  EXPECT_EQ(f.Predict(Query(NAN, QuantAlgorithm::kGptq)).error().field, "params_b");
  EXPECT_EQ(f.Predict(Query(7, QuantAlgorithm::kGptq, "Z80")).error().field, "gpu_type");
  EXPECT_FALSE(ParseQuantAlgorithm("squeezellm").has_value());
  EXPECT_EQ(ParseQuantAlgorithm("BNB"), QuantAlgorithm::kBitsandbytes);
  auto h = ParseQuantizationHistory(R"([{"params_b": 7, "algorithm": "awq", "duration_s": 60},
                                         {"params_b": 7, "algorithm": "exl2", "duration_s": 60}])");
  ASSERT_FALSE(h.has_value());
  EXPECT_EQ(h.error().field, "history[1].algorithm");
  auto d = ParseQuantizationHistory(R"([{"params_b": 7, "algorithm": "awq"}])");
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().field, "history[0].duration_s");
  QuantizationForecaster g;
  auto wrong = g.Load(R"({"kind": "demand", "version": 1})");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().field, "kind");
}

}  // namespace
}  // namespace ordo::forecast
