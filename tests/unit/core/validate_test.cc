// ValidateScenario on scenarios built in code, each case breaking one rule of a valid scenario.
// The readers in io/ check most single fields themselves before ValidateScenario runs, so
// tests/unit/io never reaches these branches; here each is reached directly. Also ServiceFloor and
// ServiceCeiling, which the feasibility check and the planners share.
#include "ordo/core/validate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/builders.h"
#include "tests/unit/core/core_test_util.h"

namespace ordo::testing {
namespace {

TEST(ValidateScenarioTest, TheLegalScenarioIsValid) {
  const Result<void> ok = ValidateScenario(LegalScenario());
  EXPECT_TRUE(ok.has_value()) << ok.error().ToString();
}

struct InvalidCase {
  std::string name;
  std::string field;
  std::string words;
  ErrorCode code;
  std::function<void(Scenario&)> breaks;
};

InvalidCase Case(std::string name, std::string field, std::string words,
                 std::function<void(Scenario&)> breaks, ErrorCode code = ErrorCode::kInvalidInput) {
  return {std::move(name), std::move(field), std::move(words), code, std::move(breaks)};
}

// Jobs of LegalScenario: 0 run (running on GPUs 0-1), 1 train, 2 quant (two shapes), 3 big,
// 4 late, 5 idle. Services: 0 chat (H100, min 2, max 4, churn 1, current 2), 1 embed.
std::vector<InvalidCase> Cases() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  return {
      Case("Version2", "version", "must be 1", [](Scenario& s) { s.version = 2; }),
      Case("StepMinutesZero", "step_minutes", "from 1", [](Scenario& s) { s.step_minutes = 0; }),
      Case("StepMinutesAboveAWeek", "step_minutes", "to 10080",
           [](Scenario& s) { s.step_minutes = 10'081; }),
      Case("HorizonZero", "horizon_steps", "from 1", [](Scenario& s) { s.horizon_steps = 0; }),
      Case("HorizonAboveLimit", "horizon_steps", "to 10080",
           [](Scenario& s) { s.horizon_steps = 10'081; }),
      Case("TimeDecayAboveOne", "objective.time_decay", "from 0 to 1",
           [](Scenario& s) { s.objective.time_decay = 1.5; }),
      Case("TimeDecayNan", "objective.time_decay", "from 0 to 1",
           [nan](Scenario& s) { s.objective.time_decay = nan; }),
      Case("PenaltyNegative", "objective.unmet_penalty_multiplier", "from 0 to 1e6",
           [](Scenario& s) { s.objective.unmet_penalty_multiplier = -1; }),
      Case("PenaltyInfinite", "objective.unmet_penalty_multiplier", "from 0 to 1e6",
           [inf](Scenario& s) { s.objective.unmet_penalty_multiplier = inf; }),
      Case("NoNodeGroups", "cluster.node_groups", "at least one group",
           [](Scenario& s) {
             s.cluster.groups.clear();
             s.cluster.Index();
           }),
      Case("NodesZero", "cluster.node_groups[1].nodes", "from 1",
           [](Scenario& s) {
             s.cluster.groups[1].nodes = 0;
             s.cluster.Index();
           }),
      Case("GpusPerNodeNotAPowerOfTwo", "cluster.node_groups[0].gpus_per_node", "power of two",
           [](Scenario& s) {
             s.cluster.groups[0].gpus_per_node = 3;
             s.cluster.Index();
           }),
      Case("GpusPerNodeAbove16", "cluster.node_groups[0].gpus_per_node", "from 1 to 16",
           [](Scenario& s) {
             s.cluster.groups[0].gpus_per_node = 32;
             s.cluster.Index();
           }),
      Case("GpuMemoryZero", "cluster.node_groups[1].gpu_memory_gb", "> 0",
           [](Scenario& s) { s.cluster.groups[1].gpu_memory_gb = 0; }),
      Case("GpuStepsAboveLimit", "horizon_steps", "exceeds the limit",
           [](Scenario& s) {
             s.horizon_steps = 10'080;
             s.cluster.groups[1].nodes = 1'000;  // 8,008 GPUs x 10,080 steps > 2^26
             s.cluster.Index();
           }),
      Case(
          "ClusterNotIndexed", "cluster", "Index()",
          [](Scenario& s) { s.cluster.groups[1].nodes = 2; }, ErrorCode::kInternal),
      Case("DuplicateIds", "services[1].id", "\"train\" is also jobs[1].id",
           [](Scenario& s) { s.services[1].id = "train"; }),
      Case("EmptyId", "jobs[4].id", "1 to 256", [](Scenario& s) { s.jobs[4].id.clear(); }),
      Case("JobPriorityZero", "jobs[1].priority", "> 0",
           [](Scenario& s) { s.jobs[1].priority = 0; }),
      Case("JobPriorityNan", "jobs[1].priority", "> 0",
           [nan](Scenario& s) { s.jobs[1].priority = nan; }),
      Case("MinMemoryNegative", "jobs[1].min_gpu_memory_gb", ">= 0",
           [](Scenario& s) { s.jobs[1].requirement.min_gpu_memory_gb = -1; }),
      Case("ArrivalTooFar", "jobs[4].arrival_step", "1000000",
           [](Scenario& s) { s.jobs[4].arrival_step = 1'000'001; }),
      Case("NoShapes", "jobs[4].shapes", "at least one shape",
           [](Scenario& s) { s.jobs[4].shapes.clear(); }),
      Case("SeventeenShapes", "jobs[2].shapes", "more than 16",
           [](Scenario& s) {
             s.jobs[2].shapes.assign(17, Shape{1, 1});
           }),
      Case("GpusNotAPowerOfTwo", "jobs[4].gpus", "power of two",
           [](Scenario& s) { s.jobs[4].shapes[0].gpus = 3; }),
      Case("ShapeGpusNotAPowerOfTwo", "jobs[2].shapes[1].gpus", "power of two",
           [](Scenario& s) { s.jobs[2].shapes[1].gpus = 6; }),
      Case("DurationZero", "jobs[4].duration_steps", "from 1",
           [](Scenario& s) { s.jobs[4].shapes[0].duration_steps = 0; }),
      Case("RunningWithTwoShapes", "jobs[0].running", "single shape",
           [](Scenario& s) {
             s.jobs[0].shapes.push_back(Shape{4, 1});
           }),
      Case("RunningInTheFuture", "jobs[0].running.start_step", "<= 0",
           [](Scenario& s) { s.jobs[0].running->start_step = 1; }),
      Case("RunningBeforeArrival", "jobs[0].running.start_step", "before the job's arrival_step -1",
           [](Scenario& s) { s.jobs[0].arrival_step = -1; }),
      Case("RunningEndedBeforeStepZero", "jobs[0].running.start_step", "no longer running",
           [](Scenario& s) {
             s.jobs[0].arrival_step = s.jobs[0].running->start_step = -4;  // 4 steps: ended at 0
           }),
      Case("RunningBlockNotAligned", "jobs[0].running.first_gpu", "not an aligned block",
           [](Scenario& s) { s.jobs[0].running->first_gpu = 1; }),
      Case("RunningBlockOutsideTheCluster", "jobs[0].running.first_gpu", "not an aligned block",
           [](Scenario& s) { s.jobs[0].running->first_gpu = 16; }),
      Case("RunningInAGroupOfTheWrongType", "jobs[0].running.first_gpu", "does not match",
           [](Scenario& s) { s.jobs[0].requirement.gpu_type = "H100"; }),
      Case("RunningBlocksOverlap", "jobs[5].running.first_gpu", "overlaps running job \"run\"",
           [](Scenario& s) {
             s.jobs[5].running = RunningPlacement{0, 0};  // idle: 2 GPUs on run's block
           }),
      Case("MinGpusNegative", "services[1].min_gpus", ">= 0",
           [](Scenario& s) { s.services[1].min_gpus = -1; }),
      Case("MaxBelowMin", "services[0].max_gpus", ">= min_gpus (2)",
           [](Scenario& s) { s.services[0].max_gpus = 1; }),
      Case("ChurnNegative", "services[0].max_change_per_step", ">= 0",
           [](Scenario& s) { s.services[0].max_change_per_step = -1; }),
      Case("CurrentNegative", "services[0].current_gpus", ">= 0",
           [](Scenario& s) { s.services[0].current_gpus = -1; }),
      Case("ServicePriorityInfinite", "services[1].priority", "> 0",
           [inf](Scenario& s) { s.services[1].priority = inf; }),
      Case("DemandShort", "services[1].demand", "horizon_steps = 6 entries (got 5)",
           [](Scenario& s) { s.services[1].demand.pop_back(); }),
      Case("DemandNegative", "services[1].demand[2]", ">= 0",
           [](Scenario& s) { s.services[1].demand[2] = -1; }),
      Case("ChurnCannotReachMin", "services[0].current_gpus",
           "cannot get from current_gpus 2 into [min_gpus, max_gpus] = [4, 4] at step 0",
           [](Scenario& s) { s.services[0].min_gpus = 4; }),
      Case("ChurnCannotComeDownToMax", "services[0].current_gpus", "at step 0",
           [](Scenario& s) {
             s.services[0].current_gpus = 7;  // 6 at step 0, 5 at step 1: above max 4 until step 2
           }),
      Case(
          "FloorsDoNotFit", "services[0].min_gpus", "need 9 GPUs but only 8",
          [](Scenario& s) {
            // chat needs all 8 H100 GPUs; embed, H100 only too, needs one more.
            s.services[0].min_gpus = s.services[0].max_gpus = 8;
            s.services[0].current_gpus.reset();
            s.services[1].requirement.gpu_type = "H100";
            s.services[1].min_gpus = 1;
          },
          ErrorCode::kInfeasible),
  };
}

class InvalidScenarioTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidScenarioTest, NamesTheFieldAndTheReason) {
  Scenario scenario = LegalScenario();
  GetParam().breaks(scenario);
  const Result<void> result = ValidateScenario(scenario);
  ASSERT_FALSE(result.has_value()) << "accepted";
  EXPECT_EQ(result.error().code, GetParam().code) << result.error().ToString();
  EXPECT_EQ(result.error().field, GetParam().field) << result.error().ToString();
  EXPECT_NE(result.error().message.find(GetParam().words), std::string::npos)
      << "expected \"" << GetParam().words << "\" in " << result.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(Rules, InvalidScenarioTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// The floors must fit beside the running jobs with each service on GPUs it may use: chat takes
// the 8 H100 GPUs, so the untyped service must find its GPUs among the 6 A100 GPUs run leaves free.
TEST(ValidateScenarioTest, FloorsAreMatchedToGroupsTheyMayUse) {
  Scenario scenario = LegalScenario();
  scenario.services[0].min_gpus = scenario.services[0].max_gpus = 8;
  scenario.services[0].current_gpus.reset();
  scenario.services[1].max_gpus = 16;
  scenario.services[1].min_gpus = 6;
  const Result<void> fits = ValidateScenario(scenario);
  EXPECT_TRUE(fits.has_value()) << fits.error().ToString();

  scenario.services[1].min_gpus = 7;
  const Result<void> too_many = ValidateScenario(scenario);
  ASSERT_FALSE(too_many.has_value());
  EXPECT_EQ(too_many.error().code, ErrorCode::kInfeasible);
  EXPECT_NE(too_many.error().message.find("need 15 GPUs but only 14"), std::string::npos)
      << too_many.error().ToString();
}

TEST(ValidateScenarioTest, AFloorFallingByTheChurnLimitCounts) {
  // current_gpus 7 with churn 1: at least 6 GPUs at step 0, though min_gpus is 0; run leaves 6 of
  // the 8 GPUs free. From 8, the service needs 7.
  Scenario scenario = ScenarioBuilder("churn-floor")
                          .Steps(4)
                          .Group("a100", 2, 4)
                          .Job(MakeJob("run").Gpus(2).Duration(4).Running(-1, 0))
                          .Service(MakeService("s").Churn(1).Current(7))
                          .Build();
  EXPECT_TRUE(ValidateScenario(scenario).has_value());
  scenario.services[0].current_gpus = 8;
  const Result<void> result = ValidateScenario(scenario);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kInfeasible);
  EXPECT_EQ(result.error().field, "services[0].min_gpus");
}

struct BoundCase {
  std::string name;
  int min_gpus;
  int max_gpus;
  std::optional<int> churn;
  std::optional<int> current;
  std::vector<int> floor;
  std::vector<int> ceiling;
};

class ServiceBoundsTest : public ::testing::TestWithParam<BoundCase> {};

TEST_P(ServiceBoundsTest, FollowTheChurnLimitFromCurrentGpus) {
  const BoundCase& c = GetParam();
  ServiceBuilder service = MakeService("s").Min(c.min_gpus).Max(c.max_gpus);
  if (c.churn) service.Churn(*c.churn);
  if (c.current) service.Current(*c.current);
  const Scenario scenario =
      ScenarioBuilder("bounds").Steps(4).Group("g", 1, 16).Service(service).Build();
  EXPECT_EQ(ServiceFloor(scenario, 0), c.floor);
  EXPECT_EQ(ServiceCeiling(scenario, 0), c.ceiling);
}

INSTANTIATE_TEST_SUITE_P(
    Services, ServiceBoundsTest,
    ::testing::Values(BoundCase{"NoChurnLimit", 1, 5, std::nullopt, 3, {1, 1, 1, 1}, {5, 5, 5, 5}},
                      BoundCase{"NoCurrentGpus", 1, 5, 2, std::nullopt, {1, 1, 1, 1}, {5, 5, 5, 5}},
                      BoundCase{"ComingDown", 1, 5, 2, 8, {6, 4, 2, 1}, {5, 5, 5, 5}},
                      BoundCase{"GoingUp", 2, 12, 3, 0, {2, 2, 2, 2}, {3, 6, 9, 12}},
                      BoundCase{"Frozen", 0, 16, 0, 4, {4, 4, 4, 4}, {4, 4, 4, 4}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ordo::testing
