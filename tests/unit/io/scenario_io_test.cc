// The scenario reader and writer on valid input: round trips, JSON and YAML agreeing, every
// default, extension fields, the interpretations docs/formats.md records, and duration resolution.
#include "ordo/io/scenario_io.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ordo/core/validate.h"
#include "tests/support/random_scenario.h"
#include "tests/unit/io/io_test_util.h"

namespace ordo::io {
namespace {

using nlohmann::json;
using testing::BaseScenarioJson;
using testing::BaseScenarioYaml;
using testing::Content;

Scenario ParseOk(const std::string& text, bool yaml, const ReadOptions& options = {}) {
  auto scenario = ParseScenario(text, yaml, options);
  EXPECT_TRUE(scenario.has_value()) << scenario.error().ToString();
  return scenario ? *scenario : Scenario{};
}

TEST(ScenarioReadTest, ReadsEveryFieldOfTheBaseScenario) {
  const Scenario s = ParseOk(BaseScenarioJson().dump(), false);
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.name, "base");
  EXPECT_EQ(s.description, "every feature once");
  EXPECT_EQ(s.step_minutes, 60);
  EXPECT_EQ(s.horizon_steps, 4);
  ASSERT_EQ(s.cluster.groups.size(), 2u);
  EXPECT_EQ(s.cluster.groups[1].name, "a10");
  EXPECT_EQ(s.cluster.groups[1].nodes, 1);
  EXPECT_EQ(s.cluster.groups[1].gpus_per_node, 4);
  EXPECT_EQ(s.cluster.groups[1].gpu_type, "A10");
  EXPECT_EQ(s.cluster.groups[1].gpu_memory_gb, 24);
  EXPECT_EQ(s.cluster.total_gpus(), 20);  // indexed by the reader
  EXPECT_EQ(s.cluster.group_first_gpu(1), 16);
  EXPECT_EQ(s.objective.time_decay, 0.25);
  EXPECT_EQ(s.objective.unmet_penalty_multiplier, 6);
  ASSERT_EQ(s.jobs.size(), 3u);
  EXPECT_EQ(s.jobs[0].kind, JobKind::kTraining);
  EXPECT_EQ(s.jobs[0].shapes, (std::vector<Shape>{{4, 6}}));
  EXPECT_EQ(s.jobs[1].kind, JobKind::kQuantization);
  EXPECT_EQ(s.jobs[1].priority, 2.5);
  EXPECT_EQ(s.jobs[1].arrival_step, 3);
  EXPECT_EQ(s.jobs[1].shapes, (std::vector<Shape>{{1, 4}, {2, 2}}));
  EXPECT_EQ(s.jobs[1].requirement.gpu_type, "A10");
  EXPECT_EQ(s.jobs[1].requirement.min_gpu_memory_gb, 16);
  ASSERT_TRUE(s.jobs[2].running.has_value());
  EXPECT_EQ(s.jobs[2].running->start_step, -5);
  EXPECT_EQ(s.jobs[2].running->first_gpu, 0);
  EXPECT_EQ(json::parse(s.jobs[2].features_json), json::parse(R"({"params_b":7,"method":"lora"})"));
  EXPECT_TRUE(s.jobs[0].features_json.empty());
  ASSERT_EQ(s.services.size(), 1u);
  const Service& chat = s.services[0];
  EXPECT_EQ(chat.id, "chat");
  EXPECT_EQ(chat.priority, 10);
  EXPECT_EQ(chat.min_gpus, 1);
  EXPECT_EQ(chat.max_gpus, 8);
  EXPECT_EQ(chat.max_change_per_step, 2);
  EXPECT_EQ(chat.current_gpus, 2);
  EXPECT_EQ(chat.requirement.gpu_type, "H100");
  EXPECT_EQ(chat.demand, (std::vector<int>{2, 3, 4, 2}));
}

TEST(ScenarioReadTest, YamlAndJsonGiveTheSameScenario) {
  const Scenario from_json = ParseOk(BaseScenarioJson().dump(), false);
  const Scenario from_yaml = ParseOk(BaseScenarioYaml(), true);
  EXPECT_EQ(Content(from_yaml), Content(from_json));
  EXPECT_EQ(from_yaml.jobs[2].features_json, from_json.jobs[2].features_json);
}

TEST(ScenarioReadTest, JsonTextReadAsYamlGivesTheSameScenario) {
  // YAML 1.2 is a superset of JSON: the same text through the YAML path agrees.
  const std::string text = BaseScenarioJson().dump(2);
  EXPECT_EQ(Content(ParseOk(text, true)), Content(ParseOk(text, false)));
}

TEST(ScenarioReadTest, EveryDefault) {
  const Scenario s = ParseOk(R"({
    "version": 1, "step_minutes": 30, "horizon_steps": 3,
    "cluster": {"node_groups": [{"nodes": 2, "gpus_per_node": 4}, {"nodes": 1, "gpus_per_node": 2}]},
    "jobs": [{"id": "j", "kind": "batch_inference", "priority": 1, "arrival_step": 2,
              "gpus": 2, "duration_steps": 1}],
    "services": [{"id": "s", "priority": 3, "demand": [0, 1, 0]}]
  })",
                             false);
  EXPECT_EQ(s.name, "");
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.cluster.groups[0].name, "");
  EXPECT_EQ(s.cluster.groups[0].gpu_type, "gpu");
  EXPECT_EQ(s.cluster.groups[0].gpu_memory_gb, 80);
  EXPECT_EQ(s.objective.time_decay, 0.5);
  EXPECT_EQ(s.objective.unmet_penalty_multiplier, 8);
  EXPECT_FALSE(s.jobs[0].requirement.gpu_type.has_value());
  EXPECT_FALSE(s.jobs[0].requirement.min_gpu_memory_gb.has_value());
  EXPECT_FALSE(s.jobs[0].running.has_value());
  EXPECT_EQ(s.services[0].min_gpus, 0);
  EXPECT_EQ(s.services[0].max_gpus, 10);  // the cluster size
  EXPECT_FALSE(s.services[0].max_change_per_step.has_value());
  EXPECT_FALSE(s.services[0].current_gpus.has_value());
  EXPECT_FALSE(s.services[0].requirement.gpu_type.has_value());
}

