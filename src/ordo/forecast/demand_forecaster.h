// Real-time demand: a weekly profile (hour of week) from hourly request rates, turned into GPUs
// per step through a per-GPU rate and headroom. Replaces the static peak reservation.
//
// What it does: rates are averaged into hours; zeros (and near-zeros) in a series that is not
// naturally sparse are collection gaps and count as missing. The rate is level x profile: the
// profile is a robust (weighted median) ratio to a one-week rolling level, per hour of week, with
// recent weeks weighted more and shrunk towards the hour-of-day profile where few weeks are seen;
// the level for the future is the recent (exponentially weighted, robust) level plus a damped
// trend. Quantiles come from the forecaster's own rolling-origin backtest over its history (errors
// of forecasting day d+1..d+7 from days < d), so p10-p90 reflect how wrong it has really been.
// Little history degrades gracefully: under a week it is a daily profile; under a day, the level's
// own quantiles. Cost: O(weeks x hours) per fit, plus one fit per backtest origin (<= 28).
//
//   DemandForecaster f;
//   f.Fit(points);                                  // hourly (or finer) rates
//   auto steps = ForecastSteps(f, start_s, 24, 60, /*per_gpu_rate=*/50, /*headroom=*/0.2);
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/forecast/forecaster.h"
#include "ordo/forecast/level_shape.h"
#include "ordo/forecast/time_series.h"

namespace ordo::forecast {

/// Which algorithm fits the hours (stored in saved models by name: "profile", "level-shape").
/// kProfile is the weekly-profile forecaster described above; kLevelShape is level_shape.h.
enum class DemandMethod : int { kProfile = 0, kLevelShape = 1 };
std::string_view DemandMethodName(DemandMethod method);

struct DemandOptions {
  DemandMethod method = DemandMethod::kProfile;
  LevelShapeOptions level_shape;      // used by kLevelShape only
  double week_half_life = 2.0;        // a week k weeks old weighs 0.5^(k / week_half_life)
  int max_history_weeks = 8;          // history kept for Refit (and used by Fit)
  double level_half_life_days = 2.0;  // recency of the level the forecast starts from
  double trend_damping = 0.5;         // per day: day k ahead gets damping^k of the daily trend
  double max_trend_per_day = 0.1;     // |log-level slope| cap, per day
  double gap_fraction = 0.05;         // hours below this share of the median are gaps...
  double sparse_zero_fraction = 0.3;  // ...unless more than this share of hours are zero
  double weekly_shrink = 1.0;         // pseudo-weeks of the hour-of-day profile in each hour
  int max_backtest_days = 28;         // backtest origins (days) looked at, most recent first
  // The backtest's p10/p90 errors are stretched by this share: a few weeks of errors understate
  // the tails. 0.2 gave 80% coverage on a development split inside ServeGen's week one.
  double interval_widening = 0.2;
};

/// How much history the fitted profile rests on (written in Save() for people to read).
enum class DemandMode : int { kNone = 0, kLevel = 1, kDaily = 2, kWeekly = 3 };
std::string_view DemandModeName(DemandMode mode);

class DemandForecaster final : public ForecasterOf<RatePoint, double> {
 public:
  static constexpr std::size_t kHorizonDays = 7;

  DemandForecaster() = default;
  explicit DemandForecaster(DemandOptions options) : options_(options) {}

  [[nodiscard]] std::string_view kind() const override { return "demand"; }
  [[nodiscard]] std::string Save() const override;
  [[nodiscard]] Result<void> Load(std::string_view json) override;

  /// `history`: strictly increasing times, rates >= 0 (ValidateRateHistory). Points are averaged
  /// into UTC hours. Empty history is an error.
  [[nodiscard]] Result<void> Fit(std::span<const RatePoint> history) override;
  /// Appends points later than the kept history (an earlier or equal time is an error naming it).
  [[nodiscard]] Result<void> Refit(std::span<const RatePoint> observations) override;

