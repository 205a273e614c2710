#include "ordo/sim/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "ordo/core/chart_axes.h"
#include "ordo/core/palette.h"

namespace ordo::sim {
namespace {

using OJson = nlohmann::ordered_json;

double Round(double v, double scale = 1e4) { return std::round(v * scale) / scale; }

OJson WaitJson(const WaitStats& w) {
  return OJson{{"jobs", w.jobs},
               {"unstarted", w.unstarted},
               {"mean_hours", Round(w.mean_hours)},
               {"p95_hours", Round(w.p95_hours)}};
}

OJson MetricsObject(const PeriodMetrics& m) {
  OJson o;
  o["from_step"] = m.from_step;
  o["to_step"] = m.to_step;
  o["utilization"] = Round(m.utilization, 1e6);
  o["allocated_utilization"] = Round(m.allocated_utilization, 1e6);
  o["value"] = Round(m.value);
  o["batch_value"] = Round(m.batch_value);
  o["service_value"] = Round(m.service_value);
  o["net_value"] = Round(m.net_value);
  o["batch_gpu_steps"] = m.batch_gpu_steps;
  o["realtime_demand_gpu_steps"] = m.realtime_demand_gpu_steps;
  o["realtime_unmet_gpu_steps"] = m.realtime_unmet_gpu_steps;
  o["preemptions"] = m.preemptions;
  o["lost_gpu_steps"] = m.lost_gpu_steps;
  o["jobs_arrived"] = m.jobs_arrived;
  o["jobs_started"] = m.jobs_started;
  o["jobs_completed"] = m.jobs_completed;
  o["wait"] = WaitJson(m.wait_all);
  OJson by_kind = OJson::object();
  for (int k = 0; k < 3; ++k) {
    if (m.wait_by_kind[k].jobs > 0) {
      by_kind[std::string(JobKindName(static_cast<JobKind>(k)))] = WaitJson(m.wait_by_kind[k]);
    }
  }
  o["wait_by_kind"] = std::move(by_kind);
  OJson by_class;
  for (int c = 0; c < kPriorityClasses; ++c) {
    if (m.wait_by_class[c].jobs > 0) by_class[PriorityClassName(c)] = WaitJson(m.wait_by_class[c]);
  }
  o["wait_by_priority"] = std::move(by_class);
  if (!m.tenants.empty()) {
    OJson tenants = OJson::array();
    for (const TenantUse& t : m.tenants) {
      tenants.push_back({{"gpu_hours", Round(t.gpu_hours, 1e3)},
                         {"demand_gpu_hours", Round(t.demand_gpu_hours, 1e3)},
                         {"entitled_gpu_hours", Round(t.entitled_gpu_hours, 1e3)}});
    }
    o["tenants"] = std::move(tenants);
  }
  o["decisions"] = m.decisions;
  o["plan_ms_mean"] = Round(m.plan_ms_mean, 1e3);
  o["plan_ms_p95"] = Round(m.plan_ms_p95, 1e3);
  o["plan_ms_max"] = Round(m.plan_ms_max, 1e3);
  o["plan_ms_total"] = Round(m.plan_ms_total, 1e3);
  return o;
}

std::string Label(const SimReport& r) { return r.label.empty() ? r.run.policy : r.label; }

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

// Thousands separators for values: 12,345.
std::string Big(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.0f", v);
  std::string s = buf;
  const bool neg = !s.empty() && s[0] == '-';
  std::string digits = neg ? s.substr(1) : s;
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (neg ? "-" : "") + out;
}

std::string Hex(Swatch swatch) { return std::string(Color(swatch)); }

}  // namespace

OJson PeriodMetricsObject(const PeriodMetrics& m) { return MetricsObject(m); }

std::string TimelineJson(const World& world, const std::vector<SimReport>& runs) {
  OJson out;
  out["version"] = 1;
  out["kind"] = "ordo-simulation";
  OJson w;
  w["name"] = world.name;
  w["step_minutes"] = world.step_minutes;
  w["horizon_steps"] = world.horizon_steps;
  w["days"] = world.days;
  w["steps"] = world.window_steps();
  w["gpus"] = world.cluster.total_gpus();
  OJson groups = OJson::array();
  for (const NodeGroup& g : world.cluster.groups) {
    groups.push_back({{"name", g.name},
                      {"nodes", g.nodes},
                      {"gpus_per_node", g.gpus_per_node},
                      {"gpu_type", g.gpu_type}});
  }
  w["node_groups"] = std::move(groups);
  out["world"] = std::move(w);
  OJson list = OJson::array();
  for (const SimReport& r : runs) {
    const SimRun& run = r.run;
    OJson o;
    o["policy"] = run.policy;
    o["label"] = Label(r);
    o["options"] = {{"replan_every", run.options.replan_every},
                    {"replan_on_arrival", run.options.replan_on_arrival},
                    {"arrivals_lookahead", run.options.arrivals_lookahead},
                    {"time_limit_s", run.options.time_limit_s},
                    {"seed", run.options.seed}};
    o["total"] = MetricsObject(r.metrics.total);
    OJson days = OJson::array();
    for (const PeriodMetrics& d : r.metrics.days) days.push_back(MetricsObject(d));
    o["days"] = std::move(days);
    OJson jobs = OJson::array();
    for (const JobOutcome& jo : run.jobs) {
      const WorldJob& wj = world.jobs[jo.world_index];
      OJson j;
      j["id"] = wj.id;
      j["kind"] = std::string(JobKindName(wj.kind));
      j["priority"] = wj.priority;
      j["arrival_step"] = wj.arrival_step;
      if (const std::optional<int> start = jo.start_step()) {
        j["start_step"] = *start;
        j["first_gpu"] = jo.stays.front().first_gpu;
        j["gpus"] = jo.gpus;
        j["duration_steps"] = jo.actual_steps;
        j["forecast_duration_steps"] = jo.forecast_steps;
        if (jo.preemptions() > 0) {
          OJson stays = OJson::array();
          for (const Stay& stay : jo.stays) {
            stays.push_back({{"start_step", stay.from},
                             {"first_gpu", stay.first_gpu},
                             {"end_step", stay.to},
                             {"restart_steps", stay.work_from - stay.from},
                             {"lost_steps", stay.to - stay.kept_to}});
          }
          j["stays"] = std::move(stays);
          j["waiting_to_resume"] = jo.preempted_now;
        }
      } else {
        j["start_step"] = nullptr;
      }
      jobs.push_back(std::move(j));
    }
    o["jobs"] = std::move(jobs);
    OJson services = OJson::array();
    for (size_t i = 0; i < world.services.size(); ++i) {
      OJson s;
      s["id"] = world.services[i].id;
      s["priority"] = world.services[i].priority;
      s["demand"] = run.service_demand[i];
      s["forecast"] = run.service_forecast[i];
      std::vector<int> counts;
      for (const auto& ids : run.service_gpus[i]) counts.push_back(static_cast<int>(ids.size()));
      s["allocated"] = counts;
      s["gpus"] = run.service_gpus[i];
      services.push_back(std::move(s));
    }
    o["services"] = std::move(services);
    OJson decisions = OJson::array();
    for (const Decision& d : run.decisions) {
      decisions.push_back({{"step", d.step},
                           {"trigger", std::string(TriggerName(d.trigger))},
                           {"plan_ms", Round(d.plan_ms, 1e3)},
                           {"jobs_queued", d.jobs_queued},
                           {"jobs_running", d.jobs_running},
                           {"jobs_started", d.jobs_started}});
    }
    o["decisions"] = std::move(decisions);
    list.push_back(std::move(o));
  }
  out["runs"] = std::move(list);
  return out.dump(-1, ' ', false, OJson::error_handler_t::replace) + "\n";
}

// ---------------------------------------------------------------------------------------------
// HTML.

namespace {

constexpr int kPlotWidth = 1100;
constexpr int kLeft = 84;

struct Scale {
  int steps = 1;
  double x(double step) const { return kLeft + step * kPlotWidth / steps; }
};

void DayGrid(const World& world, const Scale& sx, int top, int height, std::string& svg) {
  const int spd = world.steps_per_day();
  for (int d = 0; d <= world.days; ++d) {
    const double x = sx.x(d * spd);
    svg += "<line x1='" + Fmt("%.1f", x) + "' y1='" + std::to_string(top) + "' x2='" +
           Fmt("%.1f", x) + "' y2='" + std::to_string(top + height) + "' stroke='" +
           Hex(Swatch::kMuted) + "' stroke-dasharray='3,3'/>";
    if (d < world.days) {
      svg += "<text x='" + Fmt("%.1f", x + 3) + "' y='" + std::to_string(top + height + 12) +
             "' font-size='10'>day " + std::to_string(d + 1) + "</text>";
    }
  }
}

std::string GpuChart(const World& world, const SimReport& r) {
  const SimRun& run = r.run;
  const int total_gpus = world.cluster.total_gpus();
  const double row = std::clamp(480.0 / total_gpus, 0.25, 8.0);
  const int height = static_cast<int>(std::ceil(row * total_gpus));
  const int top = 18;
  Scale sx{run.steps};
  // crispEdges: thousands of abutting cells, no anti-aliased seams between them.
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' shape-rendering='crispEdges' width='" +
                    std::to_string(kLeft + kPlotWidth + 10) + "' height='" +
                    std::to_string(top + height + 20) + "'>";
  svg += "<rect x='" + std::to_string(kLeft) + "' y='" + std::to_string(top) + "' width='" +
         std::to_string(kPlotWidth) + "' height='" + std::to_string(height) + "' fill='" +
         Hex(Swatch::kIdle) + "' stroke='" + Hex(Swatch::kRule) + "'/>";
  // Decisions: ticks above the chart (conflict re-plans in red).
  for (const Decision& d : run.decisions) {
    const std::string color =
        Hex(d.trigger == Trigger::kConflict ? Swatch::kAlert : Swatch::kMuted);
    svg += "<line x1='" + Fmt("%.1f", sx.x(d.step)) + "' y1='" + std::to_string(top - 8) +
           "' x2='" + Fmt("%.1f", sx.x(d.step)) + "' y2='" + std::to_string(top - 2) +
           "' stroke='" + color + "'/>";
  }
  // Services: runs of consecutive steps on the same GPU.
  for (size_t i = 0; i < run.service_gpus.size(); ++i) {
    const std::string color = Hex(Swatch::kService);
    std::vector<int> since(total_gpus, -1);
    auto flush = [&](int g, int end) {
      if (since[g] < 0) return;
      svg += "<rect x='" + Fmt("%.2f", sx.x(since[g])) + "' y='" + Fmt("%.2f", top + g * row) +
             "' width='" + Fmt("%.2f", sx.x(end) - sx.x(since[g])) + "' height='" +
             Fmt("%.2f", row) + "' fill='" + color + "' fill-opacity='0.55'/>";
      since[g] = -1;
    };
    std::vector<char> held(total_gpus, 0), now(total_gpus, 0);
    for (int t = 0; t <= run.steps; ++t) {
      std::fill(now.begin(), now.end(), 0);
      if (t < run.steps) {
        for (int g : run.service_gpus[i][t]) now[g] = 1;
      }
      for (int g = 0; g < total_gpus; ++g) {
        if (held[g] && !now[g]) flush(g, t);
        if (now[g] && !held[g]) since[g] = t;
      }
      held.swap(now);
    }
  }
  // Jobs.
  for (const JobOutcome& o : run.jobs) {
    const WorldJob& wj = world.jobs[o.world_index];
    for (size_t k = 0; k < o.stays.size(); ++k) {
      const Stay& stay = o.stays[k];
      const long long start = stay.from;
      const long long end = std::min<long long>(run.steps, stay.to);
      const bool cut = k + 1 < o.stays.size() || o.preempted_now;
      std::string what = "steps " + std::to_string(stay.from) + "-" + std::to_string(stay.to);
      if (stay.work_from > stay.from) {
        what += ", restarting " + std::to_string(stay.work_from - stay.from);
      }
      if (cut)
        what += ", preempted, " + std::to_string(stay.to - stay.kept_to) + " steps of work lost";
      svg += "<rect x='" + Fmt("%.2f", sx.x(static_cast<double>(start))) + "' y='" +
             Fmt("%.2f", top + stay.first_gpu * row) + "' width='" +
             Fmt("%.2f",
                 std::max(0.5, sx.x(static_cast<double>(end)) - sx.x(static_cast<double>(start)))) +
             "' height='" + Fmt("%.2f", o.gpus * row) + "' fill='" + Hex(KindSwatch(wj.kind)) +
             "' stroke='" + Hex(Swatch::kPaper) + "' stroke-width='0.3'><title>" + Escape(wj.id) +
             " (" + std::string(JobKindName(wj.kind)) + ", priority " + Fmt("%g", wj.priority) +
             ", " + std::to_string(o.gpus) + " GPUs from " + std::to_string(stay.first_gpu) +
             "): " + what + ", forecast " + std::to_string(o.forecast_steps) + ", waited " +
             std::to_string(*o.start_step() - wj.arrival_step) + "</title></rect>";
    }
  }
  DayGrid(world, sx, top, height, svg);
  // Node boundaries while nodes are tall enough to tell apart (always between groups), and node
  // names with their first GPU, as many as fit.
  for (const NodeSpan& n : NodeSpans(world.cluster)) {
    const double node_h = n.gpus * row;
    const double y = top + n.first_gpu * row;
    if (n.first_gpu > 0 && (n.node == 0 || node_h >= 3)) {
      svg += "<line x1='" + std::to_string(n.node == 0 ? 0 : kLeft) + "' y1='" + Fmt("%.2f", y) +
             "' x2='" + std::to_string(kLeft + kPlotWidth) + "' y2='" + Fmt("%.2f", y) +
             "' stroke='" + Hex(Swatch::kBoundary) + "' stroke-width='" +
             (n.node == 0 ? "1.2" : "0.5") + "'/>";
    }
    const int stride = std::max(1, static_cast<int>(std::ceil(11 / std::max(node_h, 0.01))));
    if (n.node % stride != 0) continue;
    svg += "<text x='" + std::to_string(kLeft - 3) + "' y='" + Fmt("%.1f", y + 9) +
           "' font-size='9' text-anchor='end' fill='" + Hex(Swatch::kInk) + "'>" + Escape(n.name) +
           " \u00b7 " + std::to_string(n.first_gpu) + "</text>";
  }
  svg += "</svg>";
  return svg;
}

// Busy GPUs per step, stacked: jobs by kind, then services' GPUs serving demand, then services'
// GPUs held beyond it.
std::string UsageChart(const World& world, const SimReport& r) {
  const SimRun& run = r.run;
  const int total_gpus = world.cluster.total_gpus();
  const int height = 140;
  const int top = 8;
  Scale sx{run.steps};
  std::vector<double> by_kind[3] = {std::vector<double>(run.steps, 0),
                                    std::vector<double>(run.steps, 0),
                                    std::vector<double>(run.steps, 0)};
  std::vector<double> served(run.steps, 0), idle(run.steps, 0), demand(run.steps, 0);
  for (const JobOutcome& o : run.jobs) {
    std::vector<double>& gpus = by_kind[static_cast<int>(world.jobs[o.world_index].kind)];
    for (const Stay& stay : o.stays) {
      for (long long t = stay.from; t < std::min<long long>(run.steps, stay.to); ++t) {
        gpus[t] += o.gpus;
      }
    }
  }
  for (size_t i = 0; i < run.service_gpus.size(); ++i) {
    for (int t = 0; t < run.steps; ++t) {
      const int a = static_cast<int>(run.service_gpus[i][t].size());
      const int d = run.service_demand[i][t];
      served[t] += std::min(a, d);
      idle[t] += std::max(0, a - d);
      demand[t] += d;
    }
  }
  auto y = [&](double gpus) { return top + height - gpus * height / total_gpus; };
  auto area = [&](const std::vector<double>& lo, const std::vector<double>& hi, Swatch color,
                  const char* opacity) {
    std::string pts;
    for (int t = 0; t < run.steps; ++t) {
      pts += Fmt("%.1f", sx.x(t)) + "," + Fmt("%.1f", y(hi[t])) + " " + Fmt("%.1f", sx.x(t + 1)) +
             "," + Fmt("%.1f", y(hi[t])) + " ";
    }
    for (int t = run.steps - 1; t >= 0; --t) {
      pts += Fmt("%.1f", sx.x(t + 1)) + "," + Fmt("%.1f", y(lo[t])) + " " + Fmt("%.1f", sx.x(t)) +
             "," + Fmt("%.1f", y(lo[t])) + " ";
    }
    return "<polygon points='" + pts + "' fill='" + Hex(color) + "' fill-opacity='" + opacity +
           "'/>";
  };
  std::vector<double> zero(run.steps, 0), k1(run.steps), batch(run.steps), b_s(run.steps),
      b_s_i(run.steps), b_d(run.steps);
  for (int t = 0; t < run.steps; ++t) {
    k1[t] = by_kind[0][t] + by_kind[1][t];
    batch[t] = k1[t] + by_kind[2][t];
    b_s[t] = batch[t] + served[t];
    b_s_i[t] = b_s[t] + idle[t];
    b_d[t] = batch[t] + demand[t];
  }
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='" +
                    std::to_string(kLeft + kPlotWidth + 10) + "' height='" +
                    std::to_string(top + height + 20) + "'>";
  svg += "<rect x='" + std::to_string(kLeft) + "' y='" + std::to_string(top) + "' width='" +
         std::to_string(kPlotWidth) + "' height='" + std::to_string(height) + "' fill='" +
         Hex(Swatch::kPaper) + "' stroke='" + Hex(Swatch::kRule) + "'/>";
  svg += area(zero, by_kind[0], Swatch::kTraining, "0.85");
  svg += area(by_kind[0], k1, Swatch::kBatchInference, "0.85");
  svg += area(k1, batch, Swatch::kQuantization, "0.85");
  svg += area(batch, b_s, Swatch::kService, "0.85");
  svg += area(b_s, b_s_i, Swatch::kService, "0.3");
  // Demand above the allocation: the line batch + demand, where it rises above batch + allocated.
  std::string line;
  for (int t = 0; t < run.steps; ++t) {
    line += Fmt("%.1f", sx.x(t)) + "," + Fmt("%.1f", y(b_d[t])) + " " + Fmt("%.1f", sx.x(t + 1)) +
            "," + Fmt("%.1f", y(b_d[t])) + " ";
  }
  svg += "<polyline points='" + line + "' fill='none' stroke='" + Hex(Swatch::kInk) +
         "' stroke-width='0.8'/>";
  DayGrid(world, sx, top, height, svg);
  svg += "<text x='4' y='" + std::to_string(top + 10) + "' font-size='10'>" +
         std::to_string(total_gpus) + " GPUs</text><text x='4' y='" + std::to_string(top + height) +
         "' font-size='10'>0</text>";
  svg += "</svg>";
  return svg;
}

std::string ServiceChart(const World& world, const SimReport& r, size_t i) {
  const SimRun& run = r.run;
  const int height = 80;
  const int top = 6;
  Scale sx{run.steps};
  int peak = 1;
  for (int t = 0; t < run.steps; ++t) {
    peak = std::max({peak, run.service_demand[i][t], run.service_forecast[i][t],
                     static_cast<int>(run.service_gpus[i][t].size())});
  }
  auto y = [&](double v) { return top + height - v * height / peak; };
  auto steps_line = [&](auto value, Swatch color, const char* dash) {
    std::string pts;
    for (int t = 0; t < run.steps; ++t) {
      const double v = value(t);
      pts += Fmt("%.1f", sx.x(t)) + "," + Fmt("%.1f", y(v)) + " " + Fmt("%.1f", sx.x(t + 1)) + "," +
             Fmt("%.1f", y(v)) + " ";
    }
    return "<polyline points='" + pts + "' fill='none' stroke='" + Hex(color) +
           "' stroke-width='1.2' stroke-dasharray='" + dash + "'/>";
  };
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='" +
                    std::to_string(kLeft + kPlotWidth + 10) + "' height='" +
                    std::to_string(top + height + 20) + "'>";
  svg += "<rect x='" + std::to_string(kLeft) + "' y='" + std::to_string(top) + "' width='" +
         std::to_string(kPlotWidth) + "' height='" + std::to_string(height) + "' fill='" +
         Hex(Swatch::kPaper) + "' stroke='" + Hex(Swatch::kRule) + "'/>";
  // Unmet demand shaded.
  for (int t = 0; t < run.steps; ++t) {
    const int a = static_cast<int>(run.service_gpus[i][t].size());
    const int d = run.service_demand[i][t];
    if (d > a) {
      svg += "<rect x='" + Fmt("%.2f", sx.x(t)) + "' y='" + Fmt("%.1f", y(d)) + "' width='" +
             Fmt("%.2f", sx.x(t + 1) - sx.x(t)) + "' height='" + Fmt("%.1f", y(a) - y(d)) +
             "' fill='" + Hex(Swatch::kUnmet) + "' fill-opacity='0.5'/>";
    }
  }
  svg += steps_line([&](int t) { return run.service_forecast[i][t]; }, Swatch::kMuted, "4,2");
  svg += steps_line([&](int t) { return run.service_demand[i][t]; }, Swatch::kInk, "none");
  svg += steps_line([&](int t) { return static_cast<double>(run.service_gpus[i][t].size()); },
                    Swatch::kService, "none");
  DayGrid(world, sx, top, height, svg);
  svg += "<text x='4' y='" + std::to_string(top + 10) + "' font-size='10'>" + std::to_string(peak) +
         "</text><text x='4' y='" + std::to_string(top + height) + "' font-size='10'>0</text>";
  svg += "</svg>";
  return svg;
}

std::string MetricsRow(const std::string& name, const PeriodMetrics& m, int step_minutes) {
  (void)step_minutes;
  std::string row = "<tr><td>" + Escape(name) + "</td>";
  row += "<td>" + Big(m.value) + "</td><td>" + Big(m.net_value) + "</td>";
  row += "<td>" + Fmt("%.1f%%", 100 * m.utilization) + "</td><td>" +
         Fmt("%.1f%%", 100 * m.allocated_utilization) + "</td>";
  row += "<td>" + std::to_string(m.realtime_unmet_gpu_steps) + "</td>";
  row += "<td>" + std::to_string(m.jobs_started) + "</td><td>" + std::to_string(m.jobs_completed) +
         "</td>";
  row += "<td>" + Fmt("%.2f", m.wait_all.mean_hours) + "</td><td>" +
         Fmt("%.2f", m.wait_all.p95_hours) + "</td><td>" + std::to_string(m.wait_all.unstarted) +
         "</td>";
  row += "<td>" + std::to_string(m.decisions) + "</td><td>" + Fmt("%.2f", m.plan_ms_mean) +
         "</td><td>" + Fmt("%.2f", m.plan_ms_p95) + "</td></tr>";
  return row;
}

constexpr const char* kMetricsHeader =
    "<tr><th></th><th>value</th><th>net value</th><th>util.</th><th>alloc. util.</th>"
    "<th>unmet RT GPU-steps</th><th>started</th><th>completed</th><th>mean wait h</th>"
    "<th>p95 wait h</th><th>never started</th><th>decisions</th><th>plan ms mean</th>"
    "<th>plan ms p95</th></tr>";

}  // namespace

std::string TimelineHtml(const World& world, const std::vector<SimReport>& runs) {
  std::string h =
      "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>ordo simulate: " +
      Escape(world.name) + "</title><style>" + PaletteCss() +
      "body{font-family:sans-serif;margin:20px;color:var(--ink)}"
      "table{border-collapse:collapse;font-size:12px;margin:8px 0}"
      "td,th{border:1px solid var(--rule);padding:3px 6px;text-align:right}"
      "td:first-child,th:first-child{text-align:left}h2{margin-top:36px}"
      ".legend span{display:inline-block;margin-right:14px;font-size:12px}"
      ".sw{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:4px}"
      "</style></head><body>\n";
  h += "<h1>ordo simulate: " + Escape(world.name) + "</h1>\n<p>" +
       std::to_string(world.cluster.total_gpus()) + " GPUs, " + std::to_string(world.days) +
       " days of " + std::to_string(world.steps_per_day()) + " steps (" +
       std::to_string(world.step_minutes) + " min), plans look " +
       std::to_string(world.horizon_steps) + " steps ahead; " + std::to_string(world.jobs.size()) +
       " jobs, " + std::to_string(world.services.size()) + " services.</p>\n";
  if (!world.description.empty()) h += "<p>" + Escape(world.description) + "</p>\n";
  h += "<h2>Totals over the window</h2><table>" + std::string(kMetricsHeader);
  for (const SimReport& r : runs) h += MetricsRow(Label(r), r.metrics.total, world.step_minutes);
  h += "</table><p>Value and utilization as the spec defines them, over the committed timeline "
       "(actual durations and demand); net value subtracts M x priority per unmet real-time "
       "GPU-step; waits count jobs never started with the window's end (a lower bound).</p>\n";
  h += "<div class='legend'>";
  auto swatch = [](Swatch color, const std::string& label, const char* style = "") {
    return "<span><i class='sw' style='background:" + Hex(color) + ";" + style + "'></i>" + label +
           "</span>";
  };
  for (JobKind kind : {JobKind::kTraining, JobKind::kBatchInference, JobKind::kQuantization}) {
    h += swatch(KindSwatch(kind), std::string(JobKindName(kind)));
  }
  if (!world.services.empty()) {
    h += swatch(Swatch::kService, "real-time service");
    h += swatch(Swatch::kService, "service held beyond demand", "opacity:0.3");
    h += swatch(Swatch::kUnmet, "unmet demand");
  }
  h += swatch(Swatch::kIdle, "idle");
  h += "<span>ticks above a chart: re-plans (red: a job outlived its forecast)</span></div>\n";
  for (const SimReport& r : runs) {
    h += "<h2>" + Escape(Label(r)) + "</h2>\n";
    h += "<p>re-plan every " + std::to_string(r.run.options.replan_every) + " step(s)" +
         (r.run.options.replan_on_arrival ? ", and on arrivals" : "") +
         (r.run.options.arrivals_lookahead ? "; sees arrivals inside its horizon" : "") +
         ".</p>\n<h3>GPUs over time (node and first GPU on the left)</h3>\n" + GpuChart(world, r) +
         "\n";
    h += "<h3>Busy GPUs: jobs by kind, services serving demand, services held beyond it (faint); "
         "line: jobs + demand</h3>\n" +
         UsageChart(world, r) + "\n";
    for (size_t i = 0; i < world.services.size(); ++i) {
      h += "<h3>" + Escape(world.services[i].id) +
           ": demand (black), forecast (grey, dashed), allocated (purple), unmet (red)</h3>\n" +
           ServiceChart(world, r, i) + "\n";
    }
    h += "<h3>Per day</h3><table>" + std::string(kMetricsHeader);
    for (size_t d = 0; d < r.metrics.days.size(); ++d) {
      h += MetricsRow("day " + std::to_string(d + 1), r.metrics.days[d], world.step_minutes);
    }
    h += MetricsRow("total", r.metrics.total, world.step_minutes) + "</table>\n";
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace ordo::sim
