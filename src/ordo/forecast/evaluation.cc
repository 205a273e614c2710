#include "ordo/forecast/evaluation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>

#include "ordo/forecast/stats.h"
#include "ordo/forecast/time_series.h"

namespace ordo::forecast {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kWeek = 168;
constexpr int64_t kDay = 24;  // hours
// Hour 0 of the traces is put on Monday 1970-01-05 00:00 UTC.
constexpr int64_t kMondayHour = 96;

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Result<Csv> ParseCsv(std::string_view text, const std::vector<std::string>& needed,
                     std::vector<int>& cols) {
  Csv csv;
  std::size_t start = 0;
  bool first = true;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (first) {
      csv.header = SplitCsvLine(line);
      first = false;
    } else {
      csv.rows.push_back(SplitCsvLine(line));
    }
  }
  cols.clear();
  for (const std::string& name : needed) {
    const auto it = std::find(csv.header.begin(), csv.header.end(), name);
    if (it == csv.header.end()) return FailInput(name, "missing column `" + name + "`");
    cols.push_back(static_cast<int>(it - csv.header.begin()));
  }
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    for (int c : cols) {
      if (static_cast<std::size_t>(c) >= csv.rows[r].size()) {
        return FailInput("rows[" + std::to_string(r) + "]", "too few columns");
      }
    }
  }
  return csv;
}

Result<int> HourIndex(const std::string& text, std::size_t row) {
  auto v = ParseNumber(text, "rows[" + std::to_string(row) + "].hour_index");
  if (!v) return tl::unexpected(v.error());
  if (*v < 0 || *v > 24.0 * 366 * 5 || *v != std::floor(*v)) {
    return FailInput("rows[" + std::to_string(row) + "].hour_index",
                     "must be a whole number of hours from 0");
  }
  return static_cast<int>(*v);
}

Result<double> Rate(const std::string& text, std::size_t row, const std::string& column) {
  auto v = ParseNumber(text, "rows[" + std::to_string(row) + "]." + column);
  if (!v) return tl::unexpected(v.error());
  if (*v < 0) return FailInput("rows[" + std::to_string(row) + "]." + column, "must be >= 0");
  return *v;
}

// Reads (key, hour, value) rows into one series per key; absent hours get `absent`.
Result<std::map<std::string, std::vector<double>>> ReadKeyed(std::string_view text,
                                                             const std::vector<std::string>& keys,
                                                             const std::string& value,
                                                             double absent) {
  std::vector<std::string> needed = keys;
  needed.emplace_back("hour_index");
  needed.push_back(value);
  std::vector<int> cols;
  auto csv = ParseCsv(text, needed, cols);
  if (!csv) return tl::unexpected(csv.error());
  std::map<std::string, std::vector<double>> out;
  int max_hour = -1;
  for (std::size_t r = 0; r < csv->rows.size(); ++r) {
    const auto& row = csv->rows[r];
    auto h = HourIndex(row[static_cast<std::size_t>(cols[keys.size()])], r);
    if (!h) return tl::unexpected(h.error());
    max_hour = std::max(max_hour, *h);
  }
  for (std::size_t r = 0; r < csv->rows.size(); ++r) {
    const auto& row = csv->rows[r];
    std::string key;
    for (std::size_t k = 0; k < keys.size(); ++k) {
      key += (k ? "/" : "") + row[static_cast<std::size_t>(cols[k])];
    }
    const int h = *HourIndex(row[static_cast<std::size_t>(cols[keys.size()])], r);
    auto v = Rate(row[static_cast<std::size_t>(cols[keys.size() + 1])], r, value);
    if (!v) return tl::unexpected(v.error());
    auto& s = out[key];
    if (s.empty()) s.assign(static_cast<std::size_t>(max_hour) + 1, absent);
    s[static_cast<std::size_t>(h)] = *v;
  }
  return out;
}

// Seasonal-naive forecast of hour t from the history [begin, origin): the same hour a week (or
// whole weeks) earlier, else the same hour a day earlier, else the history's median.
double SeasonalNaive(const std::vector<double>& v, int64_t begin, int64_t origin, int64_t t,
                     double median) {
  for (int64_t lag = kWeek; t - lag >= begin; lag += kWeek) {
    if (t - lag < origin && !std::isnan(v[static_cast<std::size_t>(t - lag)])) {
      return v[static_cast<std::size_t>(t - lag)];
    }
  }
  for (int64_t lag = 24; t - lag >= begin; lag += 24) {
    if (t - lag < origin && !std::isnan(v[static_cast<std::size_t>(t - lag)])) {
      return v[static_cast<std::size_t>(t - lag)];
    }
  }
  return median;
}

