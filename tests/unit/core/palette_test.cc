// The palette (one colour per kind on every page) and the chart axes (nodes, round time ticks).
#include "ordo/core/palette.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "ordo/core/chart_axes.h"
#include "tests/support/builders.h"

namespace ordo {
namespace {

TEST(PaletteTest, KindsAndMarksHaveDistinctWellFormedColours) {
  const std::regex hex("#[0-9a-f]{6}");
  std::set<std::string_view> names, drawn;
  for (const PaletteEntry& e : kPalette) {
    EXPECT_TRUE(std::regex_match(std::string(e.hex), hex)) << e.name << ": " << e.hex;
    EXPECT_TRUE(names.insert(e.name).second) << "two entries called " << e.name;
  }
  // What a chart fills cells with must never be confused: the kinds, services, idle, unmet and
  // another tenant's job all differ.
  for (Swatch s :
       {Swatch::kTraining, Swatch::kBatchInference, Swatch::kQuantization, Swatch::kService,
        Swatch::kIdle, Swatch::kUnmet, Swatch::kHidden, Swatch::kNow}) {
    EXPECT_TRUE(drawn.insert(Color(s)).second) << PaletteOf(s).name << " shares its colour";
  }
  // A kind's custom property is its JSON name, so a page can look a kind up by the name it reads.
  for (JobKind kind : {JobKind::kTraining, JobKind::kBatchInference, JobKind::kQuantization}) {
    EXPECT_EQ(PaletteOf(KindSwatch(kind)).name, JobKindName(kind));
  }
}

TEST(PaletteTest, CssHasOnePropertyPerEntry) {
  const std::string css = PaletteCss();
  for (const PaletteEntry& e : kPalette) {
    EXPECT_NE(css.find("--" + std::string(e.name) + ": " + std::string(e.hex) + ";"),
              std::string::npos)
        << e.name;
  }
}

TEST(ChartAxesTest, NodesFollowTheSpecsNumbering) {
  const Scenario s =
      testing::ScenarioBuilder("n").Group("a100", 2, 4).Group("", 1, 8, "H100").Build();
  const std::vector<NodeSpan> nodes = NodeSpans(s.cluster);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "a100-0");
  EXPECT_EQ(nodes[1].name, "a100-1");
  EXPECT_EQ(nodes[1].first_gpu, 4);
  EXPECT_EQ(nodes[1].node, 1);
  EXPECT_EQ(nodes[2].name, "H100-0");  // no group name: its GPU type
  EXPECT_EQ(nodes[2].group, 1);
  EXPECT_EQ(nodes[2].node, 0);
  EXPECT_EQ(nodes[2].first_gpu, 8);
  EXPECT_EQ(nodes[2].gpus, 8);
}

TEST(ChartAxesTest, TicksFallOnRoundDurations) {
  struct Case {
    int64_t span_steps;
    int step_minutes;
    int max_ticks;
    int every;
  };
  for (const Case& c : {Case{24, 60, 8, 3},      // 3 h
                        Case{24, 60, 12, 2},     // 2 h
                        Case{96, 15, 12, 8},     // 2 h of 15-minute steps
                        Case{2016, 5, 10, 288},  // 1 d of 5-minute steps (7 days)
                        Case{12, 60, 100, 1},    // every step
                        Case{30, 7, 5, 6},       // 7-minute steps fit no round duration
                        Case{0, 60, 10, 1}}) {
    EXPECT_EQ(TickEvery(c.span_steps, c.step_minutes, c.max_ticks), c.every)
        << c.span_steps << " steps of " << c.step_minutes << " min, " << c.max_ticks << " ticks";
  }
}

TEST(ChartAxesTest, DurationLabels) {
  EXPECT_EQ(DurationLabel(0), "0h");
  EXPECT_EQ(DurationLabel(45), "45m");
  EXPECT_EQ(DurationLabel(180), "3h");
  EXPECT_EQ(DurationLabel(150), "2h 30m");
  EXPECT_EQ(DurationLabel(1440), "1d");
  EXPECT_EQ(DurationLabel(1800), "1d 6h");
}

}  // namespace
}  // namespace ordo
