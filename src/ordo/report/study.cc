#include "ordo/report/study.h"

namespace ordo::report {

const std::vector<StudyFigures>& StudyTable() {
  // Copied from ../shared/docs/study.md; the values are the study's, in its own (unpublished)
  // units.
  static const std::vector<StudyFigures> kTable = {
      {"mixed-control", "mixed control", 0.516, 0.724, 7093, 10980, 0.548, 1},
      {"realtime-contention", "real-time contention", 0.750, 0.802, 3233, 4029, 0.246, 1},
      {"training-heavy", "training-heavy (8 GPUs, 16 jobs)", 0.536, 0.870, 8553, 17545, 1.051, 2},
      {"large-mixed", "large mixed", 0.768, 0.827, 13977, 20101, 0.438, 2},
      {"oversubscribed", "oversubscribed", 0.854, 0.875, 4311, 5760, 0.336, 1},
      {"scale-test", "scale test (64 GPUs, 30 jobs)", 0.449, 0.449, 44233, 51248, 0.159, 15},
      {"uniform-priority", "uniform priority", 0.768, 0.875, 25219, 31052, 0.231, 2},
  };
  return kTable;
}

std::optional<StudyFigures> FindStudyFigures(std::string_view scenario_name) {
  for (const StudyFigures& row : StudyTable()) {
    if (row.scenario == scenario_name) return row;
  }
  return std::nullopt;
}

}  // namespace ordo::report
