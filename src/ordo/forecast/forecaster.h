// The Forecaster interface shared by the three forecasters of this folder (training duration,
// quantization time, real-time demand): quantiles out, versioned JSON in and out, learning from the
// history the cluster records.
//
// A forecaster is a plain value: no global state, no files, no clock. Callers read history (a CSV,
// the service's store) and hand it over; they write Save()'s text wherever they keep models.
//
//   DemandForecaster f;                       // or TrainingForecaster, QuantizationForecaster
//   if (auto ok = f.Fit(history); !ok) return ok.error();
//   Result<Quantiles> q = f.Predict(query);   // p10 <= p50 <= p90
//   std::string model = f.Save();             // {"kind": "demand", "version": 1, ...}
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "ordo/core/error.h"

namespace ordo::forecast {

/// Version of the JSON every forecaster's Save() writes. Load() accepts this version only (a newer
/// file is an error naming `version`, never silently misread).
inline constexpr int kModelFormatVersion = 1;

/// Three quantiles of one forecast, in the forecaster's unit (seconds for durations, the history's
/// rate unit for demand). Always p10 <= p50 <= p90.
struct Quantiles {
  double p10 = 0;
  double p50 = 0;
  double p90 = 0;
};

/// Which quantile a caller plans with (stored in options files: values only grow at the end).
enum class QuantileLevel : int { kP10 = 0, kP50 = 1, kP90 = 2 };

inline double Pick(const Quantiles& q, QuantileLevel level) {
  switch (level) {
    case QuantileLevel::kP10:
      return q.p10;
    case QuantileLevel::kP50:
      return q.p50;
    case QuantileLevel::kP90:
      return q.p90;
  }
  return q.p50;
}

/// What every forecaster shares: a kind, and persistence as versioned JSON.
/// Thread-safety: const methods may run concurrently; Load/Fit/Refit need exclusive access.
class Forecaster {
 public:
  virtual ~Forecaster() = default;

  /// "training", "quantization" or "demand"; written as `kind` in Save()'s JSON.
  [[nodiscard]] virtual std::string_view kind() const = 0;

  /// The whole state (options, calibration, learned correction, the history kept for Refit) as
  /// JSON text with `kind` and `version`. Load(Save()) gives a forecaster that predicts the same.
  [[nodiscard]] virtual std::string Save() const = 0;

  /// Replaces the state with a saved one. On error (bad JSON, other kind, other version, a bad
  /// field, named as a path such as `correction.beta[2]`) the state is left unchanged.
  [[nodiscard]] virtual Result<void> Load(std::string_view json) = 0;
};

/// A forecaster that learns from observations of type `Observation` and answers `Query`s.
template <typename Observation, typename Query>
class ForecasterOf : public Forecaster {
 public:
  /// Learns from `history` alone: the built-in calibration (physical prior, published figures)
  /// stays; whatever was learned before is replaced. Empty history is allowed where the
  /// forecaster has a prior to fall back on, an error otherwise. Errors name the observation
  /// (`history[12].duration_s`).
  [[nodiscard]] virtual Result<void> Fit(std::span<const Observation> history) = 0;

  /// Adds `observations` to the history this forecaster keeps (the most recent ones, up to its
  /// option `max_history`) and fits again on all of it. Called as new outcomes arrive.
  [[nodiscard]] virtual Result<void> Refit(std::span<const Observation> observations) = 0;

  /// Quantiles for one query. An error names the field of the query at fault; "no data to
  /// forecast from" is also an error (kInvalidInput), never a made-up number.
  [[nodiscard]] virtual Result<Quantiles> Predict(const Query& query) const = 0;
};

}  // namespace ordo::forecast
