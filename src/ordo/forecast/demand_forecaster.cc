#include "ordo/forecast/demand_forecaster.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ordo/core/scenario.h"
#include "ordo/forecast/model_format.h"
#include "ordo/forecast/stats.h"

namespace ordo::forecast {
namespace {

using internal::Json;
using internal::ObjectReader;
using io::internal::LazyPath;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxFinite = std::numeric_limits<double>::max();
constexpr int kWeek = 168;
// A saved model keeps at most max_history_weeks (at most ten years) of hours.
constexpr int kMaxHistoryWeeks = 520;
constexpr size_t kMaxHistoryHours = size_t{kMaxHistoryWeeks} * kWeek;
// Hours since 1970: about 114,000 years either way.
constexpr int64_t kMaxAbsHour = 1'000'000'000;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// How an error is measured: multiplicatively (log ratio, with eps so zeros are allowed) for busy
// traffic, additively for sparse traffic, where a burst after a quiet hour is not a "1000x" error.
struct ErrorModel {
  bool additive = false;
  double eps = 1e-9;
  [[nodiscard]] double Residual(double actual, double forecast) const {
    return additive ? actual - forecast : std::log(actual + eps) - std::log(forecast + eps);
  }
  [[nodiscard]] double Apply(double forecast, double residual) const {
    return std::max(0.0,
                    additive ? forecast + residual : (forecast + eps) * std::exp(residual) - eps);
  }
};

// One fit of an hourly series (gaps already NaN): the backtest runs it on every prefix.
struct Core {
  DemandMode mode = DemandMode::kNone;
  std::array<double, kWeek> profile{};
  double level = 0;
  double slope = 0;
  int64_t end_hour = 0;
  std::array<double, 3> level_q{};
  std::vector<double> in_sample_resid;  // log ratios to the local fit

  [[nodiscard]] double Point(int64_t hour, double damping) const {
    if (mode == DemandMode::kLevel) return level;
    const double ahead_days = std::max(0.0, (static_cast<double>(hour - end_hour) + 0.5) / 24.0);
    double growth = 0;
    if (damping >= 1.0) {
      growth = slope * ahead_days;
    } else if (damping > 0) {
      growth = slope * damping * (1 - std::pow(damping, ahead_days)) / (1 - damping);
    }
    return level * std::exp(growth) * profile[static_cast<std::size_t>(HourOfWeek(hour))];
  }
};

double Weight(int64_t age_hours, double half_life_hours) {
  return std::pow(0.5, static_cast<double>(std::max<int64_t>(0, age_hours)) / half_life_hours);
}

// Share trimmed from each end for the level: robust to spikes and partly collected hours, yet not
// zero for sparse traffic (where a median would be).
constexpr double kTrim = 0.1;

// Hours the profile puts below this share of the mean are quiet hours: dividing by their tiny
// profile would turn a stray request into a huge "level", so they do not vote on the level.
constexpr double kQuietProfile = 0.2;

// Theil-Sen slope of (x, y): the median of pairwise slopes.
double TheilSen(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> slopes;
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      if (x[j] != x[i]) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
    }
  }
  return slopes.empty() ? 0.0 : Median(slopes);
}

