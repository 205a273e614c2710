#include "ordo/adapters/slurm/slurm_config.h"

#include <gtest/gtest.h>

namespace ordo::slurm {
namespace {

TEST(SlurmConfig, ParsesYamlAndJson) {
  auto c = ParseSlurmConfig(R"(
step_minutes: 30
horizon_steps: 48
partition: gpu
objective: {time_decay: 0.25}
retry: {attempts: 3, initial_backoff_s: 0.1}
services:
  - id: chat
    priority: 10
    min_gpus: 1
    max_change_per_step: 2
    demand: [1, 2, 3]
    demand_start: 3600
)",
                            true);
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->step_minutes, 30);
  EXPECT_EQ(c->horizon_steps, 48);
  EXPECT_EQ(c->partition, "gpu");
  EXPECT_DOUBLE_EQ(c->objective.time_decay, 0.25);
  EXPECT_DOUBLE_EQ(c->objective.unmet_penalty_multiplier, 8);
  EXPECT_EQ(c->retry.attempts, 3);
  ASSERT_EQ(c->services.size(), 1u);
  EXPECT_EQ(c->services[0].service.max_gpus, -1);
  EXPECT_EQ(c->services[0].service.max_change_per_step, 2);
  EXPECT_EQ(c->services[0].demand_start, 3600);
  auto defaults = ParseSlurmConfig("{}", false);
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->step_minutes, 60);
  EXPECT_TRUE(defaults->services.empty());
}

TEST(SlurmConfig, TenantsAndPlanningAreReadAsTheServiceReadsThem) {
  auto c = ParseSlurmConfig(R"(
tenants:
  - {account: vision, share: "50%"}
  - {account: speech, share: 4}
  - {account: misc}
planning:
  aging: {rate_per_hour: 0.5, cap: 3}
  wait_bound_hours: 48
)",
                            true);
  ASSERT_TRUE(c) << c.error().ToString();
  ASSERT_EQ(c->tenants.size(), 3u);
  EXPECT_EQ(c->tenants[0].account, "vision");
  EXPECT_DOUBLE_EQ(c->tenants[0].share.Fraction(16), 0.5);
  EXPECT_DOUBLE_EQ(c->tenants[1].share.Fraction(16), 0.25);
  EXPECT_DOUBLE_EQ(c->tenants[2].share.Fraction(16), 0);
  EXPECT_DOUBLE_EQ(c->planning.aging.rate_per_hour, 0.5);
  EXPECT_DOUBLE_EQ(c->planning.aging.cap, 3);
  EXPECT_DOUBLE_EQ(c->planning.wait_bound_hours, 48);
  // Absent fields keep the online planners' defaults, the service's too.
  const priority::PlanningOptions online = priority::OnlinePlanningOptions();
  EXPECT_DOUBLE_EQ(c->planning.fair_share.half_life_hours, online.fair_share.half_life_hours);
  EXPECT_DOUBLE_EQ(c->planning.size_exponent, 0);
  auto defaults = ParseSlurmConfig("{}", false);
  ASSERT_TRUE(defaults);
  EXPECT_TRUE(defaults->tenants.empty());
  EXPECT_DOUBLE_EQ(defaults->planning.aging.rate_per_hour, online.aging.rate_per_hour);
}

