#include "ordo/sim/experiment.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ordo/sim/random_world.h"
#include "tests/unit/sim/sim_test_util.h"

namespace ordo::sim {
namespace {

TEST(ParseRunSpec, NameEveryKAndPlan) {
  auto plain = ParseRunSpec("ordo", 3);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->policy, "ordo");
  EXPECT_EQ(plain->label, "ordo");
  EXPECT_EQ(plain->replan_every, 3);
  EXPECT_FALSE(plain->whole_plan);

  auto every = ParseRunSpec("fifo@4", 1);
  ASSERT_TRUE(every.has_value());
  EXPECT_EQ(every->policy, "fifo");
  EXPECT_EQ(every->replan_every, 4);

  auto whole = ParseRunSpec("reactive@plan", 1);
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(whole->whole_plan);
}

TEST(ParseRunSpec, RejectsWhatIsNotAStepCount) {
  for (const char* bad : {"ordo@", "ordo@0", "ordo@-1", "ordo@2.5", "ordo@x", "ordo@99999999"}) {
    auto spec = ParseRunSpec(bad, 1);
    ASSERT_FALSE(spec.has_value()) << bad;
    EXPECT_EQ(spec.error().field, "--policies") << bad;
    EXPECT_NE(spec.error().message.find(bad), std::string::npos) << spec.error().message;
  }
}

World SmallRandomWorld() {
  RandomWorldOptions o;
  o.days = 1;
  o.nodes = 2;
  o.horizon_steps = 12;
  o.seed = 3;
  World w = RandomWorld(o);
  w.cluster.Index();
  return w;
}

std::vector<RunSpec> Runs(std::initializer_list<const char*> items) {
  std::vector<RunSpec> runs;
  for (const char* item : items) runs.push_back(*ParseRunSpec(item, 1));
  return runs;
}

TEST(RunExperiment, OneLegalReportPerRunAndLevel) {
  const World w = SmallRandomWorld();
  const std::vector<NoiseLevel> levels = NoiseSweep(w, NoiseKind::kTraffic, {0, 0.3}, {1, 2}, 0.5);
  ASSERT_EQ(levels.size(), 4u);
  EXPECT_EQ(levels[1].index, 0u);
  EXPECT_EQ(levels[1].seed, 2u);
  EXPECT_EQ(levels[2].name, "traffic noise 0.3");
  const std::vector<RunSpec> runs = Runs({"fifo", "ordo@4"});
  ExperimentOptions o;
  o.time_limit_s = 0.05;
  auto e = RunExperiment(levels, runs, MakeInTreeRegistry(), o);
  ASSERT_TRUE(e.has_value()) << e.error().ToString();
  EXPECT_TRUE(e->problems.empty()) << e->problems.front();
  ASSERT_EQ(e->reports.size(), levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    ASSERT_EQ(e->reports[l].size(), runs.size());
    for (size_t r = 0; r < runs.size(); ++r) {
      ASSERT_TRUE(e->reports[l][r].has_value());
      EXPECT_EQ(e->reports[l][r]->run.policy, runs[r].policy);
      testing::ExpectCommittedLegal(levels[l].world, e->reports[l][r]->run,
                                    "level " + std::to_string(l));
    }
  }
  EXPECT_EQ(e->reports[3][1]->label, "ordo@4 (traffic noise 0.3, seed 2)");

  // The sweep's summary: one row per run and sweep value, kept 100% at the first value.
  const std::vector<SweepRow> rows = SummariseSweep(*e, levels, runs, 2);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].run, "fifo");
  EXPECT_EQ(rows[0].level, "traffic noise 0");
  EXPECT_DOUBLE_EQ(rows[0].kept, 1.0);
  EXPECT_DOUBLE_EQ(rows[0].min_kept, 1.0);
  const double mean_value =
      (e->reports[2][0]->metrics.total.value + e->reports[3][0]->metrics.total.value) / 2;
  EXPECT_DOUBLE_EQ(rows[1].value, mean_value);
  // Every column is the mean of the level's two runs.
  const PeriodMetrics& a = e->reports[2][1]->metrics.total;
  const PeriodMetrics& b = e->reports[3][1]->metrics.total;
  EXPECT_DOUBLE_EQ(rows[3].wait_p95_hours, (a.wait_all.p95_hours + b.wait_all.p95_hours) / 2);
  EXPECT_DOUBLE_EQ(rows[3].never_started, (a.wait_all.unstarted + b.wait_all.unstarted) / 2.0);
  EXPECT_DOUBLE_EQ(rows[3].top_class_p95_hours,
                   (a.wait_by_class[2].p95_hours + b.wait_by_class[2].p95_hours) / 2);
  EXPECT_DOUBLE_EQ(rows[3].preemptions, (a.preemptions + b.preemptions) / 2.0);
  EXPECT_DOUBLE_EQ(rows[3].lost_gpu_steps,
                   static_cast<double>(a.lost_gpu_steps + b.lost_gpu_steps) / 2);

  const auto json = nlohmann::json::parse(ExperimentJson(w, levels, *e));
  ASSERT_EQ(json["runs"].size(), 8u);
  EXPECT_EQ(json["runs"][7]["noise_seed"], 2);
  EXPECT_EQ(json["runs"][7]["days"].size(), 1u);
}

