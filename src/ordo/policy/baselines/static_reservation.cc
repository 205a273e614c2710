#include "ordo/policy/baselines/static_reservation.h"

#include <algorithm>
#include <functional>

#include "ordo/core/validate.h"
#include "ordo/policy/baselines/floor_guard.h"

namespace ordo::policy {

namespace {

using baselines::FloorNeed;
using baselines::TakeGuarded;

// The service's count at each step: from current_gpus towards the reservation size by the churn
// limit, but never below its floor (the floor exceeds the reservation only when the reservation
// came out short, or on a ramp down from above it).
std::vector<int> ServiceCounts(const Service& service, int reserved,
                               const std::vector<int>& floor) {
  const int steps = static_cast<int>(floor.size());
  std::vector<int> counts(static_cast<size_t>(steps), reserved);
  if (service.current_gpus && service.max_change_per_step) {
    long long count = *service.current_gpus;
    const long long limit = *service.max_change_per_step;
    for (int t = 0; t < steps; ++t) {
      count = count < reserved ? std::min<long long>(reserved, count + limit)
                               : std::max<long long>(reserved, count - limit);
      counts[t] = static_cast<int>(count);
    }
  }
  for (int t = 0; t < steps; ++t) counts[t] = std::max(counts[t], floor[t]);
  return counts;
}

}  // namespace

StaticReservation ComputeStaticReservation(const Scenario& scenario) {
  const Cluster& cluster = scenario.cluster;
  const int gpus = cluster.total_gpus();
  const int steps = scenario.horizon_steps;
  const int groups = static_cast<int>(cluster.groups.size());
  const int services = static_cast<int>(scenario.services.size());

  StaticReservation result;
  result.reserved.resize(services);
  result.allocated.assign(services, std::vector<std::vector<int>>(steps));
  if (services == 0) return result;

  // Every running job holds its block at step 0 (start <= 0 < end), so "used by a running job at
  // some step of the horizon" is "inside a running block". running_end: the step it is freed.
  std::vector<int> running_end(static_cast<size_t>(gpus), 0);
  for (const Job& job : scenario.jobs) {
    if (!job.running) continue;
    const Shape& shape = job.shapes.front();
    for (int gpu = job.running->first_gpu; gpu < job.running->first_gpu + shape.gpus; ++gpu) {
      running_end[gpu] = job.running_end_step();
    }
  }

  std::vector<std::vector<int>> floors(services);
  for (int i = 0; i < services; ++i) floors[i] = ServiceFloor(scenario, i);

  // 1. Reservations, services in file order.
  std::vector<char> reserved(static_cast<size_t>(gpus), 0);
  std::vector<int> available(static_cast<size_t>(groups), 0);  // free at step 0, unreserved
  for (int gpu = 0; gpu < gpus; ++gpu) available[cluster.group_of(gpu)] += running_end[gpu] <= 0;
  std::vector<std::vector<int>> candidates(static_cast<size_t>(groups));
  std::vector<FloorNeed> others;
  for (int i = 0; i < services; ++i) {
    const Service& service = scenario.services[i];
    const int peak = *std::max_element(service.demand.begin(), service.demand.end());
    const int target =
        std::clamp(peak, service.min_gpus, std::max(service.min_gpus, service.max_gpus));
    for (int g = 0; g < groups; ++g) {
      candidates[g].clear();
      if (!service.requirement.Matches(cluster.groups[g])) continue;
      const int first = cluster.group_first_gpu(g);
      for (int gpu = first + cluster.group_gpus(g) - 1; gpu >= first; --gpu) {
        if (running_end[gpu] <= 0 && !reserved[gpu]) candidates[g].push_back(gpu);
      }
    }
    // Step 0 is where floors are highest and running jobs hold the most, so floors that fit there
    // fit at every step.
    others.clear();
    for (int k = 0; k < services; ++k) {
      if (k == i) continue;
      const int need =
          k < i ? floors[k][0] - static_cast<int>(result.reserved[k].size()) : floors[k][0];
      others.push_back(FloorNeed{&scenario.services[k].requirement, need});
    }
    result.reserved[i] = TakeGuarded(cluster, service.requirement, target, floors[i][0], candidates,
                                     available, others);
    for (int gpu : result.reserved[i]) reserved[gpu] = 1;
  }

  // 2. Counts per step, and the extra GPUs where a floor exceeds the reservation.
  std::vector<std::vector<int>> counts(services);
  std::vector<std::vector<int>> extra_need(services, std::vector<int>(steps, 0));
  bool any_extra = false;
  for (int i = 0; i < services; ++i) {
    const int size = static_cast<int>(result.reserved[i].size());
    counts[i] = ServiceCounts(scenario.services[i], size, floors[i]);
    for (int t = 0; t < steps; ++t) {
      extra_need[i][t] = std::max(0, counts[i][t] - size);
      any_extra |= extra_need[i][t] > 0;
    }
  }
  std::vector<std::vector<std::vector<int>>> extras(services, std::vector<std::vector<int>>(steps));
  if (any_extra) {
    std::vector<char> taken(static_cast<size_t>(gpus), 0);
    for (int t = 0; t < steps; ++t) {
      std::fill(taken.begin(), taken.end(), 0);
      std::fill(available.begin(), available.end(), 0);
      for (int gpu = 0; gpu < gpus; ++gpu) {
        available[cluster.group_of(gpu)] += running_end[gpu] <= t && !reserved[gpu];
      }
      for (int i = 0; i < services; ++i) {
        if (extra_need[i][t] == 0) continue;
        const Service& service = scenario.services[i];
        for (int g = 0; g < groups; ++g) {
          candidates[g].clear();
          if (!service.requirement.Matches(cluster.groups[g])) continue;
          const int first = cluster.group_first_gpu(g);
          for (int gpu = first + cluster.group_gpus(g) - 1; gpu >= first; --gpu) {
            if (running_end[gpu] <= t && !reserved[gpu] && !taken[gpu])
              candidates[g].push_back(gpu);
          }
        }
        others.clear();
        for (int k = i + 1; k < services; ++k) {
          others.push_back(FloorNeed{&scenario.services[k].requirement, extra_need[k][t]});
        }
        extras[i][t] = TakeGuarded(cluster, service.requirement, extra_need[i][t], extra_need[i][t],
                                   candidates, available, others);
        for (int gpu : extras[i][t]) taken[gpu] = 1;
      }
    }
  }

  // 3. Allocations: the highest ids of the reservation, plus the extras.
  for (int i = 0; i < services; ++i) {
    std::vector<int> by_id = result.reserved[i];
    std::sort(by_id.begin(), by_id.end(), std::greater<>());
    const int size = static_cast<int>(by_id.size());
    for (int t = 0; t < steps; ++t) {
      std::vector<int>& ids = result.allocated[i][t];
      ids.assign(by_id.begin(), by_id.begin() + std::min(size, counts[i][t]));
      ids.insert(ids.end(), extras[i][t].begin(), extras[i][t].end());
      std::sort(ids.begin(), ids.end());
    }
  }
  return result;
}

}  // namespace ordo::policy