Core FitCore(int64_t first_hour, std::span<const double> v, const DemandOptions& opt,
             const ErrorModel& err) {
  Core core;
  const auto n = static_cast<int64_t>(v.size());
  core.end_hour = first_hour + n;
  std::vector<int64_t> obs;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isnan(v[static_cast<std::size_t>(i)])) obs.push_back(i);
  }
  const double week_hl = std::max(1.0, opt.week_half_life * kWeek);
  const auto age = [&](int64_t i) { return n - 1 - i; };
  if (obs.size() < 24) {
    // Under a day of data: no shape can be told from noise; forecast the level's own spread.
    core.mode = obs.empty() ? DemandMode::kNone : DemandMode::kLevel;
    std::vector<double> vals;
    std::vector<double> w;
    for (int64_t i : obs) {
      vals.push_back(v[static_cast<std::size_t>(i)]);
      w.push_back(Weight(age(i), opt.level_half_life_days * 24));
    }
    if (!vals.empty()) {
      core.level_q = {WeightedQuantile(vals, w, 0.1), WeightedQuantile(vals, w, 0.5),
                      WeightedQuantile(vals, w, 0.9)};
      core.level = core.level_q[1];
    }
    core.profile.fill(1.0);
    return core;
  }

  std::array<double, kWeek> p;
  p.fill(1.0);
  std::vector<double> local(static_cast<std::size_t>(n), kNaN);
  std::array<int, kWeek> weeks_seen{};
  const int64_t first_day = FloorDiv(first_hour, 24);
  const int64_t last_day = FloorDiv(first_hour + n - 1, 24);
  for (int iter = 0; iter < 3; ++iter) {
    // Level: a centred one-week rolling (trimmed) mean of the deseasonalised rate, one per day,
    // so the profile (and not the level) carries the weekday/weekend shape. Only days whose week
    // is complete are used when there are any: a window cut short at either end of the history
    // would lag a trend and leak it into the profile. Beyond them the level follows their trend.
    std::vector<double> day_level;
    std::vector<double> day_centre;
    const bool complete_only = n >= kWeek;
    for (int64_t day = first_day; day <= last_day; ++day) {
      const int64_t centre = day * 24 + 12 - first_hour;  // index of the day's middle hour
      if (complete_only && (centre - 84 < 0 || centre + 84 > n)) continue;
      std::vector<double> d;
      for (int64_t i = std::max<int64_t>(0, centre - 84); i < std::min<int64_t>(n, centre + 84);
           ++i) {
        const double x = v[static_cast<std::size_t>(i)];
        const double ph = p[static_cast<std::size_t>(HourOfWeek(first_hour + i))];
        if (!std::isnan(x) && ph >= kQuietProfile) d.push_back(x / ph);
      }
      if (d.size() >= 12) {
        day_level.push_back(TrimmedMean(d, kTrim));
        day_centre.push_back(static_cast<double>(centre));
      }
    }
    if (day_level.empty()) break;
    double edge_slope = 0;  // log level per hour, beyond the first and last complete weeks
    if (day_level.size() >= 2) {
      std::vector<double> logs;
      std::vector<double> xs;
      for (std::size_t k = 0; k < day_level.size(); ++k) {
        if (day_level[k] > 0) {
          logs.push_back(std::log(day_level[k]));
          xs.push_back(day_centre[k]);
        }
      }
      edge_slope =
          std::clamp(TheilSen(xs, logs), -opt.max_trend_per_day / 24, opt.max_trend_per_day / 24);
    }
    // Piecewise-linear level between day centres, following the trend beyond the ends.
    for (int64_t i = 0; i < n; ++i) {
      const auto t = static_cast<double>(i);
      std::size_t k = 0;
      while (k + 1 < day_centre.size() && day_centre[k + 1] <= t) ++k;
      double l = day_level[k];
      if (t < day_centre.front()) {
        l = day_level.front() * std::exp(edge_slope * (t - day_centre.front()));
      } else if (t > day_centre.back()) {
        l = day_level.back() * std::exp(edge_slope * (t - day_centre.back()));
      } else if (t > day_centre[k] && k + 1 < day_centre.size()) {
        const double f = (t - day_centre[k]) / (day_centre[k + 1] - day_centre[k]);
        l = day_level[k] + f * (day_level[k + 1] - day_level[k]);
      }
      local[static_cast<std::size_t>(i)] = l;
    }
    // Ratios to the level, robustly per hour of day and per hour of week, recent weeks first.
    std::array<std::vector<double>, 24> hod_r, hod_w;
    std::array<std::vector<double>, kWeek> how_r, how_w;
    for (int64_t i : obs) {
      const double l = local[static_cast<std::size_t>(i)];
      if (!(l > 0)) continue;
      const double r = v[static_cast<std::size_t>(i)] / l;
      const double w = Weight(age(i), week_hl);
      const int h = HourOfWeek(first_hour + i);
      hod_r[static_cast<std::size_t>(h % 24)].push_back(r);
      hod_w[static_cast<std::size_t>(h % 24)].push_back(w);
      how_r[static_cast<std::size_t>(h)].push_back(r);
      how_w[static_cast<std::size_t>(h)].push_back(w);
    }
    std::array<double, 24> hod{};
    for (int h = 0; h < 24; ++h) {
      const auto hs = static_cast<std::size_t>(h);
      hod[hs] = hod_r[hs].empty() ? 1.0 : WeightedQuantile(hod_r[hs], hod_w[hs], 0.5);
    }
    double mean = 0;
    for (int h = 0; h < kWeek; ++h) {
      const auto hs = static_cast<std::size_t>(h);
      const auto seen = static_cast<double>(how_r[hs].size());
      weeks_seen[hs] = static_cast<int>(how_r[hs].size());
      const double daily = hod[static_cast<std::size_t>(h % 24)];
      const double weekly = seen > 0 ? WeightedQuantile(how_r[hs], how_w[hs], 0.5) : daily;
      // Few weeks at this hour: lean on the hour-of-day profile, which has seven times the data.
      p[hs] = (seen * weekly + opt.weekly_shrink * daily) / (seen + opt.weekly_shrink);
      mean += p[hs];
    }
    mean /= kWeek;
    if (mean > 0) {
      for (double& x : p) x /= mean;
    }
    for (double& x : p) x = std::max(x, 1e-6);
  }
  core.profile = p;
  core.mode = *std::max_element(weeks_seen.begin(), weeks_seen.end()) >= 2 ? DemandMode::kWeekly
                                                                           : DemandMode::kDaily;

  // Where the level stands now: a recency-weighted trimmed mean of the deseasonalised rate over
  // the last week, moved forward by the trend over the weights' mean age.
  std::vector<double> d;
  std::vector<double> w;
  double age_sum = 0;
  double w_sum = 0;
  for (int64_t i : obs) {
    if (age(i) >= kWeek) continue;
    const double ph = p[static_cast<std::size_t>(HourOfWeek(first_hour + i))];
    if (ph < kQuietProfile) continue;
    const double x = v[static_cast<std::size_t>(i)] / ph;
    const double wi = Weight(age(i), opt.level_half_life_days * 24);
    d.push_back(x);
    w.push_back(wi);
    age_sum += wi * (static_cast<double>(age(i)) + 0.5);
    w_sum += wi;
  }
  core.level = WeightedTrimmedMean(d, w, kTrim);
  // Trend: Theil-Sen on daily log medians of the last two weeks.
  std::vector<double> xs;
  std::vector<double> ys;
  for (int64_t day = std::max(first_day, last_day - 13); day <= last_day; ++day) {
    std::vector<double> dd;
    for (int64_t hour = day * 24; hour < day * 24 + 24; ++hour) {
      const int64_t i = hour - first_hour;
      if (i < 0 || i >= n || std::isnan(v[static_cast<std::size_t>(i)])) continue;
      const double ph = p[static_cast<std::size_t>(HourOfWeek(hour))];
      if (ph >= kQuietProfile) dd.push_back(v[static_cast<std::size_t>(i)] / ph);
    }
    if (dd.size() >= 12) {
      const double m = Median(dd);
      if (m > 0) {
        xs.push_back(static_cast<double>(day));
        ys.push_back(std::log(m));
      }
    }
  }
  core.slope = xs.size() >= 3
                   ? std::clamp(TheilSen(xs, ys), -opt.max_trend_per_day, opt.max_trend_per_day)
                   : 0.0;
  if (w_sum > 0) core.level *= std::exp(core.slope * (age_sum / w_sum) / 24.0);

  for (int64_t i : obs) {
    const double fit = local[static_cast<std::size_t>(i)] *
                       p[static_cast<std::size_t>(HourOfWeek(first_hour + i))];
    if (std::isnan(fit)) continue;
    core.in_sample_resid.push_back(err.Residual(v[static_cast<std::size_t>(i)], fit));
  }
  return core;
}