TEST(ScenarioReadTest, JobsAndServicesMayBeAbsent) {
  const Scenario s = ParseOk(
      R"({"version": 1, "step_minutes": 60, "horizon_steps": 2,
          "cluster": {"node_groups": [{"nodes": 1, "gpus_per_node": 8}]}})",
      false);
  EXPECT_TRUE(s.jobs.empty());
  EXPECT_TRUE(s.services.empty());
}

TEST(ScenarioReadTest, ExtensionFieldsAreIgnoredAtEveryLevel) {
  json j = BaseScenarioJson();
  j["x-owner"] = "platform";
  j["cluster"]["x-site"] = {{"rack", 3}};
  j["cluster"]["node_groups"][0]["x-vendor"] = "nvidia";
  j["objective"]["x-note"] = nullptr;
  j["jobs"][0]["x-team"] = "nlp";
  j["jobs"][1]["shapes"][0]["x-measured"] = true;
  j["jobs"][2]["running"]["x-slurm-id"] = 1234;
  j["services"][0]["x-slo"] = {1, 2};
  EXPECT_EQ(Content(ParseOk(j.dump(), false)), Content(ParseOk(BaseScenarioJson().dump(), false)));
}

TEST(ScenarioReadTest, FeaturesMayHoldAnyKeys) {
  // `features` is forecaster input, not spec structure: its keys are not checked here.
  json j = BaseScenarioJson();
  j["jobs"][0]["features"] = {{"anything", {{"nested", {1, 2}}}}};
  const Scenario s = ParseOk(j.dump(), false);
  EXPECT_EQ(json::parse(s.jobs[0].features_json), j["jobs"][0]["features"]);
}

TEST(ScenarioReadTest, IntegralFloatsAreIntegers) {
  json j = BaseScenarioJson();
  j["version"] = 1.0;
  j["jobs"][0]["gpus"] = 4.0;
  j["jobs"][0]["duration_steps"] = 6e0;
  j["services"][0]["demand"] = {2.0, 3, 4, 2};
  const Scenario s = ParseOk(j.dump(), false);
  EXPECT_EQ(s.jobs[0].shapes.front(), (Shape{4, 6}));
  EXPECT_EQ(s.services[0].demand[0], 2);
}

TEST(ScenarioReadTest, ByteOrderMarkIsAccepted) {
  const std::string bom = "\xEF\xBB\xBF";
  const Scenario plain = ParseOk(BaseScenarioJson().dump(), false);
  EXPECT_EQ(Content(ParseOk(bom + BaseScenarioJson().dump(), false)), Content(plain));
  EXPECT_EQ(Content(ParseOk(bom + BaseScenarioYaml(), true)), Content(plain));
}