  /// Switches the method and refits the kept history with it (a fitted forecaster only refits;
  /// an unfitted one just remembers the method).
  [[nodiscard]] Result<void> SetMethod(DemandMethod method);

  /// Quantiles of the mean rate over the hour that contains `time_s` (Unix seconds).
  [[nodiscard]] Result<Quantiles> Predict(const double& time_s) const override;

  /// The observed mean rates of the `hours` UTC hours that start before `until_s` (Unix seconds),
  /// oldest first: NaN for an hour without a sample or outside the kept history.
  [[nodiscard]] std::vector<double> ObservedHourMeans(double until_s, int hours) const;

  [[nodiscard]] bool fitted() const { return mode_ != DemandMode::kNone; }
  [[nodiscard]] DemandMode mode() const { return mode_; }
  [[nodiscard]] const DemandOptions& options() const { return options_; }
  /// Multiplicative profile by hour of week (0 = Monday 00:00 UTC); mean 1 (kProfile only).
  [[nodiscard]] const std::array<double, 168>& profile() const { return profile_; }
  /// kLevelShape's fitted state (mode kNone under kProfile).
  [[nodiscard]] const LevelShapeFit& level_shape() const { return level_shape_; }

 private:
  Result<void> FitHours();
  // Adds `points` (inside hours_/counts_'s span) to hours_ holding per-hour sums, turns the sums
  // into means (NaN where an hour has no point) and records the last point's time.
  void AddPointsAsHourMeans(std::span<const RatePoint> points);

  DemandOptions options_;
  // Kept history: hourly means from first_hour_, NaN where nothing was observed.
  int64_t first_hour_ = 0;
  std::vector<double> hours_;
  std::vector<int> counts_;  // points averaged into each hour
  double last_time_s_ = 0;   // the latest point's time, for Refit's order check
  // Fitted state.
  DemandMode mode_ = DemandMode::kNone;
  std::array<double, 168> profile_{};
  double level_ = 0;          // at the end of history
  double slope_per_day_ = 0;  // log level
  int64_t end_hour_ = 0;      // first hour after the history
  double eps_ = 0;            // added before taking logs, so zeros are allowed
  bool additive_ = false;     // sparse traffic: errors are differences, not log ratios
  // Quantiles (q10, q50, q90) of the backtest's errors (log ratios, or differences for sparse
  // traffic), by days ahead (the last entry serves every later day).
  std::array<std::array<double, 3>, kHorizonDays> resid_{};
  std::array<double, 3> level_quantiles_{};  // kLevel mode: the rate's own quantiles
  int backtest_residuals_ = 0;
  int gap_hours_ = 0;
  LevelShapeFit level_shape_;  // kLevelShape's fitted state
};

/// Hour of week of a Unix time: 0 = Monday 00:00-01:00 UTC, 167 = Sunday 23:00.
int HourOfWeek(int64_t unix_hour);

/// GPUs that serve `rate` with `headroom` (0.2 = 20% spare) at `per_gpu_rate` each:
/// ceil(rate * (1 + headroom) / per_gpu_rate), 0 for a zero rate.
int GpusForRate(double rate, double per_gpu_rate, double headroom);

struct DemandStep {
  double start_s = 0;
  double rate_p50 = 0;  // mean over the step of the hourly medians
  double rate_p90 = 0;  // highest hourly p90 the step touches: capacity must hold all step
  int gpus = 0;         // GpusForRate(rate_p90, ...)
};

/// One forecast per step of `step_minutes` from `start_s`. Errors name the argument
/// (`per_gpu_rate`, `headroom`, `steps`, `step_minutes`).
[[nodiscard]] Result<std::vector<DemandStep>> ForecastSteps(const DemandForecaster& forecaster,
                                                            double start_s, int steps,
                                                            int step_minutes, double per_gpu_rate,
                                                            double headroom);

}  // namespace ordo::forecast
