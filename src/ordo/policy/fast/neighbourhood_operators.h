// The destroy and repair operators of fast mode's neighbourhood search (neighbourhood_search.h).
// Each works on one solution's batch placements, draws from the loop's generator and charges the
// work it does to the loop's budget.
#pragma once

#include <random>
#include <vector>

#include "ordo/policy/fast/batch_passes.h"
#include "ordo/policy/fast/search.h"

namespace ordo::policy::fast {

/// The loop's work units, in halves: a job searched (its shapes' earliest blocks) costs
/// kSearchCost, a job put on a grid or taken off it kReplayCost.
inline constexpr long long kSearchCost = 2, kReplayCost = 1;

/// What the operators of one loop share. Lives as long as the loop; not thread-safe.
struct OperatorContext {
  OperatorContext(const SearchContext& search, const BatchPasses& batch);

  /// What job `j` earns where `pass` places it (0 when it does not start).
  [[nodiscard]] double RewardOf(const PassResult& pass, int j) const;
  /// Uniform in [0, 1), from `rng`.
  double Uniform();

  const SearchContext& search;
  const BatchPasses& batch;
  std::vector<double> ideal;  // per job: its most rewarding shape's reward at its arrival
  std::mt19937_64 rng;
  long long spent = 0;  // work units
};

/// A destroy operator's choice: started jobs to take out, and perhaps a job to place first.
struct Neighbourhood {
  std::vector<int> removed;
  int focus = -1;
};

/// The started jobs on a random aligned block of GPUs around a random started job's block (from
/// its size up to its whole group), over its run widened by up to a quarter of the horizon each
/// way: a region of GPUs x steps.
Neighbourhood DestroyRegion(OperatorContext& op, const PassResult& pass);

/// A job that loses reward (started later than its arrival allows, or not at all), drawn in
/// proportion to what it loses, as the focus, and every started job on the block one of its
/// shapes would take at its earliest start on `target_grid` (the running jobs and the services, or
/// the running jobs alone): the job's competitors. Falls back to DestroyRandom.
Neighbourhood DestroyCompetitors(OperatorContext& op, const PassResult& pass,
                                 const BlockGrid& target_grid);

/// Started jobs that earn least per GPU-step, drawn with a cubic bias towards the cheapest
/// (Ropke and Pisinger's worst removal).
Neighbourhood DestroyCheapest(OperatorContext& op, const PassResult& pass);

/// Started jobs drawn at random.
Neighbourhood DestroyRandom(OperatorContext& op, const PassResult& pass);

/// Places the jobs of `order` in turn, each where ChooseShape (most reward) puts it on `grid`.
void RepairInOrder(OperatorContext& op, BlockGrid& grid, const std::vector<int>& order,
                   PassResult& pass);

/// Regret-2 insertion: repeatedly the job of `pool` that loses most if it cannot have its best
/// placement (against its next start or next shape), at that placement; ties to the larger reward.
void RepairRegret(OperatorContext& op, BlockGrid& grid, std::vector<int> pool, PassResult& pass);

/// `job` placed at `p` on `grid` and in `pass`, earning `reward`.
void Place(const Scenario& scenario, BlockGrid& grid, int job, const Placement& p, double reward,
           PassResult& pass);

}  // namespace ordo::policy::fast
