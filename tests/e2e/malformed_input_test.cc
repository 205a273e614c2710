// Malformed scenarios through the real binary: `ordo plan` exits 2, prints nothing on stdout and
// one line on stderr naming the file, the field and the reason. The in-process reader tests
// (tests/unit/io) cover many more kinds; this proves the CLI turns each kind into exit 2 rather
// than a crash, a hang or a silent default (issue #2: at least 30 kinds, also under ASan/UBSan).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

// Two node groups, a job of each form and a service: every field below has something to break.
constexpr const char* kBase = R"({
  "version": 1, "name": "base", "step_minutes": 60, "horizon_steps": 4,
  "cluster": {"node_groups": [
    {"name": "a", "nodes": 2, "gpus_per_node": 4, "gpu_type": "H100", "gpu_memory_gb": 80},
    {"name": "b", "nodes": 1, "gpus_per_node": 4}]},
  "objective": {"time_decay": 0.5, "unmet_penalty_multiplier": 8},
  "jobs": [
    {"id": "t", "kind": "training", "priority": 3, "arrival_step": 0, "gpus": 2, "duration_steps": 2},
    {"id": "q", "kind": "quantization", "priority": 1, "arrival_step": 1,
     "shapes": [{"gpus": 1, "duration_steps": 2}, {"gpus": 2, "duration_steps": 1}]},
    {"id": "r", "kind": "batch_inference", "priority": 2, "arrival_step": -2, "gpus": 4,
     "duration_steps": 3, "running": {"start_step": -1, "first_gpu": 4}}
  ],
  "services": [
    {"id": "s", "priority": 5, "min_gpus": 1, "max_gpus": 3, "max_change_per_step": 1,
     "current_gpus": 1, "demand": [1, 2, 2, 1]}
  ]
})";

struct Case {
  std::string name;
  std::function<std::string()> text;  // the file's bytes
  std::string field;                  // what the message must name ("" for whole-file errors)
};

Case Edit(std::string name, std::string field, std::function<void(nlohmann::json&)> edit) {
  return {std::move(name),
          [edit] {
            nlohmann::json j = nlohmann::json::parse(kBase);
            edit(j);
            return j.dump();
          },
          std::move(field)};
}

Case Raw(std::string name, std::string field, std::string text) {
  return {std::move(name), [text] { return text; }, std::move(field)};
}

