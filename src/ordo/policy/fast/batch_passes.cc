#include "ordo/policy/fast/batch_passes.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace ordo::policy::fast {

// Greedy passes in all: about kPlacementBudget job placements, at least kMinPasses (the best seed
// orders) and at most kMaxPasses. A placement costs more on a larger cluster
// (bench/fast_bench.cc), so a budget counted in placements keeps every size inside its latency
// target. At most 64: more would still pay on the quality loop's instances, but the passes and
// the neighbourhood search after them share the 8-GPU benchmark instance's 1 ms target
// (docs/fast-mode.md, "The search's length"). `effort` (PolicyOptions::effort) multiplies it.
int PassBudget(size_t jobs, int effort) {
  constexpr size_t kPlacementBudget = 16'000, kMinPasses = 3, kMaxPasses = 64;
  if (jobs == 0) return 0;
  return effort * static_cast<int>(std::clamp(kPlacementBudget / jobs, kMinPasses, kMaxPasses));
}

// Each move costs about a pass, a recreation up to two. They grow with the work to search: 4 on
// the 16-job 8-GPU benchmark instance, which keeps it inside its latency target, 8 from 32 jobs.
// Eight on every instance finds better plans more often but takes that instance past its target
// (docs/fast-mode.md, "The search's length").
int Moves(size_t jobs, int passes) {
  return std::min(std::clamp(static_cast<int>(jobs / 4), 4, 8), passes / 4);
}

double BatchPasses::Reward(const Job& job, const Shape& shape, int start) const {
  const Scenario& s = ctx_.scenario;
  const int end = std::min(s.horizon_steps, start + shape.duration_steps);
  const double steps = end - start;
  const double step_sum = (static_cast<double>(start) + end - 1) * steps / 2.0;
  return job.priority * shape.gpus * (steps - decay_ * step_sum / s.horizon_steps);
}

double BatchPasses::BestReward(const Job& job) const {
  const int arrival = std::max(0, job.arrival_step);
  double best = 0;
  for (const Shape& shape : job.shapes) best = std::max(best, Reward(job, shape, arrival));
  return best;
}

Placement BatchPasses::ChooseShape(const BlockGrid& grid, const Job& job, ShapeRule rule,
                                   double& reward) const {
  Placement chosen;
  int chosen_finish = 0;
  ForEachEarliest(grid, job, [&](const Placement& p, double r) {
    const int finish = p.start_step + job.shapes[p.shape].duration_steps;
    const bool better = chosen.shape < 0 ||
                        (rule == ShapeRule::kMostReward
                             ? r > reward
                             : (finish < chosen_finish || (finish == chosen_finish && r > reward)));
    if (better) {
      chosen = p;
      reward = r;
      chosen_finish = finish;
    }
  });
  return chosen;
}

BlockGrid& BatchPasses::ScratchCopyOf(const BlockGrid& base) const {
  if (scratch_) {
    *scratch_ = base;
  } else {
    scratch_.emplace(base);
  }
  return *scratch_;
}

PassResult BatchPasses::RunPass(const BlockGrid& base, const std::vector<int>& order,
                                ShapeRule rule, const PassResult* replayed, size_t replay) const {
  const Scenario& s = ctx_.scenario;
  BlockGrid& grid = ScratchCopyOf(base);
  PassResult result;
  result.reward = 0;
  result.placements.assign(s.jobs.size(), Placement{});
  for (size_t k = 0; k < order.size(); ++k) {
    // A stop (not the deadline: the first pass always completes, so plans stay fixed by the
    // input) ends even a pass; the jobs not reached stay unstarted, which is legal.
    if (k % 64 == 0 && ctx_.options.stop != nullptr &&
        ctx_.options.stop->load(std::memory_order_relaxed)) {
      break;
    }
    const int j = order[k];
    const Job& job = s.jobs[j];
    if (k < replay) {
      const Placement& p = replayed->placements[j];
      if (p.shape < 0) continue;
      const Shape& shape = job.shapes[p.shape];
      grid.Occupy(p.first_gpu, shape.gpus, p.start_step, p.start_step + shape.duration_steps);
      result.reward += Reward(job, shape, p.start_step);
      result.placements[j] = p;
      continue;
    }
    double chosen_reward = 0;
    const Placement chosen = ChooseShape(grid, job, rule, chosen_reward);
    if (chosen.shape < 0) continue;
    const Shape& shape = job.shapes[chosen.shape];
    grid.Occupy(chosen.first_gpu, shape.gpus, chosen.start_step,
                chosen.start_step + shape.duration_steps);
    result.reward += chosen_reward;
    result.placements[j] = chosen;
  }
  return result;
}

