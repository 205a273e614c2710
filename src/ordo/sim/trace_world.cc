#include "ordo/sim/trace_world.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "ordo/sim/random.h"

namespace ordo::sim {
namespace {

std::vector<std::string_view> SplitCsvLine(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// Calls fn(row number from 1, fields) for every data row; the header gives column indices.
template <typename Fn>
Result<void> ForEachRow(std::string_view text, const std::string& what,
                        const std::vector<std::string>& columns, Fn&& fn) {
  size_t pos = 0;
  std::vector<int> index;
  int row = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string_view> fields = SplitCsvLine(line);
    if (index.empty()) {
      for (const std::string& c : columns) {
        auto it = std::find(fields.begin(), fields.end(), c);
        if (it == fields.end()) return FailInput(what, "has no column \"" + c + "\"");
        index.push_back(static_cast<int>(it - fields.begin()));
      }
      continue;
    }
    ++row;
    std::vector<std::string_view> picked;
    for (int i : index) {
      if (i >= static_cast<int>(fields.size())) {
        return FailInput(what, "row " + std::to_string(row) + " has too few columns");
      }
      picked.push_back(fields[i]);
    }
    if (auto ok = fn(row, picked); !ok) return ok;
  }
  if (index.empty()) return FailInput(what, "is empty");
  return {};
}

Result<double> Number(std::string_view text, const std::string& what, int row) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) {
    return FailInput(
        what, "row " + std::to_string(row) + ": \"" + std::string(text) + "\" is not a number");
  }
  return v;
}

