#include "ordo/forecast/training_forecaster.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ordo/forecast/model_format.h"
#include "ordo/forecast/stats.h"

namespace ordo::forecast {
namespace {

using internal::Json;
using internal::ObjectReader;

double SafeLog(double x) { return std::log(std::max(x, 1e-12)); }

double TotalTokens(const TrainingFeatures& f) {
  const double per_epoch = f.tokens ? *f.tokens : f.samples.value_or(0) * f.seq_len.value_or(2048);
  return per_epoch * f.epochs;
}

constexpr double kYear = 365.25 * 86400;

// Regressors of the physical sub-model; the same layout for every sample. `years` is the time
// relative to the newest observation (software and clusters get faster). Columns 2-3 and the
// method indicators describe the model rather than the run (see PhysicalGroupLevel).
std::vector<double> PhysicalRegressors(const TrainingFeatures& f, double prior_s, double years) {
  std::vector<double> x;
  x.reserve(9 + kTrainingMethodCount + kGpuFamilyCount + 3);
  x.push_back(SafeLog(prior_s));
  x.push_back(SafeLog(f.GpuCount()));
  x.push_back(SafeLog(*f.params_b));
  x.push_back(SafeLog(std::max(1.0, TotalTokens(f))));
  x.push_back(f.global_batch ? SafeLog(*f.global_batch) : 0.0);
  x.push_back(f.global_batch ? 1.0 : 0.0);
  x.push_back(f.activation_checkpointing ? 1.0 : 0.0);
  x.push_back(years);
  for (int m = 0; m < kTrainingMethodCount; ++m) {
    x.push_back(static_cast<int>(*f.method) == m ? 1.0 : 0.0);
  }
  const auto gpu = FindGpu(f.gpu_type);
  const int family = gpu ? static_cast<int>(gpu->family) : 0;
  for (int k = 0; k < kGpuFamilyCount; ++k) x.push_back(family == k ? 1.0 : 0.0);
  x.push_back(f.precision == Precision::kFp8 ? 1.0 : 0.0);
  x.push_back(f.precision == Precision::kFp4 ? 1.0 : 0.0);
  x.push_back(f.precision == Precision::kFp32 || f.precision == Precision::kTf32 ? 1.0 : 0.0);
  return x;
}

// The prior's own scale, the GPU count and the batch only teach through their variation inside
// a model's runs (how the prior scales, how the job scales out); parameters, tokens and method
// describe the model, so there are as many data points for them as there are models.
std::vector<ColumnKind> PhysicalColumnKinds() {
  std::vector<ColumnKind> k(8 + kTrainingMethodCount + kGpuFamilyCount + 3, ColumnKind::kJob);
  k[0] = k[4] = ColumnKind::kWithin;  // log prior, log batch
  k[2] = k[3] = ColumnKind::kGroup;   // log parameters, log tokens
  for (int m = 0; m < kTrainingMethodCount; ++m) {
    k[8 + static_cast<std::size_t>(m)] = ColumnKind::kGroup;
  }
  return k;
}

std::string GpuName(const TrainingFeatures& f) {
  const auto gpu = FindGpu(f.gpu_type);
  return gpu ? gpu->name : f.gpu_type;
}

std::string PhysicalKey1(const TrainingFeatures& f) {
  if (!f.model.empty()) return f.model;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g", *f.params_b);
  return std::string(TrainingMethodName(*f.method)) + "/" + buf + "B";
}

std::string HistoryKey1(const TrainingFeatures& f) {
  // Appended piece by piece: `"/" + std::string` trips GCC 12's -Wstringop-overflow at -O2.
  std::string k = f.group;
  auto add = [&k](std::string_view part) {
    if (!k.empty()) k += '/';
    k += part;
  };
  if (!f.model.empty()) add(f.model);
  if (f.method) add(TrainingMethodName(*f.method));
  return k;
}

std::string Key2(const std::string& key1, const TrainingFeatures& f, bool with_gpu_type) {
  return key1 + "|" + (with_gpu_type ? GpuName(f) + "|" : std::string()) +
         std::to_string(f.GpuCount());
}

Quantiles ToSeconds(double log_base, const std::array<double, 3>& q) {
  return Quantiles{std::exp(log_base + q[0]), std::exp(log_base + q[1]), std::exp(log_base + q[2])};
}

// A history's entries (`list` null: none).
Result<std::vector<TrainingObservation>> ReadHistory(const Json* list) {
  return internal::ReadObservations<TrainingObservation>(
      list, {"features", "duration_s", "time"},
      [](const ObjectReader& entry, TrainingObservation& o) -> Result<void> {
        const Json* features = entry.Find("features");
        if (features == nullptr) return Fail(entry.Missing("features"));
        ORDO_ASSIGN_OR_RETURN(o.features, ReadTrainingFeatures(*features, entry.Path("features")));
        return {};
      });
}

}  // namespace

Result<void> TrainingForecaster::Fit(std::span<const TrainingObservation> history) {
  TrainingForecaster next(options_);
  CorrectionOptions correction;
  correction.leave_out_window = options_.leave_out_days;
  next.physical_ = CorrectionModel(correction);
  next.history_only_ = CorrectionModel(correction);
  ORDO_RETURN_IF_ERROR(internal::CheckObservations(history));
  next.history_ = internal::MostRecent(history, options_.max_history);
  const std::optional<double> latest = internal::LatestTime(next.history_);
  const auto weight = [&](const TrainingObservation& o) {
    return internal::RecencyWeight(o.time_s, latest, options_.half_life_days);
  };
  std::vector<CorrectionSample> phys;
  std::vector<const TrainingObservation*> hist_obs;
  std::vector<double> hist_logs, hist_w;
  for (std::size_t i = 0; i < next.history_.size(); ++i) {
    const auto& o = next.history_[i];
    if (o.features.HasPhysics()) {
      auto prior = PhysicalPrior(o.features);
      if (!prior) {
        return FailInput("history[" + std::to_string(i) + "]." + prior.error().field,
                         prior.error().message);
      }
      CorrectionSample s;
      const double years = o.time_s && latest ? (*o.time_s - *latest) / kYear : 0.0;
      s.x = PhysicalRegressors(o.features, prior->seconds, years);
      s.y = SafeLog(o.duration_s) - SafeLog(prior->seconds);
      s.weight = weight(o);
      s.key1 = PhysicalKey1(o.features);
      s.key2 = Key2(s.key1, o.features, true);
      s.time = o.time_s.value_or(0) / 86400;
      s.timed = o.time_s.has_value();
      phys.push_back(std::move(s));
    } else {
      hist_obs.push_back(&o);
      hist_logs.push_back(SafeLog(o.duration_s));
      hist_w.push_back(weight(o));
    }
  }
  next.physical_.Fit(phys, PhysicalColumnKinds());
  next.latest_time_s_ = latest;
  next.physical_n_ = static_cast<int>(phys.size());
  next.history_only_n_ = static_cast<int>(hist_obs.size());
  if (!hist_obs.empty()) {
    // Centre on the typical duration so the regression's shrinkage pulls towards it, not to 1 s.
    next.history_only_base_ = WeightedQuantile(hist_logs, hist_w, 0.5);
    std::vector<CorrectionSample> hs;
    hs.reserve(hist_obs.size());
    for (std::size_t i = 0; i < hist_obs.size(); ++i) {
      const auto& f = hist_obs[i]->features;
      CorrectionSample s;
      s.x = {SafeLog(f.GpuCount())};
      s.y = hist_logs[i] - next.history_only_base_;
      s.weight = hist_w[i];
      s.key1 = HistoryKey1(f);
      s.key2 = Key2(s.key1, f, false);
      s.time = hist_obs[i]->time_s.value_or(0) / 86400;
      s.timed = hist_obs[i]->time_s.has_value();
      hs.push_back(std::move(s));
    }
    next.history_only_.Fit(hs);
  }
  *this = std::move(next);
  return {};
}

Result<void> TrainingForecaster::Refit(std::span<const TrainingObservation> observations) {
  std::vector<TrainingObservation> all = history_;
  all.insert(all.end(), observations.begin(), observations.end());
  return Fit(all);
}

Result<TrainingForecast> TrainingForecaster::Forecast(const TrainingFeatures& f,
                                                      std::optional<double> time_s) const {
  TrainingForecast out;
  if (f.HasPhysics()) {
    auto prior = PhysicalPrior(f);
    if (!prior) return tl::unexpected(prior.error());
    out.prior_s = prior->seconds;
    const std::string key1 = PhysicalKey1(f);
    // Extrapolate the learned speed-up over time by at most a year past the newest observation.
    const double years = time_s && latest_time_s_
                             ? std::clamp((*time_s - *latest_time_s_) / kYear, -50.0, 1.0)
                             : 0.0;
    const CorrectionPrediction c =
        physical_.Predict(PhysicalRegressors(f, prior->seconds, years), key1, Key2(key1, f, true));
    out.seconds = ToSeconds(SafeLog(prior->seconds), c.q);
    out.seen = c.seen;
    out.history = physical_n_;
    return out;
  }
  if (history_only_n_ == 0) {
    const char* missing = !f.method ? "method" : !f.params_b ? "params_b" : "tokens";
    return FailInput(std::string("features.") + missing,
                     "missing: without method, params_b and tokens (or samples and seq_len) the "
                     "forecaster needs history of similar jobs, and it has none");
  }
  const std::string key1 = HistoryKey1(f);
  const CorrectionPrediction c =
      history_only_.Predict({SafeLog(f.GpuCount())}, key1, Key2(key1, f, false));
  out.seconds = ToSeconds(history_only_base_, c.q);
  out.seen = c.seen;
  out.history = history_only_n_;
  return out;
}

Result<Quantiles> TrainingForecaster::Predict(const TrainingFeatures& query) const {
  auto f = Forecast(query);
  if (!f) return tl::unexpected(f.error());
  return f->seconds;
}

std::string TrainingForecaster::Save() const {
  Json hist = Json::array();
  for (const auto& o : history_) {
    Json e{{"features", Json::parse(TrainingFeaturesToJson(o.features))},
           {"duration_s", o.duration_s}};
    if (o.time_s) e["time"] = *o.time_s;
    hist.push_back(std::move(e));
  }
  Json doc{{"kind", "training"},
           {"version", kModelFormatVersion},
           {"options",
            {{"half_life_days", options_.half_life_days},
             {"leave_out_days", options_.leave_out_days},
             {"max_history", options_.max_history}}},
           {"history", std::move(hist)}};
  // For people to read; Load refits from the history, so these can never disagree with it.
  doc["fitted"] = {{"physical_observations", physical_n_},
                   {"history_only_observations", history_only_n_},
                   {"physical_beta", physical_.beta()},
                   {"history_only_median_s", history_only_n_ ? std::exp(history_only_base_) : 0.0}};
  return doc.dump(1);
}

Result<void> TrainingForecaster::Load(std::string_view json) {
  ORDO_ASSIGN_OR_RETURN(const Json doc, internal::ParseModelText(json));
  ORDO_ASSIGN_OR_RETURN(const ObjectReader model, internal::ReadModelHeader(doc, kind()));
  TrainingOptions options;
  if (const Json* value = model.Find("options")) {
    ORDO_ASSIGN_OR_RETURN(const ObjectReader o,
                          ObjectReader::Make(*value, model.Path("options"), "the options"));
    ORDO_RETURN_IF_ERROR(o.AllowOnly({"half_life_days", "leave_out_days", "max_history"}));
    ORDO_ASSIGN_OR_RETURN(const std::optional<double> half_life,
                          o.OptionalNumber("half_life_days", 0, internal::kMaxDays, true));
    ORDO_ASSIGN_OR_RETURN(const std::optional<double> leave_out,
                          o.OptionalNumber("leave_out_days", 0, internal::kMaxDays));
    ORDO_ASSIGN_OR_RETURN(const std::optional<int64_t> max_history,
                          o.OptionalInt("max_history", 1, internal::kMaxHistoryEntries));
    options.half_life_days = half_life.value_or(options.half_life_days);
    options.leave_out_days = leave_out.value_or(options.leave_out_days);
    if (max_history) options.max_history = static_cast<int>(*max_history);
  }
  ORDO_ASSIGN_OR_RETURN(const Json* list,
                        model.OptionalList("history", internal::kMaxHistoryEntries));
  ORDO_ASSIGN_OR_RETURN(const std::vector<TrainingObservation> history, ReadHistory(list));
  TrainingForecaster next(options);
  if (auto ok = next.Fit(history); !ok) return ok;
  *this = std::move(next);
  return {};
}

Result<std::vector<TrainingObservation>> ParseTrainingHistory(std::string_view json) {
  ORDO_ASSIGN_OR_RETURN(const Json doc, internal::ParseHistoryText(json));
  ORDO_ASSIGN_OR_RETURN(const Json* list, internal::HistoryList(doc, "training"));
  return ReadHistory(list);
}

}  // namespace ordo::forecast
