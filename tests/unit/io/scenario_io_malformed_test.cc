// Malformed scenarios: each case breaks one thing in an otherwise valid scenario and names the
// field path and a word the error message must carry. Some checks live in ValidateScenario (core);
// they are tested here through ParseScenario because that is what a user of a file meets.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ordo/io/scenario_io.h"
#include "tests/unit/io/io_test_util.h"

namespace ordo::io {
namespace {

using nlohmann::json;
using testing::BaseScenarioJson;

struct BadCase {
  std::string name;
  std::function<std::string()> text;
  bool yaml;
  std::string field;  // the exact path the error must name; with a trailing `*`, its prefix
  std::string word;   // a word the message must contain
};

// The base scenario with `edit` applied, as JSON text.
std::function<std::string()> Edit(std::function<void(json&)> edit) {
  return [edit] {
    json j = BaseScenarioJson();
    edit(j);
    return j.dump();
  };
}

std::function<std::string()> Text(std::string text) {
  return [text] { return text; };
}

// The base scenario with the text `from` replaced by `to` in its compact JSON (for what a json
// value cannot hold, such as a duplicate key).
std::function<std::string()> Replace(std::string from, std::string to) {
  return [from, to] {
    std::string text = BaseScenarioJson().dump();
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
  };
}

std::string Repeat(std::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

std::string DeepYamlMaps(int depth) {
  std::string text;
  for (int d = 0; d < depth; ++d) text += std::string(static_cast<size_t>(2 * d), ' ') + "a:\n";
  text += std::string(static_cast<size_t>(2 * depth), ' ') + "b: 1\n";
  return text;
}

const std::vector<BadCase>& Cases() {
  static const std::vector<BadCase> cases = {
      // ---- the document -------------------------------------------------------------------
      {"EmptyFile", Text(""), false, "", "empty"},
      {"WhitespaceOnly", Text(" \n\t\r\n "), false, "", "empty"},
      {"EmptyYaml", Text("\n\n"), true, "", "empty"},
      {"CommentOnlyYaml", Text("# nothing here\n"), true, "", "no document"},
      {"InvalidUtf8", Text("{\"version\": 1, \"name\": \"caf\xC3\x28\"}"), false, "", "UTF-8"},
      {"OverlongUtf8", Text("{\"name\": \"\xC0\xAF\"}"), false, "", "byte offset 10"},
      {"ControlCharacter", Text(std::string("{\"version\": 1\x01}")), false, "", "control"},
      {"DeepJsonNesting", Text(Repeat("[", 10'000)), false, "", "nesting"},
      {"DeepJsonObjects", Text(Repeat("{\"a\":", 10'000)), false, "", "nesting"},
      {"DeepYamlFlow", Text(Repeat("[", 10'000)), true, "", "nesting"},
      {"DeepYamlBlock", Text(DeepYamlMaps(200)), true, "", "nesting"},
      {"DeepYamlSequences", Text(Repeat("- ", 200) + "x\n"), true, "", "nesting"},
      {"TrailingGarbage", [] { return BaseScenarioJson().dump() + " }"; }, false, "",
       "parse error"},
      {"TrailingSecondObject", [] { return BaseScenarioJson().dump() + "{}"; }, false, "",
       "parse error"},
      {"TruncatedJson", [] { return BaseScenarioJson().dump().substr(0, 50); }, false, "",
       "parse error"},
      {"TopLevelArray", Text("[1, 2, 3]"), false, "", "object"},
      {"TopLevelString", Text("\"scenario\""), false, "", "object"},
      {"TopLevelYamlScalar", Text("just some words\n"), true, "", "object"},
      {"TwoYamlDocuments", Text("version: 1\n---\nversion: 1\n"), true, "", "more than one"},
      {"StrayCommaYaml", Text(",\n"), true, "", "document"},
      {"SelfContainingAlias", Text("version: &v [1, *v]\n"), true, "version[1]", "alias"},
      {"YamlSyntax", Text("version: 1\n  name: [\n"), true, "", "YAML"},
      {"DuplicateKeyJson", Replace("\"gpus\":4", "\"gpus\":4,\"gpus\":8"), false, "jobs[0].gpus",
       "duplicate"},
      {"DuplicateKeyYaml", Text("version: 1\nversion: 1\n"), true, "version", "duplicate"},
      {"YamlNan",
       Text("cluster: {node_groups: [{nodes: 1, gpus_per_node: 8}]}\n"
            "jobs:\n  - id: a\n    priority: .nan\n"),
       true, "jobs[0].priority", "finite"},
      {"YamlInfinity", Text("objective:\n  time_decay: -.inf\n"), true, "objective.time_decay",
       "finite"},
      {"YamlHugeFloat", Text("objective:\n  time_decay: 1e400\n"), true, "objective.time_decay",
       "finite"},
      {"YamlCustomTag", Text("version: !ordo 1\n"), true, "version", "tag"},
      {"YamlWrongTag", Text("version: !!int one\n"), true, "version", "!!int"},
      {"YamlBillionLaughs",
       Text("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
            "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
            "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"),
       true, "f[*", "aliases"},

      // ---- top level ----------------------------------------------------------------------
      {"Version2", Edit([](json& j) { j["version"] = 2; }), false, "version", "unsupported"},
      {"VersionMissing", Edit([](json& j) { j.erase("version"); }), false, "version", "missing"},
      {"VersionString", Edit([](json& j) { j["version"] = "1"; }), false, "version", "integer"},
      {"UnknownTopField", Edit([](json& j) { j["hroizon_steps"] = 4; }), false, "hroizon_steps",
       "horizon_steps"},
      {"NameNotString", Edit([](json& j) { j["name"] = 7; }), false, "name", "string"},
      {"StepMinutesZero", Edit([](json& j) { j["step_minutes"] = 0; }), false, "step_minutes",
       "from 1"},
      {"StepMinutesMissing", Edit([](json& j) { j.erase("step_minutes"); }), false, "step_minutes",
       "missing"},
      {"HorizonZero", Edit([](json& j) { j["horizon_steps"] = 0; }), false, "horizon_steps",
       "from 1"},
      {"HorizonAboveLimit", Edit([](json& j) { j["horizon_steps"] = 10'081; }), false,
       "horizon_steps", "10080"},
      {"GpuStepsAboveLimit", Edit([](json& j) {
         j["horizon_steps"] = 10'080;
         j["cluster"]["node_groups"][0]["nodes"] = 16'384;  // 131k GPUs x 10080 steps
         j.erase("services");
       }),
       false, "horizon_steps", "limit"},
      {"GpusAboveLimit", Edit([](json& j) { j["cluster"]["node_groups"][1]["nodes"] = 1'000'000; }),
       false, "cluster.node_groups[1].nodes", "more than"},

      // ---- cluster ------------------------------------------------------------------------
      {"ClusterMissing", Edit([](json& j) { j.erase("cluster"); }), false, "cluster", "missing"},
      {"NodeGroupsEmpty", Edit([](json& j) { j["cluster"]["node_groups"] = json::array(); }), false,
       "cluster.node_groups", "at least one"},
      {"NodeGroupsNotList", Edit([](json& j) { j["cluster"]["node_groups"] = json::object(); }),
       false, "cluster.node_groups", "list"},
      {"GpusPerNodeNotPowerOfTwo",
       Edit([](json& j) { j["cluster"]["node_groups"][0]["gpus_per_node"] = 6; }), false,
       "cluster.node_groups[0].gpus_per_node", "power of two"},
      {"GpusPerNodeTooLarge",
       Edit([](json& j) { j["cluster"]["node_groups"][0]["gpus_per_node"] = 32; }), false,
       "cluster.node_groups[0].gpus_per_node", "16"},
      {"NodesZero", Edit([](json& j) { j["cluster"]["node_groups"][1]["nodes"] = 0; }), false,
       "cluster.node_groups[1].nodes", "from 1"},
      {"GpuMemoryZero", Edit([](json& j) { j["cluster"]["node_groups"][1]["gpu_memory_gb"] = 0; }),
       false, "cluster.node_groups[1].gpu_memory_gb", "> 0"},
      {"UnknownNodeGroupField",
       Edit([](json& j) { j["cluster"]["node_groups"][0]["memory"] = 80; }), false,
       "cluster.node_groups[0].memory", "unknown"},
      {"UnknownClusterField", Edit([](json& j) { j["cluster"]["nodes"] = 3; }), false,
       "cluster.nodes", "unknown"},

      // ---- objective ----------------------------------------------------------------------
      {"TimeDecayAboveOne", Edit([](json& j) { j["objective"]["time_decay"] = 1.5; }), false,
       "objective.time_decay", "<= 1"},
      {"TimeDecayNegative", Edit([](json& j) { j["objective"]["time_decay"] = -0.1; }), false,
       "objective.time_decay", ">= 0"},
      {"UnmetMultiplierNegative",
       Edit([](json& j) { j["objective"]["unmet_penalty_multiplier"] = -1; }), false,
       "objective.unmet_penalty_multiplier", ">= 0"},
      {"UnknownObjectiveField", Edit([](json& j) { j["objective"]["alpha"] = 0.5; }), false,
       "objective.alpha", "unknown"},

      // ---- jobs ---------------------------------------------------------------------------
      {"JobsNotList", Edit([](json& j) { j["jobs"] = json::object(); }), false, "jobs", "list"},
      {"JobNotObject", Edit([](json& j) { j["jobs"][0] = "train-a"; }), false, "jobs[0]", "object"},
      {"JobIdMissing", Edit([](json& j) { j["jobs"][0].erase("id"); }), false, "jobs[0].id",
       "missing"},
      {"JobIdEmpty", Edit([](json& j) { j["jobs"][0]["id"] = ""; }), false, "jobs[0].id", "empty"},
      {"JobIdTooLong", Edit([](json& j) { j["jobs"][0]["id"] = std::string(300, 'x'); }), false,
       "jobs[0].id", "too long"},
      {"DuplicateJobIds", Edit([](json& j) { j["jobs"][1]["id"] = "train-a"; }), false,
       "jobs[1].id", "train-a"},
      {"DuplicateJobAndServiceIds", Edit([](json& j) { j["services"][0]["id"] = "quant-b"; }),
       false, "services[0].id", "quant-b"},
      {"UnknownKind", Edit([](json& j) { j["jobs"][0]["kind"] = "finetune"; }), false,
       "jobs[0].kind", "unknown kind"},
      {"KindMissing", Edit([](json& j) { j["jobs"][0].erase("kind"); }), false, "jobs[0].kind",
       "missing"},
      {"PriorityZero", Edit([](json& j) { j["jobs"][0]["priority"] = 0; }), false,
       "jobs[0].priority", "> 0"},
      {"PriorityNegative", Edit([](json& j) { j["jobs"][2]["priority"] = -3; }), false,
       "jobs[2].priority", "> 0"},
      {"PriorityHuge", Edit([](json& j) { j["jobs"][0]["priority"] = 1e30; }), false,
       "jobs[0].priority", "1000000000"},
      {"PriorityString", Edit([](json& j) { j["jobs"][0]["priority"] = "high"; }), false,
       "jobs[0].priority", "number"},
      {"ArrivalFractional", Edit([](json& j) { j["jobs"][0]["arrival_step"] = 0.5; }), false,
       "jobs[0].arrival_step", "integer"},
      {"Arrival2To63", Replace("\"arrival_step\":0", "\"arrival_step\":9223372036854775808"), false,
       "jobs[0].arrival_step", "9223372036854775808"},
      {"ArrivalMinus2To63", Replace("\"arrival_step\":0", "\"arrival_step\":-9223372036854775808"),
       false, "jobs[0].arrival_step", "from -1000000"},
      {"GpusNotPowerOfTwo", Edit([](json& j) { j["jobs"][0]["gpus"] = 3; }), false, "jobs[0].gpus",
       "power of two"},
      {"GpusString", Edit([](json& j) { j["jobs"][0]["gpus"] = "4"; }), false, "jobs[0].gpus",
       "integer"},
      {"GpusFractional", Edit([](json& j) { j["jobs"][0]["gpus"] = 4.5; }), false, "jobs[0].gpus",
       "integer"},
      {"GpusBoolean", Edit([](json& j) { j["jobs"][0]["gpus"] = true; }), false, "jobs[0].gpus",
       "integer"},
      {"GpusNull", Edit([](json& j) { j["jobs"][0]["gpus"] = nullptr; }), false, "jobs[0].gpus",
       "null"},
      {"GpusZero", Edit([](json& j) { j["jobs"][0]["gpus"] = 0; }), false, "jobs[0].gpus",
       "from 1"},
      {"DurationZero", Edit([](json& j) { j["jobs"][0]["duration_steps"] = 0; }), false,
       "jobs[0].duration_steps", "from 1"},
      {"DurationNegative", Edit([](json& j) { j["jobs"][0]["duration_steps"] = -4; }), false,
       "jobs[0].duration_steps", "from 1"},
      {"DurationHuge", Edit([](json& j) { j["jobs"][0]["duration_steps"] = 1e30; }), false,
       "jobs[0].duration_steps", "1e+30"},
      {"ShapeDurationZero", Edit([](json& j) { j["jobs"][1]["shapes"][1]["duration_steps"] = 0; }),
       false, "jobs[1].shapes[1].duration_steps", "from 1"},
      {"ShapeGpusNotPowerOfTwo", Edit([](json& j) { j["jobs"][1]["shapes"][0]["gpus"] = 12; }),
       false, "jobs[1].shapes[0].gpus", "power of two"},
      {"UnknownShapeField", Edit([](json& j) { j["jobs"][1]["shapes"][0]["gpu_count"] = 1; }),
       false, "jobs[1].shapes[0].gpu_count", "unknown"},
      {"ShapesEmpty", Edit([](json& j) { j["jobs"][1]["shapes"] = json::array(); }), false,
       "jobs[1].shapes", "at least one"},
      {"TooManyShapes", Edit([](json& j) {
         j["jobs"][1]["shapes"] = json::array();
         for (int k = 0; k < 17; ++k)
           j["jobs"][1]["shapes"].push_back({{"gpus", 1}, {"duration_steps", 1}});
       }),
       false, "jobs[1].shapes", "too many"},
      {"GpusAndShapes", Edit([](json& j) { j["jobs"][1]["gpus"] = 2; }), false, "jobs[1].shapes",
       "not both"},
      {"DurationAndShapes", Edit([](json& j) { j["jobs"][1]["duration_steps"] = 2; }), false,
       "jobs[1].shapes", "not both"},
      {"NeitherGpusNorShapes", Edit([](json& j) {
         j["jobs"][0].erase("gpus");
         j["jobs"][0].erase("duration_steps");
       }),
       false, "jobs[0].gpus", "shapes"},
      {"DurationMissingNoResolver", Edit([](json& j) { j["jobs"][0].erase("duration_steps"); }),
       false, "jobs[0].duration_steps", "forecaster"},
      {"ShapeDurationMissingNoResolver",
       Edit([](json& j) { j["jobs"][1]["shapes"][1].erase("duration_steps"); }), false,
       "jobs[1].shapes[1].duration_steps", "missing"},
      {"UnknownJobField", Edit([](json& j) { j["jobs"][0]["gpu"] = 4; }), false, "jobs[0].gpu",
       "unknown"},
      {"FeaturesNotObject", Edit([](json& j) { j["jobs"][0]["features"] = json::array({1}); }),
       false, "jobs[0].features", "object"},
      {"MinMemoryNegative", Edit([](json& j) { j["jobs"][1]["min_gpu_memory_gb"] = -1; }), false,
       "jobs[1].min_gpu_memory_gb", ">= 0"},
      {"GpuTypeEmpty", Edit([](json& j) { j["jobs"][1]["gpu_type"] = ""; }), false,
       "jobs[1].gpu_type", "empty"},

      // ---- running jobs -------------------------------------------------------------------
      {"RunningStartPositive", Edit([](json& j) { j["jobs"][2]["running"]["start_step"] = 2; }),
       false, "jobs[2].running.start_step", "<= 0"},
      {"RunningUnaligned", Edit([](json& j) { j["jobs"][2]["running"]["first_gpu"] = 4; }), false,
       "jobs[2].running.first_gpu", "aligned"},
      {"RunningAcrossGroups", Edit([](json& j) { j["jobs"][2]["running"]["first_gpu"] = 16; }),
       false, "jobs[2].running.first_gpu", "aligned"},
      {"RunningOutsideCluster", Edit([](json& j) { j["jobs"][2]["running"]["first_gpu"] = 4096; }),
       false, "jobs[2].running.first_gpu", "aligned"},
      {"RunningOverlap", Edit([](json& j) {
         j["jobs"].push_back({{"id", "train-d"},
                              {"kind", "training"},
                              {"priority", 1},
                              {"arrival_step", -1},
                              {"gpus", 4},
                              {"duration_steps", 3},
                              {"running", {{"start_step", -1}, {"first_gpu", 4}}}});
       }),
       false, "jobs[3].running.first_gpu", "overlaps"},
      {"RunningWithTwoShapes", Edit([](json& j) {
         j["jobs"][1]["running"] = {{"start_step", 0}, {"first_gpu", 16}};
       }),
       false, "jobs[1].running", "single shape"},
      {"RunningGpuTypeMatchesNoGroup", Edit([](json& j) { j["jobs"][2]["gpu_type"] = "TPU"; }),
       false, "jobs[2].running.first_gpu", "gpu_type"},
      {"RunningMissingFirstGpu", Edit([](json& j) { j["jobs"][2]["running"].erase("first_gpu"); }),
       false, "jobs[2].running.first_gpu", "missing"},
      {"UnknownRunningField", Edit([](json& j) { j["jobs"][2]["running"]["gpu"] = 0; }), false,
       "jobs[2].running.gpu", "unknown"},

      // ---- preemption: checkpoint, progress, restart steps left ----------------------------
      {"CheckpointEveryZero", Edit([](json& j) {
         j["jobs"][2]["checkpoint"] = {{"every_steps", 0}, {"restart_steps", 1}};
       }),
       false, "jobs[2].checkpoint.every_steps", "from 1"},
      {"CheckpointEveryFractional", Edit([](json& j) {
         j["jobs"][0]["checkpoint"] = {{"every_steps", 1.5}, {"restart_steps", 1}};
       }),
       false, "jobs[0].checkpoint.every_steps", "integer"},
      {"CheckpointEveryMissing", Edit([](json& j) {
         j["jobs"][0]["checkpoint"] = {{"restart_steps", 1}};
       }),
       false, "jobs[0].checkpoint.every_steps", "missing"},
      {"CheckpointRestartNegative", Edit([](json& j) {
         j["jobs"][1]["checkpoint"] = {{"every_steps", 2}, {"restart_steps", -1}};
       }),
       false, "jobs[1].checkpoint.restart_steps", "from 0"},
      {"CheckpointRestartMissing", Edit([](json& j) {
         j["jobs"][1]["checkpoint"] = {{"every_steps", 2}};
       }),
       false, "jobs[1].checkpoint.restart_steps", "missing"},
      {"CheckpointUnknownField", Edit([](json& j) {
         j["jobs"][0]["checkpoint"] = {{"every_steps", 2}, {"restart_steps", 1}, {"every", 3}};
       }),
       false, "jobs[0].checkpoint.every", "unknown"},
      {"CheckpointNotObject", Edit([](json& j) { j["jobs"][0]["checkpoint"] = 3; }), false,
       "jobs[0].checkpoint", "object"},
      {"ProgressAtTheDuration",
       Edit([](json& j) { j["jobs"][2]["running"]["progress_steps"] = 10; }), false,
       "jobs[2].running.progress_steps", "duration_steps - 1 = 9"},
      {"ProgressNegative", Edit([](json& j) { j["jobs"][2]["running"]["progress_steps"] = -1; }),
       false, "jobs[2].running.progress_steps", "from 0"},
      {"ProgressString", Edit([](json& j) { j["jobs"][2]["running"]["progress_steps"] = "3"; }),
       false, "jobs[2].running.progress_steps", "integer"},
      {"RestartLeftNegative",
       Edit([](json& j) { j["jobs"][2]["running"]["restart_steps_left"] = -2; }), false,
       "jobs[2].running.restart_steps_left", "from 0"},
      // ---- services -----------------------------------------------------------------------
      {"DemandTooShort", Edit([](json& j) {
         j["services"][0]["demand"] = {1, 2, 3};
       }),
       false, "services[0].demand", "entries"},
      {"DemandTooLong", Edit([](json& j) {
         j["services"][0]["demand"] = {1, 2, 3, 4, 5};
       }),
       false, "services[0].demand", "got 5"},
      {"DemandNegative", Edit([](json& j) { j["services"][0]["demand"][2] = -1; }), false,
       "services[0].demand[2]", "from 0"},
      {"DemandFractional", Edit([](json& j) { j["services"][0]["demand"][1] = 2.5; }), false,
       "services[0].demand[1]", "integer"},
      {"DemandNotList", Edit([](json& j) { j["services"][0]["demand"] = 3; }), false,
       "services[0].demand", "list"},
      {"DemandMissing", Edit([](json& j) { j["services"][0].erase("demand"); }), false,
       "services[0].demand", "missing"},
      {"MinAboveMax", Edit([](json& j) { j["services"][0]["min_gpus"] = 9; }), false,
       "services[0].max_gpus", "min_gpus"},
      {"MinAboveClusterSize", Edit([](json& j) {
         j["services"][0].erase("max_gpus");
         j["services"][0]["min_gpus"] = 100;
       }),
       false, "services[0].min_gpus", "cluster"},
      {"ServicePriorityZero", Edit([](json& j) { j["services"][0]["priority"] = 0; }), false,
       "services[0].priority", "> 0"},
      {"ChurnNegative", Edit([](json& j) { j["services"][0]["max_change_per_step"] = -1; }), false,
       "services[0].max_change_per_step", "from 0"},
      {"CurrentGpusNegative", Edit([](json& j) { j["services"][0]["current_gpus"] = -2; }), false,
       "services[0].current_gpus", "from 0"},
      {"UnknownServiceField", Edit([](json& j) { j["services"][0]["replicas"] = 2; }), false,
       "services[0].replicas", "unknown"},
      {"FloorsDoNotFit", Edit([](json& j) {
         j["services"][0]["min_gpus"] = 8;
         j["services"][0]["gpu_type"] = "A10";  // 4 A10 GPUs in all
         j["services"][0].erase("current_gpus");
       }),
       false, "services[0].min_gpus", "minimum"},
      {"ChurnCannotReachMin", Edit([](json& j) { j["services"][0]["min_gpus"] = 8; }), false,
       "services[0].current_gpus", "cannot get"},
  };
  return cases;
}

class MalformedScenarioTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(MalformedScenarioTest, NamesFieldAndReason) {
  const BadCase& c = GetParam();
  const std::string text = c.text();
  auto scenario = ParseScenario(text, c.yaml);
  ASSERT_FALSE(scenario.has_value()) << "accepted: " << text.substr(0, 300);
  if (!c.field.empty() && c.field.back() == '*') {
    const std::string prefix = c.field.substr(0, c.field.size() - 1);
    EXPECT_EQ(scenario.error().field.substr(0, prefix.size()), prefix)
        << scenario.error().ToString();
  } else {
    EXPECT_EQ(scenario.error().field, c.field) << scenario.error().ToString();
  }
  EXPECT_NE(scenario.error().message.find(c.word), std::string::npos)
      << "message lacks \"" << c.word << "\": " << scenario.error().ToString();
  EXPECT_NE(scenario.error().code, ErrorCode::kInternal) << scenario.error().ToString();
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedScenarioTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

TEST(MalformedScenarioTest, CoversEnoughKinds) { EXPECT_GE(Cases().size(), 35u); }

}  // namespace
}  // namespace ordo::io