TEST(ScenarioReadTest, SingleShapeListIsASingleShape) {
  json j = BaseScenarioJson();
  j["jobs"][2].erase("gpus");
  j["jobs"][2].erase("duration_steps");
  j["jobs"][2]["shapes"] = {{{"gpus", 8}, {"duration_steps", 10}}};
  const Scenario s = ParseOk(j.dump(), false);
  EXPECT_EQ(s.jobs[2].shapes, (std::vector<Shape>{{8, 10}}));
  EXPECT_TRUE(s.jobs[2].running.has_value());
}

TEST(ScenarioReadTest, YamlQuotedScalarsStayStrings) {
  // A quoted "8" is a string, so it is not an integer: quoting is how YAML says "text".
  std::string yaml = BaseScenarioYaml();
  const std::string from = "    gpus: 4\n";
  yaml.replace(yaml.find(from), from.size(), "    gpus: \"4\"\n");
  auto s = ParseScenario(yaml, true);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().field, "jobs[0].gpus");
  EXPECT_NE(s.error().message.find("string \"4\""), std::string::npos) << s.error().message;

  // ...and an id that looks like a number must be quoted to be an id.
  std::string numeric_id = BaseScenarioYaml();
  numeric_id.replace(numeric_id.find("id: chat"), 8, "id: '007'");
  EXPECT_EQ(ParseOk(numeric_id, true).services[0].id, "007");
}

// ---- duration resolution --------------------------------------------------------------------

json JobWithoutDuration() {
  json j = BaseScenarioJson();
  j["jobs"][0].erase("duration_steps");
  j["jobs"][0]["features"] = {{"tokens", 1000}};
  return j;
}

TEST(ScenarioResolveTest, ResolverSuppliesMissingDuration) {
  int calls = 0;
  ReadOptions options;
  options.resolve_duration = [&](const Job& job, std::string_view features, int step_minutes) {
    ++calls;
    EXPECT_EQ(job.id, "train-a");
    EXPECT_EQ(job.shapes, (std::vector<Shape>{{4, 0}}));  // the shape being resolved
    EXPECT_EQ(json::parse(features), json::parse(R"({"tokens": 1000})"));
    EXPECT_EQ(step_minutes, 60);
    return Result<int>(7);
  };
  const Scenario s = ParseOk(JobWithoutDuration().dump(), false, options);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(s.jobs[0].shapes.front(), (Shape{4, 7}));
}

TEST(ScenarioResolveTest, ResolverIsCalledPerShapeWithThatShape) {
  json j = BaseScenarioJson();
  j["jobs"][1]["shapes"][0].erase("duration_steps");
  j["jobs"][1]["shapes"][1].erase("duration_steps");
  j["jobs"][1]["features"] = json::object();
  ReadOptions options;
  options.resolve_duration = [](const Job& job, std::string_view, int) {
    return Result<int>(16 / job.shapes.front().gpus);  // fewer GPUs, longer
  };
  const Scenario s = ParseOk(j.dump(), false, options);
  EXPECT_EQ(s.jobs[1].shapes, (std::vector<Shape>{{1, 16}, {2, 8}}));
}

TEST(ScenarioResolveTest, GivenDurationWinsAndResolverIsNotCalled) {
  ReadOptions options;
  options.resolve_duration = [](const Job&, std::string_view, int) -> Result<int> {
    ADD_FAILURE() << "resolver called for a job with a duration";
    return 1;
  };
  json j = BaseScenarioJson();
  j["jobs"][0]["features"] = {{"tokens", 5}};
  EXPECT_EQ(ParseOk(j.dump(), false, options).jobs[0].shapes.front().duration_steps, 6);
}

TEST(ScenarioResolveTest, ResolverErrorsAreNamedUnderFeatures) {
  ReadOptions options;
  options.resolve_duration = [](const Job&, std::string_view, int) -> Result<int> {
    return FailInput("tokens", "must be positive");
  };
  auto s = ParseScenario(JobWithoutDuration().dump(), false, options);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().field, "jobs[0].features.tokens");
  EXPECT_EQ(s.error().message, "must be positive");
}

TEST(ScenarioResolveTest, ResolverOutOfRangeIsAnError) {
  ReadOptions options;
  options.resolve_duration = [](const Job&, std::string_view, int) { return Result<int>(0); };
  auto s = ParseScenario(JobWithoutDuration().dump(), false, options);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().field, "jobs[0].duration_steps");
  EXPECT_NE(s.error().message.find("forecast"), std::string::npos);
}

