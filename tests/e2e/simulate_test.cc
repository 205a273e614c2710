// `ordo simulate` on a small world: waits by priority class and per-tenant tables in its output,
// and bad planning-priority or tenant configuration exits 2 naming the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

// One 8-GPU node, one day of hourly steps, two tenants of 4 GPUs each.
nlohmann::json TwoTenantWorld() {
  nlohmann::json w = {
      {"version", 1},
      {"name", "two-tenants"},
      {"step_minutes", 60},
      {"horizon_steps", 6},
      {"days", 1},
      {"cluster", {{"node_groups", {{{"name", "g"}, {"nodes", 1}, {"gpus_per_node", 8}}}}}},
      {"tenants",
       {{{"id", "a"}, {"share", 4}}, {{"id", "b"}, {"share", "50%"}, {"max_priority", 9}}}},
      {"jobs", nlohmann::json::array()}};
  for (int k = 0; k < 6; ++k) {
    w["jobs"].push_back({{"id", "j" + std::to_string(k)},
                         {"kind", "training"},
                         {"priority", 1 + 3 * (k % 3)},
                         {"arrival_step", k},
                         {"gpus", 4},
                         {"duration_steps", 3},
                         {"tenant", k % 2 == 0 ? "a" : "b"}});
  }
  return w;
}

TEST(SimulateCommandTest, PrintsWaitsByPriorityClassAndTenantUse) {
  TempDir dir;
  WriteWhole(dir.File("w.json"), TwoTenantWorld().dump());
  const CliResult r =
      RunOrdo({"simulate", dir.File("w.json"), "--policies", "reactive,ordo", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("prio 8-10 p95 h"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("min(demand, share) GPU-h"), std::string::npos) << r.out;
  const CliResult j = RunOrdo(
      {"simulate", dir.File("w.json"), "--policies", "ordo", "--quiet", "--format", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  const nlohmann::json& total = doc["runs"][0]["total"];
  int jobs = 0;
  // Priorities 1, 4, 7, 1, 4, 7: classes 1-3 and 4-7 only (an empty class is left out).
  const nlohmann::json& classes = total["wait_by_priority"];
  EXPECT_FALSE(classes.contains("8-10"));
  for (const char* c : {"1-3", "4-7"}) {
    ASSERT_TRUE(classes.contains(c)) << classes.dump();
    jobs += classes[c]["jobs"].get<int>();
  }
  EXPECT_EQ(jobs, 6);
  ASSERT_EQ(total["tenants"].size(), 2u);
}

TEST(SimulateCommandTest, BadConfigurationExitsTwoNamingTheField) {
  TempDir dir;
  WriteWhole(dir.File("w.json"), TwoTenantWorld().dump());
  const CliResult cap = RunOrdo({"simulate", dir.File("w.json"), "--aging-cap", "0.5"});
  EXPECT_EQ(cap.exit_code, 2);
  EXPECT_NE(cap.err.find("--aging-cap (aging.cap)"), std::string::npos) << cap.err;
  const CliResult ramp = RunOrdo({"simulate", dir.File("w.json"), "--ramp-reserve", "-6"});
  EXPECT_EQ(ramp.exit_code, 2);
  EXPECT_NE(ramp.err.find("--ramp-reserve (ramp_reserve_hours)"), std::string::npos) << ramp.err;

  struct Case {
    std::string pointer;
    nlohmann::json value;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{{"/tenants/0/share", -1, "tenants[0].share"},
                                         {"/tenants/0/share", 6, "tenants[1].share"},
                                         {"/jobs/5/priority", 10, "jobs[5].priority"}}) {
    nlohmann::json w = TwoTenantWorld();
    w[nlohmann::json::json_pointer(c.pointer)] = c.value;
    WriteWhole(dir.File("bad.json"), w.dump());
    const CliResult r = RunOrdo({"simulate", dir.File("bad.json"), "--quiet"});
    EXPECT_EQ(r.exit_code, 2) << c.pointer;
    EXPECT_NE(r.err.find(c.field + ":"), std::string::npos) << r.err;
  }
}

TEST(SimulateCommandTest, ANumberOutOfRangeOrNotANumberExitsTwoNamingTheOptionAndRange) {
  TempDir dir;
  WriteWhole(dir.File("w.json"), TwoTenantWorld().dump());
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--traffic-quantile", "2"},
            "--traffic-quantile: must be a number from 0.001 to 0.999"},
           {{"--traffic-quantile", "nan"}, "from 0.001 to 0.999 (got \"nan\")"},
           {{"--traffic-quantile", "1e999"}, "(got \"1e999\")"},
           {{"--sweep-traffic-noise", "0,9"}, "must be a number from 0 to 5 (got \"9\")"},
           {{"--noise-seeds", "1,2.5"},
            "--noise-seeds: must be an integer from 0 to 1073741824 (got \"2.5\")"},
           {{"--noise-seeds", "1,-3"}, "(got \"-3\")"},
           {{"--traffic-quantile", "0.9x"}, "(got \"0.9x\")"}}) {
    std::vector<std::string> args = {"simulate", dir.File("w.json"), "--quiet"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const CliResult r = RunOrdo(args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << " " << c.args[1];
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// Noise seeds are integers in --noise-seed's range, not sigmas: seed 12 is as good as seed 1.
TEST(SimulateCommandTest, ASweepRunsEveryNoiseSeedItIsGiven) {
  TempDir dir;
  WriteWhole(dir.File("w.json"), TwoTenantWorld().dump());
  const CliResult r =
      RunOrdo({"simulate", dir.File("w.json"), "--quiet", "--policies", "fifo",
               "--sweep-traffic-noise", "0.3", "--noise-seeds", "1,6,12", "--per-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* run : {"fifo (traffic noise 0.3, seed 1)", "fifo (traffic noise 0.3, seed 6)",
                          "fifo (traffic noise 0.3, seed 12)"}) {
    EXPECT_NE(r.out.find(run), std::string::npos) << run << "\n" << r.out;
  }
}

}  // namespace
}  // namespace ordo::testing
