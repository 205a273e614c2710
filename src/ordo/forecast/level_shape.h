// Level x shape demand forecast of an hourly series: the shape (hour of day, day of week and
// their interaction) from all the history, the level from the most recent days, an explicit
// damped trend kept only when the daily levels support it, and level shifts detected so that the
// level and trend rest only on the days after the latest shift.
//
// What it does, in log space (log(rate + eps), eps a tenth of the mean rate so zeros are allowed):
// each day's level is the mean of its deseasonalised hours; the hour-of-day shape is the median of
// the hours' deviations from their day's level; the day-of-week effect is each day's deviation
// from its centred seven-day mean (only days with a whole week around them vote), shrunk towards
// zero unless it stands clear of the noise; the hour-of-week interaction is the mean remaining
// deviation, shrunk harder. A level shift is a step in the daily levels, found by fitting line +
// step at every split of the recent days and testing the step against the noise of the days'
// second differences. The trend is the least-squares slope of the daily levels after the shift,
// kept only when its t-statistic clears `trend_t`, and damped into the future (day k ahead adds
// damping^k of it). The level now is a recency-weighted, trimmed mean of the deseasonalised hours
// after the shift, moved to the end of the history along the trend; the last observed hour's
// deviation from level x shape carries into the next hours, decaying by the lag-one
// autocorrelation of the hourly deviations (so a surge or a lull is followed within the hour, not
// after a day has averaged it in). Quantiles, per side, combine
// the hours' p10/p90 deviation from their day, the p10/p90 of the daily level's change at that
// many days' lag (growing like a random walk beyond the lags seen) and the trend's standard error;
// the spread is inflated for a short history, floored at `min_spread`, and never narrows with the
// horizon.
// Guarantees: p10 <= p50 <= p90, all >= 0; no internal backtest, so a fit is cheap. Cost:
// O(hours + days^2) per fit.
//
//   LevelShapeOptions opt;
//   LevelShapeFit fit = FitLevelShape(first_hour, hourly_rates_with_nan_gaps, opt);
//   Quantiles q = PredictLevelShape(fit, fit.end_hour + 30, opt);  // 30 hours ahead
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "ordo/forecast/forecaster.h"

namespace ordo::forecast {

struct LevelShapeOptions {
  double level_half_life_hours = 24;  // recency of the level the forecast starts from
  double trend_damping = 0.95;        // per day ahead
  double trend_t = 3.0;               // |slope / standard error| needed to keep a trend
  int min_trend_days = 5;             // fewer full days after the last shift: no trend
  double max_trend_per_day = 0.15;    // |log slope| cap
  double shift_t = 3.0;               // |step / standard error| that counts as a level shift
  double min_shift = 0.15;            // ... and the step must be at least this (log ratio)
  int shift_search_days = 10;         // splits looked at, counting back from the last day
  double dow_shrink = 3.0;            // weight of "no weekday effect" against weekday scatter
  double interaction_shrink = 2.0;    // pseudo-weeks of "no hour-of-week interaction"
  double short_history_days = 7.0;    // spread x (1 + this / full days seen)
  double interval_scale = 1.0;        // final stretch of the p10-p90 spread
  // Floor of each side's log half-width: no hour a week ahead is known to better than +-6%, even
  // when the history is flat (instance counts that sit still for days, then jump).
  double min_spread = 0.06;
  // Cap of the hourly persistence of a deviation (0.9: a surge keeps 0.9^h of itself h hours on).
  double max_persistence = 0.9;
};

/// How much history the fit rests on.
enum class LevelShapeMode : int { kNone = 0, kLevel = 1, kDaily = 2, kWeekly = 3 };

struct LevelShapeFit {
  LevelShapeMode mode = LevelShapeMode::kNone;
  int64_t end_hour = 0;                     // first hour after the history
  double eps = 0;                           // added before logs
  std::array<double, 168> shape{};          // log shape by hour of week, mean 0
  double level = 0;                         // log level at end_hour
  double slope_per_day = 0;                 // log level per day (0 when switched off)
  double slope_se = 0;                      // its standard error (0 when switched off)
  int64_t shift_hour = -1;                  // first hour of the latest detected level shift, or -1
  double shift_size = 0;                    // its log step
  double hour_lo = 0;                       // p10 of the hours' log deviation from their day (<= 0)
  double hour_hi = 0;                       // p90 of it (>= 0)
  std::array<double, 8> level_lo{};         // p10 of the daily level's log change at 0..7 days' lag
  std::array<double, 8> level_hi{};         // p90 of it
  int days = 0;                             // days of history seen
  std::array<double, 3> level_quantiles{};  // kLevel: the rate's own p10/p50/p90
  int64_t last_hour = 0;                    // the last observed hour
  double last_deviation = 0;                // its log deviation from the level and shape
  double persistence = 0;                   // lag-one autocorrelation of hourly deviations
};

/// `hours`: hourly mean rates from `first_hour` (Unix hours), NaN where missing (gaps already
/// removed by the caller). mode kNone when nothing is observed.
LevelShapeFit FitLevelShape(int64_t first_hour, std::span<const double> hours,
                            const LevelShapeOptions& options);

/// Quantiles of the hour `unix_hour` (any hour; hours before the end are treated as 0 ahead).
Quantiles PredictLevelShape(const LevelShapeFit& fit, int64_t unix_hour,
                            const LevelShapeOptions& options);

}  // namespace ordo::forecast
