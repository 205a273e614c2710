// The report `ordo compare --report-dir DIR` (and `make run`) writes, as names and texts: the
// caller writes the files.
#pragma once

#include <string>
#include <vector>

#include "ordo/report/comparison.h"

namespace ordo::report {

struct ReportFile {
  std::string name;  // a file name, no directory: "report.html"
  std::string text;
};

/// report.html (self-contained, a chart per scenario and policy), report.md and report.json, in
/// that order.
std::vector<ReportFile> ReportFiles(const Comparison& comparison);

}  // namespace ordo::report
