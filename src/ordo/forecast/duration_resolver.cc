#include "ordo/forecast/duration_resolver.h"

#include <cmath>

#include "ordo/forecast/gpu_catalog.h"

namespace ordo::forecast {
namespace {

// The scenario reader prefixes errors with the job's `features` path (`jobs[3].features`), so
// fields here are relative to the features object: `method`, not `features.method`; "" for the
// object as a whole.
tl::unexpected<Error> Relative(Error e) {
  constexpr std::string_view kPrefix = "features";
  if (e.field == kPrefix) {
    e.field.clear();
  } else if (e.field.rfind("features.", 0) == 0) {
    e.field.erase(0, kPrefix.size() + 1);
  }
  return tl::unexpected<Error>(std::move(e));
}

Result<int> ToSteps(double seconds, int step_minutes) {
  if (!std::isfinite(seconds) || seconds < 0) {
    return Fail(Error{ErrorCode::kInternal, "", "the forecast is not a finite duration"});
  }
  const double steps = std::ceil(seconds / (step_minutes * 60.0) - 1e-9);
  if (steps > Limits::kMaxDurationSteps) {
    return FailInput("", "forecast duration of " + std::to_string(seconds / 3600) +
                             " hours exceeds the limit of " +
                             std::to_string(Limits::kMaxDurationSteps) + " steps");
  }
  return std::max(1, static_cast<int>(steps));
}

}  // namespace

Result<int> ForecastDurationSteps(const Job& job, std::string_view features_json,
                                  int step_minutes) {
  return ForecastDurationSteps(job, features_json, step_minutes, DurationResolverOptions{});
}

Result<int> ForecastDurationSteps(const Job& job, std::string_view features_json, int step_minutes,
                                  const DurationResolverOptions& options) {
  if (step_minutes < 1) return FailInput("step_minutes", "must be >= 1");
  const int job_gpus = job.shapes.empty() ? 0 : job.shapes.front().gpus;
  if (job.kind == JobKind::kQuantization) {
    auto q = ParseQuantizationFeatures(features_json);
    if (!q) return Relative(q.error());
    // The job's GPU type is where it will run, unless the features say otherwise.
    if (job.requirement.gpu_type && features_json.find("\"gpu_type\"") == std::string_view::npos &&
        FindGpu(*job.requirement.gpu_type)) {
      q->gpu_type = *job.requirement.gpu_type;
    }
    const QuantizationForecaster fallback;
    const QuantizationForecaster& f = options.quantization ? *options.quantization : fallback;
    auto quantiles = f.Predict(*q);
    if (!quantiles) return Relative(quantiles.error());
    return ToSteps(Pick(*quantiles, options.level), step_minutes);
  }
  auto features = ParseTrainingFeatures(features_json);
  if (!features) return Relative(features.error());
  if (!features->gpu_count && job_gpus > 0) features->gpu_count = job_gpus;
  if (features->gpu_type == "gpu" && job.requirement.gpu_type &&
      FindGpu(*job.requirement.gpu_type)) {
    features->gpu_type = *job.requirement.gpu_type;
  }
  if (job.kind == JobKind::kBatchInference && !features->method) {
    features->method = TrainingMethod::kBatchInference;
  }
  const TrainingForecaster fallback;
  const TrainingForecaster& f = options.training ? *options.training : fallback;
  auto quantiles = f.Predict(*features);
  if (!quantiles) return Relative(quantiles.error());
  return ToSteps(Pick(*quantiles, options.level), step_minutes);
}

}  // namespace ordo::forecast