Json OptionsToJson(const DemandOptions& o) {
  return Json{{"method", std::string(DemandMethodName(o.method))},
              {"week_half_life", o.week_half_life},
              {"max_history_weeks", o.max_history_weeks},
              {"level_half_life_days", o.level_half_life_days},
              {"trend_damping", o.trend_damping},
              {"max_trend_per_day", o.max_trend_per_day},
              {"gap_fraction", o.gap_fraction},
              {"sparse_zero_fraction", o.sparse_zero_fraction},
              {"weekly_shrink", o.weekly_shrink},
              {"max_backtest_days", o.max_backtest_days},
              {"interval_widening", o.interval_widening}};
}

Result<DemandOptions> OptionsFromJson(const Json& j, const std::string& path) {
  ORDO_ASSIGN_OR_RETURN(const ObjectReader obj, ObjectReader::Make(j, path, "the options"));
  ORDO_RETURN_IF_ERROR(
      obj.AllowOnly({"method", "week_half_life", "max_history_weeks", "level_half_life_days",
                     "trend_damping", "max_trend_per_day", "gap_fraction", "sparse_zero_fraction",
                     "weekly_shrink", "max_backtest_days", "interval_widening"}));
  DemandOptions o;
  ORDO_ASSIGN_OR_RETURN(const std::optional<std::string> method,
                        obj.OptionalString("method", Limits::kMaxIdLength, false));
  if (method == "profile") {
    o.method = DemandMethod::kProfile;
  } else if (method == "level-shape") {
    o.method = DemandMethod::kLevelShape;
  } else if (method) {
    return FailInput(obj.Path("method"),
                     R"(must be "profile" or "level-shape" (got ")" + *method + "\")");
  }
  struct Field {
    std::string_view name;
    double* target;
    double lo;
    double hi;
  };
  const Field fields[] = {
      {"week_half_life", &o.week_half_life, 0.01, 1e6},
      {"level_half_life_days", &o.level_half_life_days, 0.01, 1e6},
      {"trend_damping", &o.trend_damping, 0, 1},
      {"max_trend_per_day", &o.max_trend_per_day, 0, 10},
      {"gap_fraction", &o.gap_fraction, 0, 1},
      {"sparse_zero_fraction", &o.sparse_zero_fraction, 0, 1},
      {"weekly_shrink", &o.weekly_shrink, 0, 1e6},
      {"interval_widening", &o.interval_widening, 0, 10},
  };
  for (const Field& f : fields) {
    ORDO_ASSIGN_OR_RETURN(const std::optional<double> v, obj.OptionalNumber(f.name, f.lo, f.hi));
    if (v) *f.target = *v;
  }
  ORDO_ASSIGN_OR_RETURN(const std::optional<int64_t> weeks,
                        obj.OptionalInt("max_history_weeks", 1, kMaxHistoryWeeks));
  ORDO_ASSIGN_OR_RETURN(const std::optional<int64_t> backtest,
                        obj.OptionalInt("max_backtest_days", 0, 365));
  if (weeks) o.max_history_weeks = static_cast<int>(*weeks);
  if (backtest) o.max_backtest_days = static_cast<int>(*backtest);
  return o;
}

}  // namespace