TEST(ScenarioResolveTest, ThrowingResolverIsCaught) {
  ReadOptions options;
  options.resolve_duration = [](const Job&, std::string_view, int) -> Result<int> {
    throw std::runtime_error("model file missing");
  };
  auto s = ParseScenario(JobWithoutDuration().dump(), false, options);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, ErrorCode::kInternal);
  EXPECT_NE(s.error().message.find("model file missing"), std::string::npos);
}

TEST(ScenarioResolveTest, NoFeaturesMeansNoResolution) {
  ReadOptions options;
  options.resolve_duration = [](const Job&, std::string_view, int) { return Result<int>(3); };
  json j = BaseScenarioJson();
  j["jobs"][0].erase("duration_steps");
  auto s = ParseScenario(j.dump(), false, options);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().field, "jobs[0].duration_steps");
  EXPECT_NE(s.error().message.find("features"), std::string::npos);
}

// ---- writing and round trips ------------------------------------------------------------------

TEST(ScenarioWriteTest, RoundTripsTheBaseScenario) {
  const Scenario s = ParseOk(BaseScenarioJson().dump(), false);
  for (int indent : {-1, 0, 2, 4}) {
    const std::string text = WriteScenario(s, indent);
    const Scenario again = ParseOk(text, false);
    EXPECT_EQ(Content(again), Content(s)) << text;
    EXPECT_EQ(again.jobs[2].features_json, s.jobs[2].features_json);
  }
}

TEST(ScenarioReadTest, ReadsThePreemptionFields) {
  json j = BaseScenarioJson();
  j["jobs"][0]["checkpoint"] = {{"every_steps", 3}, {"restart_steps", 0}};
  j["jobs"][2]["checkpoint"] = {{"every_steps", 2}, {"restart_steps", 1}};
  j["jobs"][2]["running"]["progress_steps"] = 7;
  j["jobs"][2]["running"]["restart_steps_left"] = 1;
  const Scenario s = ParseOk(j.dump(), false);
  EXPECT_EQ(s.jobs[0].checkpoint, (Checkpoint{3, 0}));
  EXPECT_FALSE(s.jobs[1].checkpoint.has_value());
  EXPECT_EQ(s.jobs[2].checkpoint, (Checkpoint{2, 1}));
  EXPECT_EQ(s.jobs[2].running->progress_steps, 7);
  EXPECT_EQ(s.jobs[2].running->restart_steps_left, 1);
  // Started at -5 with 10 steps; 7 done, 1 restart step left: ends at 1 + 10 - 7.
  EXPECT_EQ(s.jobs[2].running_end_step(), 4);
  for (int indent : {-1, 2}) {
    const std::string text = WriteScenario(s, indent);
    EXPECT_EQ(json::parse(text), j) << text;
    EXPECT_EQ(Content(ParseOk(text, false)), Content(s));
  }
}

TEST(ScenarioReadTest, RunningDefaultsWithoutThePreemptionFields) {
  const Scenario s = ParseOk(BaseScenarioJson().dump(), false);
  EXPECT_FALSE(s.jobs[2].running->progress_steps.has_value());
  EXPECT_FALSE(s.jobs[2].running->restart_steps_left.has_value());
  EXPECT_EQ(s.jobs[2].running_progress_steps(), 5);  // -start_step
  EXPECT_EQ(s.jobs[2].running_end_step(), 5);        // -5 + 10
}

TEST(ScenarioWriteTest, WritesTheSpecFormat) {
  const json written = json::parse(WriteScenario(ParseOk(BaseScenarioJson().dump(), false)));
  // The base scenario spells out every field, so the writer gives it back as it was.
  EXPECT_EQ(written, BaseScenarioJson());
}

TEST(ScenarioWriteTest, RoundTripsNumbersExactly) {
  Scenario s = ParseOk(BaseScenarioJson().dump(), false);
  s.jobs[0].priority = 0.1 + 0.2;  // 0.30000000000000004
  s.jobs[1].priority = 1.0 / 3.0;
  s.services[0].priority = 123456.789;
  s.objective.time_decay = 1e-300;
  s.cluster.groups[1].gpu_memory_gb = 23.999999999999996;
  const Scenario again = ParseOk(WriteScenario(s), false);
  EXPECT_EQ(again.jobs[0].priority, 0.1 + 0.2);
  EXPECT_EQ(again.jobs[1].priority, 1.0 / 3.0);
  EXPECT_EQ(again.services[0].priority, 123456.789);
  EXPECT_EQ(again.objective.time_decay, 1e-300);
  EXPECT_EQ(again.cluster.groups[1].gpu_memory_gb, 23.999999999999996);
}

