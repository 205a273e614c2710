// The comparison and its renderings: gains over fifo, problems, and the HTML's promises (one chart
// per scenario and policy, nothing fetched from the network).
#include "ordo/report/render.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ordo/policy/registry.h"
#include "ordo/report/columns.h"
#include "ordo/report/comparison.h"
#include "ordo/report/format.h"
#include "tests/support/builders.h"
#include "tests/support/text.h"

namespace ordo::report {
namespace {

using testing::MakeJob;
using testing::MakeService;

using testing::Count;

Scenario Small(std::string name) {
  return testing::ScenarioBuilder(std::move(name))
      .Steps(8)
      .Group("n", 1, 8)
      .Job(MakeJob("t<1>").Gpus(4).Duration(4).Priority(2))
      .Job(MakeJob("q").Gpus(2).Duration(2).Priority(9).Arrival(1).Kind(JobKind::kQuantization))
      .Service(MakeService("chat").Priority(8).Demand({1, 1, 2, 4, 4, 2, 1, 1}).Min(1).Churn(2))
      .Build();
}

Comparison Compare(std::vector<std::string> policies) {
  std::vector<ScenarioInput> inputs = {{"a.json", Small("mixed-control")},
                                       {"b.json", Small("other")}};
  CompareOptions options;
  options.policies = std::move(policies);
  Result<Comparison> c = RunComparison(std::move(inputs), MakeInTreeRegistry(), options);
  EXPECT_TRUE(c.has_value());
  return c.has_value() ? std::move(*c) : Comparison{};
}

TEST(ComparisonTest, GainsAreOverFifoAndEveryPlanIsChecked) {
  const Comparison c = Compare({"fifo", "reactive", "ordo"});
  ASSERT_EQ(c.scenarios.size(), 2u);
  EXPECT_EQ(c.problems(), 0);
  for (const ScenarioResult& s : c.scenarios) {
    ASSERT_EQ(s.runs.size(), 3u);
    ASSERT_TRUE(s.fifo_value.has_value());
    EXPECT_DOUBLE_EQ(s.Find("fifo")->value_gain.value(), 0.0);
    const PolicyRun* ordo = s.Find("ordo");
    EXPECT_DOUBLE_EQ(ordo->value_gain.value(),
                     (ordo->metrics.value - *s.fifo_value) / *s.fifo_value);
  }
  EXPECT_TRUE(c.scenarios[0].study.has_value());  // "mixed-control" re-creates the study
  EXPECT_FALSE(c.scenarios[1].study.has_value());
}

TEST(ComparisonTest, FifoRunsHiddenWhenNotAskedFor) {
  const Comparison c = Compare({"ordo", "ordo"});
  EXPECT_EQ(c.policies, std::vector<std::string>{"ordo"});
  ASSERT_EQ(c.scenarios[0].runs.size(), 2u);
  EXPECT_FALSE(c.scenarios[0].Find("fifo")->shown);
  EXPECT_TRUE(c.scenarios[0].Find("ordo")->value_gain.has_value());
  EXPECT_EQ(Count(RenderHtml(c), "<svg"), 2u);  // one scenario x policy each, fifo not shown
}

// The best bound is the lowest offered (an LP bound, a solver's proof); objectives are shown as a
// share of it, and a bound that fails leaves the share out rather than inventing one.
TEST(ComparisonTest, ObjectivesAsAShareOfTheBestBound) {
  CompareOptions options;
  options.policies = {"fifo", "ordo"};
  options.bound = [](const Scenario&) -> Result<double> { return 1000.0; };
  Result<Comparison> c = RunComparison({{"a.json", Small("a")}}, MakeInTreeRegistry(), options);
  ASSERT_TRUE(c.has_value());
  const ScenarioResult& s = c->scenarios[0];
  ASSERT_TRUE(s.best_bound.has_value());
  EXPECT_DOUBLE_EQ(*s.best_bound, 1000.0);
  EXPECT_EQ(s.bound_source, "LP relaxation");
  for (const PolicyRun& run : s.runs) {
    ASSERT_TRUE(run.of_bound.has_value()) << run.policy;
    EXPECT_DOUBLE_EQ(*run.of_bound, run.metrics.objective / 1000.0);
  }
  EXPECT_NE(RenderMarkdown(*c).find("of best bound"), std::string::npos);
  EXPECT_NE(RenderJson(*c).find("\"objective_of_best_bound\""), std::string::npos);

  options.bound = [](const Scenario&) -> Result<double> {
    return Fail(Error{ErrorCode::kUnavailable, "", "no solver"});
  };
  c = RunComparison({{"a.json", Small("a")}}, MakeInTreeRegistry(), options);
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->scenarios[0].best_bound.has_value());
  EXPECT_FALSE(c->scenarios[0].Find("ordo")->of_bound.has_value());
}

TEST(ComparisonTest, UnknownPolicyIsAnError) {
  Result<Comparison> c = RunComparison({}, MakeInTreeRegistry(), CompareOptions{{"nope"}, {}, {}});
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, ErrorCode::kNotFound);
}