void Score(EvalScore& s, double actual, const Quantiles& q) {
  s.abs_error += std::fabs(actual - q.p50);
  s.pinball +=
      (Pinball(actual, q.p10, 0.1) + Pinball(actual, q.p50, 0.5) + Pinball(actual, q.p90, 0.9)) / 3;
  s.covered += (actual >= q.p10 && actual <= q.p90) ? 1 : 0;
  s.hours += 1;
}

void Add(EvalScore& into, const EvalScore& s) {
  into.abs_error += s.abs_error;
  into.pinball += s.pinball;
  into.covered += s.covered;
  into.hours += s.hours;
}

std::string Percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.0f%%", 100 * x);
  return buf;
}

}  // namespace

double EvalScore::MaePercent() const {
  return hours ? 100 * abs_error / static_cast<double>(hours) : kNaN;
}
double EvalScore::PinballPercent() const {
  return hours ? 100 * pinball / static_cast<double>(hours) : kNaN;
}
double EvalScore::CoveragePercent() const {
  return hours ? 100.0 * static_cast<double>(covered) / static_cast<double>(hours) : kNaN;
}

Result<std::vector<EvalSeries>> ParseServeGenModels(std::string_view csv_text) {
  auto keyed = ReadKeyed(csv_text, {"model"}, "mean_rate_rps", kNaN);
  if (!keyed) return tl::unexpected(keyed.error());
  std::vector<EvalSeries> out;
  for (auto& [model, v] : *keyed) {
    int last = -1;
    std::vector<double> seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!std::isnan(v[i])) {
        last = static_cast<int>(i);
        seen.push_back(v[i]);
      }
    }
    if (last + 1 < 14 * 24) continue;
    v.resize(static_cast<std::size_t>(last) + 1);
    const double med = Median(seen);
    for (double& x : v) {
      if (!std::isnan(x) && x < 0.05 * med) x = kNaN;
    }
    out.push_back({model, "servegen-model", kMondayHour, std::move(v)});
  }
  return out;
}

Result<std::vector<EvalSeries>> ParseServeGenClients(std::string_view csv_text,
                                                     const std::vector<EvalSeries>& models) {
  auto keyed = ReadKeyed(csv_text, {"model", "client_id"}, "mean_rate_rps", 0.0);
  if (!keyed) return tl::unexpected(keyed.error());
  std::vector<EvalSeries> out;
  for (auto& [key, v] : *keyed) {
    const std::string model = key.substr(0, key.find('/'));
    const auto m = std::find_if(models.begin(), models.end(),
                                [&](const EvalSeries& s) { return s.name == model; });
    if (m == models.end()) continue;
    v.resize(m->hours.size(), 0.0);
    int observed = 0;
    int busy = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (std::isnan(m->hours[i])) {
        v[i] = kNaN;
        continue;
      }
      ++observed;
      busy += v[i] > 0 ? 1 : 0;
    }
    if (observed == 0 || busy < 0.9 * observed) continue;
    out.push_back({key, "servegen-client", kMondayHour, std::move(v)});
  }
  return out;
}

Result<std::vector<EvalSeries>> ParseDlrmApps(std::string_view csv_text) {
  auto keyed = ReadKeyed(csv_text, {"app_name"}, "alive_hn_gpu_instances", kNaN);
  if (!keyed) return tl::unexpected(keyed.error());
  std::vector<EvalSeries> out;
  for (auto& [app, v] : *keyed) {
    double sum = 0;
    int n = 0;
    for (double x : v) {
      if (std::isnan(x)) continue;
      sum += x;
      ++n;
    }
    if (n == 0 || sum / n < 10) continue;
    out.push_back({app, "dlrm", kMondayHour, std::move(v)});
  }
  return out;
}

