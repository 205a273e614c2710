#include "ordo/policy/common/headroom.h"

#include <algorithm>
#include <numeric>

#include "ordo/core/metrics.h"

namespace ordo::policy {

namespace {

// The largest rise of `demand` from one step to the next, at least 1.
int LargestRise(const std::vector<int>& demand) {
  int rise = 1;
  for (size_t t = 1; t < demand.size(); ++t) rise = std::max(rise, demand[t] - demand[t - 1]);
  return rise;
}

}  // namespace

void LendIdleGpus(const Scenario& scenario, Plan& plan) {
  const int total = scenario.cluster.total_gpus();
  if (scenario.services.empty() || scenario.horizon_steps < 1) return;
  // busy[t][gpu] for t = 0, 1: held by a job stay or a service.
  std::vector<std::vector<char>> busy(2, std::vector<char>(total, 0));
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    const JobPlacement& p = plan.jobs[j];
    if (!p.started()) continue;
    const JobStays stays = StaysOf(scenario.jobs[j], p);
    for (int k = 0; k < stays.count; ++k) {
      const Stay& stay = stays.stays[k];
      for (int t = 0; t < 2; ++t) {
        if (stay.from <= t && t < stay.to) {
          std::fill_n(busy[t].begin() + stay.first_gpu, p.gpus, 1);
        }
      }
    }
  }
  const int next_steps = std::min(2, scenario.horizon_steps);
  for (const ServiceAllocation& a : plan.services) {
    for (int t = 0; t < next_steps; ++t) {
      for (int gpu : a.gpus[t]) busy[t][gpu] = 1;
    }
  }
  std::vector<size_t> order(scenario.services.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return scenario.services[a].priority > scenario.services[b].priority;
  });
  for (size_t i : order) {
    const Service& service = scenario.services[i];
    std::vector<int>& held = plan.services[i].gpus[0];
    const int count = static_cast<int>(held.size());
    int cap = service.max_gpus;
    if (service.max_change_per_step) {
      const int churn = *service.max_change_per_step;
      if (service.current_gpus) cap = std::min(cap, *service.current_gpus + churn);
      if (next_steps == 2) {
        cap = std::min(cap, static_cast<int>(plan.services[i].gpus[1].size()) + churn);
      }
    } else {
      cap = std::min(cap, count + LargestRise(service.demand));
    }
    int lend = cap - count;
    if (lend <= 0) continue;
    // GPUs it holds at step 1 first (no move at all), then GPUs free at step 1, then the
    // rest; highest ids first, as services grow.
    std::vector<char> own_next(total, 0);
    if (next_steps == 2) {
      for (int gpu : plan.services[i].gpus[1]) own_next[gpu] = 1;
    }
    for (int pass = 0; pass < 3 && lend > 0; ++pass) {
      for (int gpu = total - 1; gpu >= 0 && lend > 0; --gpu) {
        if (busy[0][gpu] || (pass == 0 && !own_next[gpu]) ||
            (pass == 1 && next_steps == 2 && busy[1][gpu])) {
          continue;
        }
        const int group = scenario.cluster.group_of(gpu);
        if (!service.requirement.Matches(scenario.cluster.groups[group])) continue;
        busy[0][gpu] = 1;
        held.push_back(gpu);
        --lend;
      }
    }
    std::sort(held.begin(), held.end());
  }
}

}  // namespace ordo::policy
