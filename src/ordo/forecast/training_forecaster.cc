#include "ordo/forecast/training_forecaster.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ordo/forecast/json_util.h"
#include "ordo/forecast/stats.h"
#include "ordo/forecast/time_series.h"

namespace ordo::forecast {
namespace {

using internal::Json;

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

}  // namespace

Result<void> TrainingForecaster::Fit(std::span<const TrainingObservation> history) {
  TrainingForecaster next(options_);
  CorrectionOptions correction;
  correction.leave_out_window = options_.leave_out_days;
  next.physical_ = CorrectionModel(correction);
  next.history_only_ = CorrectionModel(correction);
  for (std::size_t i = 0; i < history.size(); ++i) {
    const auto& o = history[i];
    if (!std::isfinite(o.duration_s) || o.duration_s <= 0) {
      return FailInput("history[" + std::to_string(i) + "].duration_s", "must be a number > 0");
    }
    if (o.time_s && !std::isfinite(*o.time_s)) {
      return FailInput("history[" + std::to_string(i) + "].time", "not a finite time");
    }
  }
  next.history_.assign(history.begin(), history.end());
  if (next.history_.size() > static_cast<std::size_t>(options_.max_history)) {
    next.history_.erase(next.history_.begin(),
                        next.history_.end() - static_cast<std::ptrdiff_t>(options_.max_history));
  }
  double latest = -1e300;
  for (const auto& o : next.history_) {
    if (o.time_s) latest = std::max(latest, *o.time_s);
  }
  const auto weight = [&](const TrainingObservation& o) {
    if (!o.time_s || latest == -1e300) return 1.0;
    const double age_days = std::max(0.0, latest - *o.time_s) / 86400;
    return std::max(1e-6, std::pow(0.5, age_days / options_.half_life_days));
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
      const double years = o.time_s && latest != -1e300 ? (*o.time_s - latest) / kYear : 0.0;
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
  next.latest_time_s_ = latest == -1e300 ? std::optional<double>() : std::optional<double>(latest);
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
  auto doc = internal::ParseJson(json, "model");
  if (!doc) return tl::unexpected(doc.error());
  if (auto ok = internal::CheckHeader(*doc, "training", kModelFormatVersion); !ok) return ok;
  TrainingOptions options;
  if (const auto it = doc->find("options"); it != doc->end()) {
    if (!it->is_object()) return FailInput("options", "must be an object");
    auto hl = internal::OptNumber(*it, "half_life_days", "options");
    if (!hl) return tl::unexpected(hl.error());
    if (*hl) {
      if (!(**hl > 0)) return FailInput("options.half_life_days", "must be > 0");
      options.half_life_days = **hl;
    }
    auto lo = internal::OptNumber(*it, "leave_out_days", "options");
    if (!lo) return tl::unexpected(lo.error());
    if (*lo) {
      if (**lo < 0) return FailInput("options.leave_out_days", "must be >= 0");
      options.leave_out_days = **lo;
    }
    auto mh = internal::OptNumber(*it, "max_history", "options");
    if (!mh) return tl::unexpected(mh.error());
    if (*mh) {
      if (**mh < 1 || **mh > 10'000'000) return FailInput("options.max_history", "out of range");
      options.max_history = static_cast<int>(**mh);
    }
  }
  std::vector<TrainingObservation> history;
  if (const auto it = doc->find("history"); it != doc->end()) {
    auto h = ParseTrainingHistory(it->dump());
    if (!h) return tl::unexpected(h.error());
    history = std::move(*h);
  }
  TrainingForecaster next(options);
  if (auto ok = next.Fit(history); !ok) return ok;
  *this = std::move(next);
  return {};
}

Result<std::vector<TrainingObservation>> ParseTrainingHistory(std::string_view json) {
  auto doc = internal::ParseJson(json, "history");
  if (!doc) return tl::unexpected(doc.error());
  const Json* list = &*doc;
  if (doc->is_object() && doc->contains("history")) list = &(*doc)["history"];
  if (!list->is_array()) return FailInput("history", "must be a list of observations");
  std::vector<TrainingObservation> out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string path = internal::Index("history", i);
    const Json& e = (*list)[i];
    if (!e.is_object()) return FailInput(path, "must be an object");
    for (const auto& [key, value] : e.items()) {
      if (key != "features" && key != "duration_s" && key != "time" && key.rfind("x-", 0) != 0) {
        return FailInput(internal::Join(path, key), "unknown field");
      }
    }
    TrainingObservation o;
    const auto fit = e.find("features");
    if (fit == e.end()) return FailInput(path + ".features", "missing (required)");
    auto f = ParseTrainingFeatures(fit->dump(), path + ".features");
    if (!f) return tl::unexpected(f.error());
    o.features = std::move(*f);
    auto d = internal::ReqNumber(e, "duration_s", path);
    if (!d) return tl::unexpected(d.error());
    if (!(*d > 0)) return FailInput(path + ".duration_s", "must be a number > 0");
    o.duration_s = *d;
    if (const auto t = e.find("time"); t != e.end() && !t->is_null()) {
      if (t->is_number()) {
        o.time_s = t->get<double>();
      } else if (t->is_string()) {
        auto ts = ParseTimestamp(t->get<std::string>(), path + ".time");
        if (!ts) return tl::unexpected(ts.error());
        o.time_s = *ts;
      } else {
        return FailInput(path + ".time", "must be an ISO 8601 string or Unix seconds");
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace ordo::forecast
