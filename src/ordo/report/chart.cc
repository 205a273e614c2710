// The GPU x time chart (RenderPlanSvg): plain SVG elements, sized from the grid so small clusters
// get readable cells and large ones still fit a page.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "ordo/core/chart_axes.h"
#include "ordo/core/metrics.h"
#include "ordo/core/palette.h"
#include "ordo/report/format.h"
#include "ordo/report/render.h"

namespace ordo::report {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  // Trim trailing zeros to keep big charts small.
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string Rect(double x, double y, double w, double h, std::string_view fill,
                 const std::string& extra = "") {
  return "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) + "\" height=\"" +
         Num(h) + "\" fill=\"" + std::string(fill) + "\"" + extra;
}

std::string Attr(std::string_view name, std::string_view value) {
  return " " + std::string(name) + "=\"" + std::string(value) + "\"";
}

std::string Text(double x, double y, std::string_view anchor, Swatch color, const std::string& text,
                 const std::string& extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + std::string(anchor) +
         "\"" + Attr("fill", Color(color)) + extra + ">" + text + "</text>\n";
}

std::string HLine(double x1, double x2, double y, Swatch color, std::string_view width) {
  return "<line x1=\"" + Num(x1) + "\" x2=\"" + Num(x2) + "\" y1=\"" + Num(y) + "\" y2=\"" +
         Num(y) + "\"" + Attr("stroke", Color(color)) + Attr("stroke-width", width) + "/>\n";
}

}  // namespace

