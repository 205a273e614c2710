// Training duration: the physical prior of training_features.h times a correction learned from
// the cluster's history (correction_model.h), with p10/p50/p90 from the history's own errors.
//
// Two sub-models share the history. Jobs with physical features (method, parameters, tokens) are
// corrected relative to the prior, by regression on the features (GPU count, size, tokens, batch,
// method, GPU family, precision, checkpointing) plus shrunk effects of the model and of the model
// on that GPU type and count. Jobs without them (a trace that only records GPU count and cluster)
// are forecast from history alone: the typical duration, corrected by GPU count and shrunk effects
// of the group (cluster, team) and group x GPU count. Recent observations weigh more (half-life
// 180 days). With no history at all, a physical job gets the prior and a default spread; a job
// without physics and without history is an error.
//
//   TrainingForecaster f;
//   f.Fit(history);                                  // past jobs with their durations
//   auto q = f.Predict(*ParseTrainingFeatures(json)); // seconds
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/forecast/correction_model.h"
#include "ordo/forecast/forecaster.h"
#include "ordo/forecast/training_features.h"

namespace ordo::forecast {

struct TrainingObservation {
  TrainingFeatures features;
  double duration_s = 0;         // how long it ran
  std::optional<double> time_s;  // when (Unix seconds), for recency; absent = as recent as any
};

struct TrainingOptions {
  double half_life_days = 180;
  // When judging its own spread, the forecaster forecasts each past job without the similar jobs
  // run within this many days of it (a burst of reruns is one piece of evidence).
  double leave_out_days = 7;
  int max_history = 50000;  // Refit keeps the most recent observations
};

/// A forecast with what it rests on.
struct TrainingForecast {
  Quantiles seconds;
  std::optional<double> prior_s;  // the physical prior, when the features allow one
  int seen = 0;                   // 2: this model on this GPU type and count was seen; 1: the
                                  // model (or group) only; 0: nothing like it
  int history = 0;                // observations of the sub-model used
};

class TrainingForecaster final : public ForecasterOf<TrainingObservation, TrainingFeatures> {
 public:
  TrainingForecaster() = default;
  explicit TrainingForecaster(TrainingOptions options) : options_(options) {}

  [[nodiscard]] std::string_view kind() const override { return "training"; }
  [[nodiscard]] std::string Save() const override;
  [[nodiscard]] Result<void> Load(std::string_view json) override;
  [[nodiscard]] Result<void> Fit(std::span<const TrainingObservation> history) override;
  [[nodiscard]] Result<void> Refit(std::span<const TrainingObservation> observations) override;
  [[nodiscard]] Result<Quantiles> Predict(const TrainingFeatures& query) const override;

  /// As Predict, with what the forecast rests on. `time_s` (Unix seconds) is when the job will
  /// run; absent, the time of the newest observation.
  [[nodiscard]] Result<TrainingForecast> Forecast(const TrainingFeatures& query,
                                                  std::optional<double> time_s = {}) const;
  [[nodiscard]] const std::vector<TrainingObservation>& history() const { return history_; }

 private:
  TrainingOptions options_;
  std::vector<TrainingObservation> history_;
  CorrectionModel physical_;
  CorrectionModel history_only_;
  double history_only_base_ = 0;         // log of the weighted median duration of history-only jobs
  std::optional<double> latest_time_s_;  // newest observation's time
  int physical_n_ = 0;
  int history_only_n_ = 0;
};

/// Reads a history: a JSON array (or {"history": [...]}) of
/// {"features": {...}, "duration_s": 5400, "time": "2024-05-06T14:00:00Z" | 1714996800}.
/// Errors name the entry (`history[3].duration_s`, `history[3].features.method`).
[[nodiscard]] Result<std::vector<TrainingObservation>> ParseTrainingHistory(std::string_view json);

}  // namespace ordo::forecast