std::string_view DemandModeName(DemandMode mode) {
  switch (mode) {
    case DemandMode::kNone:
      return "none";
    case DemandMode::kLevel:
      return "level";
    case DemandMode::kDaily:
      return "daily";
    case DemandMode::kWeekly:
      return "weekly";
  }
  return "none";
}

std::string_view DemandMethodName(DemandMethod method) {
  switch (method) {
    case DemandMethod::kProfile:
      return "profile";
    case DemandMethod::kLevelShape:
      return "level-shape";
  }
  return "profile";
}

int HourOfWeek(int64_t unix_hour) {
  // 1970-01-01 was a Thursday: Monday 00:00 is 72 hours later in the week's cycle.
  return static_cast<int>(((unix_hour + 72) % kWeek + kWeek) % kWeek);
}

int GpusForRate(double rate, double per_gpu_rate, double headroom) {
  if (!(rate > 0) || !(per_gpu_rate > 0)) return 0;
  const double need = rate * (1 + std::max(0.0, headroom)) / per_gpu_rate;
  // A hair over a whole number from rounding (e.g. 10.000000001) is still that number of GPUs.
  const double gpus = std::ceil(need - 1e-9);
  return static_cast<int>(std::min(gpus, static_cast<double>(Limits::kMaxGpus)));
}

Result<void> DemandForecaster::Fit(std::span<const RatePoint> history) {
  std::vector<RatePoint> points(history.begin(), history.end());
  if (auto ok = ValidateRateHistory(points); !ok) return ok;
  DemandForecaster next(options_);
  next.first_hour_ = static_cast<int64_t>(std::floor(points.front().time_s / 3600));
  const auto last_hour = static_cast<int64_t>(std::floor(points.back().time_s / 3600));
  const int64_t span = last_hour - next.first_hour_ + 1;
  if (span > int64_t{kWeek} * 520) {
    return FailInput("history", "spans more than ten years of hours");
  }
  next.hours_.assign(static_cast<std::size_t>(span), 0.0);
  next.counts_.assign(static_cast<std::size_t>(span), 0);
  next.AddPointsAsHourMeans(points);
  if (auto ok = next.FitHours(); !ok) return ok;
  *this = std::move(next);
  return {};
}

