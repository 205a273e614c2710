#include "ordo/policy/full/greedy_start.h"

#include <algorithm>
#include <numeric>

#include "ordo/core/validate.h"
#include "ordo/policy/fast/block_grid.h"

namespace ordo::policy::full {

std::vector<std::vector<std::vector<int>>> GreedyServiceCounts(
    const Scenario& scenario, const std::vector<uint8_t>& blocked) {
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  const int groups = static_cast<int>(cluster.groups.size());
  const int services = static_cast<int>(scenario.services.size());
  std::vector<std::vector<int>> free(groups, std::vector<int>(steps, 0));
  for (int g = 0; g < groups; ++g) {
    const int first = cluster.group_first_gpu(g);
    for (int gpu = first; gpu < first + cluster.group_gpus(g); ++gpu) {
      for (int t = 0; t < steps; ++t)
        free[g][t] += blocked[static_cast<size_t>(gpu) * steps + t] == 0;
    }
  }
  std::vector<std::vector<std::vector<int>>> counts(
      services, std::vector<std::vector<int>>(groups, std::vector<int>(steps, 0)));
  const auto take = [&](int s, int t, int want) {
    for (int g = 0; g < groups && want > 0; ++g) {
      if (!scenario.services[s].requirement.Matches(cluster.groups[g])) continue;
      const int got = std::min(want, free[g][t]);
      counts[s][g][t] += got;
      free[g][t] -= got;
      want -= got;
    }
  };
  const auto total = [&](int s, int t) {
    int sum = 0;
    for (int g = 0; g < groups; ++g) sum += counts[s][g][t];
    return sum;
  };
  std::vector<std::vector<int>> floors(services), ceilings(services);
  for (int s = 0; s < services; ++s) {
    floors[s] = ServiceFloor(scenario, s);
    ceilings[s] = ServiceCeiling(scenario, s);
    for (int t = 0; t < steps; ++t)
      take(s, t, std::max(scenario.services[s].min_gpus, floors[s][t]));
  }
  std::vector<int> order(services);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return scenario.services[a].priority > scenario.services[b].priority;
  });
  for (int s : order) {
    const Service& service = scenario.services[s];
    const int c = service.max_change_per_step.value_or(Limits::kMaxGpus);
    // The smallest curve that covers demand and can ramp: up before a peak (backward pass), down
    // no faster than the limit after it (forward pass).
    std::vector<int> target(steps);
    for (int t = 0; t < steps; ++t) {
      target[t] = std::clamp(service.demand[t], std::max(service.min_gpus, floors[s][t]),
                             std::min(service.max_gpus, ceilings[s][t]));
    }
    for (int t = steps - 2; t >= 0; --t) target[t] = std::max(target[t], target[t + 1] - c);
    for (int t = 1; t < steps; ++t) target[t] = std::max(target[t], target[t - 1] - c);
    for (int t = 0; t < steps; ++t) take(s, t, target[t] - total(s, t));
    // Capacity may have cut the curve; lower it until every step obeys the limit again (lowering
    // never breaks capacity, and the floors themselves obey the limit).
    std::vector<int> r(steps);
    for (int t = 0; t < steps; ++t) r[t] = total(s, t);
    if (service.max_change_per_step) {
      for (int t = 0; t < steps; ++t) {
        const long long before = t > 0 ? r[t - 1] : service.current_gpus.value_or(Limits::kMaxGpus);
        r[t] = static_cast<int>(std::min<long long>(r[t], before + c));
      }
      for (int t = steps - 2; t >= 0; --t) r[t] = std::min(r[t], r[t + 1] + c);
    }
    for (int t = 0; t < steps; ++t) {
      int excess = total(s, t) - r[t];
      for (int g = groups - 1; g >= 0 && excess > 0; --g) {
        const int back = std::min(excess, counts[s][g][t]);
        counts[s][g][t] -= back;
        free[g][t] += back;
        excess -= back;
      }
    }
  }
  return counts;
}

Decisions GreedyDecisions(const Scenario& scenario, std::chrono::steady_clock::time_point deadline,
                          const std::atomic<bool>* stop) {
  const auto stopped = [&] {
    return std::chrono::steady_clock::now() >= deadline ||
           (stop != nullptr && stop->load(std::memory_order_relaxed));
  };
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  Decisions d = EmptyDecisions(scenario);
  d.service_gpus = GreedyServiceCounts(scenario, BatchOccupancy(scenario, nullptr));
  // Running jobs hold their blocks; the services' counts are reserved per group and step (Realize
  // gives them GPU ids around the jobs' blocks).
  BlockGrid grid(cluster, steps);
  for (const Job& job : scenario.jobs) {
    if (job.running) {
      grid.Occupy(job.running->first_gpu, job.shapes.front().gpus, 0, job.running_end_step());
    }
  }
  for (int g = 0; g < static_cast<int>(cluster.groups.size()); ++g) {
    for (int t = 0; t < steps; ++t) {
      int reserved = 0;
      for (const auto& per_service : d.service_gpus) reserved += per_service[g][t];
      if (reserved > 0) grid.Reserve(g, t, reserved);
    }
  }
  std::vector<int> order;
  for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
    if (!scenario.jobs[j].running && scenario.jobs[j].arrival_step < steps) order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Job& x = scenario.jobs[a];
    const Job& y = scenario.jobs[b];
    if (x.priority != y.priority) return x.priority > y.priority;
    return x.arrival_step < y.arrival_step;
  });
  for (int j : order) {
    if (stopped()) break;
    const Job& job = scenario.jobs[j];
    std::optional<Placement> best;
    double best_reward = 0;
    for (int k = 0; k < static_cast<int>(job.shapes.size()); ++k) {
      const Shape& shape = job.shapes[k];
      const auto found = grid.FindEarliest(shape.gpus, shape.duration_steps, job.requirement,
                                           std::max(0, job.arrival_step));
      if (!found) continue;
      const double reward = PlacementReward(scenario, job, shape, found->start_step);
      if (!best || reward > best_reward) {
        best = Placement{k, found->start_step, found->first_gpu};
        best_reward = reward;
      }
    }
    if (!best) continue;
    d.jobs[j] = best;
    const Shape& shape = job.shapes[best->shape];
    grid.Occupy(best->first_gpu, shape.gpus, best->start, best->start + shape.duration_steps);
  }
  return d;
}

}  // namespace ordo::policy::full
