// BlockGrid: which aligned GPU blocks are free at which steps, for placing rigid jobs fast.
//
// Every legal block (spec rule 3) is a node of a buddy tree over its node group: a block of 2^L
// GPUs starting at an offset that is a multiple of 2^L from the group's first id. Each tree node
// keeps, for every level L at or below its own, a step mask of the steps at which *all* of its
// level-L sub-blocks are busy (an AND over them; at the node's own level that is simply its busy
// mask). That AND is a lower bound on when any sub-block can start, so a search for the earliest
// free block prunes whole subtrees, which keeps it logarithmic-ish on large, busy clusters.
//
// Groups whose size is not a power of two are padded with GPUs that are busy at every step.
// Services are fungible inside a group, so they appear only as counts: a block fits at a step only
// if the group keeps enough GPUs for the services' reservation there (the "slack").
//
// Cost: Occupy is O(block size x levels + height x levels) words; FindEarliest visits the subtrees
// its bound cannot exclude. Between releases a grid only gets busier, so FindEarliest remembers,
// per (width, duration, groups), the starts it found infeasible and begins later searches past
// them (on a saturated cluster most jobs of one shape fail at the same steps); Release forgets
// them. Release is Occupy's inverse, at the same cost. Memory:
// about 2^(height + 2) step masks per group (a node keeps one per level at or below its own).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ordo/core/scenario.h"

namespace ordo::policy {

class BlockGrid {
 public:
  BlockGrid(const Cluster& cluster, int horizon_steps);

  struct Candidate {
    int first_gpu = 0;
    int start_step = 0;
  };

  /// The earliest start in [earliest_start, horizon) at which some aligned block of `gpus` GPUs in
  /// a group matching `req` is free for `duration_steps` steps (steps past the horizon are free)
  /// and its group keeps its service slack; among the blocks free then, the one that breaks the
  /// smallest free larger block (buddy best fit), then the lowest id. Empty when none exists.
  /// Not thread-safe even though const: it updates the grid's memo of infeasible starts.
  [[nodiscard]] std::optional<Candidate> FindEarliest(int gpus, int duration_steps,
                                                      const GpuRequirement& req,
                                                      int earliest_start) const;

  /// Whether the block is free (and its group has the slack) for [start, start + duration).
  [[nodiscard]] bool IsFree(int first_gpu, int gpus, int start_step, int duration_steps) const;

  /// Marks an aligned block busy for steps [from, to) (clipped to the horizon) and takes it from
  /// its group's slack.
  void Occupy(int first_gpu, int gpus, int from_step, int to_step);

  /// Frees a block an Occupy(first_gpu, gpus, from_step, to_step) of this grid made busy, and
  /// gives it back to its group's slack: the grid answers as if that Occupy had never been made.
  /// Only for a block that nothing else occupied over the interval (asserted), which holds for
  /// every placement the planner makes. Forgets the starts FindEarliest remembered infeasible.
  void Release(int first_gpu, int gpus, int from_step, int to_step);
  /// Takes `gpus` from group `group`'s slack at `step` (a service's reservation there).
  void Reserve(int group, int step, int gpus);
  /// Takes `gpus` at `step` from the cluster's slack instead (a reservation that services usable
  /// in every group place only later, wherever jobs leave room): from the first call on, a block
  /// fits at a step only if the whole cluster keeps that many GPUs free of jobs.
  void ReserveAnywhere(int step, int gpus);

  [[nodiscard]] int slack(int group, int step) const { return trees_[group].slack[step]; }
  [[nodiscard]] int horizon_steps() const { return horizon_; }

 private:
  struct Tree {
    int group = 0;
    int first_gpu = 0;
    int height = 0;  // the tree covers 2^height GPUs
    int size = 0;    // real GPUs in the group
    int gpus_per_node = 1;
    // and_masks[L][node * words + w]: AND over the node's level-L sub-blocks (heap order, root 1;
    // nodes at level L or above only).
    std::vector<std::vector<uint64_t>> and_masks;
    std::vector<int> slack;                        // per step: size - jobs - service reservation
    std::vector<std::vector<uint64_t>> low_slack;  // [L]: steps where slack < 2^L
  };

  // FindEarliest's search, without the memo.
  [[nodiscard]] std::optional<Candidate> SearchEarliest(int level, int gpus, int duration_steps,
                                                        const GpuRequirement& req,
                                                        int earliest_start) const;
  [[nodiscard]] int EarliestStart(const uint64_t* mask_a, const uint64_t* mask_b, int duration,
                                  int from) const;
  [[nodiscard]] bool IntervalClear(const uint64_t* mask, int from, int to) const;
  void SetInterval(uint64_t* mask, int from, int to) const;
  void RefreshSlackBits(Tree& tree, int step);
  // Recomputes the masks of `node`'s ancestors from their children, bottom up.
  void RefreshAncestors(Tree& tree, int node);

  const uint64_t* Mask(const Tree& tree, int level, int node) const {
    return &tree.and_masks[level][static_cast<size_t>(node) * words_];
  }
  uint64_t* Mask(Tree& tree, int level, int node) {
    return &tree.and_masks[level][static_cast<size_t>(node) * words_];
  }

  // Per step: GPUs free of jobs in the cluster minus ReserveAnywhere's reservations (empty until
  // its first call); [L]: the steps where that is below 2^L.
  std::vector<int> anywhere_slack_;
  std::vector<std::vector<uint64_t>> anywhere_low_;
  void RefreshAnywhereBits(int step);

  // Starts [from, to) known infeasible for a (level, duration, matching groups) key: every block
  // of those groups is busy, or short of slack, somewhere in each window. Valid until a Release,
  // in this grid and its copies.
  struct Infeasible {
    int from = 0;
    int to = 0;
  };
  mutable std::unordered_map<uint64_t, Infeasible> infeasible_;

  int horizon_;
  int words_;
  std::vector<Tree> trees_;
  std::vector<int> gpu_tree_;  // group index -> tree (same index)
  const Cluster* cluster_;
};

}  // namespace ordo::policy
