#include "ordo/policy/fast/service_gpu_ids.h"

#include "ordo/core/assert.h"

namespace ordo::policy {

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
