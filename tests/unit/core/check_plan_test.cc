// CheckPlan, the independent legality checker, rule by rule: every case takes the legal plan of
// core_test_util.h, breaks exactly one rule of spec/formats-v1.md ("Legal plan", and the plan's
// structure, reported as rule 0) and expects that rule alone, naming the ids involved.
#include "ordo/core/check_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "tests/support/builders.h"
#include "tests/unit/core/core_test_util.h"

namespace ordo::testing {
namespace {

std::string Describe(const std::vector<Violation>& violations) {
  std::string out;
  for (const Violation& v : violations) out += "\n  " + FormatViolation(v);
  return out;
}

TEST(CheckPlanTest, TheLegalPlanPasses) {
  const std::vector<Violation> violations = CheckPlan(LegalScenario(), LegalPlan());
  EXPECT_TRUE(violations.empty()) << Describe(violations);
}

TEST(CheckPlanTest, PlacementOrderDoesNotMatter) {
  Plan plan = LegalPlan();
  std::reverse(plan.jobs.begin(), plan.jobs.end());
  std::reverse(plan.services.begin(), plan.services.end());
  const std::vector<Violation> violations = CheckPlan(LegalScenario(), plan);
  EXPECT_TRUE(violations.empty()) << Describe(violations);
}

struct BrokenCase {
  std::string name;
  int rule;                      // the one rule every violation must report
  std::vector<std::string> ids;  // the first violation names exactly these
  std::string words;             // ... and its message says this
  std::function<void(Scenario&, Plan&)> breaks;
};

BrokenCase Case(std::string name, int rule, std::vector<std::string> ids, std::string words,
                std::function<void(Scenario&, Plan&)> breaks) {
  return {std::move(name), rule, std::move(ids), std::move(words), std::move(breaks)};
}

std::vector<BrokenCase> Cases() {
  return {
      // Structure: every job once, every service once with horizon_steps lists.
      Case("JobMissing", 0, {"idle"}, "missing", [](Scenario&, Plan& p) { p.jobs.pop_back(); }),
      Case("JobTwice", 0, {"idle"}, "more than once",
           [](Scenario&, Plan& p) { p.jobs.push_back(p.jobs.back()); }),
      Case("UnknownJob", 0, {"ghost"}, "not in the scenario",
           [](Scenario&, Plan& p) {
             p.jobs.push_back(JobPlacement{"ghost", std::nullopt, 0, 0, 0});
           }),
      Case("JobStartsAtTheHorizon", 0, {"late"}, "past the horizon",
           [](Scenario&, Plan& p) { JobIn(p, "late").start_step = 6; }),
      Case("ServiceMissing", 0, {"embed"}, "missing",
           [](Scenario&, Plan& p) { p.services.pop_back(); }),
      Case("ServiceTwice", 0, {"embed"}, "more than once",
           [](Scenario&, Plan& p) { p.services.push_back(p.services.back()); }),
      Case("UnknownService", 0, {"ghost"}, "not in the scenario",
           [](Scenario&, Plan& p) {
             p.services.push_back(ServiceAllocation{"ghost", ServiceIn(p, "embed").gpus});
           }),
      Case("ServiceStepsShort", 0, {"embed"}, "5 lists of GPUs; the horizon has 6",
           [](Scenario&, Plan& p) { ServiceIn(p, "embed").gpus.pop_back(); }),
      Case("ServiceStepsLong", 0, {"embed"}, "7 lists of GPUs",
           [](Scenario&, Plan& p) { ServiceIn(p, "embed").gpus.push_back({10}); }),
      Case("ServiceGpuOutsideCluster", 0, {"embed"}, "not in the cluster",
           [](Scenario&, Plan& p) { ServiceIn(p, "embed").gpus[0] = {16}; }),
      // Rule 1: a GPU serves at most one job or service at each step.
      Case("TwoJobsShareAGpu", 1, {"run", "train"}, "both hold GPU 0 at step 1",
           [](Scenario&, Plan& p) { JobIn(p, "train").first_gpu = 0; }),
      Case("JobAndServiceShareAGpu", 1, {"quant", "chat"}, "both hold GPU 8 at step 0",
           [](Scenario&, Plan& p) {
             ServiceIn(p, "chat").gpus[0] = {8, 13};
           }),
      Case("TwoServicesShareAGpu", 1, {"chat", "embed"}, "both hold GPU 12 at step 0",
           [](Scenario&, Plan& p) { ServiceIn(p, "embed").gpus[0] = {12}; }),
      Case("ServiceListsAGpuTwice", 1, {"chat"}, "GPU 13 twice at step 1",
           [](Scenario&, Plan& p) {
             ServiceIn(p, "chat").gpus[1] = {12, 13, 13};
           }),
      // Rule 2: services within [min_gpus, max_gpus]; a running job keeps its block; a job uses
      // one of its shapes.
      Case("ServiceBelowMin", 2, {"chat"}, "holds 1 GPUs at step 5",
           [](Scenario&, Plan& p) { ServiceIn(p, "chat").gpus[5] = {12}; }),
      Case("ServiceAboveMax", 2, {"embed"}, "holds 2 GPUs at step 3",
           [](Scenario&, Plan& p) {
             ServiceIn(p, "embed").gpus[3] = {10, 11};
           }),
      Case("RunningJobMoved", 2, {"run"}, "must keep its block",
           [](Scenario&, Plan& p) { JobIn(p, "run").first_gpu = 2; }),
      Case("RunningJobRestarted", 2, {"run"}, "must keep its block",
           [](Scenario&, Plan& p) { JobIn(p, "run").start_step = 0; }),
      Case("RunningJobDropped", 2, {"run"}, "must keep its block",
           [](Scenario&, Plan& p) { JobIn(p, "run").start_step = std::nullopt; }),
      Case("RunningJobShortened", 2, {"run"}, "must keep its block",
           [](Scenario&, Plan& p) { JobIn(p, "run").duration_steps = 3; }),
      // {1, 2}: the GPUs of one shape, the duration of the other.
      Case("ShapeNotTheJobs", 2, {"quant"}, "not one of its shapes",
           [](Scenario&, Plan& p) { JobIn(p, "quant").gpus = 1; }),
      Case("DurationCutShort", 2, {"train"}, "not one of its shapes",
           [](Scenario&, Plan& p) { JobIn(p, "train").duration_steps = 2; }),
      // Rule 3: one contiguous aligned block, within a node or whole nodes, in one matching
      // group.
      Case("BlockNotAligned", 3, {"train"}, "not aligned",
           [](Scenario&, Plan& p) { JobIn(p, "train").first_gpu = 2; }),
      Case("BlockCrossesANode", 3, {"idle"}, "not aligned",
           [](Scenario&, Plan& p) {
             JobIn(p, "idle") = JobPlacement{"idle", 0, 3, 2, 1};
           }),
      Case("BlockSpansTwoGroups", 3, {"big"}, "spans two groups",
           [](Scenario&, Plan& p) {
             JobIn(p, "big") = JobPlacement{"big", 4, 0, 16, 1};
           }),
      Case("BlockPastTheLastGpu", 3, {"late"}, "outside the cluster",
           [](Scenario&, Plan& p) { JobIn(p, "late").first_gpu = 16; }),
      Case("BlockBeforeTheFirstGpu", 3, {"late"}, "outside the cluster",
           [](Scenario&, Plan& p) { JobIn(p, "late").first_gpu = -1; }),
      Case("JobInAGroupOfTheWrongType", 3, {"quant"}, "does not match",
           [](Scenario&, Plan& p) { JobIn(p, "quant").first_gpu = 2; }),
      Case("JobInAGroupWithTooLittleMemory", 3, {"train"}, "does not match",
           [](Scenario& s, Plan&) { s.jobs[1].requirement.min_gpu_memory_gb = 80; }),
      Case("ServiceInAGroupOfTheWrongType", 3, {"chat"},
           "GPU 2 at step 0, in a group that does not match",
           [](Scenario&, Plan& p) {
             ServiceIn(p, "chat").gpus[0] = {2, 13};
           }),
      // Rule 4: a service's count changes by at most max_change_per_step, from current_gpus on.
      Case("ChurnIntoStepZero", 4, {"chat"}, "into step 0",
           [](Scenario&, Plan& p) {
             ServiceIn(p, "chat").gpus[0] = {12, 13, 14, 15};
           }),
      Case("ChurnBetweenSteps", 4, {"chat"}, "from 2 to 4 GPUs at step 1",
           [](Scenario&, Plan& p) {
             ServiceIn(p, "chat").gpus[1] = {12, 13, 14, 15};
           }),
      // Rule 5: never before arrival_step (nor before step 0, for a job that is not running).
      Case("StartsBeforeArrival", 5, {"train"}, "before its arrival_step 1",
           [](Scenario&, Plan& p) { JobIn(p, "train").start_step = 0; }),
      Case("StartsInThePast", 5, {"late"}, "in the past",
           [](Scenario&, Plan& p) { JobIn(p, "late").start_step = -1; }),
  };
}

class BrokenRuleTest : public ::testing::TestWithParam<BrokenCase> {};

void ExpectThatRuleAlone(Scenario scenario, Plan plan, const BrokenCase& broken) {
  broken.breaks(scenario, plan);
  const std::vector<Violation> violations = CheckPlan(scenario, plan);
  ASSERT_FALSE(violations.empty()) << "no violation reported";
  std::set<int> rules;
  for (const Violation& v : violations) rules.insert(v.rule);
  EXPECT_EQ(rules, std::set<int>{broken.rule}) << Describe(violations);
  std::vector<std::string> ids = violations.front().ids;
  std::vector<std::string> expected = broken.ids;
  std::sort(ids.begin(), ids.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(ids, expected) << Describe(violations);
  EXPECT_NE(violations.front().message.find(broken.words), std::string::npos)
      << "expected \"" << broken.words << "\" in" << Describe(violations);
}

TEST_P(BrokenRuleTest, ReportsThatRuleAlone) {
  ExpectThatRuleAlone(LegalScenario(), LegalPlan(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rules, BrokenRuleTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

TEST(CheckPlanTest, ThePreemptionPlanPasses) {
  const std::vector<Violation> violations = CheckPlan(PreemptScenario(), PreemptPlan());
  EXPECT_TRUE(violations.empty()) << Describe(violations);
}

// The preemption rules of spec/formats-v1.md ("Preemption: checkpoints and migration"), each
// broken alone on the plan of core_test_util.h.
std::vector<BrokenCase> PreemptCases() {
  return {
      Case("PreemptWithoutCheckpoint", 5, {"ckpt"}, "has no checkpoint",
           [](Scenario& s, Plan&) { s.jobs[0].checkpoint.reset(); }),
      Case("PreemptInThePast", 5, {"runpre"}, "in the past",
           [](Scenario&, Plan& p) { JobIn(p, "runpre").preempt_step = -1; }),
      Case("PreemptAtItsStart", 5, {"ckpt"}, "not after its start at step 0",
           [](Scenario&, Plan& p) { JobIn(p, "ckpt").preempt_step = 0; }),
      // held is left alone until 2 + 5 - 1 = 6.
      Case("PreemptAtItsEnd", 5, {"held"}, "not before its end at step 6",
           [](Scenario&, Plan& p) { JobIn(p, "held").preempt_step = 6; }),
      Case("PreemptPastTheHorizon", 0, {"held"}, "past the horizon",
           [](Scenario& s, Plan& p) {
             s.jobs[2].shapes.front().duration_steps = 20;
             JobIn(p, "held").duration_steps = 20;
             JobIn(p, "held").preempt_step = 10;
           }),
      Case("PreemptNotStarted", 0, {"idle"}, "not started",
           [](Scenario&, Plan& p) { JobIn(p, "idle").preempt_step = 2; }),
      Case("ResumeWithoutPreempt", 0, {"urgent"}, "no preempt_step",
           [](Scenario&, Plan& p) {
             JobIn(p, "urgent").resume = ResumePlacement{6, 0};
           }),
      Case("ResumeBeforeThePreemption", 5, {"ckpt"}, "never holds two blocks",
           [](Scenario&, Plan& p) { JobIn(p, "ckpt").resume->start_step = 2; }),
      Case("ResumePastTheHorizon", 0, {"ckpt"}, "past the horizon",
           [](Scenario&, Plan& p) { JobIn(p, "ckpt").resume->start_step = 10; }),
      Case("ResumedBlockNotAligned", 3, {"ckpt"}, "resumed block [1, 3) is not aligned",
           [](Scenario&, Plan& p) { JobIn(p, "ckpt").resume->first_gpu = 1; }),
      Case("ResumedBlockOutsideTheCluster", 3, {"ckpt"}, "outside the cluster",
           [](Scenario&, Plan& p) { JobIn(p, "ckpt").resume->first_gpu = 10; }),
      Case("ResumedInAGroupOfTheWrongType", 3, {"ckpt"}, "resumed stay in group \"c\"",
           [](Scenario&, Plan& p) { JobIn(p, "ckpt").resume->first_gpu = 8; }),
      // Resumed at 4 on GPUs 0-1, where urgent runs at steps 3 and 4.
      Case("ResumedStayCollides", 1, {"ckpt", "urgent"}, "both hold GPU 0 at step 4",
           [](Scenario&, Plan& p) {
             JobIn(p, "ckpt").resume = ResumePlacement{4, 0};
           }),
      // Not preempted, ckpt holds GPUs 0-1 until 6 and meets urgent at 3.
      Case("PreemptionDropped", 1, {"ckpt", "urgent"}, "both hold GPU 0 at step 3",
           [](Scenario&, Plan& p) {
             JobIn(p, "ckpt").preempt_step.reset();
             JobIn(p, "ckpt").resume.reset();
           }),
      // The first stay ends at the preemption: held till 4, ckpt meets urgent at step 3.
      Case("PreemptedTooLate", 1, {"ckpt", "urgent"}, "both hold GPU 0 at step 3",
           [](Scenario&, Plan& p) { JobIn(p, "ckpt").preempt_step = 4; }),
      Case("RunningPreemptedJobMoved", 2, {"runpre"}, "must keep its block",
           [](Scenario&, Plan& p) { JobIn(p, "runpre").first_gpu = 4; }),
  };
}

class BrokenPreemptionTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenPreemptionTest, ReportsThatRuleAlone) {
  ExpectThatRuleAlone(PreemptScenario(), PreemptPlan(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Rules, BrokenPreemptionTest, ::testing::ValuesIn(PreemptCases()),
                         [](const auto& info) { return info.param.name; });

// How long each stay lasts, seen through a second job `next` on the same GPU right after it:
// legal at the stay's end, a rule 1 collision one step earlier.
struct StayEndCase {
  std::string name;
  JobBuilder job;          // on GPU 0 of a 1-GPU group
  JobPlacement placement;  // the job's entry
  int end;                 // the step its last stay frees GPU 0
};

class StayEndTest : public ::testing::TestWithParam<StayEndCase> {};

TEST_P(StayEndTest, TheLastStayEndsWhereTheSpecSays) {
  const StayEndCase& c = GetParam();
  const Scenario scenario =
      ScenarioBuilder("ends").Steps(12).Group("g", 1, 1).Job(c.job).Job(MakeJob("next")).Build();
  for (int start : {c.end, c.end - 1}) {
    Plan plan;
    plan.jobs = {c.placement, JobPlacement{"next", start, 0, 1, 1}};
    const std::vector<Violation> violations = CheckPlan(scenario, plan);
    if (start == c.end) {
      EXPECT_TRUE(violations.empty()) << Describe(violations);
    } else {
      ASSERT_EQ(violations.size(), 1u) << Describe(violations);
      EXPECT_EQ(violations.front().rule, 1) << Describe(violations);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Stays, StayEndTest,
    ::testing::Values(
        // Fresh, every 2, restart 1: preempted at 3 with progress 3, saved 2; resumed at 3:
        // 1 restart step + 4 - 2 work steps.
        StayEndCase{"ResumedAfterRestartAndTheUnsavedRest",
                    MakeJob("j").Duration(4).Checkpointed(2, 1),
                    Preempted(JobPlacement{"j", 0, 0, 1, 4}, 3, ResumePlacement{3, 0}), 6},
        // Every step saved, no restart: resumed later, exactly the rest.
        StayEndCase{"EverySaveNoRestart", MakeJob("j").Duration(4).Checkpointed(1, 0),
                    Preempted(JobPlacement{"j", 0, 0, 1, 4}, 3, ResumePlacement{5, 0}), 6},
        // No save reached: all 3 steps lost, the whole duration again after 2 restart steps.
        StayEndCase{"NothingSaved", MakeJob("j").Duration(4).Checkpointed(5, 2),
                    Preempted(JobPlacement{"j", 0, 0, 1, 4}, 3, ResumePlacement{3, 0}), 9},
        // Running since -3 with progress 1 and 2 restart steps left: 2 + 5 - 1.
        StayEndCase{"RunningWithProgressAndRestartLeft",
                    MakeJob("j").Duration(5).Running(-3, 0).Progress(1, 2),
                    JobPlacement{"j", -3, 0, 1, 5}, 6},
        // Running since -2 without progress_steps: progress 2, ends at 0 + 5 - 2.
        StayEndCase{"RunningByDefault", MakeJob("j").Duration(5).Running(-2, 0),
                    JobPlacement{"j", -2, 0, 1, 5}, 3},
        // Running, preempted during its restart steps: progress stays 4, saved 4 (every step);
        // resumed at 2: 1 restart + 6 - 4.
        StayEndCase{"RunningPreemptedWhileRestarting",
                    MakeJob("j").Duration(6).Running(-1, 0).Progress(4, 3).Checkpointed(1, 1),
                    Preempted(JobPlacement{"j", -1, 0, 1, 6}, 1, ResumePlacement{2, 0}), 5}),
    [](const auto& info) { return info.param.name; });

TEST(CheckPlanTest, EachCollidingPairIsReportedOnceAtItsFirstCollision) {
  Plan plan = LegalPlan();
  // train on GPUs 0-3 at steps 1-3 meets run at step 1; late on GPU 0 at steps 3-5 meets train
  // at step 3 and big at steps 4 and 5.
  JobIn(plan, "train") = JobPlacement{"train", 1, 0, 4, 3};
  JobIn(plan, "late") = JobPlacement{"late", 3, 0, 1, 3};
  const std::vector<Violation> violations = CheckPlan(LegalScenario(), plan);
  std::vector<std::string> lines;
  for (const Violation& v : violations) lines.push_back(FormatViolation(v));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "rule 1: job \"run\" and job \"train\" both hold GPU 0 at step 1",
                       "rule 1: job \"train\" and job \"late\" both hold GPU 0 at step 3",
                       "rule 1: job \"big\" and job \"late\" both hold GPU 0 at step 4",
                   }));
}

TEST(CheckPlanTest, RunningJobsMayEndPastTheHorizonAndOthersMayRunPastIt) {
  Scenario scenario = ScenarioBuilder("past")
                          .Steps(3)
                          .Group("g", 1, 4)
                          .Job(MakeJob("long-running").Gpus(2).Duration(10).Running(-1, 0))
                          .Job(MakeJob("long").Gpus(2).Duration(10).Arrival(2))
                          .Build();
  Plan plan;
  plan.jobs = {JobPlacement{"long-running", -1, 0, 2, 10}, JobPlacement{"long", 2, 2, 2, 10}};
  const std::vector<Violation> violations = CheckPlan(scenario, plan);
  EXPECT_TRUE(violations.empty()) << Describe(violations);
}

TEST(CheckPlanTest, AnUnlimitedServiceMayJumpAndStartFromAnything) {
  // Without max_change_per_step or current_gpus, rule 4 says nothing.
  Scenario scenario = ScenarioBuilder("jumps")
                          .Steps(3)
                          .Group("g", 1, 8)
                          .Service(MakeService("s").Current(0))
                          .Service(MakeService("t").Churn(1))
                          .Build();
  Plan plan;
  plan.services = {ServiceAllocation{"s", {Ids(0, 4), {}, Ids(0, 4)}},
                   ServiceAllocation{"t", {Ids(4, 4), Ids(4, 3), Ids(4, 2)}}};
  const std::vector<Violation> violations = CheckPlan(scenario, plan);
  EXPECT_TRUE(violations.empty()) << Describe(violations);
}

TEST(FormatViolationTest, NamesTheRuleOrTheStructure) {
  EXPECT_EQ(FormatViolation(Violation{3, {"a"}, "job \"a\" ..."}), "rule 3: job \"a\" ...");
  EXPECT_EQ(FormatViolation(Violation{0, {"a"}, "job \"a\" is missing from the plan"}),
            "plan structure: job \"a\" is missing from the plan");
}

}  // namespace
}  // namespace ordo::testing
