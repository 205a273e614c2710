#include "ordo/policy/fast/block_grid.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo::policy {
namespace {

using testing::Rng;
using testing::ScenarioBuilder;

// A brute-force model of the same grid: busy[t][gpu] and per-group slack.
struct Model {
  const Cluster* cluster;
  int horizon;
  std::vector<std::vector<bool>> busy;
  std::vector<std::vector<int>> slack;

  bool Free(int first, int gpus, int start, int duration) const {
    const int group = cluster->group_of(first);
    for (int t = start; t < std::min(horizon, start + duration); ++t) {
      if (slack[group][t] < gpus) return false;
      for (int g = first; g < first + gpus; ++g) {
        if (busy[t][g]) return false;
      }
    }
    return true;
  }
  int EarliestAny(int gpus, int duration, const GpuRequirement& req, int from) const {
    int best = -1;
    cluster->ForEachBlock(gpus, req, [&](int first) {
      for (int s = from; s < horizon; ++s) {
        if (Free(first, gpus, s, duration)) {
          if (best < 0 || s < best) best = s;
          break;
        }
      }
    });
    return best;
  }
};

TEST(BlockGridTest, EmptyGridGivesTheLowestBlockAtTheEarliestStep) {
  const Scenario s = ScenarioBuilder("g").Steps(8).Group("a", 2, 8).Build();
  BlockGrid grid(s.cluster, 8);
  const auto found = grid.FindEarliest(4, 3, {}, 2);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->first_gpu, 0);
  EXPECT_EQ(found->start_step, 2);
}

TEST(BlockGridTest, BestFitKeepsTheWholeNodeFree) {
  // Node 0 has GPUs 0-3 busy; a 4-GPU job should take 4-7, not split node 1.
  const Scenario s = ScenarioBuilder("g").Steps(8).Group("a", 2, 8).Build();
  BlockGrid grid(s.cluster, 8);
  grid.Occupy(0, 4, 0, 8);
  const auto found = grid.FindEarliest(4, 8, {}, 0);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->first_gpu, 4);
  // And a 2-GPU job goes into the half-used node too, next to the busy half.
  grid.Occupy(4, 2, 0, 8);
  const auto two = grid.FindEarliest(2, 8, {}, 0);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->first_gpu, 6);
}

TEST(BlockGridTest, StepsPastTheHorizonAreFree) {
  const Scenario s = ScenarioBuilder("g").Steps(4).Group("a", 1, 2).Build();
  BlockGrid grid(s.cluster, 4);
  grid.Occupy(0, 2, 0, 2);
  const auto found = grid.FindEarliest(2, 100, {}, 0);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->start_step, 2);
}

TEST(BlockGridTest, ServiceSlackBlocksOtherwiseFreeBlocks) {
  const Scenario s = ScenarioBuilder("g").Steps(4).Group("a", 1, 8).Build();
  BlockGrid grid(s.cluster, 4);
  grid.Reserve(0, 0, 6);
  grid.Reserve(0, 1, 5);
  // 4 GPUs fit only from step 1 (slack 3 at step 1 is still too little), i.e. from step 2.
  const auto found = grid.FindEarliest(4, 1, {}, 0);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->start_step, 2);
  EXPECT_EQ(grid.FindEarliest(2, 1, {}, 0)->start_step, 0);
}

TEST(BlockGridTest, ReservationAnywhereBindsTheClusterNotAGroup) {
  // Two 4-GPU groups, 4 GPUs reserved anywhere at steps 0-1: one 4-GPU block fits there (in
  // either group), a second only from step 2; a job in one group then leaves the other group's
  // GPUs to the reservation.
  const Scenario s = ScenarioBuilder("g").Steps(4).Group("a", 1, 4).Group("b", 1, 4).Build();
  BlockGrid grid(s.cluster, 4);
  grid.ReserveAnywhere(0, 4);
  grid.ReserveAnywhere(1, 4);
  const auto first = grid.FindEarliest(4, 2, {}, 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->start_step, 0);
  grid.Occupy(first->first_gpu, 4, 0, 2);
  const auto second = grid.FindEarliest(4, 1, {}, 0);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->start_step, 2);
  EXPECT_FALSE(grid.IsFree(4 - first->first_gpu, 4, 1, 1));
  EXPECT_TRUE(grid.IsFree(4 - first->first_gpu, 4, 2, 1));
  EXPECT_EQ(grid.FindEarliest(1, 1, {}, 0)->start_step, 2);
}