void BatchPasses::Consider(const BlockGrid& base, const std::vector<int>& order, ShapeRule rule,
                           size_t replay, Best& best) const {
  PassResult result = RunPass(base, order, rule, replay > 0 ? &best.pass : nullptr, replay);
  if (result.reward > best.pass.reward) {
    best.pass = std::move(result);
    best.order = order;
    best.rule = rule;
    best.is_pass = true;
  }
}

PassResult BatchPasses::RunSchedule(const BlockGrid& base, int passes) const {
  Best best;
  const bool alternatives = HasAlternativeShapes();
  const int done = RunSeeds(base, passes, alternatives, best);
  if (best.pass.placements.empty()) {
    best.pass = RunPass(base, ctx_.candidates, ShapeRule::kMostReward);
    best.order = ctx_.candidates;
    best.is_pass = true;
  }
  Perturb(base, passes, done, alternatives, best);
  return std::move(best.pass);
}

int BatchPasses::RunSeeds(const BlockGrid& base, int passes, bool alternatives, Best& best) const {
  int done = 0;
  for (const auto& order : SeedOrders(ctx_.candidates)) {
    if (done >= passes || (done > 0 && ctx_.OutOfTime())) break;
    Consider(base, order, ShapeRule::kMostReward, 0, best);
    ++done;
    if (alternatives && done < passes) {
      Consider(base, order, ShapeRule::kEarliestFinish, 0, best);
      ++done;
    }
  }
  // The time-stepped schedule (what an online scheduler with perfect service curves would do): it
  // never holds capacity idle for later work, which wins where long low-priority jobs can run now.
  // Its start order then seeds the perturbations if it is the best so far.
  if (done < passes && !ctx_.OutOfTime()) {
    std::vector<int> started_order;
    PassResult stepped = RunTimeStepped(base, started_order);
    ++done;
    if (stepped.reward > best.pass.reward) {
      best.pass = std::move(stepped);
      best.order = std::move(started_order);
      best.is_pass = false;
    }
  }
  return done;
}

