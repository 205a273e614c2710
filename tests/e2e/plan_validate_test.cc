// The CLI end to end: `ordo plan` and `ordo validate` on real files, exit codes 0, 1 and 2, and
// error messages that name the file and the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/io/plan_io.h"
#include "ordo/io/scenario_io.h"
#include "tests/e2e/cli_runner.h"
#include "tests/support/explanation_check.h"

namespace ordo::testing {
namespace {

std::string Scenario(const std::string& file) {
  return (SourceDir() / "scenarios" / file).string();
}

// A 4-GPU node, 4 steps: small enough to break a plan by hand, rule by rule.
constexpr const char* kTinyScenario = R"({
  "version": 1, "name": "tiny", "step_minutes": 60, "horizon_steps": 4,
  "cluster": {"node_groups": [{"name": "n", "nodes": 1, "gpus_per_node": 4}]},
  "jobs": [
    {"id": "a", "kind": "training", "priority": 3, "arrival_step": 0, "gpus": 2, "duration_steps": 2},
    {"id": "b", "kind": "quantization", "priority": 1, "arrival_step": 2, "gpus": 1, "duration_steps": 1}
  ],
  "services": [
    {"id": "s", "priority": 5, "min_gpus": 1, "max_gpus": 2, "max_change_per_step": 1,
     "demand": [1, 1, 1, 1]}
  ]
})";

// A legal plan of kTinyScenario.
constexpr const char* kTinyPlan = R"({
  "version": 1, "scenario": "tiny", "policy": "by-hand",
  "jobs": [
    {"id": "a", "start_step": 0, "first_gpu": 0, "gpus": 2, "duration_steps": 2},
    {"id": "b", "start_step": 2, "first_gpu": 2, "gpus": 1, "duration_steps": 1}
  ],
  "services": [{"id": "s", "gpus": [[3], [3], [3], [3]]}]
})";

