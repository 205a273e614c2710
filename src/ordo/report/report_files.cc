#include "ordo/report/report_files.h"

#include "ordo/report/render.h"

namespace ordo::report {

std::vector<ReportFile> ReportFiles(const Comparison& comparison) {
  return {{"report.html", RenderHtml(comparison)},
          {"report.md", RenderMarkdown(comparison)},
          {"report.json", RenderJson(comparison)}};
}

}  // namespace ordo::report