Result<void> DemandForecaster::Refit(std::span<const RatePoint> observations) {
  if (hours_.empty()) return Fit(observations);
  std::vector<RatePoint> points(observations.begin(), observations.end());
  if (points.empty()) return {};
  if (auto ok = ValidateRateHistory(points); !ok) return ok;
  if (points.front().time_s <= last_time_s_) {
    return FailInput("history[0].time", "must be later than the kept history's last point (" +
                                            FormatTimestamp(last_time_s_) + ")");
  }
  DemandForecaster next = *this;
  // Back to sums, extend, then to means again.
  for (std::size_t i = 0; i < next.hours_.size(); ++i) {
    next.hours_[i] = next.counts_[i] > 0 ? next.hours_[i] * next.counts_[i] : 0.0;
  }
  const auto last_hour = static_cast<int64_t>(std::floor(points.back().time_s / 3600));
  const auto span = static_cast<std::size_t>(last_hour - next.first_hour_ + 1);
  next.hours_.resize(span, 0.0);
  next.counts_.resize(span, 0);
  next.AddPointsAsHourMeans(points);
  if (auto ok = next.FitHours(); !ok) return ok;
  *this = std::move(next);
  return {};
}

Result<void> DemandForecaster::SetMethod(DemandMethod method) {
  DemandForecaster next = *this;
  next.options_.method = method;
  if (!hours_.empty()) {
    if (auto ok = next.FitHours(); !ok) return ok;
  }
  *this = std::move(next);
  return {};
}

std::vector<double> DemandForecaster::ObservedHourMeans(double until_s, int hours) const {
  std::vector<double> out(static_cast<std::size_t>(std::max(0, hours)), kNaN);
  // Index into hours_ of out[0]; the last hour is the one that starts before until_s.
  const int64_t first = static_cast<int64_t>(std::ceil(until_s / 3600)) -
                        static_cast<int64_t>(out.size()) - first_hour_;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const int64_t i = first + static_cast<int64_t>(k);
    if (i >= 0 && i < static_cast<int64_t>(hours_.size())) {
      out[k] = hours_[static_cast<std::size_t>(i)];
    }
  }
  return out;
}

void DemandForecaster::AddPointsAsHourMeans(std::span<const RatePoint> points) {
  for (const RatePoint& pt : points) {
    const auto i =
        static_cast<std::size_t>(static_cast<int64_t>(std::floor(pt.time_s / 3600)) - first_hour_);
    hours_[i] += pt.rate;
    counts_[i] += 1;
  }
  for (std::size_t i = 0; i < hours_.size(); ++i) {
    hours_[i] = counts_[i] > 0 ? hours_[i] / counts_[i] : kNaN;
  }
  last_time_s_ = points.back().time_s;
}

