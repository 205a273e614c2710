// Resolving a job's duration from its `features` (spec: a job given `features` and no
// `duration_steps` gets its duration from the forecaster). The scenario reader calls this through
// io::ReadOptions::resolve_duration; the simulator and the service bind their fitted forecasters.
//
// Which quantile: the median (p50), rounded up to whole steps. Plans are re-made every step with
// the jobs that really run pinned, so a job that runs long is absorbed by re-planning, while
// planning every job at its p90 would hold blocks idle for the whole upper tail of every job (the
// p90 of a training duration is typically 1.5-3x its median). A caller that prefers safety over
// utilisation asks for QuantileLevel::kP90.
//
//   io::ReadOptions opt;
//   opt.resolve_duration = [](const Job& j, std::string_view f, int m) {
//     return forecast::ForecastDurationSteps(j, f, m);
//   };
#pragma once

#include <string_view>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
#include "ordo/forecast/forecaster.h"
#include "ordo/forecast/quantization_forecaster.h"
#include "ordo/forecast/training_forecaster.h"

namespace ordo::forecast {

struct DurationResolverOptions {
  QuantileLevel level = QuantileLevel::kP50;
  /// Fitted forecasters to use; null means the built-in prior/calibration without history.
  /// Not owned; must outlive the call.
  const TrainingForecaster* training = nullptr;
  const QuantizationForecaster* quantization = nullptr;
};

/// The duration, in steps of `step_minutes`, of `job` described by `features_json` (a JSON
/// object). Training and batch-inference jobs read training features (training_features.h), the
/// GPU count and type defaulting to the job's first shape and `gpu_type`; a batch-inference job
/// without `method` uses the batch-inference method. Quantization jobs read {"params_b",
/// "algorithm", "gpu_type", "model"}. Errors name the feature relative to the features object
/// (`method`, `params_b`; "" for the object itself), since the reader prefixes the job's path
/// (`jobs[3].features`). At least 1.
[[nodiscard]] Result<int> ForecastDurationSteps(const Job& job, std::string_view features_json,
                                                int step_minutes);
[[nodiscard]] Result<int> ForecastDurationSteps(const Job& job, std::string_view features_json,
                                                int step_minutes,
                                                const DurationResolverOptions& options);

}  // namespace ordo::forecast
