#include "ordo/forecast/level_shape.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ordo/forecast/demand_forecaster.h"
#include "ordo/forecast/stats.h"

namespace ordo::forecast {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kWeek = 168;
constexpr double kZ90 = 1.2815515655446004;  // standard normal 0.9 quantile

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Days ahead of `hour` from the end of the history (the middle of the hour).
double AheadDays(const LevelShapeFit& fit, int64_t hour) {
  return std::max(0.0, (static_cast<double>(hour - fit.end_hour) + 0.5) / 24.0);
}

// Sum of damping^j for j in (0, k], continuous in k.
double Damped(double k, double damping) {
  if (damping >= 1.0) return k;
  if (damping <= 0) return 0;
  return damping * (1 - std::pow(damping, k)) / (1 - damping);
}

// Least squares of y on [1, x, step(x >= c)]; returns the step and its standard-error factor
// (the standard error of the step is sigma * factor).
bool FitStep(const std::vector<double>& x, const std::vector<double>& y, double c, double& step,
             double& factor) {
  std::vector<double> a(9, 0.0);
  std::vector<double> b(3, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double row[3] = {1.0, x[i], x[i] >= c ? 1.0 : 0.0};
    for (std::size_t r = 0; r < 3; ++r) {
      b[r] += row[r] * y[i];
      for (std::size_t s = 0; s < 3; ++s) a[r * 3 + s] += row[r] * row[s];
    }
  }
  std::vector<double> beta;
  if (!SolveSpd(a, b, 3, beta)) return false;
  // (X'X)^-1 [2][2] from solving against the third unit vector.
  std::vector<double> e3;
  if (!SolveSpd(a, {0.0, 0.0, 1.0}, 3, e3)) return false;
  step = beta[2];
  factor = std::sqrt(std::max(0.0, e3[2]));
  return true;
}

}  // namespace