TEST(SlurmConfig, ErrorsNameTheField) {
  struct Case {
    const char* text;
    const char* field;
  };
  const Case cases[] = {
      {R"({"step_minute": 5})", "step_minute"},
      {R"({"step_minutes": 0})", "step_minutes"},
      {R"({"horizon_steps": "24"})", "horizon_steps"},
      {R"({"objective": {"time_decay": 2}})", "objective.time_decay"},
      {R"({"services": [{"priority": 1, "demand": [1]}]})", "services[0].id"},
      {R"({"services": [{"id": "a b", "priority": 1, "demand": [1]}]})", "services[0].id"},
      {R"({"services": [{"id": "a", "demand": [1]}]})", "services[0].priority"},
      {R"({"services": [{"id": "a", "priority": 1}]})", "services[0].demand"},
      {R"({"services": [{"id": "a", "priority": 1, "demand": [1, -2]}]})", "services[0].demand[1]"},
      {R"({"services": [{"id": "a", "priority": 1, "demand": [1], "colour": 1}]})",
       "services[0].colour"},
      {R"({"services": [{"id": "a", "priority": 1, "demand": [1]}, {"id": "a", "priority": 1, "demand": [1]}]})",
       "services[1].id"},
      {R"({"services": [{"id": "a", "priority": 1, "demand": [1], "min_gpus": 4, "max_gpus": 2}]})",
       "services[0].min_gpus"},
      {R"({"tenants": {"account": "a"}})", "tenants"},
      {R"({"tenants": [{"share": 4}]})", "tenants[0].account"},
      {R"({"tenants": [{"account": "a", "share": -1}]})", "tenants[0].share"},
      {R"({"tenants": [{"account": "a", "share": "120%"}]})", "tenants[0].share"},
      {R"({"tenants": [{"account": "a", "share": "60%"}, {"account": "b", "share": "50%"}]})",
       "tenants[1].share"},
      {R"({"tenants": [{"account": "a"}, {"account": "a"}]})", "tenants[1].account"},
      {R"({"tenants": [{"account": "a", "quota": 1}]})", "tenants[0].quota"},
      {R"({"planning": {"aging": {"cap": 0.5}}})", "planning.aging.cap"},
      {R"({"planning": {"ramp_reserve_hours": 24}})", "planning.ramp_reserve_hours"},
      {R"({"planning": {"fair_share": {"half_life_hours": 0}}})",
       "planning.fair_share.half_life_hours"},
      {R"({"planning": {"aging": {"rate": 1}}})", "planning.aging.rate"},
  };
  for (const Case& c : cases) {
    auto r = ParseSlurmConfig(c.text, false);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().field, c.field) << c.text << " -> " << r.error().ToString();
  }
  EXPECT_TRUE(ParseSlurmConfig(R"({"x-note": "ignored"})", false));
}

TEST(SlurmConfig, SilenceDefaultsToTwoCyclesAndMustOutlastOne) {
  auto c = ParseSlurmConfig(R"({"silence_s": 90})", false);
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->silence_s, 90);
  EXPECT_EQ(SilenceSeconds(*c), 90);
  for (const char* bad : {R"({"silence_s": 0})", R"({"silence_s": -5})", R"({"silence_s": "10m"})",
                          R"({"silence_s": 1e9})"}) {
    auto r = ParseSlurmConfig(bad, false);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().field, "silence_s") << bad;
  }
  struct Case {
    std::optional<double> silence_s;
    std::optional<double> every_s;
    int step_minutes;
    double expected;  // -1: an error
  };
  const Case cases[] = {
      {std::nullopt, 1800, 60, 3600},          // twice --every
      {std::nullopt, 60, 60, 600},             // at least 10 minutes
      {std::nullopt, std::nullopt, 60, 7200},  // --once: twice the step
      {std::nullopt, std::nullopt, 1, 600},
      {25, std::nullopt, 60, 25},  // as given: ordo cannot know a cron period
      {900, 600, 60, 900},
      {600, 600, 60, -1},         // not longer than a cycle
      {5, std::nullopt, 60, -1},  // below the floor
  };
  for (const Case& k : cases) {
    SlurmConfig config;
    config.step_minutes = k.step_minutes;
    config.silence_s = k.silence_s;
    auto r = ResolveSilence(config, k.every_s, "--silence");
    if (k.expected < 0) {
      ASSERT_FALSE(r) << k.silence_s.value_or(-1);
      EXPECT_EQ(r.error().field, "--silence");
    } else {
      ASSERT_TRUE(r) << r.error().ToString();
      EXPECT_EQ(config.silence_s, k.expected);
    }
  }
}

}  // namespace
}  // namespace ordo::slurm
