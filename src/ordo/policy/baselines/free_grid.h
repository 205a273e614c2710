// FreeGrid: which GPUs are free at which step, for the baselines' "lowest aligned block that is
// free for the whole duration" rule (spec/formats-v1.md, "Reference policies").
//
// Each node group keeps, per step, one bit per GPU (1 = free) in 64-bit words, counted from the
// group's first id. A block of `gpus` GPUs free over a window of steps is then an AND of the
// window's words followed by a check for `gpus` consecutive ones at an offset that is a multiple of
// `gpus`; aligned blocks of fewer than 64 GPUs never straddle a word, larger ones cover whole
// words. Padding bits past a group's last GPU are always 0, so no block runs past the group.
//
// Cost: FindAt is O(window x words of the matching groups); FindEarliest repeats it per start step
// and stops at the first hit (or as soon as a window's AND is all zero). Memory: T x G / 64 words.
//
//   FreeGrid grid(cluster, 24);
//   grid.Occupy(0, 8, 0, 6);                              // GPUs 0-7 busy at steps 0..5
//   auto slot = grid.FindEarliest(8, 4, {}, 0);           // -> start 6 on GPU 0 (1 group of 8)
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ordo/core/scenario.h"

namespace ordo::policy::baselines {

class FreeGrid {
 public:
  /// Every GPU free at every step. `cluster` must be indexed and outlive the grid.
  FreeGrid(const Cluster& cluster, int horizon_steps);

  struct Slot {
    int start_step = 0;
    int first_gpu = 0;
  };

  /// Marks GPUs [first_gpu, first_gpu + gpus) busy over steps [from_step, to_step) clipped to the
  /// horizon. The range must lie inside one group (a legal block, or a single GPU).
  void Occupy(int first_gpu, int gpus, int from_step, int to_step);

  /// Marks the same range free again (a preempted job giving its block back). The caller
  /// releases only what it occupied.
  void Release(int first_gpu, int gpus, int from_step, int to_step);

  [[nodiscard]] bool IsFree(int gpu, int step) const;

  /// The lowest first id, over the groups matching `req`, of an aligned block of `gpus` GPUs free
  /// at every step of [start_step, start_step + duration_steps) inside the horizon (steps past it
  /// count as free). Empty when none is free. `gpus` is a power of two.
  [[nodiscard]] std::optional<int> FindAt(int gpus, int duration_steps, const GpuRequirement& req,
                                          int start_step) const;

  /// The earliest start in [earliest_step, horizon) at which FindAt succeeds, and its block.
  [[nodiscard]] std::optional<Slot> FindEarliest(int gpus, int duration_steps,
                                                 const GpuRequirement& req,
                                                 int earliest_step) const;

  [[nodiscard]] int horizon_steps() const { return steps_; }

 private:
  // The groups where a block of `gpus` can exist and `req` matches, in file order.
  void EligibleGroups(int gpus, const GpuRequirement& req, std::vector<int>& out) const;
  // Lowest group-local offset of a free block in group g over the window, or -1.
  [[nodiscard]] int FindInGroup(int g, int gpus, int from_step, int to_step) const;

  const Cluster* cluster_;
  int steps_;
  int words_per_step_ = 0;
  std::vector<int> group_offset_;  // first word of group g inside a step's row
  std::vector<int> group_words_;
  std::vector<uint64_t> bits_;  // steps_ rows of words_per_step_ words
  mutable std::vector<uint64_t> acc_;
  mutable std::vector<int> eligible_;
};

}  // namespace ordo::policy::baselines
