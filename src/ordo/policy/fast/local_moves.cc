#include "ordo/policy/fast/local_moves.h"

#include <algorithm>

namespace ordo::policy::fast {
namespace {

// A move's verdict: a higher objective than `outcome`'s, with no more unmet real-time GPU-steps
// than `unmet_limit` or than the outcome already leaves (the do-no-harm promise).
bool Improves(const Scenario& s, const Outcome& outcome, double objective,
              const ServiceCounts& counts, long long unmet_limit) {
  return objective > outcome.objective + 1e-9 &&
         UnmetSteps(s, counts) <= std::max(unmet_limit, UnmetSteps(s, outcome.counts));
}

}  // namespace

void Displace(const SearchContext& ctx, const BatchPasses& batch, int tries, long long unmet_limit,
              Outcome& outcome) {
  const Scenario& s = ctx.scenario;
  if (tries <= 0 || outcome.pass.placements.empty()) return;
  const std::vector<int> losers = batch.Losers(outcome.pass);
  for (size_t k = 0; k < losers.size() && tries > 0 && !ctx.OutOfTime(); ++k, --tries) {
    const int j = losers[k];
    const Job& job = s.jobs[j];
    BlockGrid grid = ctx.pinned;
    std::vector<std::vector<int>> left = ctx.free;
    double reward = 0;
    for (int other : ctx.candidates) {
      const Placement& p = outcome.pass.placements[other];
      if (other == j || p.shape < 0) continue;
      Take(s, other, p, grid, left);
      reward += batch.Reward(s.jobs[other], s.jobs[other].shapes[p.shape], p.start_step);
    }
    double moved_reward = 0;
    const Placement moved = batch.ChooseShape(grid, job, ShapeRule::kMostReward, moved_reward);
    if (moved.shape < 0) continue;
    Take(s, j, moved, grid, left);
    bool complete = true;
    ServiceCounts counts = PlanServiceCounts(s, left, {}, &complete);
    if (!complete) continue;
    const double objective = reward + moved_reward - UnmetPenalty(s, counts);
    if (!Improves(s, outcome, objective, counts, unmet_limit)) continue;
    outcome.pass.placements[j] = moved;
    outcome.pass.reward = reward + moved_reward;
    outcome.counts = std::move(counts);
    outcome.objective = objective;
  }
}

void Recreate(const SearchContext& ctx, const BatchPasses& batch, int tries, long long unmet_limit,
              Outcome& outcome) {
  const Scenario& s = ctx.scenario;
  if (tries <= 0 || outcome.pass.placements.empty()) return;
  const std::vector<int> losers = batch.Losers(outcome.pass);
  for (size_t k = 0; k < losers.size() && tries > 0 && !ctx.OutOfTime(); ++k, --tries) {
    const int j = losers[k];
    const Job& job = s.jobs[j];
    BlockGrid grid = ctx.pinned;
    double committed_reward = 0;
    const Placement committed =
        batch.ChooseShape(grid, job, ShapeRule::kMostReward, committed_reward);
    if (committed.shape < 0) continue;
    std::vector<std::vector<int>> left = ctx.free;
    Take(s, j, committed, grid, left);
    bool complete = true;
    ServiceCounts counts = PlanServiceCounts(s, left, {}, &complete);
    if (!complete) continue;
    ReserveCounts(s, counts, grid);
    // The others in the order the outcome started them (the unstarted last, in candidate order):
    // the same plan where the committed job is not in the way.
    std::vector<int> order;
    for (int other : ctx.candidates) {
      if (other != j) order.push_back(other);
    }
    const auto& placed = outcome.pass.placements;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const int sa = placed[a].shape < 0 ? s.horizon_steps : placed[a].start_step;
      const int sb = placed[b].shape < 0 ? s.horizon_steps : placed[b].start_step;
      return sa < sb;
    });
    PassResult pass = batch.RunPass(grid, order, ShapeRule::kMostReward);
    const double objective = pass.reward + committed_reward - UnmetPenalty(s, counts);
    if (!Improves(s, outcome, objective, counts, unmet_limit)) continue;
    pass.placements[j] = committed;
    pass.reward += committed_reward;
    outcome.pass = std::move(pass);
    outcome.counts = std::move(counts);
    outcome.objective = objective;
  }
}

}  // namespace ordo::policy::fast
