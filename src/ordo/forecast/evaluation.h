// Rolling-origin evaluation of the demand forecaster against two seasonal-naive baselines, on
// hourly series (the inference traces of ../shared/data, or any the caller builds).
//
// What it does: for each series, each variant of it (as recorded; with a compound trend of -20%,
// +20% or +40% a week applied; with a x1.5 level shift three days before the origin), each day
// origin d that leaves at least `min_history_days` of history, and each history cut (7, 14 days
// or all), it fits the forecaster on the cut history and forecasts the next seven days (or what
// the series has of them). Baselines: seasonal naive (the same hour a week earlier) and seasonal
// naive scaled by the last day's ratio to the same day a week earlier. Their p10/p90 are the
// history's own one-week-ahead seasonal-naive errors (log ratios), or the point itself when the
// history is too short to have any. Every hour observed in the horizon is scored by all three:
// absolute error of the p50, pinball loss averaged over p10/p50/p90, p10-p90 coverage. Series
// are divided by their mean first, so a category pools series of any size and the errors read
// as a share of the series' mean. Guarantees: deterministic; every forecaster is scored on the
// same hours. Cost: one fit per (series x variant x origin x cut), no refits inside.
//
//   auto series = ParseServeGenModels(csv_text);           // or ParseServeGenClients /
//   ParseDlrmApps auto report = EvaluateDemand(*series, EvalOptions{}); std::cout <<
//   FormatEvalReport(*report);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/forecast/demand_forecaster.h"

namespace ordo::forecast {

/// One hourly series: `hours[i]` is the mean rate of Unix hour `first_hour + i`, NaN if missing.
struct EvalSeries {
  std::string name;
  std::string source;  // the category it is reported under: "servegen-model", ...
  int64_t first_hour = 0;
  std::vector<double> hours;
};

/// ServeGen's per-model hourly totals (`servegen_rate_hourly.csv`: model, hour_index,
/// mean_rate_rps). Models with under 14 days are left out (too short for a week of history and a
/// week to score). Hours under 5% of the model's median are collection gaps (NaN). Hour 0 is put
/// on a Monday 00:00 UTC (the weekday is not published).
[[nodiscard]] Result<std::vector<EvalSeries>> ParseServeGenModels(std::string_view csv_text);

/// ServeGen's busy clients (`servegen_clients_hourly.csv.gz`, decompressed: model, client_id,
/// hour_index, mean_rate_rps) of the models in `models`: clients with traffic in at least 90% of
/// the hours their model has data. A client's absent hour is 0; a model's gap hour is NaN.
[[nodiscard]] Result<std::vector<EvalSeries>> ParseServeGenClients(
    std::string_view csv_text, const std::vector<EvalSeries>& models);

/// Alibaba DLRM GPU instances per application (`alibaba_dlrm_app_gpu_hourly.csv.gz`,
/// decompressed: app_name, hour_index, alive_hn_gpu_instances): applications averaging at least
/// 10 instances.
[[nodiscard]] Result<std::vector<EvalSeries>> ParseDlrmApps(std::string_view csv_text);

struct EvalOptions {
  std::vector<int> history_days = {7, 14, 0};  // 0 = all the history before the origin
  std::vector<double> weekly_trends = {-0.2, 0.2, 0.4};
  double shift_factor = 1.5;
  int shift_days_before_origin = 3;
  int min_history_days = 7;
  int horizon_days = 7;
  DemandOptions forecaster;
};

/// Sums of one forecaster's scores over the scored hours of a category (in series means).
struct EvalScore {
  double abs_error = 0;
  double pinball = 0;  // mean over p10, p50, p90, summed over hours
  int64_t covered = 0;
  int64_t hours = 0;
  [[nodiscard]] double MaePercent() const;
  [[nodiscard]] double PinballPercent() const;
  [[nodiscard]] double CoveragePercent() const;
};

struct EvalCategory {
  std::string name;  // "overall", "source servegen-model", "trend +20%/week", "history 7 days"
  EvalScore ordo;
  EvalScore seasonal_naive;
  EvalScore scaled_naive;
  int64_t forecasts = 0;  // (series, variant, origin, cut) fits scored
};

struct EvalReport {
  std::string method;  // the forecaster's DemandMethodName
  int series = 0;
  int64_t forecasts = 0;
  int64_t failed_fits = 0;               // histories with nothing observed: not scored by anyone
  std::vector<EvalCategory> categories;  // "overall" first
};

/// Errors name the option (`history_days`, `horizon_days`, ...) or the series (`series[3]`).
[[nodiscard]] Result<EvalReport> EvaluateDemand(const std::vector<EvalSeries>& series,
                                                const EvalOptions& options);

/// The report as a markdown table, with a column saying whether each category meets the targets
/// (MAE and pinball within 5% of the better baseline, below both overall; coverage 75-90%).
std::string FormatEvalReport(const EvalReport& report);

}  // namespace ordo::forecast
