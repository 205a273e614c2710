// What the dashboard draws its axes from (GET /v1/dashboard: nodes with their GPU ranges, time
// ticks with absolute steps and wall-clock times) and where its colours come from (the palette,
// written into its stylesheet; no colour typed in its script, stylesheet or page).
#include <gtest/gtest.h>

#include <ctime>
#include <iomanip>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ordo/core/palette.h"
#include "ordo/service/web/assets.h"
#include "tests/support/page_colors.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;
using testing::Config;
using testing::JobBody;
using testing::kA;
using testing::kAdminPrincipal;
using testing::Manual;
using testing::OpenEngine;
using testing::ScratchDir;

// Seconds since the epoch of "2026-12-01T15:00:00Z" (fractions ignored).
int64_t UnixOf(const std::string& iso) {
  std::tm tm = {};
  std::istringstream in(iso);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  EXPECT_FALSE(in.fail()) << iso;
  return static_cast<int64_t>(timegm(&tm));
}

TEST(DashboardData, NodesAndClockTimesForTheAxes) {
  ScratchDir dir;
  auto engine = OpenEngine(Config(2, 12), Manual(dir));  // group "g": 2 nodes of 8 GPUs
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("a1", 8, 3)));
  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 4));
  auto data = engine->DashboardJson(kA, 48);
  ASSERT_TRUE(data) << data.error().ToString();
  const json& d = *data;

  // The GPU axis: each node by name with its GPU range.
  ASSERT_EQ(d["nodes"].size(), 2u) << d["nodes"].dump();
  EXPECT_EQ(d["nodes"][0],
            json({{"name", "g-0"}, {"group", 0}, {"node", 0}, {"first_gpu", 0}, {"gpus", 8}}));
  EXPECT_EQ(d["nodes"][1],
            json({{"name", "g-1"}, {"group", 0}, {"node", 1}, {"first_gpu", 8}, {"gpus", 8}}));

  // The time axis: the history (steps 0-3) then the 12-step horizon from step 4; 16 one-hour
  // steps get a tick every 2 hours, each with its absolute step and its UTC time.
  const json& axis = d["time_axis"];
  EXPECT_EQ(axis["from_step"], 0) << axis.dump();
  EXPECT_EQ(axis["to_step"], 16);
  EXPECT_EQ(axis["every_steps"], 2);
  ASSERT_EQ(axis["ticks"].size(), 9u) << axis.dump();
  const int64_t next = d["next_step"].get<int64_t>();
  ASSERT_EQ(next, 4);
  const int64_t next_unix = UnixOf(d["next_step_time"].get<std::string>());
  for (size_t i = 0; i < axis["ticks"].size(); ++i) {
    const json& tick = axis["ticks"][i];
    const int64_t step = tick["step"].get<int64_t>();
    EXPECT_EQ(step, static_cast<int64_t>(2 * i));
    EXPECT_EQ(UnixOf(tick["time"].get<std::string>()) - next_unix, (step - next) * 3600)
        << tick.dump();
  }
  // The tick at the next step shows the same time as the rest of the page.
  EXPECT_EQ(axis["ticks"][2]["time"], d["next_step_time"]);
}

TEST(DashboardData, TheHistoryShownSetsWhereTheAxisStarts) {
  ScratchDir dir;
  auto engine = OpenEngine(Config(1, 12), Manual(dir));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 10));
  auto data = engine->DashboardJson(kAdminPrincipal, 4);
  ASSERT_TRUE(data);
  EXPECT_EQ((*data)["time_axis"]["from_step"], 6);  // steps 6-9 kept, then 10-21 planned
  EXPECT_EQ((*data)["time_axis"]["to_step"], 22);
  auto none = engine->DashboardJson(kAdminPrincipal, 0);
  ASSERT_TRUE(none);
  EXPECT_EQ((*none)["time_axis"]["from_step"], 10);
}

TEST(DashboardAssets, EveryColourComesFromThePalette) {
  const std::string css(web::DashboardCss());
  const std::string palette = PaletteCss();
  ASSERT_EQ(css.rfind(palette, 0), 0u) << "the stylesheet must open with the palette";
  for (const PaletteEntry& e : kPalette) {
    EXPECT_NE(css.find("--" + std::string(e.name) + ": " + std::string(e.hex) + ";"),
              std::string::npos)
        << e.name;
  }
  // Nothing else names a colour: no hex in the script, the page or the rest of the stylesheet.
  EXPECT_EQ(ordo::testing::HexColors(css.substr(palette.size())), std::set<std::string>{});
  EXPECT_EQ(ordo::testing::HexColors(web::DashboardJs()), std::set<std::string>{});
  EXPECT_EQ(ordo::testing::HexColors(web::IndexHtml()), std::set<std::string>{});
  for (const char* named : {"rgb(", "hsl(", "\"white\"", "\"black\"", "\"red\""}) {
    EXPECT_EQ(std::string(web::DashboardJs()).find(named), std::string::npos) << named;
  }
  // Every colour the script and the stylesheet ask for by name is in the palette.
  std::set<std::string> names;
  for (const PaletteEntry& e : kPalette) names.insert(std::string(e.name));
  const std::string js(web::DashboardJs());
  const std::regex asked(R"((?:color|swatch)\(\"([a-z_]+)\")");
  int count = 0;
  for (auto it = std::sregex_iterator(js.begin(), js.end(), asked); it != std::sregex_iterator();
       ++it, ++count) {
    EXPECT_TRUE(names.count((*it)[1])) << "dashboard.js asks for colour " << (*it)[1];
  }
  EXPECT_GT(count, 5);
  const std::regex var(R"(var\(--([a-z_]+)\))");
  for (auto it = std::sregex_iterator(css.begin(), css.end(), var); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[1];
    EXPECT_TRUE(names.count(name) || name == "swatch" || name == "swatch-opacity")
        << "dashboard.css uses --" << name;
  }
}

}  // namespace
}  // namespace ordo::service