TEST(RenderTest, HtmlIsSelfContainedWithAChartPerScenarioAndPolicy) {
  const Comparison c = Compare({"fifo", "priority-backfill", "ordo"});
  const std::string html = RenderHtml(c);
  EXPECT_EQ(Count(html, "<svg class=\"chart\""), 6u);
  EXPECT_EQ(Count(html, "http://") + Count(html, "https://"), 0u);
  EXPECT_EQ(Count(html, "<script"), 0u);
  EXPECT_NE(html.find("t&lt;1&gt;"), std::string::npos);  // ids are escaped
  EXPECT_EQ(html.find("t<1>"), std::string::npos);
  EXPECT_NE(html.find("+54.8%"), std::string::npos);  // the study's mixed-control gain
}

TEST(RenderTest, MarkdownAndTableShowEveryRun) {
  const Comparison c = Compare({"fifo", "ordo"});
  const std::string md = RenderMarkdown(c);
  const std::string table = RenderTable(c);
  for (const std::string& text : {md, table}) {
    EXPECT_EQ(Count(text, "\n| fifo "), 2u) << text;
    EXPECT_EQ(Count(text, "\n| ordo "), 2u) << text;
  }
  EXPECT_NE(md.find("## Against the study"), std::string::npos);
  EXPECT_NE(table.find("study (mixed control)"), std::string::npos);
}

// The summary against the study puts FIFO's and ordo's utilization and gain beside the study's,
// with what the gain costs in waiting, in Markdown and HTML alike.
TEST(RenderTest, AgainstTheStudyShowsFifoAndOrdoBesideTheStudyWithTheirWaits) {
  const Comparison c = Compare({"fifo", "ordo"});
  const ScenarioResult& s = c.scenarios[0];
  const std::vector<std::string> cells = StudySummaryCells(s);
  ASSERT_EQ(cells.size(), StudySummaryColumns().size());
  const PolicyRun& fifo = *s.Find("fifo");
  const PolicyRun& ordo = *s.Find("ordo");
  EXPECT_EQ(cells[0], "mixed control");
  EXPECT_EQ(cells[1], "51.6%");
  EXPECT_EQ(cells[2], Percent(fifo.metrics.utilization));
  EXPECT_EQ(cells[3], "72.4%");
  EXPECT_EQ(cells[4], Percent(ordo.metrics.utilization));
  EXPECT_EQ(cells[5], "+54.8%");
  EXPECT_EQ(cells[6], SignedPercent(ordo.value_gain));
  EXPECT_EQ(cells[7], Hours(fifo.waits.all.mean_hours) + " / " + Hours(fifo.waits.all.p95_hours));
  EXPECT_EQ(cells[8], Hours(ordo.waits.all.mean_hours) + " / " + Hours(ordo.waits.all.p95_hours));
  EXPECT_EQ(cells[9], std::to_string(fifo.waits.all.never_started) + " of 2");
  EXPECT_EQ(cells[10], std::to_string(ordo.waits.all.never_started) + " of 2");
  EXPECT_TRUE(StudySummaryCells(c.scenarios[1]).empty());  // not a study scenario

  const std::string md = RenderMarkdown(c);
  const size_t summary = md.find("## Against the study");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_NE(md.find("| study FIFO util", summary), std::string::npos);
  EXPECT_NE(md.find("| mixed control ", summary), std::string::npos);
  EXPECT_EQ(md.find("| other ", summary), std::string::npos);
  const std::string html = RenderHtml(c);
  EXPECT_NE(html.find("<th class=\"study\">study FIFO util</th>"), std::string::npos);
  EXPECT_NE(html.find("<th>never started, fifo</th>"), std::string::npos);
}

TEST(RenderTest, ChartDrawsJobsServicesAndUnmetDemand) {
  const Scenario s = Small("x");
  Plan plan;
  plan.policy = "by-hand";
  plan.jobs = {JobPlacement{"t<1>", 0, 0, 4, 4}, JobPlacement{"q", std::nullopt, 0, 0, 0}};
  plan.services = {ServiceAllocation{"chat", {{7}, {7}, {7}, {7}, {7, 6}, {7, 6}, {7}, {7}}}};
  const std::string svg = RenderPlanSvg(s, plan);
  EXPECT_EQ(Count(svg, "<svg"), 1u);
  EXPECT_NE(svg.find("t&lt;1&gt; (training"), std::string::npos);
  EXPECT_NE(svg.find("<title>chat, GPU 7"), std::string::npos);
  // Demand 4 at steps 3 and 4 against 1 and 2 held: 3 and 2 GPUs short.
  EXPECT_NE(svg.find("step 3: 3 real-time GPUs short"), std::string::npos);
  EXPECT_NE(svg.find("step 4: 2 real-time GPUs short"), std::string::npos);
  // At step 5 chat holds 2 for a demand of 2; at step 0 one GPU for one: nothing held beyond.
  EXPECT_EQ(Count(svg, "beyond demand"), 0u);
}

TEST(FormatTest, Numbers) {
  EXPECT_EQ(Percent(0.724), "72.4%");
  EXPECT_EQ(SignedPercent(0.548), "+54.8%");
  EXPECT_EQ(SignedPercent(-0.1), "-10.0%");
  EXPECT_EQ(SignedPercent(std::nullopt), "n/a");
  EXPECT_EQ(Thousands(10980.4), "10,980");
  EXPECT_EQ(Thousands(-1234567), "-1,234,567");
  EXPECT_EQ(Thousands(12.5), "12.5");
  EXPECT_EQ(Thousands(999), "999");
  EXPECT_EQ(HtmlEscape("<a href='x'>&\""), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
  EXPECT_EQ(MarkdownCell("a|b"), "a\\|b");
}

}  // namespace
}  // namespace ordo::report
