// One test per scenario file under scenarios/ and registered policy: the plan is legal (CheckPlan)
// and its metrics are those ComputeMetrics gives. Full mode gets 2 s per scenario (its default
// is 10 s), which keeps the suite short under the sanitizers; its legality does not depend on it.
// A cross-policy check per scenario: fast mode is worth at least fifo (issue 3's promise).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/io/scenario_io.h"
#include "ordo/policy/registry.h"
#include "tests/support/builders.h"

namespace ordo::testing {
namespace {

std::filesystem::path SourceDir() {
  if (const char* dir = std::getenv("ORDO_SOURCE_DIR"); dir != nullptr && *dir != '\0') return dir;
  // Test discovery runs without the test environment: fall back to this file's place in the tree.
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() / "scenarios", ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Case {
  std::string file;
  std::string policy;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  const PolicyRegistry registry = MakeInTreeRegistry();  // names() refers into it
  for (const std::string& file : ScenarioFiles()) {
    for (const std::string& policy : registry.names()) cases.push_back({file, policy});
  }
  return cases;
}

double TimeLimit(const std::string& policy) {
  return policy == "ordo-full" ? 2.0 : DefaultTimeLimitSeconds(policy);
}

Result<Plan> PlanWith(const Scenario& scenario, const std::string& name) {
  auto policy = MakeInTreeRegistry().Create(name);
  if (!policy) return Fail(policy.error());
  PolicyOptions options;
  options.time_limit_s = TimeLimit(name);
  return (*policy)->Solve(scenario, options);
}

class ScenarioPolicyTest : public ::testing::TestWithParam<Case> {};

TEST_P(ScenarioPolicyTest, PlanIsLegalAndItsMetricsAreRecomputable) {
  const Case& c = GetParam();
  Result<Scenario> scenario = io::ReadScenarioFile((SourceDir() / "scenarios" / c.file).string());
  ASSERT_TRUE(scenario.has_value()) << c.file << ": " << scenario.error().ToString();
  Result<Plan> plan = PlanWith(*scenario, c.policy);
  ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
  EXPECT_EQ(plan->policy, c.policy);
  ExpectLegal(*scenario, *plan);
  const Metrics m = ComputeMetrics(*scenario, *plan);
  EXPECT_NEAR(plan->metrics.value, m.value, 1e-6 * std::max(1.0, m.value));
  EXPECT_NEAR(plan->metrics.objective, m.objective, 1e-6 * std::max(1.0, std::abs(m.objective)));
  EXPECT_EQ(plan->metrics.jobs_started, m.jobs_started);
  EXPECT_EQ(plan->metrics.realtime_unmet_gpu_steps, m.realtime_unmet_gpu_steps);
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name =
      info.param.file.substr(0, info.param.file.rfind('.')) + "__" + info.param.policy;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioPolicyTest, ::testing::ValuesIn(Cases()), CaseName);

class ScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, FastModeIsWorthAtLeastFifo) {
  Result<Scenario> scenario =
      io::ReadScenarioFile((SourceDir() / "scenarios" / GetParam()).string());
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  Result<Plan> fifo = PlanWith(*scenario, "fifo");
  Result<Plan> ordo = PlanWith(*scenario, "ordo");
  ASSERT_TRUE(fifo.has_value() && ordo.has_value());
  EXPECT_GE(ComputeMetrics(*scenario, *ordo).value, ComputeMetrics(*scenario, *fifo).value - 1e-9);
}

// scenarios/10-checkpoint-preemption.json: long low-priority checkpointed jobs hold the cluster
// while high-priority work arrives and the service rises; each preempting peer preempts there and
// beats its base policy's objective.
TEST(CheckpointScenarioTest, PreemptingPeersBeatTheirBasePolicies) {
  Result<Scenario> scenario =
      io::ReadScenarioFile((SourceDir() / "scenarios" / "10-checkpoint-preemption.json").string());
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  for (const auto& [peer, base] : {std::pair{"priority-preempt", "priority-backfill"},
                                   std::pair{"reactive-preempt", "reactive"}}) {
    Result<Plan> with = PlanWith(*scenario, peer);
    Result<Plan> without = PlanWith(*scenario, base);
    ASSERT_TRUE(with.has_value() && without.has_value());
    ExpectLegal(*scenario, *with);
    EXPECT_GT(with->metrics.preemptions, 0) << peer;
    EXPECT_EQ(without->metrics.preemptions, 0) << base;
    EXPECT_GT(with->metrics.objective, without->metrics.objective + 100) << peer;
  }
}

std::string FileName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.rfind('.'));
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioTest, ::testing::ValuesIn(ScenarioFiles()), FileName);

}  // namespace
}  // namespace ordo::testing
