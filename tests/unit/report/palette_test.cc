// The report draws every kind in the palette's colour (core/palette.h) and no colour outside it,
// and its Gantt chart labels the GPU axis with nodes and GPU numbers and the time axis with steps
// and hours.
#include "ordo/core/palette.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ordo/policy/registry.h"
#include "ordo/report/comparison.h"
#include "ordo/report/render.h"
#include "tests/support/builders.h"
#include "tests/support/page_colors.h"
#include "tests/support/text.h"

namespace ordo::report {
namespace {

using testing::FillOf;
using testing::HexColors;
using testing::InPalette;
using testing::MakeJob;
using testing::MakeService;

using testing::Count;

// Two groups (a100: 2 nodes of 4 GPUs, GPUs 0-7; h100: 1 node of 8, GPUs 8-15), one job of each
// kind and a service, over 24 one-hour steps.
Scenario EveryKind() {
  return testing::ScenarioBuilder("every-kind")
      .Steps(24)
      .StepMinutes(60)
      .Group("a100", 2, 4, "A100", 80)
      .Group("h100", 1, 8, "H100", 80)
      .Job(MakeJob("train").Gpus(4).Duration(6).Priority(5).Kind(JobKind::kTraining))
      .Job(MakeJob("infer").Gpus(2).Duration(3).Priority(4).Kind(JobKind::kBatchInference))
      .Job(MakeJob("quant").Gpus(1).Duration(2).Priority(3).Kind(JobKind::kQuantization))
      .Service(MakeService("chat").Priority(8).Min(1).Max(4).Demand(std::vector<int>(24, 2)))
      .Build();
}

Plan EveryKindPlan() {
  Plan plan;
  plan.scenario = "every-kind";
  plan.policy = "hand";
  plan.jobs = {JobPlacement{"train", 0, 0, 4, 6}, JobPlacement{"infer", 2, 4, 2, 3},
               JobPlacement{"quant", 1, 6, 1, 2}};
  plan.services = {ServiceAllocation{"chat", std::vector<std::vector<int>>(24, {8, 9})}};
  return plan;
}

TEST(ReportPaletteTest, TheChartDrawsEachKindInThePalettesColour) {
  const std::string svg = RenderPlanSvg(EveryKind(), EveryKindPlan());
  EXPECT_EQ(FillOf(svg, "train ("), KindColor(JobKind::kTraining)) << svg;
  EXPECT_EQ(FillOf(svg, "infer ("), KindColor(JobKind::kBatchInference)) << svg;
  EXPECT_EQ(FillOf(svg, "quant ("), KindColor(JobKind::kQuantization)) << svg;
  EXPECT_EQ(FillOf(svg, "chat,"), Color(Swatch::kService)) << svg;
  EXPECT_EQ(FillOf(svg, "idle"), Color(Swatch::kIdle)) << svg;
  for (const std::string& c : HexColors(svg)) EXPECT_TRUE(InPalette(c)) << c << " in\n" << svg;
}

TEST(ReportPaletteTest, TheReportPageUsesOnlyThePalette) {
  std::vector<ScenarioInput> inputs = {{"every-kind.json", EveryKind()}};
  CompareOptions options;
  options.policies = {"fifo", "ordo"};
  Result<Comparison> c = RunComparison(std::move(inputs), MakeInTreeRegistry(), options);
  ASSERT_TRUE(c.has_value());
  const std::string html = RenderHtml(*c);
  // The legend and the charts: each kind in its palette colour, every colour from the palette.
  for (JobKind kind : {JobKind::kTraining, JobKind::kBatchInference, JobKind::kQuantization}) {
    EXPECT_EQ(Count(html, "background:" + std::string(KindColor(kind)) + ";\"></i>" +
                              std::string(JobKindName(kind))),
              1u)
        << JobKindName(kind);
  }
  for (const char* id : {"train (", "infer (", "quant ("}) {
    const std::string fill = FillOf(html, id);
    EXPECT_TRUE(fill == KindColor(JobKind::kTraining) ||
                fill == KindColor(JobKind::kBatchInference) ||
                fill == KindColor(JobKind::kQuantization))
        << id << ": " << fill;
  }
  EXPECT_EQ(FillOf(html, "train ("), KindColor(JobKind::kTraining));
  EXPECT_EQ(FillOf(html, "infer ("), KindColor(JobKind::kBatchInference));
  EXPECT_EQ(FillOf(html, "quant ("), KindColor(JobKind::kQuantization));
  // The stylesheet takes its colours from the palette's custom properties.
  EXPECT_NE(html.find(PaletteCss()), std::string::npos);
  const std::set<std::string> colors = HexColors(html);
  EXPECT_GE(colors.size(), 5u);
  for (const std::string& color : colors) EXPECT_TRUE(InPalette(color)) << color;
}

TEST(ReportChartAxesTest, NodesGpuNumbersStepsAndHours) {
  const std::string svg = RenderPlanSvg(EveryKind(), EveryKindPlan());
  // Every node by name, with its GPU range (nodes are 48 px tall here: two lines each).
  for (const char* label : {">a100-0<", ">a100-1<", ">h100-0<", ">GPU 0\u20133<", ">GPU 4\u20137<",
                            ">GPU 8\u201315<"}) {
    EXPECT_EQ(Count(svg, label), 1u) << label << "\n" << svg;
  }
  // A boundary line at each node after the first: GPU 4 (a node of a100) and GPU 8 (group h100),
  // 12 px per GPU from y = 6.
  const std::string boundary = "stroke=\"" + std::string(Color(Swatch::kBoundary)) + "\"";
  EXPECT_EQ(Count(svg, "y1=\"54\" y2=\"54\" " + boundary), 1u) << svg;
  EXPECT_EQ(Count(svg, "y1=\"102\" y2=\"102\" " + boundary), 1u) << svg;
  // The time axis: steps 0, 3, ..., 24, each with its time since step 0.
  for (int t = 0; t <= 24; t += 3) {
    EXPECT_EQ(Count(svg, ">" + std::to_string(t) + "</text>"), 1u) << t;
  }
  for (const char* hours : {">+0h<", ">+3h<", ">+12h<", ">+21h<", ">+1d<"}) {
    EXPECT_EQ(Count(svg, hours), 1u) << hours;
  }
  EXPECT_EQ(Count(svg, ">step</text>"), 1u);
  EXPECT_EQ(Count(svg, ">time</text>"), 1u);
}

}  // namespace
}  // namespace ordo::report
