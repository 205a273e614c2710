// The published study's own figures (../shared/docs/study.md, "The results"), keyed by the names of
// the scenarios in scenarios/ that re-create it, so a report can print them beside ordo's numbers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ordo::report {

/// One row of the study's table: FIFO → the study's allocator, same hardware and work.
struct StudyFigures {
  std::string scenario;              // the `name` of the scenario file that re-creates it
  std::string label;                 // the study's own wording
  double fifo_utilization = 0;       // fraction, 0.516 for 51.6%
  double allocator_utilization = 0;  // fraction
  double fifo_value = 0;
  double allocator_value = 0;
  double value_gain = 0;  // fraction, as published (0.548 for +54.8%)
  double heuristic_latency_ms = 0;
};

/// The seven rows of the study, in its order.
const std::vector<StudyFigures>& StudyTable();

/// The study's row for a scenario name, or none for scenarios that do not re-create the study.
std::optional<StudyFigures> FindStudyFigures(std::string_view scenario_name);

}  // namespace ordo::report
