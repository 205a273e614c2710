// The metric columns every table shows, in one place so the terminal table, Markdown and HTML
// agree.
#pragma once

#include <string>
#include <vector>

#include "ordo/report/comparison.h"

namespace ordo::report {

struct Column {
  std::string header;
  bool numeric = true;  // right-aligned
};

/// policy, utilization, allocated, value, gain vs fifo, started, completed, unmet RT, planning ms,
/// fragmentation, shape-mismatch wait, objective, objective as a share of the best bound known —
/// and, with `with_study`, the study's four figures.
std::vector<Column> MetricColumns(bool with_study);

/// The cells of one run, matching MetricColumns. A failed run shows "failed" and dashes; an illegal
/// plan's policy cell says so. Study cells: the study's FIFO on the fifo row, its allocator on the
/// ordo row, empty elsewhere.
std::vector<std::string> MetricCells(const ScenarioResult& result, const PolicyRun& run,
                                     bool with_study);

/// The "against the study" table, one row per scenario that re-creates the study: utilization of
/// FIFO (study, here), of the allocator (study, ordo here), the value gain (study, ordo here), what
/// the gain costs in waiting (mean and p95 wait, never started; fifo and ordo) and the planning
/// time (ordo, study). `study` marks the study's own columns.
struct StudyColumn {
  Column column;
  bool study = false;
};
std::vector<StudyColumn> StudySummaryColumns();

/// The cells of one scenario's row, matching StudySummaryColumns; "-" where a run is missing or
/// failed. Empty for a scenario without study figures.
std::vector<std::string> StudySummaryCells(const ScenarioResult& result);

/// "16 GPUs (2 nodes x 8), 24 steps of 60 min, 12 jobs, 1 service".
std::string ScenarioSummary(const Scenario& scenario);

}  // namespace ordo::report
