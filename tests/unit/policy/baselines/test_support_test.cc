// Checks of the shared test support (tests/support) that the baseline tests rely on: the builders
// fill the spec's defaults, and RandomScenario gives valid, varied, reproducible scenarios.
#include <gtest/gtest.h>

#include <set>

#include "ordo/core/validate.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo::testing {
namespace {

TEST(BuildersTest, FillsSpecDefaultsAndIndexesTheCluster) {
  const Scenario s = ScenarioBuilder("b")
                         .Steps(4)
                         .Group("a", 1, 8, "H100", 80)
                         .Group("b", 2, 4)
                         .Job(MakeJob("j").Gpus(4).Duration(2).Priority(3).Arrival(1))
                         .Job(MakeJob("r").Gpus(2).Duration(5).Running(-1, 8))
                         .Service(MakeService("s").Min(1).Churn(2).Current(2))
                         .Build();
  EXPECT_EQ(s.cluster.total_gpus(), 16);
  EXPECT_EQ(s.cluster.group_first_gpu(1), 8);
  EXPECT_EQ(s.cluster.groups[1].gpu_type, "gpu");
  ASSERT_EQ(s.jobs.size(), 2u);
  EXPECT_EQ(s.jobs[0].shapes, (std::vector<Shape>{{4, 2}}));
  EXPECT_EQ(s.jobs[0].arrival_step, 1);
  EXPECT_EQ(s.jobs[1].running->first_gpu, 8);
  EXPECT_EQ(s.jobs[1].arrival_step, -1);
  ASSERT_EQ(s.services.size(), 1u);
  EXPECT_EQ(s.services[0].max_gpus, 16);
  EXPECT_EQ(s.services[0].demand, std::vector<int>(4, 0));
  EXPECT_EQ(s.services[0].current_gpus, 2);
  EXPECT_TRUE(ValidateScenario(s).has_value());
}

TEST(RandomScenarioTest, IsValidReproducibleAndVaried) {
  std::set<int> gpus_per_node;
  int multi_group = 0, running = 0, with_shapes = 0, with_services = 0, churn = 0;
  int max_nodes = 0, min_steps = 1000, max_steps = 0, redrawn = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    const Scenario s = RandomScenario(seed);
    const auto valid = ValidateScenario(s);
    ASSERT_TRUE(valid.has_value()) << "seed " << seed << ": " << valid.error().ToString();
    int nodes = 0;
    for (const NodeGroup& g : s.cluster.groups) {
      nodes += g.nodes;
      gpus_per_node.insert(g.gpus_per_node);
    }
    ASSERT_GE(nodes, 1);
    ASSERT_LE(nodes, 64);
    ASSERT_GE(s.horizon_steps, 12);
    ASSERT_LE(s.horizon_steps, 96);
    max_nodes = std::max(max_nodes, nodes);
    min_steps = std::min(min_steps, s.horizon_steps);
    max_steps = std::max(max_steps, s.horizon_steps);
    multi_group += s.cluster.groups.size() > 1;
    for (const Job& j : s.jobs) {
      running += j.running.has_value();
      with_shapes += j.shapes.size() > 1;
    }
    with_services += !s.services.empty();
    for (const Service& sv : s.services) churn += sv.max_change_per_step.has_value();
    redrawn += !s.description.empty();
  }
  EXPECT_EQ(gpus_per_node, (std::set<int>{1, 2, 4, 8, 16}));
  EXPECT_GT(max_nodes, 40);
  EXPECT_LT(min_steps, 20);
  EXPECT_GT(max_steps, 85);
  EXPECT_GT(multi_group, 300);
  EXPECT_GT(running, 300);
  EXPECT_GT(with_shapes, 300);
  EXPECT_GT(with_services, 500);
  EXPECT_GT(churn, 200);
  // Redraws should be rare: they mean the generator itself draws invalid scenarios.
  EXPECT_LT(redrawn, 50);

  const Scenario a = RandomScenario(77);
  const Scenario b = RandomScenario(77);
  EXPECT_EQ(a.jobs.size(), b.jobs.size());
  EXPECT_EQ(a.cluster.total_gpus(), b.cluster.total_gpus());
  for (size_t i = 0; i < a.jobs.size() && i < b.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].shapes, b.jobs[i].shapes);
    EXPECT_EQ(a.jobs[i].arrival_step, b.jobs[i].arrival_step);
  }
}

TEST(RandomScenarioTest, ContendedInstancesAreSmallAndOversubscribed) {
  RandomScenarioOptions options;
  options.contended = true;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Scenario s = RandomScenario(seed, options);
    ASSERT_TRUE(ValidateScenario(s).has_value()) << "seed " << seed;
    const int g = s.cluster.total_gpus();
    ASSERT_GE(g, 8) << "seed " << seed;
    ASSERT_LE(g, 32) << "seed " << seed;
    ASSERT_GE(s.horizon_steps, 24);
    ASSERT_LE(s.horizon_steps, 48);
    double work = 0;
    for (const Job& j : s.jobs) work += double(j.shapes[0].gpus) * j.shapes[0].duration_steps;
    EXPECT_GT(work, 1.0 * g * s.horizon_steps) << "seed " << seed;
    ASSERT_FALSE(s.services.empty());
  }
}

}  // namespace
}  // namespace ordo::testing