// The perturbations share the budget left, counted in job placements searched: a move leaves the
// order before its first moved position as it was, so those jobs are placed where the best pass
// placed them (no search; counted as half of one, what marking the grid costs) and only the rest
// is searched.
void BatchPasses::Perturb(const BlockGrid& base, int passes, int done, bool alternatives,
                          Best& best) const {
  std::mt19937_64 rng(ctx_.options.seed);
  const size_t n = ctx_.candidates.size();
  const long long budget =
      static_cast<long long>(std::max(0, passes - done)) * static_cast<long long>(n);
  constexpr long long kReplaysPerSearch = 2;
  for (long long spent = 0; spent < budget && n > 1 && !ctx_.OutOfTime(); ++done) {
    std::vector<int> order = best.order;
    size_t from = rng() % n, to = 0;
    // Every other move is aimed: a job that the best pass starts later than it could have (or not
    // at all), drawn in proportion to the reward that costs, goes to an earlier position (ahead of
    // the work that took its place). The others move one job anywhere, biased towards nearby
    // positions.
    std::vector<double> lost =
        (done % 2 == 0) ? LostReward(best.pass, order) : std::vector<double>{};
    if (!lost.empty()) lost.front() = 0;  // the first job cannot move earlier
    const double total_lost = std::accumulate(lost.begin(), lost.end(), 0.0);
    if (total_lost > 0) {
      double pick = total_lost * static_cast<double>(rng() % 1'000'000) / 1e6;
      for (from = 0; from + 1 < n && pick >= lost[from]; ++from) pick -= lost[from];
      to = from == 0 ? 0 : rng() % from;
    } else {
      const size_t window = std::max<size_t>(2, n / 4);
      const long long shift =
          static_cast<long long>(rng() % (2 * window + 1)) - static_cast<long long>(window);
      to = static_cast<size_t>(std::clamp<long long>(static_cast<long long>(from) + shift, 0,
                                                     static_cast<long long>(n) - 1));
    }
    const int job = order[from];
    order.erase(order.begin() + static_cast<long>(from));
    order.insert(order.begin() + static_cast<long>(to), job);
    const ShapeRule rule =
        alternatives && rng() % 4 == 0 ? ShapeRule::kEarliestFinish : ShapeRule::kMostReward;
    const size_t replay = best.is_pass && rule == best.rule ? std::min(from, to) : 0;
    Consider(base, order, rule, replay, best);
    spent +=
        static_cast<long long>(n - replay) + static_cast<long long>(replay) / kReplaysPerSearch;
  }
}

std::vector<std::vector<int>> BatchPasses::SeedOrders(const std::vector<int>& candidates) const {
  // The sort keys, copied into one array first: on a large cluster the comparisons would otherwise
  // chase every job's shapes through memory, and the sorts took a tenth of a plan.
  struct Key {
    double priority = 0;
    long long area = 0;  // GPU-steps of the first shape
    int arrival = 0;
    int gpus = 0;  // of the first shape
    int duration = 0;
  };
  std::vector<Key> keys(ctx_.scenario.jobs.size());
  for (int j : candidates) {
    const Job& job = ctx_.scenario.jobs[j];
    const Shape& shape = job.shapes.front();
    keys[j] = Key{job.priority, static_cast<long long>(shape.gpus) * shape.duration_steps,
                  job.arrival_step, shape.gpus, shape.duration_steps};
  }
  auto by = [&](auto key_less) {
    std::vector<int> order = candidates;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (keys[a].priority != keys[b].priority) return keys[a].priority > keys[b].priority;
      return key_less(keys[a], keys[b]);
    });
    return order;
  };
  std::vector<std::vector<int>> orders;
  // Big rocks first: the hardest blocks to fit go in while the grid is emptiest.
  orders.push_back(by([](const Key& a, const Key& b) {
    if (a.area != b.area) return a.area > b.area;
    return a.arrival < b.arrival;
  }));
  // Earliest arrival first, then small first: more jobs finish early, decayed reward is kept.
  orders.push_back(by([](const Key& a, const Key& b) {
    if (a.arrival != b.arrival) return a.arrival < b.arrival;
    return a.area < b.area;
  }));
  // Widest first (fragmentation), then longest.
  orders.push_back(by([](const Key& a, const Key& b) {
    if (a.gpus != b.gpus) return a.gpus > b.gpus;
    return a.duration > b.duration;
  }));
  // Arrival order, as an online scheduler sees the work: it keeps long low-priority jobs that can
  // start now from waiting behind later high-priority ones when that is worth more.
  std::vector<int> online = candidates;
  std::stable_sort(online.begin(), online.end(), [&](int a, int b) {
    if (keys[a].arrival != keys[b].arrival) return keys[a].arrival < keys[b].arrival;
    return keys[a].priority > keys[b].priority;
  });
  orders.push_back(std::move(online));
  // Reward density regardless of priority ties: priority x GPUs inside the horizon.
  std::vector<int> density = candidates;
  std::stable_sort(density.begin(), density.end(), [&](int a, int b) {
    return keys[a].priority * keys[a].gpus > keys[b].priority * keys[b].gpus;
  });
  orders.push_back(std::move(density));
  return orders;
}

