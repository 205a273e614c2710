// `ordo compare` end to end: the comparison over the built-in scenarios, the report files, the
// formats and the exit codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/cli_runner.h"
#include "tests/support/text.h"

namespace ordo::testing {
namespace {

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() / "scenarios")) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The main job of `make run`, with full mode held to 1 s per scenario to keep the suite quick.
TEST(CompareCommandTest, ReportOverTheBuiltInScenarios) {
  const std::vector<std::string> files = ScenarioFiles();
  ASSERT_GE(files.size(), 9u);
  TempDir dir;
  std::vector<std::string> args = {"compare"};
  args.insert(args.end(), files.begin(), files.end());
  args.insert(args.end(), {"--report-dir", dir.File("report"), "--time-limit", "1"});
  const CliResult r = RunOrdo(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const std::string md = ReadWhole(dir.path() / "report" / "report.md");
  const std::string html = ReadWhole(dir.path() / "report" / "report.html");
  ASSERT_FALSE(md.empty());
  ASSERT_FALSE(html.empty());
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "report" / "report.json"));
  constexpr size_t kPolicies = 8;
  EXPECT_EQ(Count(html, "<svg"), files.size() * kPolicies);
  EXPECT_EQ(Count(html, "</svg>"), files.size() * kPolicies);
  EXPECT_EQ(Count(html, "http://"), 0u);
  EXPECT_EQ(Count(html, "https://"), 0u);
  EXPECT_EQ(Count(html, "<script"), 0u);
  // The study's figures sit beside the scenarios that re-create it: its +105.1% for training-heavy.
  EXPECT_NE(html.find("+105.1%"), std::string::npos);
  EXPECT_NE(md.find("+105.1%"), std::string::npos);
  // The summary against the study: a row per re-created scenario, with FIFO's utilization beside
  // the study's and what ordo's gain costs in waiting.
  const size_t summary = md.find("## Against the study");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_NE(md.find("| study FIFO util", summary), std::string::npos);
  EXPECT_NE(md.find("never started, fifo", summary), std::string::npos);
  for (const char* label :
       {"| mixed control ", "| real-time contention ", "| training-heavy (8 GPUs", "| large mixed ",
        "| oversubscribed ", "| scale test (64 GPUs", "| uniform priority "}) {
    EXPECT_NE(md.find(label, summary), std::string::npos) << label;
  }
  for (const char* name : {"mixed-control", "realtime-contention", "training-heavy", "large-mixed",
                           "oversubscribed", "scale-test", "uniform-priority"}) {
    EXPECT_NE(md.find("## " + std::string(name)), std::string::npos) << name;
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
}

TEST(CompareCommandTest, JsonHasEveryScenarioAndPolicyWithGainsOverFifo) {
  const std::string a = (SourceDir() / "scenarios" / "01-mixed-control.json").string();
  const std::string b = (SourceDir() / "scenarios" / "05-oversubscribed.json").string();
  const CliResult r = RunOrdo({"compare", a, b, "--policies", "reactive,ordo", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["scenarios"].size(), 2u);
  EXPECT_EQ(j["policies"], nlohmann::json({"reactive", "ordo"}));
  for (const auto& s : j["scenarios"]) {
    ASSERT_EQ(s["runs"].size(), 2u);  // fifo ran as the denominator, but is not shown
    ASSERT_TRUE(s["fifo_value"].is_number());
    for (const auto& run : s["runs"]) {
      EXPECT_TRUE(run["ok"].get<bool>());
      const double value = run["metrics"]["value"];
      const double fifo = s["fifo_value"];
      EXPECT_NEAR(run["value_gain_over_fifo"].get<double>(), (value - fifo) / fifo, 1e-9);
      EXPECT_GE(run["fragmentation"].get<double>(), 0.0);
    }
  }
}

TEST(CompareCommandTest, MarkdownFormatPrintsTheReport) {
  const std::string a = (SourceDir() / "scenarios" / "08-low-contention-small.json").string();
  const CliResult r = RunOrdo({"compare", a, "--policies", "fifo,ordo", "--format", "markdown"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# ordo compare", 0), 0u);
  EXPECT_NE(r.out.find("| fifo "), std::string::npos);
}

TEST(CompareCommandTest, ABadFileAmongGoodOnesExitsTwoNamingIt) {
  TempDir dir;
  const std::string good = (SourceDir() / "scenarios" / "01-mixed-control.json").string();
  nlohmann::json bad = nlohmann::json::parse(ReadWhole(good));
  bad["jobs"][3]["duration_steps"] = -2;
  WriteWhole(dir.File("bad.json"), bad.dump());
  const CliResult r = RunOrdo({"compare", good, dir.File("bad.json"), "--policies", "fifo"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("ordo: " + dir.File("bad.json") + ": jobs[3].duration_steps: "),
            std::string::npos)
      << r.err;
}

TEST(CompareCommandTest, BadArgumentsExitTwoWithUsage) {
  const std::string good = (SourceDir() / "scenarios" / "01-mixed-control.json").string();
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"compare"},
                                             {"compare", good, "--policies", "fifo,nope"},
                                             {"compare", good, "--policies", ","},
                                             {"compare", good, "--format", "csv"},
                                             {"compare", good, "--time-limit", "-1"},
                                             {"compare", good, "--effort", "0"},
                                             {"compare", good, "--explain"}}) {
    const CliResult r = RunOrdo(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("(see `ordo compare --help`)\n"), std::string::npos) << r.err;
  }
}

TEST(BoundCommandTest, BoundIsAtLeastEveryPlansObjective) {
  const std::string file = (SourceDir() / "scenarios" / "02-realtime-contention.json").string();
  const CliResult bound = RunOrdo({"bound", file});
  ASSERT_EQ(bound.exit_code, 0) << bound.err;
  const double lp = nlohmann::json::parse(bound.out)["lp_bound"];
  const CliResult r =
      RunOrdo({"compare", file, "--policies", "fifo,reactive,ordo", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);  // outlives the loop below
  // compare's own best bound is at most the LP's, and no plan scores above it.
  const double best = report["scenarios"][0]["best_bound"].get<double>();
  EXPECT_LE(best, lp + 1e-6);
  for (const auto& run : report["scenarios"][0]["runs"]) {
    EXPECT_LE(run["metrics"]["objective"].get<double>(), best + 1e-6) << run["policy"];
    // A share only of a positive bound (this scenario's is negative: unmet demand is unavoidable).
    EXPECT_EQ(run["objective_of_best_bound"].is_null(), best <= 0) << run["policy"];
  }
}

}  // namespace
}  // namespace ordo::testing