Result<void> DemandForecaster::FitHours() {
  // Keep at most max_history_weeks: older traffic says little about next week's.
  const auto keep = static_cast<std::size_t>(options_.max_history_weeks) * kWeek;
  if (hours_.size() > keep) {
    const std::size_t drop = hours_.size() - keep;
    hours_.erase(hours_.begin(), hours_.begin() + static_cast<std::ptrdiff_t>(drop));
    counts_.erase(counts_.begin(), counts_.begin() + static_cast<std::ptrdiff_t>(drop));
    first_hour_ += static_cast<int64_t>(drop);
  }
  // Gaps: in a series that is normally busy, a zero or near-zero hour is the collector failing,
  // not the users leaving; in a sparse series, zeros are real and stay.
  std::vector<double> v = hours_;
  std::vector<double> observed;
  int zeros = 0;
  for (double x : v) {
    if (std::isnan(x)) continue;
    observed.push_back(x);
    zeros += x == 0 ? 1 : 0;
  }
  if (observed.empty()) return FailInput("history", "no observed hours");
  gap_hours_ = 0;
  const double med = Median(observed);
  const bool sparse = zeros > options_.sparse_zero_fraction * static_cast<double>(observed.size());
  if (!sparse && med > 0) {
    for (double& x : v) {
      if (!std::isnan(x) && x < options_.gap_fraction * med) {
        x = kNaN;
        ++gap_hours_;
      }
    }
  }
  double sum = 0;
  int count = 0;
  for (double x : v) {
    if (std::isnan(x)) continue;
    sum += x;
    ++count;
  }
  // Errors are measured as log((actual + eps) / (forecast + eps)): multiplicative for busy hours,
  // closer to additive near zero, so a burst after a quiet forecast does not read as a 1000x
  // error. eps is a tenth of the mean rate.
  eps_ = std::max(1e-9, 0.1 * (count ? sum / count : 0.0));
  additive_ = sparse;
  const ErrorModel err{additive_, eps_};
  level_shape_ = LevelShapeFit{};
  if (options_.method == DemandMethod::kLevelShape) {
    level_shape_ = FitLevelShape(first_hour_, v, options_.level_shape);
    if (level_shape_.mode == LevelShapeMode::kNone) {
      return FailInput("history",
                       "every hour is a gap (zero or near zero): nothing to forecast from");
    }
    mode_ = static_cast<DemandMode>(static_cast<int>(level_shape_.mode));
    end_hour_ = level_shape_.end_hour;
    level_ = std::exp(level_shape_.level);
    slope_per_day_ = level_shape_.slope_per_day;
    backtest_residuals_ = 0;
    return {};
  }

  const Core core = FitCore(first_hour_, v, options_, err);
  if (core.mode == DemandMode::kNone) {
    return FailInput("history",
                     "every hour is a gap (zero or near zero): nothing to forecast from");
  }
  mode_ = core.mode;
  profile_ = core.profile;
  level_ = core.level;
  slope_per_day_ = core.slope;
  end_hour_ = core.end_hour;
  level_quantiles_ = core.level_q;
  backtest_residuals_ = 0;
  resid_.fill({0, 0, 0});
  if (mode_ == DemandMode::kLevel) return {};

  // Rolling-origin backtest: forecast each of the last days' next week from what came before it,
  // and keep the errors by how many days ahead they were.
  const auto n = static_cast<int64_t>(v.size());
  std::array<std::vector<double>, kHorizonDays> resid;
  std::array<std::vector<double>, kHorizonDays> weights;
  const int64_t first_day = FloorDiv(first_hour_, 24);
  const int64_t last_day = FloorDiv(first_hour_ + n - 1, 24);
  const int64_t min_origin_day =
      std::max(first_day + 2, last_day - static_cast<int64_t>(options_.max_backtest_days) + 1);
  for (int64_t day = min_origin_day; day <= last_day; ++day) {
    const int64_t origin = day * 24 - first_hour_;
    if (origin <= 0 || origin >= n) continue;
    const Core past =
        FitCore(first_hour_, std::span<const double>(v.data(), static_cast<std::size_t>(origin)),
                options_, err);
    if (past.mode == DemandMode::kNone) continue;
    for (int64_t i = origin; i < std::min(n, origin + kWeek); ++i) {
      const double actual = v[static_cast<std::size_t>(i)];
      if (std::isnan(actual)) continue;
      double f = past.Point(first_hour_ + i, options_.trend_damping);
      if (past.mode == DemandMode::kLevel) f = past.level_q[1];
      const auto ahead = static_cast<std::size_t>((i - origin) / 24);
      resid[ahead].push_back(err.Residual(actual, f));
      weights[ahead].push_back(Weight(n - 1 - i, options_.week_half_life * kWeek));
    }
  }
  // The spread at k days ahead comes from the errors made at least k days ahead (there are few
  // far-ahead ones in a short history, so it reuses the nearest horizon with enough of them), and
  // never narrows as k grows. Only the spread is taken, centred on the errors' median: a bias
  // there mostly records level shifts that already happened (the level now includes them), so
  // adding it would count a past trend twice.
  constexpr std::size_t kMinResiduals = 48;
  backtest_residuals_ = 0;
  for (const auto& r : resid) backtest_residuals_ += static_cast<int>(r.size());
  std::array<double, 3> prev{0, 0, 0};
  bool have_prev = false;
  for (std::size_t k = 0; k < kHorizonDays; ++k) {
    std::vector<double> pool;
    std::vector<double> pool_w;
    for (std::size_t j = k; j < kHorizonDays; ++j) {
      pool.insert(pool.end(), resid[j].begin(), resid[j].end());
      pool_w.insert(pool_w.end(), weights[j].begin(), weights[j].end());
    }
    if (pool.size() >= kMinResiduals) {
      const double mid = WeightedQuantile(pool, pool_w, 0.5);
      std::array<double, 3> q = {std::min(0.0, WeightedQuantile(pool, pool_w, 0.1) - mid), 0.0,
                                 std::max(0.0, WeightedQuantile(pool, pool_w, 0.9) - mid)};
      if (have_prev) {
        q[0] = std::min(q[0], prev[0]);
        q[2] = std::max(q[2], prev[2]);
      }
      prev = q;
      have_prev = true;
    } else if (!have_prev) {
      // Too short to backtest: in-sample errors against the local level, widened by half since
      // they flatter the fit.
      std::vector<double> in = core.in_sample_resid;
      if (in.empty()) in.push_back(0.0);
      prev = {std::min(0.0, 1.5 * Quantile(in, 0.1)), 0.0, std::max(0.0, 1.5 * Quantile(in, 0.9))};
      have_prev = true;
    }
    resid_[k] = {prev[0] * (1 + options_.interval_widening), 0.0,
                 prev[2] * (1 + options_.interval_widening)};
  }
  return {};
}

