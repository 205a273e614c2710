#include <algorithm>

#include "ordo/policy/fast/neighbourhood_operators.h"

namespace ordo::policy::fast {
namespace {

std::vector<int> Started(const OperatorContext& op, const PassResult& pass) {
  std::vector<int> started;
  for (int j : op.search.candidates) {
    if (pass.placements[j].shape >= 0) started.push_back(j);
  }
  return started;
}

// How many jobs a random or cheapest removal takes: 1 to a third of the started jobs (2 to 16).
int RemovalSize(OperatorContext& op, size_t started) {
  const int most = static_cast<int>(std::clamp<size_t>(started / 3, 2, 16));
  return 1 + static_cast<int>(op.rng() % static_cast<unsigned>(most));
}

// The started jobs whose block and run overlap [first_gpu, end_gpu) x [from, to).
std::vector<int> Overlapping(const OperatorContext& op, const PassResult& pass, int first_gpu,
                             int end_gpu, int from, int to) {
  const Scenario& s = op.search.scenario;
  std::vector<int> jobs;
  for (int j : op.search.candidates) {
    const Placement& p = pass.placements[j];
    if (p.shape < 0) continue;
    const Shape& shape = s.jobs[j].shapes[p.shape];
    if (p.first_gpu < end_gpu && first_gpu < p.first_gpu + shape.gpus && p.start_step < to &&
        from < p.start_step + shape.duration_steps) {
      jobs.push_back(j);
    }
  }
  return jobs;
}

}  // namespace

OperatorContext::OperatorContext(const SearchContext& context, const BatchPasses& passes)
    : search(context), batch(passes), rng(context.options.seed) {
  ideal.assign(search.scenario.jobs.size(), 0.0);
  for (int j : search.candidates) ideal[j] = batch.BestReward(search.scenario.jobs[j]);
}

double OperatorContext::RewardOf(const PassResult& pass, int j) const {
  const Placement& p = pass.placements[j];
  const Job& job = search.scenario.jobs[j];
  return p.shape < 0 ? 0.0 : batch.Reward(job, job.shapes[p.shape], p.start_step);
}

double OperatorContext::Uniform() { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

Neighbourhood DestroyRegion(OperatorContext& op, const PassResult& pass) {
  const Scenario& s = op.search.scenario;
  const std::vector<int> started = Started(op, pass);
  if (started.empty()) return {};
  const int x = started[op.rng() % started.size()];
  const Placement& p = pass.placements[x];
  const Shape& shape = s.jobs[x].shapes[p.shape];
  const int g = s.cluster.group_of(p.first_gpu);
  const int group_first = s.cluster.group_first_gpu(g);
  const int group_gpus = s.cluster.group_gpus(g);
  int levels = 0;
  while ((shape.gpus << (levels + 1)) <= group_gpus) ++levels;
  const int width = shape.gpus << (op.rng() % static_cast<unsigned>(levels + 1));
  const int first = group_first + (p.first_gpu - group_first) / width * width;
  const int reach = std::max(1, s.horizon_steps / 4);
  const int from = p.start_step - static_cast<int>(op.rng() % static_cast<unsigned>(reach));
  const int to = p.start_step + shape.duration_steps +
                 static_cast<int>(op.rng() % static_cast<unsigned>(reach));
  return {
      Overlapping(op, pass, first, std::min(first + width, group_first + group_gpus), from, to)};
}

Neighbourhood DestroyCompetitors(OperatorContext& op, const PassResult& pass,
                                 const BlockGrid& target_grid) {
  const Scenario& s = op.search.scenario;
  std::vector<std::pair<double, int>> losers;  // (reward lost, job)
  double total = 0;
  for (int j : op.search.candidates) {
    const double lost = op.ideal[j] - op.RewardOf(pass, j);
    if (lost > 1e-9) {
      losers.emplace_back(lost, j);
      total += lost;
    }
  }
  if (losers.empty()) return DestroyRandom(op, pass);
  double pick = total * op.Uniform();
  size_t k = 0;
  while (k + 1 < losers.size() && pick >= losers[k].first) pick -= losers[k++].first;
  const int j = losers[k].second;
  const Job& job = s.jobs[j];
  const Shape& shape = job.shapes[op.rng() % job.shapes.size()];
  op.spent += kSearchCost;
  const auto target = target_grid.FindEarliest(shape.gpus, shape.duration_steps, job.requirement,
                                               std::max(0, job.arrival_step));
  if (!target) return DestroyRandom(op, pass);
  Neighbourhood chosen{Overlapping(op, pass, target->first_gpu, target->first_gpu + shape.gpus,
                                   target->start_step, target->start_step + shape.duration_steps),
                       j};
  if (pass.placements[j].shape >= 0 &&
      std::find(chosen.removed.begin(), chosen.removed.end(), j) == chosen.removed.end()) {
    chosen.removed.push_back(j);
  }
  return chosen;
}

Neighbourhood DestroyCheapest(OperatorContext& op, const PassResult& pass) {
  const Scenario& s = op.search.scenario;
  std::vector<std::pair<double, int>> by_worth;  // (reward per GPU-step, job)
  for (int j : Started(op, pass)) {
    const Shape& shape = s.jobs[j].shapes[pass.placements[j].shape];
    by_worth.emplace_back(op.RewardOf(pass, j) / (shape.gpus * shape.duration_steps), j);
  }
  std::stable_sort(by_worth.begin(), by_worth.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Neighbourhood chosen;
  for (int q = RemovalSize(op, by_worth.size()); q > 0 && !by_worth.empty(); --q) {
    const double u = op.Uniform();
    const auto k = static_cast<size_t>(u * u * u * static_cast<double>(by_worth.size()));
    chosen.removed.push_back(by_worth[k].second);
    by_worth.erase(by_worth.begin() + static_cast<long>(k));
  }
  return chosen;
}

Neighbourhood DestroyRandom(OperatorContext& op, const PassResult& pass) {
  std::vector<int> started = Started(op, pass);
  Neighbourhood chosen;
  for (int q = RemovalSize(op, started.size()); q > 0 && !started.empty(); --q) {
    const size_t k = op.rng() % started.size();
    chosen.removed.push_back(started[k]);
    started.erase(started.begin() + static_cast<long>(k));
  }
  return chosen;
}

}  // namespace ordo::policy::fast
