#include <algorithm>

#include "ordo/policy/fast/neighbourhood_operators.h"

namespace ordo::policy::fast {
namespace {

// A job's best placement on a grid, and its regret: what it loses if it has to take the next
// best.
struct Option {
  Placement best;
  double reward = 0;
  double regret = 0;
  int reach_end = 0;  // the last step its best and next-best placements use
};

// The job's best placement (its most rewarding shape at that shape's earliest start) and its
// regret against the next best: another shape, or its best shape's next start after this one.
Option Evaluate(OperatorContext& op, const BlockGrid& grid, int j) {
  const Job& job = op.search.scenario.jobs[j];
  Option option;
  double second = 0;
  op.batch.ForEachEarliest(grid, job, [&](const Placement& p, double r) {
    option.reach_end =
        std::max(option.reach_end, p.start_step + job.shapes[p.shape].duration_steps);
    if (option.best.shape < 0 || r > option.reward) {
      if (option.best.shape >= 0) second = std::max(second, option.reward);
      option.best = p;
      option.reward = r;
    } else {
      second = std::max(second, r);
    }
  });
  op.spent += kSearchCost;
  if (option.best.shape < 0) return option;
  const Shape& shape = job.shapes[option.best.shape];
  if (const auto next = grid.FindEarliest(shape.gpus, shape.duration_steps, job.requirement,
                                          option.best.start_step + 1)) {
    second = std::max(second, op.batch.Reward(job, shape, next->start_step));
    option.reach_end = std::max(option.reach_end, next->start_step + shape.duration_steps);
  }
  op.spent += kSearchCost / 2;
  option.regret = option.reward - second;
  return option;
}

}  // namespace

void Place(const Scenario& s, BlockGrid& grid, int job, const Placement& p, double reward,
           PassResult& pass) {
  const Shape& shape = s.jobs[job].shapes[p.shape];
  grid.Occupy(p.first_gpu, shape.gpus, p.start_step, p.start_step + shape.duration_steps);
  pass.placements[job] = p;
  pass.reward += reward;
}

void RepairInOrder(OperatorContext& op, BlockGrid& grid, const std::vector<int>& order,
                   PassResult& pass) {
  const Scenario& s = op.search.scenario;
  for (int j : order) {
    double reward = 0;
    const Placement p = op.batch.ChooseShape(grid, s.jobs[j], ShapeRule::kMostReward, reward);
    op.spent += kSearchCost;
    if (p.shape >= 0) Place(s, grid, j, p, reward, pass);
  }
}

// A placement changes only the options of jobs whose best or next-best run shares its group and
// steps (the grid only fills, so an option elsewhere stays free and earliest): only those are
// evaluated again.
void RepairRegret(OperatorContext& op, BlockGrid& grid, std::vector<int> pool, PassResult& pass) {
  const Scenario& s = op.search.scenario;
  std::vector<Option> options;
  options.reserve(pool.size());
  for (int j : pool) options.push_back(Evaluate(op, grid, j));
  while (!pool.empty()) {
    size_t chosen = pool.size();
    for (size_t k = 0; k < pool.size(); ++k) {
      if (options[k].best.shape < 0) continue;
      if (chosen == pool.size() || options[k].regret > options[chosen].regret + 1e-9 ||
          (options[k].regret > options[chosen].regret - 1e-9 &&
           options[k].reward > options[chosen].reward)) {
        chosen = k;
      }
    }
    if (chosen == pool.size()) return;  // nothing left fits
    const int j = pool[chosen];
    const Placement p = options[chosen].best;
    const Shape& shape = s.jobs[j].shapes[p.shape];
    if (!grid.IsFree(p.first_gpu, shape.gpus, p.start_step, shape.duration_steps)) {
      options[chosen] = Evaluate(op, grid, j);  // a safety net: every change was checked above
      continue;
    }
    Place(s, grid, j, p, options[chosen].reward, pass);
    pool.erase(pool.begin() + static_cast<long>(chosen));
    options.erase(options.begin() + static_cast<long>(chosen));
    const int group = s.cluster.group_of(p.first_gpu);
    const int end = p.start_step + shape.duration_steps;
    for (size_t k = 0; k < pool.size(); ++k) {
      const Option& o = options[k];
      if (o.best.shape < 0) continue;  // the grid only fills: what did not fit never will
      if (s.cluster.group_of(o.best.first_gpu) == group && o.best.start_step < end &&
          p.start_step < o.reach_end) {
        options[k] = Evaluate(op, grid, pool[k]);
      }
    }
  }
}

}  // namespace ordo::policy::fast