TEST(BlockGridTest, NonPowerOfTwoGroupNeverOffersPaddedBlocks) {
  const Scenario s = ScenarioBuilder("g").Steps(4).Group("a", 3, 4).Build();  // 12 GPUs
  BlockGrid grid(s.cluster, 4);
  const auto eight = grid.FindEarliest(8, 1, {}, 0);
  ASSERT_TRUE(eight);
  EXPECT_EQ(eight->first_gpu, 0);
  grid.Occupy(0, 8, 0, 4);
  EXPECT_FALSE(grid.FindEarliest(8, 1, {}, 0));  // [8, 16) would cross into padding
  EXPECT_EQ(grid.FindEarliest(4, 1, {}, 0)->first_gpu, 8);
}

TEST(BlockGridTest, TypeRequirementSelectsTheGroup) {
  const Scenario s = ScenarioBuilder("g")
                         .Steps(4)
                         .Group("a", 1, 8, "A100", 40)
                         .Group("h", 1, 8, "H100", 80)
                         .Build();
  BlockGrid grid(s.cluster, 4);
  GpuRequirement req;
  req.gpu_type = "H100";
  EXPECT_EQ(grid.FindEarliest(8, 1, req, 0)->first_gpu, 8);
  GpuRequirement memory;
  memory.min_gpu_memory_gb = 60;
  EXPECT_EQ(grid.FindEarliest(2, 1, memory, 0)->first_gpu, 8);
}

// A search that found no start remembers it (on clusters of 256 GPUs and more); a release makes
// those starts free again, and the next search must see them.
TEST(BlockGridTest, AReleaseMakesRememberedInfeasibleStartsFreeAgain) {
  const Scenario big = ScenarioBuilder("memo").Steps(4).Group("a", 32, 8, "A", 80).Build();
  BlockGrid full(big.cluster, 4);
  full.Occupy(0, 256, 0, 4);
  EXPECT_FALSE(full.FindEarliest(8, 4, {}, 0).has_value());
  EXPECT_FALSE(full.FindEarliest(8, 4, {}, 0).has_value());  // now from the memo
  full.Release(0, 256, 0, 4);
  const auto found = full.FindEarliest(8, 4, {}, 0);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->start_step, 0);
  EXPECT_EQ(full.slack(0, 2), 256);

  const Scenario s = ScenarioBuilder("release").Steps(4).Group("a", 1, 8, "A", 80).Build();
  BlockGrid grid(s.cluster, 4);
  // A part of a block released alone: the other half stays busy.
  grid.Occupy(0, 4, 0, 4);
  grid.Occupy(4, 4, 0, 4);
  grid.Release(4, 4, 0, 4);
  EXPECT_FALSE(grid.IsFree(0, 8, 0, 1));
  EXPECT_TRUE(grid.IsFree(4, 4, 0, 4));
  EXPECT_EQ(grid.FindEarliest(4, 4, {}, 0)->first_gpu, 4);
}