TEST(ScenarioWriteTest, IntegralNumbersAreWrittenAsIntegers) {
  const std::string text = WriteScenario(ParseOk(BaseScenarioJson().dump(), false), -1);
  EXPECT_NE(text.find("\"priority\":5,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"gpu_memory_gb\":80"), std::string::npos) << text;
  EXPECT_NE(text.find("\"priority\":2.5,"), std::string::npos) << text;
  EXPECT_EQ(text.find(".0,"), std::string::npos) << text;
}

TEST(ScenarioWriteTest, PrettyTextKeepsListsOfNumbersOnOneLine) {
  Scenario s = ParseOk(BaseScenarioJson().dump(), false);
  s.horizon_steps = 96;
  s.services[0].demand.assign(96, 3);
  const std::string text = WriteScenario(s, 2);
  EXPECT_NE(text.find("\"demand\": [3, 3, 3"), std::string::npos) << text;
  EXPECT_NE(text.find("\n    {\"id\": \"train-a\""), std::string::npos) << text;
  EXPECT_EQ(Content(ParseOk(text, false)), Content(s));
}

TEST(ScenarioWriteTest, RandomScenariosRoundTrip) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Scenario s = ordo::testing::RandomScenario(seed);
    const std::string text = WriteScenario(s);
    auto again = ParseScenario(text, false);
    ASSERT_TRUE(again.has_value()) << "seed " << seed << ": " << again.error().ToString();
    EXPECT_EQ(Content(*again), Content(s)) << "seed " << seed;
    // And as YAML: JSON text is YAML.
    auto as_yaml = ParseScenario(text, true);
    ASSERT_TRUE(as_yaml.has_value()) << "seed " << seed << ": " << as_yaml.error().ToString();
    EXPECT_EQ(Content(*as_yaml), Content(s)) << "seed " << seed;
  }
}

// ---- files ------------------------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "ordo-io-XXXXXX").string();
    path_ = mkdtemp(templ.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string file = (std::filesystem::path(path_) / name).string();
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ScenarioFileTest, ReadsJsonAndYamlFilesByNameAndContent) {
  TempDir dir;
  const std::string reference = Content(ParseOk(BaseScenarioJson().dump(), false));
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"a.json", BaseScenarioJson().dump()},
           {"b.yaml", BaseScenarioYaml()},
           {"c.yml", BaseScenarioYaml()},
           {"d.txt", BaseScenarioYaml()},              // not starting with { -> YAML
           {"e.scenario", BaseScenarioJson().dump()},  // starting with { -> JSON
           {"f.YAML", BaseScenarioYaml()}}) {
    auto s = ReadScenarioFile(dir.Write(name, text));
    ASSERT_TRUE(s.has_value()) << name << ": " << s.error().ToString();
    EXPECT_EQ(Content(*s), reference) << name;
  }
}

TEST(ScenarioFileTest, MissingFileAndDirectoryAreErrors) {
  TempDir dir;
  auto missing = ReadScenarioFile(dir.path() + "/nope.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto directory = ReadScenarioFile(dir.path());
  ASSERT_FALSE(directory.has_value());
  EXPECT_EQ(directory.error().code, ErrorCode::kIo);
}

TEST(ScenarioFileTest, EveryShippedScenarioReadsAndRoundTrips) {
  // ctest sets ORDO_SOURCE_DIR; run by hand, the tree is found from this file's path.
  const char* root = std::getenv("ORDO_SOURCE_DIR");
  const std::filesystem::path source =
      root != nullptr ? std::filesystem::path(root)
                      : std::filesystem::path(__FILE__).parent_path() / "../../..";
  const std::filesystem::path dir = source / "scenarios";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no scenarios/ directory at " << dir;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    if (ext != ".json" && ext != ".yaml" && ext != ".yml") continue;
    ++count;
    auto s = ReadScenarioFile(entry.path().string());
    ASSERT_TRUE(s.has_value()) << entry.path() << ": " << s.error().ToString();
    auto again = ParseScenario(WriteScenario(*s), false);
    ASSERT_TRUE(again.has_value()) << entry.path() << ": " << again.error().ToString();
    EXPECT_EQ(Content(*again), Content(*s)) << entry.path();
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace ordo::io
