#include "ordo/policy/fast/service_curves.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "ordo/core/assert.h"
#include "ordo/core/validate.h"

namespace ordo::policy {
namespace {

constexpr long long kNoLimit = std::numeric_limits<int>::max();

class CountPlanner {
 public:
  CountPlanner(const Scenario& s, const std::vector<std::vector<int>>& free)
      : s_(s),
        remaining_(free),
        counts_(s.services.size(),
                std::vector<std::vector<int>>(s.cluster.groups.size(),
                                              std::vector<int>(s.horizon_steps, 0))) {
    matching_.resize(s.services.size());
    for (size_t i = 0; i < s.services.size(); ++i) {
      for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
        if (s.services[i].requirement.Matches(s.cluster.groups[g])) {
          matching_[i].push_back(static_cast<int>(g));
        }
      }
    }
  }

  ServiceCounts Run() {
    const int services = static_cast<int>(s_.services.size());
    // Floors first, the services with the fewest matching GPUs first, so that a flexible service
    // never takes the only GPUs a constrained one can use.
    std::vector<int> order(services);
    std::iota(order.begin(), order.end(), 0);
    auto reach = [&](int i) {
      long long gpus = 0;
      for (int g : matching_[i]) gpus += s_.cluster.group_gpus(g);
      return gpus;
    };
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return reach(a) < reach(b); });
    for (int i : order) {
      const std::vector<int> floor = ServiceFloor(s_, i);
      for (int t = 0; t < s_.horizon_steps; ++t) Take(i, t, floor[t]);
    }
    // Then the curves above the floors, highest priority first.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (s_.services[a].priority != s_.services[b].priority) {
        return s_.services[a].priority > s_.services[b].priority;
      }
      return a < b;
    });
    for (int i : order) PlanCurve(i);
    return std::move(counts_);
  }

 private:
  int Held(int i, int t) const {
    int held = 0;
    for (int g : matching_[i]) held += counts_[i][g][t];
    return held;
  }

  // Takes n more GPUs for service i at step t: from the groups it held at t-1 first, then from the
  // groups with the most room. The caller guarantees the room exists.
  void Take(int i, int t, int n) {
    if (n <= 0) return;
    std::vector<int> groups = matching_[i];
    std::stable_sort(groups.begin(), groups.end(), [&](int a, int b) {
      const int prev_a = t > 0 ? counts_[i][a][t - 1] : 0;
      const int prev_b = t > 0 ? counts_[i][b][t - 1] : 0;
      if ((prev_a > 0) != (prev_b > 0)) return prev_a > 0;
      return remaining_[a][t] > remaining_[b][t];
    });
    for (int g : groups) {
      const int take = std::min(n, remaining_[g][t]);
      counts_[i][g][t] += take;
      remaining_[g][t] -= take;
      n -= take;
      if (n == 0) return;
    }
    ORDO_ASSERT(n == 0);
  }

  void PlanCurve(int i) {
    const Service& service = s_.services[i];
    const int horizon = s_.horizon_steps;
    const std::vector<int> floor = ServiceFloor(s_, i);
    const std::vector<int> ceiling = ServiceCeiling(s_, i);
    const long long churn = service.max_change_per_step.value_or(kNoLimit);
    const bool from_current = service.current_gpus && service.max_change_per_step;

    // The highest curve the capacity and the churn limit allow.
    std::vector<long long> upper(horizon);
    for (int t = 0; t < horizon; ++t) {
      long long room = 0;
      for (int g : matching_[i]) room += remaining_[g][t];
      upper[t] = std::min<long long>(ceiling[t], Held(i, t) + room);
    }
    long long previous = from_current ? *service.current_gpus : kNoLimit;
    for (int t = 0; t < horizon; ++t) {
      if (previous != kNoLimit) upper[t] = std::min(upper[t], previous + churn);
      previous = upper[t];
    }
    for (int t = horizon - 2; t >= 0; --t) upper[t] = std::min(upper[t], upper[t + 1] + churn);

    // The smallest curve above the demand (capped by `upper`) that the churn limit allows: ramp up
    // ahead of a peak (backward), come down no faster than the limit (forward).
    std::vector<long long> want(horizon);
    for (int t = 0; t < horizon; ++t) {
      want[t] = std::min<long long>(std::max(service.demand[t], floor[t]), upper[t]);
    }
    for (int t = horizon - 2; t >= 0; --t) want[t] = std::max(want[t], want[t + 1] - churn);
    previous = from_current ? *service.current_gpus : -kNoLimit;
    for (int t = 0; t < horizon; ++t) {
      want[t] = std::max(want[t], previous - churn);
      previous = want[t];
    }
    for (int t = 0; t < horizon; ++t) {
      ORDO_ASSERT(want[t] <= upper[t] && want[t] >= floor[t]);
      Take(i, t, static_cast<int>(want[t]) - Held(i, t));
    }
  }

  const Scenario& s_;
  std::vector<std::vector<int>> remaining_;
  std::vector<std::vector<int>> matching_;
  ServiceCounts counts_;
};

}  // namespace

ServiceCounts PlanServiceCounts(const Scenario& scenario,
                                const std::vector<std::vector<int>>& free) {
  return CountPlanner(scenario, free).Run();
}

void AssignServiceGpus(const Scenario& scenario, const ServiceCounts& counts,
                       const std::vector<char>& job_busy, Plan& plan) {
  const Cluster& cluster = scenario.cluster;
  const int total = cluster.total_gpus();
  const int services = static_cast<int>(scenario.services.size());
  constexpr int kFree = -1, kJob = -2;
  std::vector<int> owner(total);
  std::vector<int> need(services);
  for (int t = 0; t < scenario.horizon_steps; ++t) {
    for (int gpu = 0; gpu < total; ++gpu) {
      owner[gpu] = job_busy[static_cast<size_t>(t) * total + gpu] ? kJob : kFree;
    }
    for (size_t g = 0; g < cluster.groups.size(); ++g) {
      const int first = cluster.group_first_gpu(static_cast<int>(g));
      const int end = first + cluster.group_gpus(static_cast<int>(g));
      // Keep: each service keeps the lowest of the ids it held at t-1 in this group.
      for (int i = 0; i < services; ++i) {
        need[i] = counts[i][g][t];
        if (t == 0 || need[i] == 0) continue;
        for (int gpu : plan.services[i].gpus[t - 1]) {  // ascending
          if (need[i] == 0) break;
          if (gpu >= first && gpu < end && owner[gpu] == kFree) {
            owner[gpu] = i;
            --need[i];
          }
        }
      }
      // Grow: from the highest free id down.
      int gpu = end - 1;
      for (int i = 0; i < services; ++i) {
        for (; need[i] > 0 && gpu >= first; --gpu) {
          if (owner[gpu] != kFree) continue;
          owner[gpu] = i;
          --need[i];
        }
        ORDO_ASSERT(need[i] == 0);
      }
    }
    for (int i = 0; i < services; ++i) plan.services[i].gpus[t].clear();
    for (int gpu = 0; gpu < total; ++gpu) {
      if (owner[gpu] >= 0) plan.services[owner[gpu]].gpus[t].push_back(gpu);
    }
  }
}

}  // namespace ordo::policy