Result<Quantiles> DemandForecaster::Predict(const double& time_s) const {
  if (mode_ == DemandMode::kNone) return FailInput("history", "the forecaster has not been fitted");
  if (!std::isfinite(time_s)) return FailInput("time", "not a finite time");
  const auto hour = static_cast<int64_t>(std::floor(time_s / 3600));
  if (options_.method == DemandMethod::kLevelShape) {
    return PredictLevelShape(level_shape_, hour, options_.level_shape);
  }
  if (mode_ == DemandMode::kLevel) {
    return Quantiles{level_quantiles_[0], level_quantiles_[1], level_quantiles_[2]};
  }
  Core core;
  core.mode = mode_;
  core.profile = profile_;
  core.level = level_;
  core.slope = slope_per_day_;
  core.end_hour = end_hour_;
  const double f = core.Point(hour, options_.trend_damping);
  const auto ahead = static_cast<std::size_t>(
      std::clamp<int64_t>(FloorDiv(hour - end_hour_, 24), 0, kHorizonDays - 1));
  const std::array<double, 3>& r = resid_[ahead];
  Quantiles q;
  const ErrorModel err{additive_, eps_};
  q.p10 = err.Apply(f, r[0]);
  q.p50 = err.Apply(f, r[1]);
  q.p90 = err.Apply(f, r[2]);
  return q;
}

std::string DemandForecaster::Save() const {
  Json rates = Json::array();
  for (double x : hours_) rates.push_back(std::isnan(x) ? Json(nullptr) : Json(x));
  Json doc{{"kind", "demand"},
           {"version", kModelFormatVersion},
           {"options", OptionsToJson(options_)},
           {"history",
            {{"first_hour", first_hour_},
             {"rates", rates},
             {"counts", counts_},
             {"last_time_s", last_time_s_}}}};
  // The fitted state, for people and tools to read; Load recomputes it from the history.
  if (options_.method == DemandMethod::kLevelShape) {
    const LevelShapeFit& f = level_shape_;
    doc["fitted"] = {{"mode", std::string(DemandModeName(mode_))},
                     {"end_hour", f.end_hour},
                     {"gap_hours", gap_hours_},
                     {"log_level", f.level},
                     {"slope_per_day", f.slope_per_day},
                     {"slope_se", f.slope_se},
                     {"shift_hour", f.shift_hour},
                     {"shift_size", f.shift_size},
                     {"hour_log_p10_p90", {f.hour_lo, f.hour_hi}},
                     {"level_log_p10_by_lag_days", f.level_lo},
                     {"level_log_p90_by_lag_days", f.level_hi},
                     {"days", f.days},
                     {"log_shape", f.shape}};
    return doc.dump(2);
  }
  doc["fitted"] = {{"mode", std::string(DemandModeName(mode_))},
                   {"level", level_},
                   {"slope_per_day", slope_per_day_},
                   {"end_hour", end_hour_},
                   {"gap_hours", gap_hours_},
                   {"backtest_residuals", backtest_residuals_},
                   {"errors", additive_ ? "additive" : "log-ratio"},
                   {"residual_quantiles_by_day_ahead", resid_},
                   {"profile", profile_}};
  return doc.dump(2);
}

