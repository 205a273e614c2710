// Fast mode's batch search: greedy passes over the waiting jobs on a grid that already holds the
// running jobs and the services' reservations, and the schedule of passes one search runs.
//  - A pass places jobs in an order, each at the earliest start where some shape fits, on the
//    buddy best-fit block (keeps large blocks whole); among shapes, the one with the most reward
//    or the earliest finish (ShapeRule).
//  - A schedule: the deterministic seed orders, the time-stepped pass (an online scheduler with
//    perfect service curves), then seeded perturbations of the best order (move one job; every
//    other move aimed at a job that lost reward; the jobs before the first moved position keep
//    the best pass's placements without a search). Its length is fixed by `passes`, so the same
//    input, seed and effort give the same result; the deadline only cuts it short.
// Rewards are judged with a time decay given at construction: the objective's, or 0 where the
// do-no-harm selection builds plans for the undecayed value.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "ordo/policy/fast/search.h"

namespace ordo::policy::fast {

/// Greedy passes in all for `jobs` waiting jobs at `effort`: about 16,000 job placements, at least
/// 3 (the best seed orders) and at most 64, times the effort.
int PassBudget(size_t jobs, int effort);

/// Displacement and ruin-and-recreate moves after a schedule of `passes`: one per four waiting
/// jobs, at least 4 and at most 8, and no more than a quarter of the passes.
int Moves(size_t jobs, int passes);

class BatchPasses {
 public:
  BatchPasses(const SearchContext& context, double decay) : ctx_(context), decay_(decay) {}

  /// What `job` earns in `shape` from `start`, inside the horizon, at this decay.
  [[nodiscard]] double Reward(const Job& job, const Shape& shape, int start) const;

  /// What `job` earns in its most rewarding shape started at its arrival: the most any placement
  /// earns it.
  [[nodiscard]] double BestReward(const Job& job) const;

  /// Calls fn(placement, reward) for each of the job's shapes that fits on `grid`: the shape at its
  /// earliest free block from the job's arrival, and what it earns there.
  template <typename Fn>
  void ForEachEarliest(const BlockGrid& grid, const Job& job, Fn&& fn) const {
    for (size_t k = 0; k < job.shapes.size(); ++k) {
      const Shape& shape = job.shapes[k];
      const auto found = grid.FindEarliest(shape.gpus, shape.duration_steps, job.requirement,
                                           std::max(0, job.arrival_step));
      if (!found) continue;
      fn(Placement{static_cast<int>(k), found->first_gpu, found->start_step},
         Reward(job, shape, found->start_step));
    }
  }

  /// Each of the job's shapes at its earliest free block on `grid` (from its arrival), and the one
  /// `rule` prefers; shape < 0 when none fits. `reward` is the chosen placement's.
  Placement ChooseShape(const BlockGrid& grid, const Job& job, ShapeRule rule,
                        double& reward) const;

  /// One greedy pass over `order`. The first `replay` jobs are placed where `replayed` (a pass
  /// over an order that begins with the same jobs, by the same rule) placed them, without a
  /// search: the same placements a search would find. Not reentrant: it works on this object's
  /// scratch grid (ScratchCopyOf).
  [[nodiscard]] PassResult RunPass(const BlockGrid& base, const std::vector<int>& order,
                                   ShapeRule rule, const PassResult* replayed = nullptr,
                                   size_t replay = 0) const;

  /// The schedule of `passes` passes over the context's waiting jobs on `base`; the best pass.
  [[nodiscard]] PassResult RunSchedule(const BlockGrid& base, int passes) const;

  /// Deterministic starting orders of `candidates`; all put higher priority first, they differ in
  /// what breaks ties.
  [[nodiscard]] std::vector<std::vector<int>> SeedOrders(const std::vector<int>& candidates) const;

  /// The waiting jobs that `pass` starts later than their arrival allows (or not at all), the ones
  /// that lose most reward first.
  [[nodiscard]] std::vector<int> Losers(const PassResult& pass) const;

 private:
  // The best pass of a schedule so far, and how to replay it.
  struct Best {
    PassResult pass;
    std::vector<int> order;
    ShapeRule rule = ShapeRule::kMostReward;
    bool is_pass = false;  // pass is RunPass(order, rule)'s result
  };

  void Consider(const BlockGrid& base, const std::vector<int>& order, ShapeRule rule, size_t replay,
                Best& best) const;
  // The seed orders and the time-stepped pass; the number of passes they took.
  int RunSeeds(const BlockGrid& base, int passes, bool alternatives, Best& best) const;
  // The seeded perturbations of the best order, with the budget `passes - done` leaves.
  void Perturb(const BlockGrid& base, int passes, int done, bool alternatives, Best& best) const;

  // Steps through time; at each step the arrived jobs, highest priority first, start if some
  // shape fits now (the shape with most reward). `started_order` receives the jobs in the order
  // they started, then the others.
  PassResult RunTimeStepped(const BlockGrid& base, std::vector<int>& started_order) const;

  // Per position of `order`: the reward its job loses in `pass` against starting at its arrival
  // in its best shape (the whole of that when it is not started).
  [[nodiscard]] std::vector<double> LostReward(const PassResult& pass,
                                               const std::vector<int>& order) const;
  [[nodiscard]] bool HasAlternativeShapes() const;
  // `base` copied into the grid a pass works on (RunPass, RunTimeStepped), kept so that each pass
  // reuses the storage the last one allocated. The returned grid is the next pass's too.
  BlockGrid& ScratchCopyOf(const BlockGrid& base) const;

  const SearchContext& ctx_;
  double decay_;
  mutable std::optional<BlockGrid> scratch_;  // ScratchCopyOf's grid
};

}  // namespace ordo::policy::fast