int CeilPow2(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

int FloorPow2(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

struct TraceJob {
  std::string id;
  double submit_s = 0;
  double duration_s = 0;
  int gpus = 0;
};

// Hourly rates of one model, gaps interpolated.
Result<std::vector<double>> ServeGenHours(std::string_view csv, const std::string& model,
                                          int* gap_hours) {
  std::map<int, std::pair<double, bool>> hours;  // hour -> (rate, gap)
  auto ok =
      ForEachRow(csv, "servegen", {"model", "hour_index", "mean_rate_rps", "min_10min_rate_rps"},
                 [&](int row, const std::vector<std::string_view>& f) -> Result<void> {
                   if (f[0] != model) return {};
                   auto h = Number(f[1], "servegen", row);
                   auto r = Number(f[2], "servegen", row);
                   auto lo = Number(f[3], "servegen", row);
                   if (!h || !r || !lo)
                     return FailInput("servegen", "row " + std::to_string(row) + " is malformed");
                   hours[static_cast<int>(*h)] = {*r, *lo <= 0};
                   return {};
                 });
  if (!ok) return Fail(ok.error());
  if (hours.empty()) return FailInput("servegen", "no rows for model \"" + model + "\"");
  const int n = hours.rbegin()->first + 1;
  std::vector<double> rate(n, -1);
  for (const auto& [h, v] : hours) {
    if (!v.second) rate[h] = v.first;
  }
  // Linear interpolation across gaps (and missing hours); ends take the nearest valid hour.
  int gaps = 0;
  for (int h = 0; h < n; ++h) {
    if (rate[h] >= 0) continue;
    ++gaps;
    int a = h - 1, b = h + 1;
    while (b < n && rate[b] < 0) ++b;
    const double ra = a >= 0 ? rate[a] : -1;
    const double rb = b < n ? rate[b] : -1;
    if (ra < 0 && rb < 0) return FailInput("servegen", "model \"" + model + "\" has no valid hour");
    for (int k = h; k < b; ++k) {
      if (ra < 0)
        rate[k] = rb;
      else if (rb < 0)
        rate[k] = ra;
      else
        rate[k] = ra + (rb - ra) * (k - a) / static_cast<double>(b - a);
    }
    gaps += b - h - 1;
    h = b - 1;
  }
  if (gap_hours) *gap_hours += gaps;
  return rate;
}

}  // namespace

Result<World> MakeTraceWorld(const TraceWorldOptions& o, std::string_view itp_csv,
                             std::string_view servegen_csv, TraceWorldReport* report) {
  TraceWorldReport rep;
  if (o.step_minutes < 1 || 1440 % o.step_minutes != 0) {
    return FailInput("step_minutes", "must divide a day");
  }
  if (o.days < 1 || o.nodes < 1 || o.gpus_per_node < 1) return FailInput("days", "must be >= 1");
  if (!(o.target_load > 0)) return FailInput("target_load", "must be > 0");
  World w;
  w.name = "itp-" + o.itp_cluster + "-servegen";
  w.step_minutes = o.step_minutes;
  w.horizon_steps = o.horizon_steps;
  w.days = o.days;
  w.cluster.groups.push_back(NodeGroup{"gpu", o.nodes, o.gpus_per_node, "gpu", 80});
  w.cluster.Index();
  const int total_gpus = w.cluster.total_gpus();
  const int steps = w.window_steps();
  const double step_s = o.step_minutes * 60.0;
  const int total_steps = steps + o.horizon_steps;

  // Services.
  double service_gpu_steps = 0;
  for (const TraceService& ts : o.services) {
    auto hours = ServeGenHours(servegen_csv, ts.model, &rep.gap_hours);
    if (!hours) return Fail(hours.error());
    const int first_hour = o.servegen_start_day * 24;
    auto hour_rate = [&](int hour) {
      // Past the trace's end: the same hour of its last day.
      while (hour >= static_cast<int>(hours->size())) hour -= 24;
      return (*hours)[std::max(0, hour)];
    };
    auto step_rate = [&](int t, int hour_offset) {
      // The highest hourly rate the step touches: capacity must hold the whole step.
      const double from_min = t * static_cast<double>(o.step_minutes);
      const int h0 = static_cast<int>(from_min / 60);
      const int h1 = static_cast<int>((from_min + o.step_minutes - 1) / 60);
      double r = 0;
      for (int h = h0; h <= h1; ++h) r = std::max(r, hour_rate(first_hour + h + hour_offset));
      return r;
    };
    WorldService s;
    s.id = ts.id;
    s.priority = ts.priority;
    double peak = 0;
    for (int t = 0; t < total_steps; ++t) {
      s.rate.push_back(step_rate(t, 0));
      peak = std::max(peak, s.rate.back());
    }
    if (o.demand_forecast == DemandForecastKind::kSeasonalNaive) {
      if (first_hour < 168) {
        return FailInput("servegen_start_day",
                         "a seasonal-naive forecast needs a week of history "
                         "before the window (start day >= 7)");
      }
      for (int t = 0; t < total_steps; ++t) s.forecast_rate.push_back(step_rate(t, -168));
    } else if (o.demand_forecast == DemandForecastKind::kForecaster) {
      if (first_hour < 24) {
        return FailInput("servegen_start_day",
                         "the forecaster needs at least a day of history "
                         "before the window (start day >= 1)");
      }
      ServiceForecaster f;
      f.method = o.forecast_method;
      f.quantile = o.forecast_quantile;
      f.history_step_minutes = 60;
      f.history_rate.assign(hours->begin(), hours->begin() + first_hour);
      s.forecaster = std::move(f);
    }
    const int peak_gpus = std::max(1, static_cast<int>(std::lround(ts.peak_share * total_gpus)));
    s.headroom = o.headroom;
    s.per_gpu_rate = peak > 0 ? peak * (1 + o.headroom) / peak_gpus : 1;
    // Round so that the world file reads back the same curves (the rate is written in full).
    s.min_gpus = 1;
    s.max_gpus = std::min(total_gpus, 2 * peak_gpus);
    s.max_change_per_step = std::max(
        1, static_cast<int>(std::lround(o.churn_per_hour * peak_gpus * o.step_minutes / 60.0)));
    s.current_gpus =
        std::min(s.max_gpus, std::max(1, GpusForRate(s.rate[0], s.per_gpu_rate, s.headroom)));
    for (int t = 0; t < steps; ++t) {
      service_gpu_steps += GpusForRate(s.rate[t], s.per_gpu_rate, s.headroom);
    }
    w.services.push_back(std::move(s));
  }
  rep.service_mean_gpus = service_gpu_steps / steps;

  // Jobs of the cluster inside the window.
  const double start_s = o.start_day * 86400.0;
  const double end_s = start_s + steps * step_s;
  std::vector<TraceJob> trace;
  auto ok = ForEachRow(
      itp_csv, "itp", {"cluster", "job_id", "submission_time", "duration", "num_gpu"},
      [&](int row, const std::vector<std::string_view>& f) -> Result<void> {
        if (f[0] != o.itp_cluster) return {};
        auto submit = Number(f[2], "itp", row);
        if (!submit) return Fail(submit.error());
        if (*submit < start_s || *submit >= end_s) return {};
        auto duration = Number(f[3], "itp", row);
        if (!duration) return Fail(duration.error());
        auto gpus = Number(f[4], "itp", row);
        if (!gpus) return Fail(gpus.error());
        if (*gpus < 1 || *duration <= 0) return {};
        trace.push_back(TraceJob{std::string(f[1]), *submit, *duration, static_cast<int>(*gpus)});
        return {};
      });
  if (!ok) return Fail(ok.error());
  if (trace.empty()) {
    return FailInput("itp_cluster", "no job of " + o.itp_cluster + " is submitted in the window");
  }
  std::stable_sort(trace.begin(), trace.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  rep.trace_jobs = static_cast<int>(trace.size());
  const int cap = o.max_job_gpus > 0 ? o.max_job_gpus : std::max(1, total_gpus / 2);
  auto gpus_of = [&](const TraceJob& j) { return std::min(CeilPow2(j.gpus), FloorPow2(cap)); };
  auto window_gpu_hours = [&](const TraceJob& j) {
    return gpus_of(j) * std::min(j.duration_s, end_s - j.submit_s) / 3600.0;
  };
  double offered = 0;
  for (const TraceJob& j : trace) offered += window_gpu_hours(j);
  const double batch_capacity = (total_gpus - rep.service_mean_gpus) * steps * step_s / 3600.0;
  rep.keep_fraction = std::min(1.0, o.target_load * batch_capacity / std::max(1e-9, offered));
  for (const TraceJob& j : trace) {
    Rng rng(HashSeed(o.seed, j.id));
    const double u = rng.Real();
    const int priority = 1 + static_cast<int>(rng.Next() % 10);
    if (u >= rep.keep_fraction) continue;
    WorldJob job;
    char id[32];
    std::snprintf(id, sizeof(id), "j%04d-%.6s", static_cast<int>(w.jobs.size()), j.id.c_str());
    job.id = id;
    job.kind = JobKind::kTraining;
    job.priority = priority;
    job.arrival_step = static_cast<int>(std::floor((j.submit_s - start_s) / step_s));
    const int gpus = gpus_of(j);
    if (gpus < CeilPow2(j.gpus)) ++rep.capped_jobs;
    const int d = std::clamp(static_cast<int>(std::ceil(j.duration_s / step_s - 1e-9)), 1,
                             Limits::kMaxDurationSteps);
    job.shapes.push_back(WorldShape{gpus, d, std::nullopt});
    rep.offered_gpu_hours += window_gpu_hours(j);
    w.jobs.push_back(std::move(job));
  }
  rep.kept_jobs = static_cast<int>(w.jobs.size());

  std::ostringstream d;
  d.precision(3);
  d << "Generated from the Microsoft ITP trace (" << o.itp_cluster << ", days " << o.start_day
    << " to " << o.start_day + o.days << "; " << rep.kept_jobs << " of " << rep.trace_jobs
    << " jobs kept, fraction " << rep.keep_fraction << ", " << rep.capped_jobs << " capped at "
    << cap << " GPUs; offered " << rep.offered_gpu_hours
    << " GPU-hours inside the window) and ServeGen hourly rates (day " << o.servegen_start_day
    << " on; " << rep.gap_hours << " gap hours interpolated; services' mean demand "
    << rep.service_mean_gpus << " GPUs). Mappings: docs/world-format.md.";
  w.description = d.str();
  if (auto valid = ValidateWorld(w); !valid) return Fail(valid.error());
  if (report) *report = rep;
  return w;
}

}  // namespace ordo::sim