std::vector<Case> Cases() {
  using J = nlohmann::json;
  std::vector<Case> c;
  c.push_back(Raw("empty file", "", ""));
  c.push_back(Raw("only spaces", "", "   \n\t "));
  c.push_back(Raw("truncated", "", std::string(kBase).substr(0, 200)));
  c.push_back(Raw("not an object", "", "[1, 2, 3]"));
  c.push_back(Raw("invalid UTF-8", "", std::string("{\"version\": 1, \"name\": \"\xff\xfe\"}")));
  c.push_back(Raw("deep nesting", "", std::string(100000, '[') + std::string(100000, ']')));
  c.push_back(Raw("NaN literal", "", R"({"version": 1, "horizon_steps": NaN})"));
  c.push_back(Edit("missing version", "version", [](J& j) { j.erase("version"); }));
  c.push_back(Edit("version 2", "version", [](J& j) { j["version"] = 2; }));
  c.push_back(Edit("unknown top-level field", "horizon", [](J& j) { j["horizon"] = 4; }));
  c.push_back(Edit("horizon as string", "horizon_steps", [](J& j) { j["horizon_steps"] = "4"; }));
  c.push_back(Edit("zero horizon", "horizon_steps", [](J& j) { j["horizon_steps"] = 0; }));
  c.push_back(Edit("huge horizon", "horizon_steps", [](J& j) { j["horizon_steps"] = 1e12; }));
  c.push_back(
      Edit("fractional step_minutes", "step_minutes", [](J& j) { j["step_minutes"] = 1.5; }));
  c.push_back(Edit("no node groups", "cluster.node_groups",
                   [](J& j) { j["cluster"]["node_groups"] = J::array(); }));
  c.push_back(Edit("gpus_per_node 3", "cluster.node_groups[0].gpus_per_node",
                   [](J& j) { j["cluster"]["node_groups"][0]["gpus_per_node"] = 3; }));
  c.push_back(Edit("negative nodes", "cluster.node_groups[1].nodes",
                   [](J& j) { j["cluster"]["node_groups"][1]["nodes"] = -1; }));
  c.push_back(Edit("huge cluster", "cluster.node_groups[0].nodes",
                   [](J& j) { j["cluster"]["node_groups"][0]["nodes"] = 4000000000LL; }));
  c.push_back(Edit("unknown group field", "cluster.node_groups[0].gpu",
                   [](J& j) { j["cluster"]["node_groups"][0]["gpu"] = "H100"; }));
  c.push_back(Edit("time_decay above 1", "objective.time_decay",
                   [](J& j) { j["objective"]["time_decay"] = 1.5; }));
  c.push_back(Edit("jobs not a list", "jobs", [](J& j) { j["jobs"] = J::object(); }));
  c.push_back(Edit("job without id", "jobs[0].id", [](J& j) { j["jobs"][0].erase("id"); }));
  c.push_back(Edit("duplicate job id", "jobs[1].id", [](J& j) { j["jobs"][1]["id"] = "t"; }));
  c.push_back(Edit("job id used by a service", "s", [](J& j) { j["jobs"][0]["id"] = "s"; }));
  c.push_back(
      Edit("unknown kind", "jobs[0].kind", [](J& j) { j["jobs"][0]["kind"] = "inference"; }));
  c.push_back(
      Edit("zero priority", "jobs[0].priority", [](J& j) { j["jobs"][0]["priority"] = 0; }));
  c.push_back(Edit("gpus 3", "jobs[0].gpus", [](J& j) { j["jobs"][0]["gpus"] = 3; }));
  c.push_back(Edit("negative duration", "jobs[0].duration_steps",
                   [](J& j) { j["jobs"][0]["duration_steps"] = -2; }));
  c.push_back(Edit("gpus and shapes both", "jobs[1]", [](J& j) { j["jobs"][1]["gpus"] = 1; }));
  c.push_back(
      Edit("empty shapes", "jobs[1].shapes", [](J& j) { j["jobs"][1]["shapes"] = J::array(); }));
  c.push_back(Edit("shape gpus 6", "jobs[1].shapes[1].gpus",
                   [](J& j) { j["jobs"][1]["shapes"][1]["gpus"] = 6; }));
  c.push_back(Edit("arrival as float", "jobs[0].arrival_step",
                   [](J& j) { j["jobs"][0]["arrival_step"] = 0.5; }));
  c.push_back(Edit("running in the future", "jobs[2].running.start_step",
                   [](J& j) { j["jobs"][2]["running"]["start_step"] = 1; }));
  c.push_back(Edit("running block unaligned", "jobs[2].running.first_gpu",
                   [](J& j) { j["jobs"][2]["running"]["first_gpu"] = 2; }));
  c.push_back(Edit("running block outside the cluster", "jobs[2].running.first_gpu",
                   [](J& j) { j["jobs"][2]["running"]["first_gpu"] = 64; }));
  c.push_back(Edit("running blocks overlap", "jobs[2].running", [](J& j) {
    j["jobs"][0]["running"] = {{"start_step", 0}, {"first_gpu", 4}};
  }));
  c.push_back(Edit("checkpoint every 0 steps", "jobs[2].checkpoint.every_steps", [](J& j) {
    j["jobs"][2]["checkpoint"] = {{"every_steps", 0}, {"restart_steps", 1}};
  }));
  c.push_back(Edit("negative restart steps", "jobs[0].checkpoint.restart_steps", [](J& j) {
    j["jobs"][0]["checkpoint"] = {{"every_steps", 1}, {"restart_steps", -1}};
  }));
  c.push_back(Edit("unknown checkpoint field", "jobs[0].checkpoint.every", [](J& j) {
    j["jobs"][0]["checkpoint"] = {{"every", 1}, {"restart_steps", 0}};
  }));
  c.push_back(Edit("progress past the duration", "jobs[2].running.progress_steps",
                   [](J& j) { j["jobs"][2]["running"]["progress_steps"] = 3; }));
  c.push_back(Edit("negative restart steps left", "jobs[2].running.restart_steps_left",
                   [](J& j) { j["jobs"][2]["running"]["restart_steps_left"] = -1; }));
  c.push_back(Edit("demand too short", "services[0].demand", [](J& j) {
    j["services"][0]["demand"] = {1, 2, 2};
  }));
  c.push_back(Edit("negative demand", "services[0].demand[2]",
                   [](J& j) { j["services"][0]["demand"][2] = -1; }));
  c.push_back(Edit("min above max", "services[0]", [](J& j) { j["services"][0]["min_gpus"] = 5; }));
  c.push_back(Edit("unknown service field", "services[0].churn",
                   [](J& j) { j["services"][0]["churn"] = 1; }));
  c.push_back(Edit("floors cannot fit", "s",
                   [](J& j) { j["services"][0]["min_gpus"] = j["services"][0]["max_gpus"] = 12; }));
  return c;
}

TEST(MalformedInputTest, EveryKindExitsTwoNamingTheFileAndTheField) {
  TempDir dir;
  const std::vector<Case> cases = Cases();
  ASSERT_GE(cases.size(), 30u);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string path = dir.File("bad-" + std::to_string(i) + ".json");
    WriteWhole(path, c.text());
    const CliResult r = RunOrdo({"plan", path, "--policy", "fifo"});
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name;
    EXPECT_EQ(r.err.rfind("ordo: " + path + ": ", 0), 0u) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.field), std::string::npos) << c.name << ": " << r.err;
    // One line: a reason, not a dump or a stack trace.
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.name << ": " << r.err;
  }
}

// The base file itself is good: each case above fails because of its one edit.
TEST(MalformedInputTest, TheUneditedFileIsValid) {
  TempDir dir;
  const std::string path = dir.File("base.json");
  WriteWhole(path, kBase);
  const CliResult r = RunOrdo({"plan", path, "--policy", "fifo"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace ordo::testing