// The ramp reserve is one of ordo's planning options (by default only ordo plans with them): the
// baselines keep their own rules and are told the forecast.
TEST(RunExperiment, OnlyOrdosRunsPlanWithARampReserve) {
  std::vector<NoiseLevel> levels(1);
  levels[0].world = testing::SmallWorld(1, 4, 1, 6);
  WorldService s = testing::ChurnLimitedChat(24, 4);
  s.demand[2] = 3;  // a rise of 2 under a churn limit of 1: a reserve of 1
  levels[0].world.services.push_back(s);
  ExperimentOptions o;
  o.planning.ramp_reserve_hours = 24;
  o.lend_idle_gpus = false;  // no job: every idle GPU would be lent to the service
  auto e = RunExperiment(levels, Runs({"ordo", "reactive"}), MakeInTreeRegistry(), o);
  ASSERT_TRUE(e.has_value()) << e.error().ToString();
  EXPECT_TRUE(e->problems.empty()) << e->problems.front();
  const SimRun& ordo = e->reports[0][0]->run;
  const SimRun& reactive = e->reports[0][1]->run;
  ASSERT_TRUE(ordo.options.planning.has_value());
  EXPECT_EQ(ordo.options.planning->ramp_reserve_hours, 24);
  EXPECT_FALSE(reactive.options.planning.has_value());
  for (int t = 6; t < 24; ++t) {
    EXPECT_EQ(ordo.service_gpus[0][t].size(), 2U) << "step " << t;  // forecast 1 + reserve 1
    EXPECT_EQ(reactive.service_gpus[0][t].size(), 1U) << "step " << t;
  }
}

TEST(RunExperiment, UnknownPolicyIsAnError) {
  const World w = SmallRandomWorld();
  std::vector<NoiseLevel> levels(1);
  levels[0].world = w;
  auto e = RunExperiment(levels, Runs({"nope"}), MakeInTreeRegistry(), ExperimentOptions{});
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().code, ErrorCode::kNotFound);
}

TEST(ByBlockOfDay, SumsUtilizationAndUnmetByBlock) {
  const World w = SmallRandomWorld();
  const SimRun run = testing::MustSimulate(w, "fifo");
  const HourBlocks blocks = ByBlockOfDay(w, run, 12);
  ASSERT_EQ(blocks.utilization.size(), 12u);
  const StepSeries series = ComputeStepSeries(run);
  double busy = 0;
  for (int t = 0; t < run.steps; ++t) busy += series.batch_gpus[t] + series.served_gpus[t];
  double from_blocks = 0;
  const double cells_per_block = w.cluster.total_gpus() * (w.steps_per_day() / 12.0);
  for (double u : blocks.utilization) {
    EXPECT_GE(u, 0);
    EXPECT_LE(u, 1);
    from_blocks += u * cells_per_block;
  }
  EXPECT_NEAR(from_blocks, busy, 1e-6);
}

}  // namespace
}  // namespace ordo::sim