TEST(PlanCommandTest, WritesALegalPlanOfTheDefaultPolicy) {
  const CliResult r = RunOrdo({"plan", Scenario("01-mixed-control.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<Plan> plan = io::ParsePlan(r.out, false);
  ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
  EXPECT_EQ(plan->policy, "ordo");
  EXPECT_EQ(plan->scenario, "mixed-control");
  Result<ordo::Scenario> scenario = io::ReadScenarioFile(Scenario("01-mixed-control.json"));
  ASSERT_TRUE(scenario.has_value());
  EXPECT_TRUE(CheckPlan(*scenario, *plan).empty());
}

TEST(PlanCommandTest, EveryPolicyByNameGivesALegalPlan) {
  Result<ordo::Scenario> scenario = io::ReadScenarioFile(Scenario("03-training-heavy.json"));
  ASSERT_TRUE(scenario.has_value());
  for (const std::string name :
       {"fifo", "fifo-backfill", "priority-backfill", "reactive", "ordo", "ordo-full"}) {
    const CliResult r = RunOrdo(
        {"plan", Scenario("03-training-heavy.json"), "--policy", name, "--time-limit", "1"});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    Result<Plan> plan = io::ParsePlan(r.out, false);
    ASSERT_TRUE(plan.has_value()) << name;
    EXPECT_EQ(plan->policy, name);
    for (const Violation& v : CheckPlan(*scenario, *plan))
      ADD_FAILURE() << name << ": " << FormatViolation(v);
  }
}

TEST(PlanCommandTest, ExplainAddsExplanationsToThePlanAndPrintsThem) {
  const CliResult r = RunOrdo(
      {"plan", Scenario("05-oversubscribed.json"), "--policy", "priority-backfill", "--explain"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  ASSERT_TRUE(plan.contains("x-explain")) << r.out.substr(0, 400);
  // Most of the 20 jobs arrive after step 0 or wait for the node: each gets an explanation.
  EXPECT_GE(plan["x-explain"].size(), 10u);
  EXPECT_NE(r.err.find("train-07"), std::string::npos) << r.err;
}

// Every scenario file's explanations, under every policy, are facts the independent checker
// confirms; in particular every step of each waiting job's wait is explained (training-heavy once
// left an 11-step gap).
TEST(PlanCommandTest, ExplanationsOfTheScenarioFilesAreCheckedFacts) {
  for (const std::string file : {"02-realtime-contention.json", "03-training-heavy.json"}) {
    Result<ordo::Scenario> scenario = io::ReadScenarioFile(Scenario(file));
    ASSERT_TRUE(scenario.has_value()) << file;
    for (const std::string name :
         {"fifo", "fifo-backfill", "priority-backfill", "reactive", "ordo", "ordo-full"}) {
      const CliResult r =
          RunOrdo({"plan", Scenario(file), "--policy", name, "--time-limit", "1", "--explain"});
      ASSERT_EQ(r.exit_code, 0) << file << " " << name << ": " << r.err;
      Result<Plan> plan = io::ParsePlan(r.out, false);
      ASSERT_TRUE(plan.has_value()) << file << " " << name << ": " << plan.error().ToString();
      for (const std::string& problem : CheckExplanations(*scenario, *plan, plan->explanations)) {
        ADD_FAILURE() << file << " " << name << ": " << problem;
      }
    }
  }
}

TEST(PlanCommandTest, BadArgumentsExitTwoInOneLineNamingTheHelp) {
  const std::string file = Scenario("01-mixed-control.json");
  const std::vector<std::vector<std::string>> cases = {
      {"plan"},
      {"plan", file, file},
      {"plan", file, "--policy"},
      {"plan", file, "--policy", "round-robin"},
      {"plan", file, "--time-limit", "0"},
      {"plan", file, "--time-limit", "-3"},
      {"plan", file, "--time-limit", "soon"},
      {"plan", file, "--time-limit", "nan"},
      {"plan", file, "--time-limit", "1e999"},
      {"plan", file, "--explain=yes"},
      {"plan", file, "--frobnicate"},
      {"plan", file, "--policy", "fifo", "--policy", "ordo"},
      {"plan", file, "--effort", "0"},
      {"plan", file, "--effort", "65"},
      {"plan", file, "--effort", "2.5"},
      {"plan", file, "--effort", "lots"},
  };
  for (const auto& args : cases) {
    const CliResult r = RunOrdo(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_NE(r.err.find("(see `ordo plan --help`)\n"), std::string::npos) << joined << "\n"
                                                                           << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << joined << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << joined;
  }
}

TEST(PlanCommandTest, UnknownOptionSuggestsTheClosest) {
  const std::string file = Scenario("01-mixed-control.json");
  const CliResult r = RunOrdo({"plan", file, "--polcy", "fifo"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "ordo: --polcy: unknown option (did you mean --policy?) (see `ordo plan --help`)\n");
  const CliResult far = RunOrdo({"plan", file, "--frobnicate"});
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(PlanCommandTest, EffortNamesTheOptionWhenBadAndGivesALegalPlanWhenGood) {
  const std::string file = Scenario("03-training-heavy.json");
  const CliResult bad = RunOrdo({"plan", file, "--effort", "0"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--effort: must be an integer from 1 to 64 (got \"0\")"),
            std::string::npos)
      << bad.err;
  Result<ordo::Scenario> scenario = io::ReadScenarioFile(file);
  ASSERT_TRUE(scenario.has_value());
  const CliResult r = RunOrdo({"plan", file, "--effort", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<Plan> plan = io::ParsePlan(r.out, false);
  ASSERT_TRUE(plan.has_value());
  EXPECT_TRUE(CheckPlan(*scenario, *plan).empty());
}

TEST(PlanCommandTest, UnknownPolicyListsTheKnownOnes) {
  const CliResult r = RunOrdo({"plan", Scenario("01-mixed-control.json"), "--policy", "lifo"});
  EXPECT_EQ(r.exit_code, 2);
  for (const char* name : {"fifo-backfill", "priority-backfill", "reactive", "ordo-full"}) {
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
  }
}

TEST(PlanCommandTest, InvalidScenarioNamesTheFileAndTheField) {
  TempDir dir;
  nlohmann::json scenario = nlohmann::json::parse(kTinyScenario);
  scenario["jobs"][1]["gpus"] = 3;
  const std::string path = dir.File("bad-gpus.json");
  WriteWhole(path, scenario.dump());
  const CliResult r = RunOrdo({"plan", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(r.err.rfind("ordo: " + path + ": jobs[1].gpus: ", 0), 0u) << r.err;
}

TEST(PlanCommandTest, UnreadableOrEmptyFilesExitTwoNamingTheFile) {
  TempDir dir;
  const std::string missing = dir.File("missing.json");
  const std::string empty = dir.File("empty.json");
  WriteWhole(empty, "");
  const std::string garbage = dir.File("garbage.json");
  WriteWhole(garbage, "{\"version\": 1, \"jobs\": [");
  for (const std::string& path : {missing, empty, garbage, dir.path().string()}) {
    const CliResult r = RunOrdo({"plan", path});
    EXPECT_EQ(r.exit_code, 2) << path;
    EXPECT_NE(r.err.find("ordo: " + path + ": "), std::string::npos) << r.err;
    EXPECT_EQ(r.signal, 0);
  }
}

// A job with `features` and no `duration_steps` gets its duration from the forecasters; bad
// features are input errors that name the feature.
TEST(PlanCommandTest, DurationsFromFeatures) {
  TempDir dir;
  nlohmann::json scenario = nlohmann::json::parse(kTinyScenario);
  scenario["jobs"][1].erase("duration_steps");
  scenario["jobs"][1]["features"] = {{"params_b", 70}, {"algorithm", "gptq"}};
  WriteWhole(dir.File("features.json"), scenario.dump());
  const CliResult r = RunOrdo({"plan", dir.File("features.json"), "--policy", "fifo"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  ASSERT_FALSE(plan["jobs"][1]["start_step"].is_null());
  EXPECT_GE(plan["jobs"][1]["duration_steps"].get<int>(), 1);

  scenario["jobs"][1]["features"]["algorithm"] = "magic";
  WriteWhole(dir.File("magic.json"), scenario.dump());
  const CliResult bad = RunOrdo({"plan", dir.File("magic.json")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(dir.File("magic.json") + ": jobs[1].features.algorithm"),
            std::string::npos)
      << bad.err;
}

TEST(ValidateCommandTest, LegalPlanExitsZero) {
  TempDir dir;
  WriteWhole(dir.File("s.json"), kTinyScenario);
  WriteWhole(dir.File("p.json"), kTinyPlan);
  const CliResult r = RunOrdo({"validate", dir.File("s.json"), dir.File("p.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(ValidateCommandTest, PlansFromPlanValidate) {
  TempDir dir;
  for (const std::string name : {"fifo", "reactive", "ordo"}) {
    const CliResult plan = RunOrdo({"plan", Scenario("04-large-mixed.json"), "--policy", name});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    WriteWhole(dir.File(name + ".json"), plan.out);
    const CliResult r =
        RunOrdo({"validate", Scenario("04-large-mixed.json"), dir.File(name + ".json")});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out << r.err;
  }
}

TEST(ValidateCommandTest, SwappedArgumentsAreNamedAsSuch) {
  TempDir dir;
  WriteWhole(dir.File("s.json"), kTinyScenario);
  WriteWhole(dir.File("p.json"), kTinyPlan);
  const CliResult r = RunOrdo({"validate", dir.File("p.json"), dir.File("s.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ordo: the arguments are swapped: " + dir.File("p.json") + " is a plan and " +
                       dir.File("s.json") +
                       " a scenario; validate takes SCENARIO PLAN (see `ordo validate --help`)\n");
}

TEST(ValidateCommandTest, APlanForAnotherScenarioIsOneLineNotEveryRule) {
  TempDir dir;
  const CliResult plan = RunOrdo({"plan", Scenario("01-mixed-control.json"), "--policy", "fifo"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  WriteWhole(dir.File("p.json"), plan.out);
  const std::string other = Scenario("03-training-heavy.json");
  const CliResult r = RunOrdo({"validate", other, dir.File("p.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(dir.File("p.json") + ": scenario: the plan was made for scenario \""),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(other), std::string::npos) << r.err;
}

// Three rules broken by hand, one each: an unaligned block (3), a start before arrival (5), a
// service below its floor (2). validate prints exactly one line per broken rule.
TEST(ValidateCommandTest, HandBrokenPlanGetsOneLinePerBrokenRule) {
  TempDir dir;
  nlohmann::json plan = nlohmann::json::parse(kTinyPlan);
  plan["jobs"][0]["first_gpu"] = 1;                          // [1, 3): not aligned to 2
  plan["jobs"][1]["start_step"] = 0;                         // arrives at step 2
  plan["services"][0]["gpus"][2] = nlohmann::json::array();  // min_gpus is 1
  WriteWhole(dir.File("s.json"), kTinyScenario);
  WriteWhole(dir.File("p.json"), plan.dump());
  const CliResult r = RunOrdo({"validate", dir.File("s.json"), dir.File("p.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  auto has = [&](const std::string& prefix, const std::string& id) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.rfind(prefix, 0) == 0 && l.find("\"" + id + "\"") != std::string::npos;
    });
  };
  EXPECT_TRUE(has("rule 3: ", "a")) << r.out;
  EXPECT_TRUE(has("rule 5: ", "b")) << r.out;
  EXPECT_TRUE(has("rule 2: ", "s")) << r.out;
}

TEST(ValidateCommandTest, TwoJobsOnOneGpuBreakRuleOne) {
  TempDir dir;
  nlohmann::json plan = nlohmann::json::parse(kTinyPlan);
  plan["jobs"][1]["first_gpu"] = 1;  // inside a's block [0, 2)
  plan["jobs"][0]["duration_steps"] = 2;
  plan["jobs"][0]["start_step"] = 1;  // a holds [0, 2) at steps 1-2, b holds GPU 1 at step 2
  WriteWhole(dir.File("s.json"), kTinyScenario);
  WriteWhole(dir.File("p.json"), plan.dump());
  const CliResult r = RunOrdo({"validate", dir.File("s.json"), dir.File("p.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "rule 1: job \"a\" and job \"b\" both hold GPU 1 at step 2\n");
}

// The preemption fields through `ordo validate`: a (2 GPUs, 3 steps, saved every step, 1 restart
// step) gives its block back at 1 and resumes at 2 on GPUs 0-1: 1 + 3 - 1 steps, to step 5.
TEST(ValidateCommandTest, PreemptionIsLegalOnlyForACheckpointedJob) {
  TempDir dir;
  nlohmann::json scenario = nlohmann::json::parse(kTinyScenario);
  scenario["jobs"][0]["duration_steps"] = 3;
  scenario["jobs"][0]["checkpoint"] = {{"every_steps", 1}, {"restart_steps", 1}};
  nlohmann::json plan = nlohmann::json::parse(kTinyPlan);
  plan["jobs"][0]["duration_steps"] = 3;
  plan["jobs"][0]["preempt_step"] = 1;
  plan["jobs"][0]["resume"] = {{"start_step", 2}, {"first_gpu", 0}};
  WriteWhole(dir.File("s.json"), scenario.dump());
  WriteWhole(dir.File("p.json"), plan.dump());
  CliResult r = RunOrdo({"validate", dir.File("s.json"), dir.File("p.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;

  scenario["jobs"][0].erase("checkpoint");
  WriteWhole(dir.File("s.json"), scenario.dump());
  r = RunOrdo({"validate", dir.File("s.json"), dir.File("p.json")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out,
            "rule 5: job \"a\" is preempted at step 1 but has no checkpoint: only jobs with one "
            "may be preempted\n");
}

TEST(ValidateCommandTest, BadFilesAndArgumentsExitTwo) {
  TempDir dir;
  WriteWhole(dir.File("s.json"), kTinyScenario);
  nlohmann::json plan = nlohmann::json::parse(kTinyPlan);
  plan["jobs"][0]["frist_gpu"] = 0;  // a typo never passes silently
  WriteWhole(dir.File("typo.json"), plan.dump());
  const CliResult typo = RunOrdo({"validate", dir.File("s.json"), dir.File("typo.json")});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find(dir.File("typo.json") + ": jobs[0].frist_gpu"), std::string::npos)
      << typo.err;

  nlohmann::json scenario = nlohmann::json::parse(kTinyScenario);
  scenario["services"][0]["demand"] = {1, 1, 1};  // horizon is 4
  WriteWhole(dir.File("short.json"), scenario.dump());
  WriteWhole(dir.File("p.json"), kTinyPlan);
  const CliResult demand = RunOrdo({"validate", dir.File("short.json"), dir.File("p.json")});
  EXPECT_EQ(demand.exit_code, 2);
  EXPECT_NE(demand.err.find(dir.File("short.json") + ": services[0].demand"), std::string::npos)
      << demand.err;

  for (const auto& args : std::vector<std::vector<std::string>>{
           {"validate"},
           {"validate", dir.File("s.json")},
           {"validate", dir.File("s.json"), dir.File("p.json"), dir.File("p.json")},
           {"validate", dir.File("s.json"), dir.File("p.json"), "--policy", "fifo"}}) {
    const CliResult r = RunOrdo(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("(see `ordo validate --help`)\n"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const CliResult missing = RunOrdo({"validate", dir.File("s.json"), dir.File("nope.json")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find(dir.File("nope.json")), std::string::npos);
}

TEST(HelpTest, EveryCommandHasHelp) {
  for (const std::string command : {"plan", "validate", "compare", "bound"}) {
    const CliResult r = RunOrdo({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_EQ(r.out.rfind("usage: ordo " + command, 0), 0u) << r.out;
    const CliResult h = RunOrdo({"help", command});
    EXPECT_EQ(h.out, r.out);
  }
  const CliResult top = RunOrdo({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("compare"), std::string::npos);
}

// No argument combination crashes: every run ends with 0, 1 or 2 and no signal.
TEST(RobustnessTest, OddArgumentsNeverCrash) {
  const std::string file = Scenario("02-realtime-contention.json");
  const std::vector<std::vector<std::string>> cases = {
      {},
      {""},
      {"-"},
      {"--"},
      {"plan", ""},
      {"plan", "-"},
      {"plan", "--", file},
      {"plan", "--policy=", file},
      {"plan", "--time-limit=", file},
      {"plan", "--time-limit", "0x10", file, "--policy", "fifo"},
      {"plan", file, "--explain", "--policy", "reactive", "--time-limit", "0.001"},
      {"validate", file, file},
      {"validate", "", ""},
      {"compare", "--policies", ",,,", file},
      {"compare", file, "--format"},
      {"compare", file, "--format", "TABLE"},
      {"compare", file, "--report-dir", ""},
      {"compare", file, "--report-dir", "/proc/ordo-cannot-write-here", "--policies", "fifo"},
      {"compare", file, file, "--policies", "fifo,fifo,reactive"},
      {"bound"},
      {"bound", file, "--time-limit", "x"},
      {"help", "nothing"},
      {"help"},
      {"--version"},
      {"plan", std::string(5000, 'x')},
      {"plan", "\xff\xfe.json"},
      {"frobnicate"},
  };
  for (const auto& args : cases) {
    const CliResult r = RunOrdo(args);
    std::string joined;
    for (const auto& a : args) joined += "[" + a.substr(0, 40) + "] ";
    EXPECT_EQ(r.signal, 0) << joined << r.err;
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2)
        << joined << " exit " << r.exit_code << "\n"
        << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << joined << r.err;
    EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << joined << r.err;
  }
}

}  // namespace
}  // namespace ordo::testing
