// The terminal table and report.md.
#include <algorithm>
#include <string>
#include <vector>

#include "ordo/report/columns.h"
#include "ordo/report/format.h"
#include "ordo/report/render.h"

namespace ordo::report {
namespace {

// A pipe table with every column padded to its widest cell: aligned in a terminal, and still a
// valid Markdown table.
std::string PipeTable(const std::vector<Column>& columns,
                      const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(columns.size(), 3);
  for (size_t c = 0; c < columns.size(); ++c)
    width[c] = std::max(width[c], columns[c].header.size());
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string cell = MarkdownCell(c < cells.size() ? cells[c] : "");
      const std::string pad(width[c] > cell.size() ? width[c] - cell.size() : 0, ' ');
      out += " " + (columns[c].numeric ? pad + cell : cell + pad) + " |";
    }
    return out + "\n";
  };
  std::vector<std::string> headers;
  headers.reserve(columns.size());
  for (const Column& c : columns) headers.push_back(c.header);
  std::string out = line(headers) + "|";
  for (size_t c = 0; c < columns.size(); ++c) {
    out += columns[c].numeric ? " " + std::string(width[c] - 1, '-') + ": |"
                              : " " + std::string(width[c], '-') + " |";
  }
  out += "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

std::vector<std::vector<std::string>> Rows(const ScenarioResult& s, bool with_study) {
  std::vector<std::vector<std::string>> rows;
  for (const PolicyRun& run : s.runs) {
    if (run.shown) rows.push_back(MetricCells(s, run, with_study));
  }
  return rows;
}

std::string StudyLine(const StudyFigures& f) {
  return "study (" + f.label + "), FIFO -> allocator: utilization " + Percent(f.fifo_utilization) +
         " -> " + Percent(f.allocator_utilization) + ", value " + Thousands(f.fifo_value) + " -> " +
         Thousands(f.allocator_value) + " (" + SignedPercent(f.value_gain) + "), heuristic " +
         Thousands(f.heuristic_latency_ms) + " ms";
}

std::string Problems(const Comparison& comparison, const std::string& bullet) {
  const std::vector<std::string> lines = ProblemLines(comparison);
  if (lines.empty()) return "";
  std::string out = "PROBLEMS (" + std::to_string(comparison.problems()) +
                    " runs failed or broke a rule; each is a bug):\n";
  for (const std::string& l : lines) out += bullet + l + "\n";
  return out;
}

}  // namespace

std::string RenderTable(const Comparison& comparison) {
  std::string out;
  const std::vector<Column> columns = MetricColumns(false);
  for (const ScenarioResult& s : comparison.scenarios) {
    out += s.scenario.name + " (" + s.source + "): " + ScenarioSummary(s.scenario) + "\n";
    out += PipeTable(columns, Rows(s, false));
    if (s.study) out += StudyLine(*s.study) + "\n";
    out += "\n";
  }
  out += Problems(comparison, "  ");
  return out;
}

std::string RenderMarkdown(const Comparison& comparison) {
  std::string out = "# ordo compare\n\n";
  out +=
      std::to_string(comparison.scenarios.size()) + " scenarios x " +
      std::to_string(comparison.policies.size()) +
      " policies. Every plan was checked against the spec's rules (CheckPlan) and measured from "
      "the scenario and the plan. Gains are in value over `fifo` on the same scenario. The "
      "study's figures are its own (FIFO on the `fifo` row, its allocator on the `ordo` row), in "
      "its own units: compare gains and utilizations, not values. Definitions: docs/cli.md.\n\n";

  // The summary against the study, for the scenarios that re-create it.
  std::vector<std::vector<std::string>> summary;
  for (const ScenarioResult& s : comparison.scenarios) {
    if (s.study) summary.push_back(StudySummaryCells(s));
  }
  if (!summary.empty()) {
    std::vector<Column> header;
    for (const StudyColumn& c : StudySummaryColumns()) header.push_back(c.column);
    out += "## Against the study\n\n";
    out +=
        "The study's figures beside ours on the scenarios that re-create it "
        "(scenarios/README.md says how they were calibrated, on FIFO alone). Waits count a job "
        "never started up to the horizon's end.\n\n";
    out += PipeTable(header, summary);
    out += "\n";
  }

  const std::vector<Column> columns = MetricColumns(true);
  for (const ScenarioResult& s : comparison.scenarios) {
    out += "## " + s.scenario.name + "\n\n`" + s.source + "`: " + ScenarioSummary(s.scenario) +
           ".\n\n";
    out += PipeTable(columns, Rows(s, true));
    if (s.study) out += "\n" + StudyLine(*s.study) + "\n";
    out += "\n";
  }
  const std::string problems = Problems(comparison, "- ");
  if (!problems.empty()) out += "## Problems\n\n" + problems;
  return out;
}

}  // namespace ordo::report
