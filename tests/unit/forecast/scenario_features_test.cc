// The forecaster wired into the scenario reader, as the CLI and the simulator wire it: a job with
// `features` and no `duration_steps` gets its duration from ForecastDurationSteps.
#include <gtest/gtest.h>

#include <string>

#include "ordo/forecast/duration_resolver.h"
#include "ordo/io/scenario_io.h"

namespace ordo::forecast {
namespace {

io::ReadOptions WithForecaster() {
  io::ReadOptions options;
  options.resolve_duration = [](const Job& job, std::string_view features, int step_minutes) {
    return ForecastDurationSteps(job, features, step_minutes);
  };
  return options;
}

std::string ScenarioWithJob(const std::string& job) {
  return R"({"version": 1, "name": "f", "step_minutes": 60, "horizon_steps": 24,
             "cluster": {"node_groups": [{"name": "g", "nodes": 1, "gpus_per_node": 8,
                                           "gpu_type": "H100"}]},
             "jobs": [)" +
         job + R"(], "services": []})";
}

TEST(ScenarioFeatures, AJobWithFeaturesGetsItsDurationFromTheForecaster) {
  const std::string job = R"({"id": "t", "kind": "training", "priority": 1, "arrival_step": 0,
      "gpus": 8, "features": {"method": "sft", "params_b": 7, "tokens": 5e9, "gpu_type": "H100"}})";
  auto s = io::ParseScenario(ScenarioWithJob(job), false, WithForecaster());
  ASSERT_TRUE(s.has_value()) << s.error().ToString();
  Job probe = s->jobs[0];
  auto expected = ForecastDurationSteps(probe, R"({"method": "sft", "params_b": 7, "tokens": 5e9,
                                                   "gpu_type": "H100"})",
                                        60);
  ASSERT_TRUE(expected.has_value());
  EXPECT_EQ(s->jobs[0].shapes.at(0).duration_steps, *expected);
  EXPECT_GE(s->jobs[0].shapes.at(0).duration_steps, 2);
}

TEST(ScenarioFeatures, BadFeaturesNameTheJobAndTheFeature) {
  const std::string job = R"({"id": "t", "kind": "training", "priority": 1, "arrival_step": 0,
      "gpus": 8, "features": {"method": "vibes", "params_b": 7, "tokens": 5e9}})";
  auto s = io::ParseScenario(ScenarioWithJob(job), false, WithForecaster());
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().field, "jobs[0].features.method") << s.error().ToString();
}

}  // namespace
}  // namespace ordo::forecast