LevelShapeFit FitLevelShape(int64_t first_hour, std::span<const double> hours,
                            const LevelShapeOptions& opt) {
  LevelShapeFit fit;
  const auto n = static_cast<int64_t>(hours.size());
  fit.end_hour = first_hour + n;
  std::vector<int64_t> obs;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = hours[static_cast<std::size_t>(i)];
    if (std::isnan(x)) continue;
    obs.push_back(i);
    sum += x;
  }
  if (obs.empty()) return fit;
  fit.eps = std::max(1e-9, 0.1 * sum / static_cast<double>(obs.size()));
  if (obs.size() < 24) {
    // Under a day: no shape can be told from noise; forecast the rate's own spread.
    std::vector<double> vals;
    vals.reserve(obs.size());
    for (int64_t i : obs) vals.push_back(hours[static_cast<std::size_t>(i)]);
    fit.mode = LevelShapeMode::kLevel;
    fit.level_quantiles = {Quantile(vals, 0.1), Quantile(vals, 0.5), Quantile(vals, 0.9)};
    fit.days = 0;
    return fit;
  }

  std::vector<double> y(static_cast<std::size_t>(n), kNaN);
  for (int64_t i : obs) {
    y[static_cast<std::size_t>(i)] = std::log(hours[static_cast<std::size_t>(i)] + fit.eps);
  }
  const int64_t first_day = FloorDiv(first_hour, 24);
  const int64_t last_day = FloorDiv(first_hour + n - 1, 24);
  const auto num_days = static_cast<std::size_t>(last_day - first_day + 1);
  const auto how = [&](int64_t i) { return static_cast<std::size_t>(HourOfWeek(first_hour + i)); };
  const auto day_of = [&](int64_t i) {
    return static_cast<std::size_t>(FloorDiv(first_hour + i, 24) - first_day);
  };

  // Day levels and the hour-of-day shape, alternately (missing hours would bias a day's plain
  // mean by the shape of the hours that are missing).
  std::array<double, 24> hod{};
  std::vector<double> day_level(num_days, kNaN);
  std::vector<int> day_hours(num_days, 0);
  const auto compute_day_levels = [&](const std::array<double, kWeek>& shape) {
    std::vector<double> s(num_days, 0.0);
    std::fill(day_hours.begin(), day_hours.end(), 0);
    for (int64_t i : obs) {
      s[day_of(i)] += y[static_cast<std::size_t>(i)] - shape[how(i)];
      day_hours[day_of(i)] += 1;
    }
    for (std::size_t d = 0; d < num_days; ++d) {
      day_level[d] = day_hours[d] > 0 ? s[d] / day_hours[d] : kNaN;
    }
  };
  std::array<double, kWeek> shape{};
  for (int iter = 0; iter < 2; ++iter) {
    compute_day_levels(shape);
    std::array<std::vector<double>, 24> dev;
    for (int64_t i : obs) {
      const std::size_t d = day_of(i);
      if (day_hours[d] < 12) continue;  // a partial day's level is too uncertain to vote
      dev[how(i) % 24].push_back(y[static_cast<std::size_t>(i)] - day_level[d]);
    }
    double mean = 0;
    for (std::size_t h = 0; h < 24; ++h) {
      hod[h] = dev[h].empty() ? 0.0 : Median(dev[h]);
      mean += hod[h] / 24;
    }
    for (double& x : hod) x -= mean;
    for (std::size_t h = 0; h < kWeek; ++h) shape[h] = hod[h % 24];
  }
  compute_day_levels(shape);

  // Day of week: each full day's deviation from the mean of the seven days centred on it.
  std::array<double, 7> dow{};
  std::array<double, 7> dow_sum{};
  std::array<double, 7> dow_sq{};
  std::array<int, 7> dow_n{};
  const auto full = [&](std::size_t d) { return day_hours[d] >= 12; };
  for (std::size_t d = 3; d + 3 < num_days; ++d) {
    bool ok = true;
    double m = 0;
    for (std::size_t e = d - 3; e <= d + 3; ++e) {
      ok = ok && full(e);
      m += day_level[e] / 7;
    }
    if (!ok) continue;
    const auto k =
        static_cast<std::size_t>(HourOfWeek((first_day + static_cast<int64_t>(d)) * 24) / 24);
    dow_sum[k] += day_level[d] - m;
    dow_sq[k] += (day_level[d] - m) * (day_level[d] - m);
    dow_n[k] += 1;
  }
  // Shrink each weekday's mean deviation m towards zero by m^2 / (m^2 + shrink * s^2 / n), s^2
  // the scatter of one day's deviation around its weekday's mean: a clear weekend is kept whole,
  // a weekday effect the noise could have made is mostly dropped. Until some weekday is seen
  // twice, s^2 is unknown and the shrink is by pseudo-days instead.
  double scatter = 0;
  int scatter_df = 0;
  for (std::size_t k = 0; k < 7; ++k) {
    if (dow_n[k] < 2) continue;
    scatter += dow_sq[k] - dow_sum[k] * dow_sum[k] / dow_n[k];
    scatter_df += dow_n[k] - 1;
  }
  int weeks_seen = 0;
  for (std::size_t k = 0; k < 7; ++k) {
    weeks_seen = std::max(weeks_seen, dow_n[k]);
    if (dow_n[k] == 0) continue;
    const double mean_dev = dow_sum[k] / dow_n[k];
    if (scatter_df > 0) {
      const double noise = opt.dow_shrink * (scatter / scatter_df) / dow_n[k];
      const double m2 = mean_dev * mean_dev;
      dow[k] = m2 + noise > 0 ? mean_dev * m2 / (m2 + noise) : 0.0;
    } else {
      dow[k] = dow_sum[k] / (dow_n[k] + opt.dow_shrink);
    }
  }
  double dow_mean = 0;
  for (double x : dow) dow_mean += x / 7;
  for (double& x : dow) x -= dow_mean;
  // Hour-of-week interaction: what hour of day and day of week leave unexplained.
  std::array<double, kWeek> inter_sum{};
  std::array<int, kWeek> inter_n{};
  for (int64_t i : obs) {
    const std::size_t d = day_of(i);
    if (!full(d)) continue;
    const std::size_t h = how(i);
    inter_sum[h] += y[static_cast<std::size_t>(i)] - day_level[d] - hod[h % 24];
    inter_n[h] += 1;
  }
  double shape_mean = 0;
  for (std::size_t h = 0; h < kWeek; ++h) {
    const double inter =
        inter_n[h] >= 2 ? inter_sum[h] / (inter_n[h] + opt.interaction_shrink) : 0.0;
    shape[h] = hod[h % 24] + dow[h / 24] + inter;
    shape_mean += shape[h] / kWeek;
  }
  for (double& x : shape) x -= shape_mean;
  fit.shape = shape;
  compute_day_levels(shape);

  // Full days' deseasonalised levels, positioned at their middle (in days from the end).
  const auto end = static_cast<double>(n);
  std::vector<double> xs;
  std::vector<double> ls;
  std::vector<std::size_t> idx;
  for (std::size_t d = 0; d < num_days; ++d) {
    if (!full(d)) continue;
    const auto mid_hour =
        static_cast<double>((first_day + static_cast<int64_t>(d)) * 24 + 12 - first_hour);
    xs.push_back((mid_hour - end) / 24.0);
    ls.push_back(day_level[d]);
    idx.push_back(d);
  }
  fit.days = static_cast<int>(xs.size());
  fit.mode = weeks_seen >= 1 && xs.size() >= 14 ? LevelShapeMode::kWeekly : LevelShapeMode::kDaily;

  // Noise of the daily levels, robust to a trend (second differences remove it) and to a step
  // (it spoils only two of them).
  double day_sd = 0;
  if (ls.size() >= 3) {
    std::vector<double> d2;
    for (std::size_t i = 2; i < ls.size(); ++i) {
      d2.push_back(std::fabs(ls[i] - 2 * ls[i - 1] + ls[i - 2]));
    }
    day_sd = 1.4826 * Median(d2) / std::sqrt(6.0);
  }

  // Level shift: the most significant step among the recent splits.
  std::size_t keep_from = 0;  // first kept entry of xs/ls
  if (ls.size() >= 4 && day_sd > 0) {
    double best_t = 0;
    std::size_t best = 0;
    double best_step = 0;
    const std::size_t lo =
        std::max<std::size_t>(2, ls.size() > static_cast<std::size_t>(opt.shift_search_days)
                                     ? ls.size() - static_cast<std::size_t>(opt.shift_search_days)
                                     : 0);
    for (std::size_t c = lo; c < ls.size(); ++c) {
      double step = 0;
      double factor = 0;
      if (!FitStep(xs, ls, xs[c], step, factor) || factor <= 0) continue;
      const double t = std::fabs(step) / (day_sd * factor);
      if (t > best_t) {
        best_t = t;
        best = c;
        best_step = step;
      }
    }
    if (best_t >= opt.shift_t && std::fabs(best_step) >= opt.min_shift) {
      keep_from = best;
      fit.shift_hour =
          first_hour + static_cast<int64_t>(idx[best]) * 24 + (first_day * 24 - first_hour);
      fit.shift_size = best_step;
    }
  }
  // The last, partial day can hold a shift too recent for the daily test: its hours are judged
  // against the last full day's level below, through the level's short half-life.

  // Trend on the kept days.
  const std::vector<double> kx(xs.begin() + static_cast<std::ptrdiff_t>(keep_from), xs.end());
  const std::vector<double> kl(ls.begin() + static_cast<std::ptrdiff_t>(keep_from), ls.end());
  if (static_cast<int>(kx.size()) >= opt.min_trend_days) {
    double mx = 0, ml = 0;
    for (std::size_t i = 0; i < kx.size(); ++i) {
      mx += kx[i] / static_cast<double>(kx.size());
      ml += kl[i] / static_cast<double>(kx.size());
    }
    double sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < kx.size(); ++i) {
      sxx += (kx[i] - mx) * (kx[i] - mx);
      sxy += (kx[i] - mx) * (kl[i] - ml);
    }
    const double b = sxx > 0 ? sxy / sxx : 0.0;
    double rss = 0;
    for (std::size_t i = 0; i < kx.size(); ++i) {
      const double r = kl[i] - ml - b * (kx[i] - mx);
      rss += r * r;
    }
    // The residuals' spread, but never below the robust day noise: a few days can line up.
    const double sigma =
        std::max(day_sd, std::sqrt(rss / std::max(1.0, static_cast<double>(kx.size()) - 2)));
    const double se = sxx > 0 ? sigma / std::sqrt(sxx) : 0.0;
    if (se > 0 && std::fabs(b) / se >= opt.trend_t) {
      fit.slope_per_day = std::clamp(b, -opt.max_trend_per_day, opt.max_trend_per_day);
      fit.slope_se = se;
    } else if (se == 0 && sxx > 0 && b != 0) {
      // A noiseless line: the trend is exact.
      fit.slope_per_day = std::clamp(b, -opt.max_trend_per_day, opt.max_trend_per_day);
    }
  }

  // Level now: recency-weighted trimmed mean of the kept hours' deseasonalised values, each moved
  // to the end along the trend.
  const int64_t keep_hour = fit.shift_hour >= 0 ? fit.shift_hour - first_hour : 0;
  std::vector<double> z;
  std::vector<double> w;
  for (int64_t i : obs) {
    if (i < keep_hour) continue;
    const double age_h = end - static_cast<double>(i) - 0.5;
    z.push_back(y[static_cast<std::size_t>(i)] - shape[how(i)] + fit.slope_per_day * age_h / 24);
    w.push_back(std::pow(0.5, age_h / opt.level_half_life_hours));
  }
  fit.level = WeightedTrimmedMean(z, w, 0.1);

  // Spread: hours around their day's level...
  std::vector<double> u;
  for (int64_t i : obs) {
    const std::size_t d = day_of(i);
    if (!full(d)) continue;
    u.push_back(y[static_cast<std::size_t>(i)] - shape[how(i)] - day_level[d]);
  }
  if (u.size() >= 10) {
    fit.hour_lo = std::min(0.0, Quantile(u, 0.1));
    fit.hour_hi = std::max(0.0, Quantile(u, 0.9));
  }
  // Persistence: how much of one hour's deviation from its day the next hour keeps (lag-one
  // autocorrelation), and the last observed hour's deviation from the level now. A surge or a
  // lull that the trimmed, day-scale level has not taken in yet carries into the next hours.
  double uu = 0;
  double uv = 0;
  for (std::size_t j = 0; j + 1 < obs.size(); ++j) {
    const int64_t i = obs[j];
    if (obs[j + 1] != i + 1 || !full(day_of(i)) || !full(day_of(i + 1))) continue;
    const double a = y[static_cast<std::size_t>(i)] - shape[how(i)] - day_level[day_of(i)];
    const double b =
        y[static_cast<std::size_t>(i + 1)] - shape[how(i + 1)] - day_level[day_of(i + 1)];
    uu += a * a;
    uv += a * b;
  }
  if (uu > 0) fit.persistence = std::clamp(uv / uu, 0.0, opt.max_persistence);
  const int64_t last = obs.back();
  fit.last_hour = first_hour + last;
  fit.last_deviation = y[static_cast<std::size_t>(last)] - shape[how(last)] - fit.level;
  // ...and the daily level's change by lag (empirical p10/p90, so rare jumps, such as a
  // redeployment, do not blow the interval up but frequent ones widen it), with the detected step
  // and the trend taken out.
  std::vector<double> adj = ls;
  for (std::size_t i = 0; i < adj.size(); ++i) {
    if (fit.shift_hour >= 0 && i >= keep_from) adj[i] -= fit.shift_size;
    adj[i] -= fit.slope_per_day * xs[i];
  }
  int max_lag = 0;
  for (int k = 1; k < 8; ++k) {
    std::vector<double> dd;
    for (std::size_t i = 0; i + static_cast<std::size_t>(k) < adj.size(); ++i) {
      dd.push_back(adj[i + static_cast<std::size_t>(k)] - adj[i]);
    }
    if (dd.size() < 3) break;
    // The change is as likely either way: symmetrise, so a past trend does not skew it.
    const std::size_t m = dd.size();
    for (std::size_t i = 0; i < m; ++i) dd.push_back(-dd[i]);
    fit.level_hi[static_cast<std::size_t>(k)] = Quantile(dd, 0.9);
    fit.level_lo[static_cast<std::size_t>(k)] = -fit.level_hi[static_cast<std::size_t>(k)];
    max_lag = k;
  }
  if (max_lag == 0) {
    // Too few days to see the level move: assume the hours' noise moves it by a third a day.
    const double h = (fit.hour_hi - fit.hour_lo) / 6;
    for (int k = 1; k < 8; ++k) {
      fit.level_hi[static_cast<std::size_t>(k)] = h * std::sqrt(static_cast<double>(k));
      fit.level_lo[static_cast<std::size_t>(k)] = -fit.level_hi[static_cast<std::size_t>(k)];
    }
  } else {
    for (int k = max_lag + 1; k < 8; ++k) {
      const double f = std::sqrt(static_cast<double>(k) / max_lag);
      fit.level_hi[static_cast<std::size_t>(k)] =
          fit.level_hi[static_cast<std::size_t>(max_lag)] * f;
      fit.level_lo[static_cast<std::size_t>(k)] =
          fit.level_lo[static_cast<std::size_t>(max_lag)] * f;
    }
  }
  for (std::size_t k = 1; k < 8; ++k) {
    fit.level_hi[k] = std::max(fit.level_hi[k], fit.level_hi[k - 1]);
    fit.level_lo[k] = std::min(fit.level_lo[k], fit.level_lo[k - 1]);
  }
  return fit;
}

