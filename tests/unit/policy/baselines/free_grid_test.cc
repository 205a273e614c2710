// FreeGrid: lowest free aligned block over a window of steps, counted from each group's first id.
#include "ordo/policy/baselines/free_grid.h"

#include <gtest/gtest.h>

#include "tests/support/builders.h"

namespace ordo::policy::baselines {
namespace {

using ordo::testing::ScenarioBuilder;

TEST(FreeGridTest, AlignsBlocksFromTheGroupsFirstId) {
  // Group 0 has GPUs 0-1; group 1 has 2-9, so its 4-GPU blocks start at 2 and 6, not at 4.
  const Scenario s = ScenarioBuilder("g").Steps(4).Group("a", 1, 2).Group("b", 1, 8).Build();
  FreeGrid grid(s.cluster, 4);
  EXPECT_EQ(grid.FindAt(4, 1, {}, 0), 2);
  grid.Occupy(2, 1, 0, 1);  // GPU 2 busy at step 0 only
  EXPECT_EQ(grid.FindAt(4, 1, {}, 0), 6);
  EXPECT_EQ(grid.FindAt(4, 1, {}, 1), 2);
  EXPECT_EQ(grid.FindAt(2, 1, {}, 0), 0);
  EXPECT_EQ(grid.FindAt(8, 1, {}, 1), 2);
  EXPECT_EQ(grid.FindAt(16, 1, {}, 1), std::nullopt);
}

TEST(FreeGridTest, ABlockMustBeFreeForTheWholeWindowInsideTheHorizon) {
  const Scenario s = ScenarioBuilder("g").Steps(5).Group("a", 2, 4).Build();
  FreeGrid grid(s.cluster, 5);
  grid.Occupy(0, 4, 2, 3);                   // GPUs 0-3 busy at step 2
  EXPECT_EQ(grid.FindAt(4, 2, {}, 0), 0);    // steps 0-1
  EXPECT_EQ(grid.FindAt(4, 3, {}, 0), 4);    // steps 0-2 collide on 0-3
  EXPECT_EQ(grid.FindAt(4, 100, {}, 3), 0);  // steps past the horizon are free
  grid.Occupy(4, 4, 0, 5);
  const auto slot = grid.FindEarliest(4, 3, {}, 0);
  ASSERT_TRUE(slot.has_value());
  EXPECT_EQ(slot->start_step, 3);
  EXPECT_EQ(slot->first_gpu, 0);
  EXPECT_FALSE(grid.FindEarliest(8, 1, {}, 0).has_value());
  EXPECT_FALSE(grid.FindEarliest(1, 1, {}, 5).has_value());  // starts only inside the horizon
}

TEST(FreeGridTest, HonoursRequirementsAndGroupOrder) {
  const Scenario s = ScenarioBuilder("g")
                         .Steps(2)
                         .Group("l4", 1, 4, "L4", 24)
                         .Group("h100", 1, 4, "H100", 80)
                         .Build();
  FreeGrid grid(s.cluster, 2);
  GpuRequirement h100;
  h100.gpu_type = "H100";
  GpuRequirement big;
  big.min_gpu_memory_gb = 40;
  GpuRequirement none;
  none.gpu_type = "TPU";
  EXPECT_EQ(grid.FindAt(2, 1, h100, 0), 4);
  EXPECT_EQ(grid.FindAt(2, 1, big, 0), 4);
  EXPECT_EQ(grid.FindAt(2, 1, {}, 0), 0);
  EXPECT_EQ(grid.FindAt(1, 1, none, 0), std::nullopt);
  grid.Occupy(0, 4, 0, 2);
  EXPECT_EQ(grid.FindAt(4, 1, {}, 1), 4);  // the lowest over all matching groups
}

TEST(FreeGridTest, BlocksOfSixtyFourAndMoreCoverWholeWords) {
  // 9 nodes of 8 = 72 GPUs: one 64-GPU block (offset 0); 16 nodes of 8 = 128: two.
  const Scenario s = ScenarioBuilder("g").Steps(2).Group("a", 9, 8).Group("b", 16, 8).Build();
  FreeGrid grid(s.cluster, 2);
  EXPECT_EQ(grid.FindAt(64, 1, {}, 0), 0);
  grid.Occupy(63, 1, 0, 1);
  EXPECT_EQ(grid.FindAt(64, 1, {}, 0), 72);
  EXPECT_EQ(grid.FindAt(128, 1, {}, 0), 72);
  grid.Occupy(72 + 127, 1, 0, 2);
  EXPECT_EQ(grid.FindAt(128, 1, {}, 0), std::nullopt);
  EXPECT_EQ(grid.FindAt(64, 1, {}, 1), 0);
  EXPECT_EQ(grid.FindAt(32, 1, {}, 0), 0);
  EXPECT_EQ(grid.FindAt(8, 1, {}, 0), 0);
  EXPECT_FALSE(grid.IsFree(63, 0));
  EXPECT_TRUE(grid.IsFree(63, 1));
}

}  // namespace
}  // namespace ordo::policy::baselines
