// report.html: one self-contained page — inline CSS and SVG, no script, no fonts or images fetched,
// so it opens offline and can be mailed as one file.
#include <cctype>
#include <string>
#include <vector>

#include "ordo/core/palette.h"
#include "ordo/report/columns.h"
#include "ordo/report/format.h"
#include "ordo/report/render.h"

namespace ordo::report {
namespace {

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px 32px; color: var(--ink); max-width: 1800px; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { font-size: 19px; margin-top: 36px; border-bottom: 1px solid var(--rule); padding-bottom: 4px; }
p, li { font-size: 14px; line-height: 1.45; }
.meta { color: var(--muted); margin-top: -6px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { padding: 3px 9px; border-bottom: 1px solid var(--rule); }
th { background: var(--panel); text-align: right; font-weight: 600; }
th:first-child, td:first-child { text-align: left; }
td { text-align: right; font-variant-numeric: tabular-nums; }
td.study, th.study { background: var(--study); }
tr.ordo td { font-weight: 600; }
tr.bad td { color: var(--alert); }
.legend { font-size: 12px; margin: 10px 0; }
.legend span.item { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 12px; height: 12px; vertical-align: -2px; margin-right: 4px; border: 1px solid var(--muted); }
.charts { display: flex; flex-wrap: wrap; gap: 14px 22px; }
figure { margin: 0; }
figcaption { font-size: 12px; margin-bottom: 2px; }
figcaption b { font-size: 13px; }
details { font-size: 13px; color: var(--ink); }
.problems { color: var(--alert); }
code { background: var(--panel); padding: 0 3px; }
)css";

std::string Table(const ScenarioResult& s) {
  const std::vector<Column> columns = MetricColumns(true);
  const size_t study_from = MetricColumns(false).size();
  std::string out = "<table>\n<tr>";
  for (size_t c = 0; c < columns.size(); ++c) {
    out += std::string(c >= study_from ? "<th class=\"study\">" : "<th>") +
           HtmlEscape(columns[c].header) + "</th>";
  }
  out += "</tr>\n";
  for (const PolicyRun& run : s.runs) {
    if (!run.shown) continue;
    const std::vector<std::string> cells = MetricCells(s, run, true);
    out += std::string("<tr") +
           (!run.ok()              ? " class=\"bad\""
            : run.policy == "ordo" ? " class=\"ordo\""
                                   : "") +
           ">";
    for (size_t c = 0; c < cells.size(); ++c) {
      out += std::string(c >= study_from ? "<td class=\"study\">" : "<td>") + HtmlEscape(cells[c]) +
             "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string Legend(const Scenario& s) {
  auto item = [](std::string_view color, const std::string& label, const std::string& style = "") {
    return R"(<span class="item"><i style="background:)" + std::string(color) + ";" + style +
           "\"></i>" + HtmlEscape(label) + "</span>";
  };
  std::string out = "<div class=\"legend\">";
  for (JobKind kind : {JobKind::kTraining, JobKind::kBatchInference, JobKind::kQuantization}) {
    out += item(KindColor(kind), std::string(JobKindName(kind)));
  }
  if (!s.services.empty()) {
    out += item(Color(Swatch::kService), "real-time service");
    out += item(Color(Swatch::kService), "service held beyond demand", "opacity:0.3;");
  }
  out += item(Color(Swatch::kIdle), "idle");
  out += item(Color(Swatch::kUnmet), "unmet real-time GPUs (strip below)");
  out += "<span class=\"item\">dark outline: job already running at step 0</span>";
  return out + "</div>\n";
}

std::string StudyParagraph(const StudyFigures& f) {
  return "<p>The study (" + HtmlEscape(f.label) + "), FIFO &rarr; its allocator: utilization " +
         Percent(f.fifo_utilization) + " &rarr; " + Percent(f.allocator_utilization) + ", value " +
         Thousands(f.fifo_value) + " &rarr; " + Thousands(f.allocator_value) + " (" +
         SignedPercent(f.value_gain) + "), heuristic latency " + Thousands(f.heuristic_latency_ms) +
         " ms.</p>\n";
}

// Section anchors carry the position too: the same scenario may be compared twice.
std::string Anchor(size_t index, const ScenarioResult& s) {
  std::string id = "s" + std::to_string(index + 1) + "-";
  for (char c : s.scenario.name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return id;
}

std::string Summary(const Comparison& comparison) {
  const std::vector<StudyColumn> columns = StudySummaryColumns();
  std::string rows;
  for (size_t i = 0; i < comparison.scenarios.size(); ++i) {
    const ScenarioResult& s = comparison.scenarios[i];
    const std::vector<std::string> cells = StudySummaryCells(s);
    if (cells.empty()) continue;
    rows += "<tr><td><a href=\"#" + Anchor(i, s) + "\">" + HtmlEscape(cells[0]) + "</a></td>";
    for (size_t c = 1; c < cells.size() && c < columns.size(); ++c) {
      rows += std::string(columns[c].study ? "<td class=\"study\">" : "<td>") +
              HtmlEscape(cells[c]) + "</td>";
    }
    rows += "</tr>\n";
  }
  if (rows.empty()) return "";
  std::string header = "<tr>";
  for (const StudyColumn& c : columns) {
    header += std::string(c.study ? "<th class=\"study\">" : "<th>") + HtmlEscape(c.column.header) +
              "</th>";
  }
  header += "</tr>\n";
  return "<h2>Against the study</h2>\n<p>ordo's numbers on the scenarios that re-create the "
         "study, beside the study's own (scenarios/README.md says how the scenarios were "
         "calibrated, on FIFO alone). The study's values are in its own units, so compare gains "
         "and utilizations. Waits count a job never started up to the horizon's end.</p>\n"
         "<table>\n" +
         header + rows + "</table>\n";
}

constexpr std::string_view kDefinitions = R"html(
<h2>What the columns mean</h2>
<ul>
<li><b>utilization</b>: batch GPU-steps plus real-time GPU-steps that served demand, over all GPU-steps (the spec's <code>utilization</code>); <b>allocated</b>: the same with every GPU a service holds, idle reservations included (<code>allocated_utilization</code>).</li>
<li><b>value</b>: priority-weighted GPU-steps of batch work inside the horizon plus served real-time demand (<code>value</code>); <b>gain vs fifo</b>: (value &minus; fifo's value) / fifo's value on the same scenario.</li>
<li><b>started</b>, <b>completed</b>: jobs started inside the horizon (running jobs not counted), and jobs whose end is inside it (running ones included); <b>unmet RT GPU-steps</b>: real-time demand not allocated.</li>
<li><b>planning ms</b>: wall time the policy spent deciding (<code>solve_ms</code>).</li>
<li><b>fragmentation</b>: free GPU-steps, at a step where some job waits, that no waiting job could use because no free aligned block of any of its shapes (in a group it may use) contains that GPU &mdash; as a share of all GPU-steps.</li>
<li><b>shape-mismatch wait</b>: of the steps jobs spent waiting (arrived, not started), the share where at least the job's smallest GPU count was free in the cluster but no free aligned block of any of its shapes existed in a group it may use.</li>
<li><b>wait mean h</b>, <b>wait p95 h</b>: hours from a job's arrival to its start (a job queued before the plan counts the time it has already waited); a job the plan never starts counts with the horizon's end &minus; its arrival, a lower bound; <b>never started</b>: those jobs; <b>p95 wait prio</b>: the same p95 for jobs of priority 1-3, 4-7 and 8-10 (&ldquo;-&rdquo;: no such job).</li>
<li><b>study</b> columns: the published figures, FIFO on the fifo row, the study's allocator on the ordo row.</li>
</ul>
<p>Precise definitions: <code>docs/cli.md</code> in the ordo repository.</p>
)html";

}  // namespace

std::string RenderHtml(const Comparison& comparison) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>ordo compare</title>\n<style>" +
      PaletteCss() + std::string(kStyle) + "</style>\n</head>\n<body>\n<h1>ordo compare</h1>\n";
  out += "<p>" + std::to_string(comparison.scenarios.size()) + " scenarios &times; " +
         std::to_string(comparison.policies.size()) + " policies (";
  for (size_t p = 0; p < comparison.policies.size(); ++p) {
    out += (p ? ", " : "") + HtmlEscape(comparison.policies[p]);
  }
  out +=
      "). Every plan was checked against the spec's legality rules and measured from the "
      "scenario and the plan alone. Charts: GPUs top to bottom, grouped by node (node name and "
      "GPU numbers on the left), time left to right (the step, and the time since step 0).</p>\n";
  const std::vector<std::string> problems = ProblemLines(comparison);
  if (!problems.empty()) {
    out += "<div class=\"problems\"><h2>Problems</h2><p>" + std::to_string(comparison.problems()) +
           " runs failed or broke a rule; each is a bug.</p><ul>\n";
    for (const std::string& line : problems) out += "<li>" + HtmlEscape(line) + "</li>\n";
    out += "</ul></div>\n";
  }
  out += Summary(comparison);

  for (size_t i = 0; i < comparison.scenarios.size(); ++i) {
    const ScenarioResult& s = comparison.scenarios[i];
    out += "<section id=\"" + Anchor(i, s) + "\">\n<h2>" + HtmlEscape(s.scenario.name) +
           "</h2>\n<p class=\"meta\"><code>" + HtmlEscape(s.source) +
           "</code>: " + HtmlEscape(ScenarioSummary(s.scenario)) + "</p>\n";
    if (!s.scenario.description.empty()) {
      out += "<details><summary>How this scenario was built</summary><p>" +
             HtmlEscape(s.scenario.description) + "</p></details>\n";
    }
    out += Table(s);
    if (s.study) out += StudyParagraph(*s.study);
    out += Legend(s.scenario) + "<div class=\"charts\">\n";
    for (const PolicyRun& run : s.runs) {
      if (!run.shown) continue;
      out += "<figure><figcaption><b>" + HtmlEscape(run.policy) + "</b>";
      if (!run.plan) {
        out += " failed: " + HtmlEscape(run.error) + "</figcaption></figure>\n";
        continue;
      }
      out += " &mdash; utilization " + Percent(run.metrics.utilization) + ", value " +
             Thousands(run.metrics.value) + " (" + SignedPercent(run.value_gain) +
             " vs fifo), unmet " + std::to_string(run.metrics.realtime_unmet_gpu_steps) +
             (run.violations.empty() ? "" : ", ILLEGAL PLAN") + "</figcaption>\n" +
             RenderPlanSvg(s.scenario, *run.plan) + "</figure>\n";
    }
    out += "</div>\n</section>\n";
  }
  out += kDefinitions;
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace ordo::report
