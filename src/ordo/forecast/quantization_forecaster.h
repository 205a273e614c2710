// Quantization time from parameter count x algorithm (bitsandbytes, AWQ, GPTQ) x GPU type,
// calibrated on published figures and refit from the cluster's own history.
//
// The calibration: time = rate[algorithm] x parameters x (312 / GPU bf16 TFLOPS)^0.5. Time grows
// linearly with parameters (the published GPTQ runtimes, 1.7B to 176B, give an exponent of 0.96)
// and less than linearly with GPU speed, since loading weights, calibration batches and packing
// are partly bound by memory, disk and CPU; the square root is our assumption, not a published
// figure. GPTQ and AWQ quantize layer by layer on one GPU, so more GPUs do not shorten them.
// rate[algorithm] is the geometric mean over that algorithm's published points; the spread
// (p10/p90) is the points' leave-one-out scatter. History then corrects the rate per algorithm,
// per GPU type and per model (correction_model.h). Sources are listed in docs/forecasting.md and
// returned by PublishedQuantizationFigures().
//
//   QuantizationForecaster f;                               // published calibration only
//   auto q = f.Predict({.params_b = 70, .algorithm = QuantAlgorithm::kAwq});  // p50 ~2.4 h, A100
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/forecast/correction_model.h"
#include "ordo/forecast/forecaster.h"

namespace ordo::forecast {

/// Stored in histories: values only grow at the end.
enum class QuantAlgorithm : int { kBitsandbytes = 0, kAwq = 1, kGptq = 2 };
inline constexpr int kQuantAlgorithmCount = 3;
std::string_view QuantAlgorithmName(QuantAlgorithm a);
/// "bitsandbytes" (also "bnb", "nf4", "int8", "llm.int8"), "awq", "gptq".
std::optional<QuantAlgorithm> ParseQuantAlgorithm(std::string_view name);

struct QuantizationQuery {
  double params_b = 0;  // billions, > 0
  QuantAlgorithm algorithm = QuantAlgorithm::kGptq;
  std::string gpu_type = "A100";
  std::string model;  // identity for history ("llama-3-70b"); optional
};

struct QuantizationObservation {
  QuantizationQuery query;
  double duration_s = 0;
  std::optional<double> time_s;  // Unix seconds, for recency
};

/// One published timing the calibration rests on.
struct PublishedFigure {
  std::string source;  // where it was published
  QuantAlgorithm algorithm;
  double params_b;
  std::string gpu_type;  // as published ("A100", "2x H100")
  double seconds;
};
const std::vector<PublishedFigure>& PublishedQuantizationFigures();

struct QuantizationOptions {
  double half_life_days = 180;
  int max_history = 50000;
};

class QuantizationForecaster final
    : public ForecasterOf<QuantizationObservation, QuantizationQuery> {
 public:
  QuantizationForecaster() : QuantizationForecaster(QuantizationOptions{}) {}
  explicit QuantizationForecaster(QuantizationOptions options);
  /// Calibrated on `figures` instead of the published ones (the evaluation leaves one out).
  QuantizationForecaster(QuantizationOptions options, const std::vector<PublishedFigure>& figures);

  [[nodiscard]] std::string_view kind() const override { return "quantization"; }
  [[nodiscard]] std::string Save() const override;
  [[nodiscard]] Result<void> Load(std::string_view json) override;
  [[nodiscard]] Result<void> Fit(std::span<const QuantizationObservation> history) override;
  [[nodiscard]] Result<void> Refit(std::span<const QuantizationObservation> observations) override;
  /// Seconds. Errors name `params_b` or `gpu_type`.
  [[nodiscard]] Result<Quantiles> Predict(const QuantizationQuery& query) const override;

  /// The calibrated time before any history correction (seconds).
  [[nodiscard]] Result<double> Calibrated(const QuantizationQuery& query) const;

 private:
  void Calibrate(const std::vector<PublishedFigure>& figures);

  QuantizationOptions options_;
  std::array<double, kQuantAlgorithmCount> log_rate_{};  // log seconds per B params on an A100
  double sigma_ = 0.5;                                   // calibration scatter (log)
  std::vector<QuantizationObservation> history_;
  CorrectionModel correction_;
};

/// Reads a job's quantization features {"params_b", "algorithm", "gpu_type", "model"} strictly:
/// `params_b` and `algorithm` required, a known GPU type, unknown keys errors ("did you mean")
/// unless they start with `x-`. Errors name the field as `<path>.<key>`.
[[nodiscard]] Result<QuantizationQuery> ParseQuantizationFeatures(
    std::string_view json, const std::string& path = "features");

/// Reads a history: a JSON array (or {"history": [...]}, or a saved quantization model) of
/// {"params_b": 70, "algorithm": "awq", "gpu_type": "H100", "model": "...", "duration_s": 3600,
/// "time": ISO or Unix seconds}, each entry read as ParseQuantizationFeatures reads features
/// (`gpu_type` defaults to A100). Errors name the entry (`history[3].duration_s`).
[[nodiscard]] Result<std::vector<QuantizationObservation>> ParseQuantizationHistory(
    std::string_view json);

}  // namespace ordo::forecast