Quantiles PredictLevelShape(const LevelShapeFit& fit, int64_t unix_hour,
                            const LevelShapeOptions& opt) {
  if (fit.mode == LevelShapeMode::kNone) return {};
  if (fit.mode == LevelShapeMode::kLevel) {
    return {fit.level_quantiles[0], fit.level_quantiles[1], fit.level_quantiles[2]};
  }
  const double k = AheadDays(fit, unix_hour);
  const double damped = Damped(k, opt.trend_damping);
  const double hours_after_last =
      static_cast<double>(std::max<int64_t>(1, unix_hour - fit.last_hour));
  const double mid = fit.level + fit.slope_per_day * damped +
                     fit.shape[static_cast<std::size_t>(HourOfWeek(unix_hour))] +
                     fit.last_deviation * std::pow(fit.persistence, hours_after_last);
  // The level's change at k days: interpolated between whole lags, a random walk beyond a week.
  double lo = 0;
  double hi = 0;
  if (k >= 7) {
    lo = fit.level_lo[7] * std::sqrt(k / 7);
    hi = fit.level_hi[7] * std::sqrt(k / 7);
  } else {
    const auto j = static_cast<std::size_t>(std::floor(k));
    const double f = k - static_cast<double>(j);
    lo = fit.level_lo[j] + f * (fit.level_lo[j + 1] - fit.level_lo[j]);
    hi = fit.level_hi[j] + f * (fit.level_hi[j + 1] - fit.level_hi[j]);
  }
  const double trend = kZ90 * fit.slope_se * damped;
  const double inflate = (1 + opt.short_history_days / std::max(1, fit.days)) * opt.interval_scale;
  const double down = std::max(
      opt.min_spread, std::sqrt(fit.hour_lo * fit.hour_lo + lo * lo + trend * trend) * inflate);
  const double up = std::max(
      opt.min_spread, std::sqrt(fit.hour_hi * fit.hour_hi + hi * hi + trend * trend) * inflate);
  const auto back = [&](double logv) { return std::max(0.0, std::exp(logv) - fit.eps); };
  return {back(mid - down), back(mid), back(mid + up)};
}

}  // namespace ordo::forecast