// A job's earliest possible start only grows as the grid fills, so each job is searched again
// only when that step comes.
PassResult BatchPasses::RunTimeStepped(const BlockGrid& base,
                                       std::vector<int>& started_order) const {
  const Scenario& s = ctx_.scenario;
  BlockGrid& grid = ScratchCopyOf(base);
  PassResult result;
  result.reward = 0;
  result.placements.assign(s.jobs.size(), Placement{});
  std::vector<int> pending = ctx_.candidates;
  std::stable_sort(pending.begin(), pending.end(), [&](int a, int b) {
    if (s.jobs[a].priority != s.jobs[b].priority) return s.jobs[a].priority > s.jobs[b].priority;
    return s.jobs[a].arrival_step < s.jobs[b].arrival_step;
  });
  std::vector<int> next_try(s.jobs.size(), 0);
  for (int j : pending) next_try[j] = std::max(0, s.jobs[j].arrival_step);
  started_order.clear();
  for (int t = 0; t < s.horizon_steps && !pending.empty(); ++t) {
    std::vector<int> still;
    for (int j : pending) {
      if (next_try[j] > t) {
        still.push_back(j);
        continue;
      }
      const Job& job = s.jobs[j];
      Placement chosen;
      double chosen_reward = -1;
      int earliest = s.horizon_steps;
      for (size_t k = 0; k < job.shapes.size(); ++k) {
        const Shape& shape = job.shapes[k];
        const auto found = grid.FindEarliest(shape.gpus, shape.duration_steps, job.requirement, t);
        if (!found) continue;
        earliest = std::min(earliest, found->start_step);
        if (found->start_step != t) continue;
        const double reward = Reward(job, shape, t);
        if (reward > chosen_reward) {
          chosen = Placement{static_cast<int>(k), found->first_gpu, t};
          chosen_reward = reward;
        }
      }
      if (chosen.shape < 0) {
        next_try[j] = earliest;  // horizon_steps when nothing fits any more
        if (earliest < s.horizon_steps) still.push_back(j);
        continue;
      }
      const Shape& shape = job.shapes[chosen.shape];
      grid.Occupy(chosen.first_gpu, shape.gpus, t, t + shape.duration_steps);
      result.reward += chosen_reward;
      result.placements[j] = chosen;
      started_order.push_back(j);
    }
    pending = std::move(still);
  }
  for (int j : ctx_.candidates) {
    if (result.placements[j].shape < 0) started_order.push_back(j);
  }
  return result;
}

std::vector<double> BatchPasses::LostReward(const PassResult& pass,
                                            const std::vector<int>& order) const {
  const Scenario& s = ctx_.scenario;
  std::vector<double> lost(order.size(), 0.0);
  for (size_t k = 0; k < order.size(); ++k) {
    const Job& job = s.jobs[order[k]];
    const Placement& p = pass.placements[order[k]];
    const double got = p.shape < 0 ? 0.0 : Reward(job, job.shapes[p.shape], p.start_step);
    lost[k] = std::max(0.0, BestReward(job) - got);
  }
  return lost;
}

std::vector<int> BatchPasses::Losers(const PassResult& pass) const {
  const std::vector<int>& candidates = ctx_.candidates;
  std::vector<std::pair<double, int>> losers;  // (lost reward, job)
  const std::vector<double> lost = LostReward(pass, candidates);
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (lost[k] > 0) losers.emplace_back(lost[k], candidates[k]);
  }
  std::stable_sort(losers.begin(), losers.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int> jobs;
  jobs.reserve(losers.size());
  for (const auto& loser : losers) jobs.push_back(loser.second);
  return jobs;
}

bool BatchPasses::HasAlternativeShapes() const {
  return std::any_of(ctx_.candidates.begin(), ctx_.candidates.end(),
                     [&](int j) { return ctx_.scenario.jobs[j].shapes.size() > 1; });
}

}  // namespace ordo::policy::fast
