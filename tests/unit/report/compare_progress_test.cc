// RunComparison's progress (what `ordo compare` draws its bar from) and the report's files.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ordo/policy/registry.h"
#include "ordo/report/comparison.h"
#include "ordo/report/render.h"
#include "ordo/report/report_files.h"
#include "tests/support/builders.h"

namespace ordo::report {
namespace {

using testing::MakeJob;

Scenario Tiny(std::string name) {
  return testing::ScenarioBuilder(std::move(name))
      .Steps(4)
      .Group("n", 1, 4)
      .Job(MakeJob("a").Gpus(2).Duration(2).Priority(3))
      .Build();
}

struct Seen {
  int done;
  int total;
  std::string what;
};

std::vector<Seen> Progress(const CompareOptions& base) {
  std::vector<Seen> seen;
  CompareOptions options = base;
  options.on_progress = [&seen](const CompareProgress& p) {
    seen.push_back({p.done, p.total, std::string(p.scenario) + ":" + std::string(p.step)});
  };
  Result<Comparison> c =
      RunComparison({{"a.json", Tiny("a")}, {"b.json", Tiny("b")}}, MakeInTreeRegistry(), options);
  EXPECT_TRUE(c.has_value());
  return seen;
}

// Every step is announced before it runs, in order, with the total fixed from the start: each
// scenario x (each policy, the fifo run only for the gains included, and the bound when asked).
TEST(CompareProgressTest, EveryScenarioAndPolicyAndTheBoundInOrder) {
  CompareOptions options;
  options.policies = {"ordo", "reactive"};
  options.bound = [](const Scenario&) -> Result<double> { return 100.0; };
  const std::vector<Seen> seen = Progress(options);
  const std::vector<std::string> expected = {"a:ordo", "a:reactive", "a:fifo", "a:LP bound",
                                             "b:ordo", "b:reactive", "b:fifo", "b:LP bound"};
  ASSERT_EQ(seen.size(), expected.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].what, expected[i]);
    EXPECT_EQ(seen[i].done, static_cast<int>(i));
    EXPECT_EQ(seen[i].total, 8);
  }
}

TEST(CompareProgressTest, NoBoundStepWithoutABound) {
  CompareOptions options;
  options.policies = {"fifo"};
  const std::vector<Seen> seen = Progress(options);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].what, "a:fifo");
  EXPECT_EQ(seen[1].what, "b:fifo");
  EXPECT_EQ(seen[1].total, 2);
}

TEST(ReportFilesTest, TheThreeRenderingsByName) {
  CompareOptions options;
  options.policies = {"fifo"};
  Result<Comparison> c = RunComparison({{"a.json", Tiny("a")}}, MakeInTreeRegistry(), options);
  ASSERT_TRUE(c.has_value());
  const std::vector<ReportFile> files = ReportFiles(*c);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].name, "report.html");
  EXPECT_EQ(files[0].text, RenderHtml(*c));
  EXPECT_EQ(files[1].name, "report.md");
  EXPECT_EQ(files[1].text, RenderMarkdown(*c));
  EXPECT_EQ(files[2].name, "report.json");
  EXPECT_EQ(files[2].text, RenderJson(*c));
}

}  // namespace
}  // namespace ordo::report