Result<EvalReport> EvaluateDemand(const std::vector<EvalSeries>& series,
                                  const EvalOptions& options) {
  if (options.history_days.empty()) return FailInput("history_days", "must not be empty");
  for (int d : options.history_days) {
    if (d < 0 || d > 3660) return FailInput("history_days", "must be 0 (all) or 1 to 3660 days");
  }
  if (options.horizon_days < 1 || options.horizon_days > 7) {
    return FailInput("horizon_days", "must be between 1 and 7");
  }
  if (options.min_history_days < 1) return FailInput("min_history_days", "must be at least 1");
  if (!(options.shift_factor > 0)) return FailInput("shift_factor", "must be > 0");
  for (double g : options.weekly_trends) {
    if (!(g > -1)) return FailInput("weekly_trends", "a weekly trend must be above -100%");
  }

  struct Variant {
    std::string name;
    double trend = 0;    // per week, compounded hourly
    bool shift = false;  // x shift_factor from shift_days_before_origin before the origin
  };
  std::vector<Variant> variants{{"as recorded", 0, false}};
  for (double g : options.weekly_trends) variants.push_back({"trend " + Percent(g) + "/week", g});
  variants.push_back({"level shift x" + std::to_string(options.shift_factor).substr(0, 3) + " " +
                          std::to_string(options.shift_days_before_origin) + " days back",
                      0, true});

  std::map<std::string, EvalCategory> cats;
  std::vector<std::string> order{"overall"};
  const auto cat = [&](const std::string& name) -> EvalCategory& {
    auto it = cats.find(name);
    if (it == cats.end()) {
      order.push_back(name);
      it = cats.emplace(name, EvalCategory{name, {}, {}, {}, 0}).first;
    }
    return it->second;
  };
  cats.emplace("overall", EvalCategory{"overall", {}, {}, {}, 0});

  EvalReport report;
  report.method = std::string(DemandMethodName(options.forecaster.method));
  for (std::size_t si = 0; si < series.size(); ++si) {
    const EvalSeries& s = series[si];
    double sum = 0;
    int n = 0;
    for (double x : s.hours) {
      if (std::isnan(x)) continue;
      if (!(x >= 0) || !std::isfinite(x)) {
        return FailInput("series[" + std::to_string(si) + "]", "rates must be finite and >= 0");
      }
      sum += x;
      ++n;
    }
    if (n == 0 || sum <= 0) continue;
    ++report.series;
    const double scale = n / sum;
    const auto total = static_cast<int64_t>(s.hours.size());
    const int64_t days = total / 24;
    for (const Variant& var : variants) {
      for (int64_t d = options.min_history_days; d < days; ++d) {
        const int64_t origin = d * kDay;
        std::vector<double> v(s.hours.size());
        for (int64_t i = 0; i < total; ++i) {
          double x = s.hours[static_cast<std::size_t>(i)] * scale;
          if (var.trend != 0) x *= std::pow(1 + var.trend, static_cast<double>(i) / kWeek);
          if (var.shift && i >= origin - kDay * options.shift_days_before_origin) {
            x *= options.shift_factor;
          }
          v[static_cast<std::size_t>(i)] = x;
        }
        const int64_t end = std::min(total, origin + kDay * options.horizon_days);
        for (int cut : options.history_days) {
          const int64_t begin = cut == 0 ? 0 : std::max<int64_t>(0, origin - kDay * cut);
          std::vector<RatePoint> hist;
          std::vector<double> seen;
          for (int64_t i = begin; i < origin; ++i) {
            const double x = v[static_cast<std::size_t>(i)];
            if (std::isnan(x)) continue;
            hist.push_back({static_cast<double>(s.first_hour + i) * 3600.0, x});
            seen.push_back(x);
          }
          DemandForecaster f(options.forecaster);
          if (hist.empty() || !f.Fit(hist)) {
            ++report.failed_fits;
            continue;
          }
          const double median = Median(seen);
          double mean = 0;
          for (double x : seen) mean += x / static_cast<double>(seen.size());
          const double eps = std::max(1e-9, 0.1 * mean);
          // The baselines' own errors in the history: log ratios to the week before.
          std::vector<double> errs;
          for (int64_t i = begin + kWeek; i < origin; ++i) {
            const double a = v[static_cast<std::size_t>(i)];
            const double b = v[static_cast<std::size_t>(i - kWeek)];
            if (!std::isnan(a) && !std::isnan(b)) errs.push_back(std::log((a + eps) / (b + eps)));
          }
          const double e10 = errs.size() >= 24 ? std::min(0.0, Quantile(errs, 0.1)) : 0.0;
          const double e90 = errs.size() >= 24 ? std::max(0.0, Quantile(errs, 0.9)) : 0.0;
          const auto with_spread = [&](double p50) {
            return Quantiles{std::max(0.0, (p50 + eps) * std::exp(e10) - eps), p50,
                             (p50 + eps) * std::exp(e90) - eps};
          };
          // The last day against the same day a week earlier (1 when the history is shorter).
          double num = 0;
          double den = 0;
          for (int64_t i = std::max(begin + kWeek, origin - 24); i < origin; ++i) {
            const double a = v[static_cast<std::size_t>(i)];
            const double b = v[static_cast<std::size_t>(i - kWeek)];
            if (std::isnan(a) || std::isnan(b)) continue;
            num += a;
            den += b;
          }
          const double ratio = den > 0 && num > 0 ? std::clamp(num / den, 0.1, 10.0) : 1.0;
          EvalScore ordo, naive, scaled;
          for (int64_t t = origin; t < end; ++t) {
            const double actual = v[static_cast<std::size_t>(t)];
            if (std::isnan(actual)) continue;
            auto q = f.Predict(static_cast<double>(s.first_hour + t) * 3600.0);
            if (!q) continue;
            const double sn = SeasonalNaive(v, begin, origin, t, median);
            Score(ordo, actual, *q);
            Score(naive, actual, with_spread(sn));
            Score(scaled, actual, with_spread(sn * ratio));
          }
          if (ordo.hours == 0) continue;
          ++report.forecasts;
          const std::string hist_name =
              cut == 0 ? "history all days" : "history " + std::to_string(cut) + " days";
          for (const std::string& name :
               {std::string("overall"), "source " + s.source, var.name, hist_name}) {
            EvalCategory& c = cat(name);
            Add(c.ordo, ordo);
            Add(c.seasonal_naive, naive);
            Add(c.scaled_naive, scaled);
            c.forecasts += 1;
          }
        }
      }
    }
  }
  // Overall, then sources, then variants, then history lengths, each in first-seen order.
  const auto rank = [](const std::string& name) {
    if (name == "overall") return 0;
    if (name.rfind("source ", 0) == 0) return 1;
    if (name.rfind("history ", 0) == 0) return 3;
    return 2;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  for (const std::string& name : order) report.categories.push_back(cats.at(name));
  return report;
}

std::string FormatEvalReport(const EvalReport& r) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "Forecaster `%s`: %d series, %lld forecasts of up to 7 days scored "
                "(%lld histories with nothing observed skipped).\n"
                "MAE and pinball loss in %% of the series' mean; coverage = share of hours "
                "inside p10-p90.\n\n",
                r.method.c_str(), r.series, static_cast<long long>(r.forecasts),
                static_cast<long long>(r.failed_fits));
  out += buf;
  out +=
      "| category | forecasts | hours | MAE ordo / naive / scaled | pinball ordo / naive / "
      "scaled | coverage ordo / naive / scaled | targets |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const EvalCategory& c : r.categories) {
    const double best_mae = std::min(c.seasonal_naive.MaePercent(), c.scaled_naive.MaePercent());
    const double best_pin =
        std::min(c.seasonal_naive.PinballPercent(), c.scaled_naive.PinballPercent());
    const double slack = c.name == "overall" ? 1.0 : 1.05;
    std::string verdict;
    if (c.ordo.MaePercent() >= best_mae * slack) verdict += "MAE ";
    if (c.ordo.PinballPercent() >= best_pin * slack) verdict += "pinball ";
    const double cov = c.ordo.CoveragePercent();
    if (cov < 75 || cov > 90) verdict += "coverage ";
    verdict = verdict.empty() ? "met" : "missed: " + verdict.substr(0, verdict.size() - 1);
    std::snprintf(
        buf, sizeof(buf),
        "| %s | %lld | %lld | %.1f / %.1f / %.1f | %.2f / %.2f / %.2f | "
        "%.0f / %.0f / %.0f | %s |\n",
        c.name.c_str(), static_cast<long long>(c.forecasts), static_cast<long long>(c.ordo.hours),
        c.ordo.MaePercent(), c.seasonal_naive.MaePercent(), c.scaled_naive.MaePercent(),
        c.ordo.PinballPercent(), c.seasonal_naive.PinballPercent(), c.scaled_naive.PinballPercent(),
        c.ordo.CoveragePercent(), c.seasonal_naive.CoveragePercent(),
        c.scaled_naive.CoveragePercent(), verdict.c_str());
    out += buf;
  }
  return out;
}

}  // namespace ordo::forecast
