// The simulator's HTML draws each kind in the palette's colour (core/palette.h), uses no colour
// outside it, and names the nodes along its GPU axis.
#include <gtest/gtest.h>

#include <string>

#include "ordo/core/palette.h"
#include "ordo/sim/timeline.h"
#include "tests/support/page_colors.h"
#include "tests/unit/sim/sim_test_util.h"

namespace ordo::sim {
namespace {

using ordo::testing::FillOf;
using ordo::testing::HexColors;
using ordo::testing::InPalette;
using testing::MakeWorldJob;
using testing::MustSimulate;
using testing::SmallWorld;

TEST(TimelinePalette, EachKindInThePalettesColourAndNothingElse) {
  World w = SmallWorld(2, 4, 1, 6);  // GPUs 0-3 on g-0, 4-7 on g-1
  w.jobs.push_back(MakeWorldJob("t1", 0, 2, 3, 3, 5, JobKind::kTraining));
  w.jobs.push_back(MakeWorldJob("b1", 0, 2, 2, 2, 4, JobKind::kBatchInference));
  w.jobs.push_back(MakeWorldJob("q1", 1, 1, 2, 2, 3, JobKind::kQuantization));
  WorldService s;
  s.id = "chat";
  s.priority = 10;
  s.max_gpus = 2;
  s.demand.assign(24, 1);
  s.forecast_demand.assign(24, 1);
  w.services.push_back(s);
  ASSERT_TRUE(ValidateWorld(w).has_value());
  SimReport report;
  report.run = MustSimulate(w, "fifo");
  report.metrics = ComputeSimMetrics(w, report.run);
  const std::string html = TimelineHtml(w, {report});

  EXPECT_EQ(FillOf(html, "t1 ("), KindColor(JobKind::kTraining));
  EXPECT_EQ(FillOf(html, "b1 ("), KindColor(JobKind::kBatchInference));
  EXPECT_EQ(FillOf(html, "q1 ("), KindColor(JobKind::kQuantization));
  // The service's GPUs in the GPU chart and its area in the busy-GPU chart.
  EXPECT_NE(html.find("fill='" + std::string(Color(Swatch::kService)) + "' fill-opacity='0.55'"),
            std::string::npos);
  EXPECT_NE(html.find("fill='" + std::string(Color(Swatch::kService)) + "' fill-opacity='0.85'"),
            std::string::npos);
  // The legend, with the same colours.
  for (JobKind kind : {JobKind::kTraining, JobKind::kBatchInference, JobKind::kQuantization}) {
    EXPECT_NE(html.find("background:" + std::string(KindColor(kind)) + ";'></i>" +
                        std::string(JobKindName(kind))),
              std::string::npos)
        << JobKindName(kind);
  }
  for (const std::string& c : HexColors(html)) EXPECT_TRUE(InPalette(c)) << c;
  // The GPU axis names each node with its first GPU, and a line marks the boundary between them.
  EXPECT_NE(html.find(">g-0 \u00b7 0</text>"), std::string::npos);
  EXPECT_NE(html.find(">g-1 \u00b7 4</text>"), std::string::npos);
  EXPECT_NE(html.find("stroke='" + std::string(Color(Swatch::kBoundary)) + "' stroke-width='0.5'"),
            std::string::npos);
}

}  // namespace
}  // namespace ordo::sim