std::string RenderPlanSvg(const Scenario& s, const Plan& plan) {
  const int gpus = std::max(1, s.cluster.total_gpus());
  const int horizon = std::max(1, s.horizon_steps);
  const double cw = std::clamp(480.0 / horizon, 1.0, 20.0);
  const double ch = std::min(12.0, 216.0 / gpus);
  // The left margin holds node names and GPU numbers; below the plot, two lines of time labels
  // (the step, the time since step 0) and the unmet-demand strip.
  const double left = 96, top = 6;
  const double plot_w = cw * horizon, plot_h = ch * gpus;
  const double strip_y = top + plot_h + 30, strip_h = 12;
  const double width = left + plot_w + 16, height = strip_y + strip_h + 4;

  std::string svg = R"(<svg class="chart" role="img" width=")" + Num(width) + "\" height=\"" +
                    Num(height) + "\" viewBox=\"0 0 " + Num(width) + " " + Num(height) +
                    "\" font-family=\"sans-serif\" font-size=\"9\">\n";
  svg += "<title>" + HtmlEscape(s.name + " / " + plan.policy) + "</title>\n";
  svg += Rect(left, top, plot_w, plot_h, Color(Swatch::kIdle), "><title>idle</title></rect>\n");

  // Services: per GPU row, runs of steps held by the same service in the same state (serving
  // demand, or held beyond it).
  std::unordered_map<std::string_view, size_t> service_index;
  for (size_t i = 0; i < s.services.size(); ++i) service_index.emplace(s.services[i].id, i);
  std::vector<int> cell(static_cast<size_t>(gpus) * horizon, -1);  // 2*service + idle?1:0
  std::vector<long long> unmet(horizon, 0);
  std::vector<long long> held(s.services.size() * static_cast<size_t>(horizon), 0);
  for (const ServiceAllocation& a : plan.services) {
    auto it = service_index.find(a.id);
    if (it == service_index.end()) continue;
    const Service& service = s.services[it->second];
    for (int t = 0; t < horizon && t < static_cast<int>(a.gpus.size()); ++t) {
      std::vector<int> ids = a.gpus[t];
      std::sort(ids.begin(), ids.end());
      held[it->second * horizon + t] = static_cast<long long>(ids.size());
      for (size_t k = 0; k < ids.size(); ++k) {
        if (ids[k] < 0 || ids[k] >= gpus) continue;
        const bool beyond = static_cast<long long>(k) >= service.demand[t];
        cell[static_cast<size_t>(t) * gpus + ids[k]] = static_cast<int>(2 * it->second) + beyond;
      }
    }
  }
  for (size_t i = 0; i < s.services.size(); ++i) {
    for (int t = 0; t < horizon; ++t) {
      unmet[t] += std::max(0LL, s.services[i].demand[t] - held[i * horizon + t]);
    }
  }
  for (int g = 0; g < gpus; ++g) {
    int t = 0;
    while (t < horizon) {
      const int code = cell[static_cast<size_t>(t) * gpus + g];
      int end = t + 1;
      while (end < horizon && cell[static_cast<size_t>(end) * gpus + g] == code) ++end;
      if (code >= 0) {
        const auto i = static_cast<size_t>(code / 2);
        const bool beyond = code % 2 == 1;
        svg += Rect(left + t * cw, top + g * ch, (end - t) * cw, ch, Color(Swatch::kService),
                    beyond ? " fill-opacity=\"0.3\">" : ">") +
               "<title>" + HtmlEscape(s.services[i].id) + (beyond ? " (held, beyond demand)" : "") +
               ", GPU " + std::to_string(g) + ", steps " + std::to_string(t) + "-" +
               std::to_string(end - 1) + "</title></rect>\n";
      }
      t = end;
    }
  }

  // Jobs: one block per stay (two for a preempted and resumed job), clipped to the horizon.
  std::unordered_map<std::string_view, size_t> job_index;
  for (size_t j = 0; j < s.jobs.size(); ++j) job_index.emplace(s.jobs[j].id, j);
  for (const JobPlacement& p : plan.jobs) {
    auto it = job_index.find(p.id);
    if (it == job_index.end() || !p.started()) continue;
    const Job& job = s.jobs[it->second];
    const JobStays stays = StaysOf(job, p);
    for (int k = 0; k < stays.count; ++k) {
      const Stay& stay = stays.stays[k];
      const int from = static_cast<int>(std::max<long long>(0, stay.from));
      const int to = static_cast<int>(std::min<long long>(horizon, stay.to));
      const int g0 = std::clamp(stay.first_gpu, 0, gpus);
      const int g1 = std::clamp(stay.first_gpu + p.gpus, 0, gpus);
      if (to <= from || g1 <= g0) continue;
      const double x = left + from * cw, y = top + g0 * ch, w = (to - from) * cw,
                   h = (g1 - g0) * ch;
      const char* note = job.running && k == 0      ? ", already running"
                         : p.preempt_step && k == 0 ? ", preempted"
                         : k == 1                   ? ", resumed"
                                                    : "";
      char tip[160];
      std::snprintf(tip, sizeof tip, ", priority %g, %d GPUs from %d, steps %lld-%lld%s",
                    job.priority, p.gpus, stay.first_gpu, stay.from, stay.to - 1, note);
      svg += Rect(x, y, w, h, KindColor(job.kind),
                  Attr("stroke", Color(job.running ? Swatch::kInk : Swatch::kPaper)) +
                      Attr("stroke-width", job.running ? "1.2" : "0.6") + ">") +
             "<title>" + HtmlEscape(job.id + " (" + std::string(JobKindName(job.kind))) +
             HtmlEscape(std::string(tip)) + ")</title></rect>\n";
      // The id, when it fits (about 5.2 px per character at this size).
      if (h >= 10 && w >= 5.2 * static_cast<double>(job.id.size()) + 4) {
        svg += Text(x + w / 2, y + h / 2 + 3, "middle", Swatch::kPaper, HtmlEscape(job.id),
                    " pointer-events=\"none\"");
      }
    }
  }

  // The GPU axis: a line at every node boundary (heavier between groups) while nodes are tall
  // enough to tell apart, and node names with their GPU numbers, as many as fit without overlap.
  const std::vector<NodeSpan> nodes = NodeSpans(s.cluster);
  for (const NodeSpan& n : nodes) {
    const double node_h = n.gpus * ch;
    const double y = top + n.first_gpu * ch;
    const bool group_start = n.node == 0;
    if (n.first_gpu > 0 && (group_start || node_h >= 3)) {
      svg += HLine(left - (group_start ? 90 : 4), left + plot_w, y, Swatch::kBoundary,
                   group_start ? "1.2" : "0.5");
    }
    const int stride = std::max(1, static_cast<int>(std::ceil(11 / std::max(node_h, 0.01))));
    if (n.node % stride != 0) continue;
    const std::string gpus = n.gpus == 1 ? "GPU " + std::to_string(n.first_gpu)
                                         : "GPU " + std::to_string(n.first_gpu) + "\u2013" +
                                               std::to_string(n.first_gpu + n.gpus - 1);
    if (node_h * stride >= 20) {
      svg += Text(left - 4, y + 9, "end", Swatch::kInk, HtmlEscape(n.name));
      svg += Text(left - 4, y + 18, "end", Swatch::kMuted, gpus);
    } else {
      svg += Text(left - 4, y + 8, "end", Swatch::kInk,
                  HtmlEscape(n.name) + " \u00b7 " + std::to_string(n.first_gpu));
    }
  }

  // The time axis: the step and the time since step 0 ("step 12", "+3h"), at round durations.
  const int every = TickEvery(horizon, s.step_minutes, std::max(2, static_cast<int>(plot_w / 60)));
  for (int t = 0; t <= horizon; t += every) {
    const double x = left + t * cw;
    svg += "<line x1=\"" + Num(x) + "\" x2=\"" + Num(x) + "\" y1=\"" + Num(top) + "\" y2=\"" +
           Num(top + plot_h + 3) + "\"" + Attr("stroke", Color(Swatch::kMuted)) +
           " stroke-width=\"0.4\"/>\n";
    svg += Text(x, top + plot_h + 12, "middle", Swatch::kInk, std::to_string(t));
    svg += Text(x, top + plot_h + 22, "middle", Swatch::kMuted,
                "+" + DurationLabel(static_cast<int64_t>(t) * s.step_minutes));
  }
  svg += Text(left - 18, top + plot_h + 12, "end", Swatch::kInk, "step");
  svg += Text(left - 18, top + plot_h + 22, "end", Swatch::kMuted, "time");
  svg += Rect(left, top, plot_w, plot_h, "none",
              Attr("stroke", Color(Swatch::kBoundary)) + " stroke-width=\"0.8\"/>\n");

  // Unmet real-time demand, one cell per step.
  svg += Text(left - 4, strip_y + 9, "end", Swatch::kUnmet, "unmet real-time");
  for (int t = 0; t < horizon; ++t) {
    if (unmet[t] == 0) continue;
    svg += Rect(left + t * cw, strip_y, cw, strip_h, Color(Swatch::kUnmet)) + "><title>step " +
           std::to_string(t) + ": " + std::to_string(unmet[t]) +
           " real-time GPUs short of demand</title></rect>\n";
    if (cw >= 12) {
      svg += Text(left + t * cw + cw / 2, strip_y + 9, "middle", Swatch::kPaper,
                  std::to_string(unmet[t]));
    }
  }
  svg += Rect(left, strip_y, plot_w, strip_h, "none",
              Attr("stroke", Color(Swatch::kRule)) + " stroke-width=\"0.5\"/>\n");
  svg += "</svg>\n";
  return svg;
}

}  // namespace ordo::report