Result<void> DemandForecaster::Load(std::string_view json) {
  ORDO_ASSIGN_OR_RETURN(const Json doc, internal::ParseModelText(json));
  ORDO_ASSIGN_OR_RETURN(const ObjectReader model, internal::ReadModelHeader(doc, kind()));
  DemandOptions options;
  if (const Json* value = model.Find("options")) {
    ORDO_ASSIGN_OR_RETURN(options, OptionsFromJson(*value, model.Path("options")));
  }
  const Json* history = model.Find("history");
  if (history == nullptr) {
    return Fail(model.Missing("history", "an object with first_hour, rates, counts, last_time_s"));
  }
  ORDO_ASSIGN_OR_RETURN(const ObjectReader h,
                        ObjectReader::Make(*history, model.Path("history"), "the history"));
  ORDO_RETURN_IF_ERROR(h.AllowOnly({"first_hour", "rates", "counts", "last_time_s"}));
  DemandForecaster next(options);
  ORDO_ASSIGN_OR_RETURN(next.first_hour_, h.Int("first_hour", -kMaxAbsHour, kMaxAbsHour));
  ORDO_ASSIGN_OR_RETURN(next.last_time_s_, h.Number("last_time_s", -kMaxFinite, kMaxFinite));
  // One rate per hour, null for an hour without observations.
  if (!h.Has("rates")) return Fail(h.Missing("rates"));
  ORDO_RETURN_IF_ERROR(h.ForEachItem(
      "rates", kMaxHistoryHours, [&](const Json& rate, const LazyPath& path) -> Result<void> {
        if (rate.is_null()) {
          next.hours_.push_back(kNaN);
          return {};
        }
        ORDO_ASSIGN_OR_RETURN(const double x, io::internal::ToNumber(rate, path, 0, kMaxFinite));
        next.hours_.push_back(x);
        return {};
      }));
  if (!h.Has("counts")) return Fail(h.Missing("counts"));
  ORDO_ASSIGN_OR_RETURN(next.counts_,
                        h.IntList("counts", 0, std::numeric_limits<int>::max(), kMaxHistoryHours));
  if (next.counts_.size() != next.hours_.size()) {
    return FailInput(h.Path("counts"), "must be as long as history.rates (" +
                                           std::to_string(next.hours_.size()) + " entries, got " +
                                           std::to_string(next.counts_.size()) + ")");
  }
  if (auto ok = next.FitHours(); !ok) return ok;
  *this = std::move(next);
  return {};
}

Result<std::vector<DemandStep>> ForecastSteps(const DemandForecaster& forecaster, double start_s,
                                              int steps, int step_minutes, double per_gpu_rate,
                                              double headroom) {
  if (!std::isfinite(start_s)) return FailInput("start", "not a finite time");
  if (steps < 1 || steps > Limits::kMaxHorizonSteps) {
    return FailInput("steps", "must be between 1 and " + std::to_string(Limits::kMaxHorizonSteps));
  }
  if (step_minutes < 1 || step_minutes > 7 * 24 * 60) {
    return FailInput("step_minutes", "must be between 1 and 10080 (a week)");
  }
  if (!std::isfinite(per_gpu_rate) || per_gpu_rate <= 0) {
    return FailInput("per_gpu_rate", "must be a number > 0");
  }
  if (!std::isfinite(headroom) || headroom < 0 || headroom > 100) {
    return FailInput("headroom", "must be a number between 0 and 100");
  }
  std::vector<DemandStep> out;
  out.reserve(static_cast<std::size_t>(steps));
  const double step_s = step_minutes * 60.0;
  for (int s = 0; s < steps; ++s) {
    const double begin = start_s + s * step_s;
    const double end = begin + step_s;
    DemandStep step;
    step.start_s = begin;
    double weighted = 0;
    // Walk the hours the step overlaps: the median is time-weighted, the p90 is the worst hour.
    for (double t = begin; t < end;) {
      const double hour_end = (std::floor(t / 3600) + 1) * 3600;
      const double piece = std::min(end, hour_end) - t;
      auto q = forecaster.Predict(t);
      if (!q) return tl::unexpected(q.error());
      weighted += q->p50 * piece;
      step.rate_p90 = std::max(step.rate_p90, q->p90);
      t += piece;
    }
    step.rate_p50 = weighted / step_s;
    step.gpus = GpusForRate(step.rate_p90, per_gpu_rate, headroom);
    out.push_back(step);
  }
  return out;
}

}  // namespace ordo::forecast