// Against brute force on random clusters and random occupations: the earliest start is exact and
// the chosen block is free then.
// Random grids, random searches (each found block then occupied, or a GPU reserved), every
// answer checked against the brute-force model. `large`: clusters of 256-384 GPUs, where
// FindEarliest keeps its memo of infeasible starts, and searches drawn from few shapes so the
// memo is consulted often. `releases`: a quarter of the operations release a block occupied
// before instead (the memo must forget what a release makes feasible again).
void ExpectBruteForceAnswers(uint64_t seed, bool large, bool releases = false) {
  Rng rng(seed);
  ScenarioBuilder b("random");
  const int horizon = large ? rng.Uniform(4, 40) : rng.Uniform(1, 130);
  b.Steps(horizon);
  const int groups = large ? rng.Uniform(1, 2) : rng.Uniform(1, 3);
  for (int g = 0; g < groups; ++g) {
    const int nodes = large ? 48 / groups : rng.Uniform(1, 5);
    const int gpus_per_node = large ? 8 : 1 << rng.Uniform(0, 3);
    b.Group("g" + std::to_string(g), nodes, gpus_per_node, g % 2 ? "B" : "A", 80);
  }
  const int ops = large ? 400 : 40;
  {
    const Scenario s = b.Build();
    BlockGrid grid(s.cluster, horizon);
    Model model{&s.cluster,
                horizon,
                std::vector<std::vector<bool>>(horizon, std::vector<bool>(s.cluster.total_gpus())),
                {}};
    for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
      model.slack.emplace_back(horizon, s.cluster.group_gpus(static_cast<int>(g)));
    }
    struct Held {
      int first_gpu, gpus, from, to;
    };
    std::vector<Held> held;
    auto mark = [&](const Held& h, bool busy) {
      for (int t = h.from; t < std::min(horizon, h.to); ++t) {
        model.slack[s.cluster.group_of(h.first_gpu)][t] += busy ? -h.gpus : h.gpus;
        for (int g = h.first_gpu; g < h.first_gpu + h.gpus; ++g) model.busy[t][g] = busy;
      }
    };
    for (int op = 0; op < ops; ++op) {
      if (releases && !held.empty() && rng.Chance(0.25)) {
        const size_t k = static_cast<size_t>(rng.Uniform(0, static_cast<int>(held.size()) - 1));
        grid.Release(held[k].first_gpu, held[k].gpus, held[k].from, held[k].to);
        mark(held[k], false);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      const int gpus = 1 << rng.Uniform(0, large ? 3 : 4);
      const int duration =
          large ? 1 + rng.Uniform(0, 3) * horizon / 4 : rng.Uniform(1, horizon + 3);
      GpuRequirement req;
      if (rng.Chance(0.3)) req.gpu_type = rng.Chance(0.5) ? "A" : "B";
      const int from = rng.Uniform(0, horizon - 1);
      const auto found = grid.FindEarliest(gpus, duration, req, from);
      const int expected = model.EarliestAny(gpus, duration, req, from);
      ASSERT_EQ(found ? found->start_step : -1, expected) << "seed " << seed << " op " << op;
      if (!found) continue;
      ASSERT_TRUE(model.Free(found->first_gpu, gpus, found->start_step, duration)) << seed;
      ASSERT_TRUE(s.cluster.IsAlignedBlock(found->first_gpu, gpus));
      ASSERT_TRUE(grid.IsFree(found->first_gpu, gpus, found->start_step, duration));
      if (rng.Chance(0.2)) {  // a service reservation somewhere
        const int t = rng.Uniform(0, horizon - 1);
        const int g = s.cluster.group_of(found->first_gpu);
        if (model.slack[g][t] >= 1) {
          grid.Reserve(g, t, 1);
          model.slack[g][t] -= 1;
        }
        continue;
      }
      grid.Occupy(found->first_gpu, gpus, found->start_step, found->start_step + duration);
      held.push_back({found->first_gpu, gpus, found->start_step, found->start_step + duration});
      mark(held.back(), true);
    }
  }
}

TEST(BlockGridTest, MatchesBruteForceOnRandomGrids) {
  for (uint64_t seed = 1; seed <= 300; ++seed) ExpectBruteForceAnswers(seed, false);
}

TEST(BlockGridTest, MatchesBruteForceOnLargeGridsWithTheMemo) {
  for (uint64_t seed = 1; seed <= 40; ++seed) ExpectBruteForceAnswers(seed, true);
}

TEST(BlockGridTest, ReleasedBlocksMatchBruteForce) {
  for (uint64_t seed = 1; seed <= 300; ++seed) ExpectBruteForceAnswers(seed, false, true);
  for (uint64_t seed = 1; seed <= 40; ++seed) ExpectBruteForceAnswers(seed, true, true);
}

}  // namespace
}  // namespace ordo::policy
