#include "ordo/policy/baselines/floor_guard.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace ordo::policy::baselines {

bool NeedsFit(const Cluster& cluster, const std::vector<int>& available,
              const std::vector<FloorNeed>& needs) {
  long long total_need = 0;
  for (const FloorNeed& n : needs) total_need += std::max(0, n.need);
  if (total_need == 0) return true;

  // GPU kinds: groups with the same type and memory serve the same requirements.
  std::map<std::pair<std::string, double>, int> kind_index;
  std::vector<const NodeGroup*> kind_group;
  std::vector<long long> kind_free;
  for (size_t g = 0; g < cluster.groups.size(); ++g) {
    const NodeGroup& group = cluster.groups[g];
    auto [it, inserted] = kind_index.try_emplace({group.gpu_type, group.gpu_memory_gb},
                                                 static_cast<int>(kind_group.size()));
    if (inserted) {
      kind_group.push_back(&group);
      kind_free.push_back(0);
    }
    kind_free[it->second] += std::max(0, available[g]);
  }
  const size_t nk = kind_group.size();
  // Classes: needs matching the same set of kinds compete for the same GPUs.
  std::map<std::vector<bool>, long long> classes;
  for (const FloorNeed& n : needs) {
    if (n.need <= 0) continue;
    std::vector<bool> matches(nk);
    long long reachable = 0;
    for (size_t k = 0; k < nk; ++k) {
      matches[k] = n.requirement->Matches(*kind_group[k]);
      if (matches[k]) reachable += kind_free[k];
    }
    if (reachable < n.need) return false;
    classes[matches] += n.need;
  }
  // Edmonds-Karp on source -> class -> kind -> sink; the graph has a handful of nodes.
  const size_t nc = classes.size(), n = nc + nk + 2, src = n - 2, sink = n - 1;
  std::vector<std::vector<long long>> cap(n, std::vector<long long>(n, 0));
  size_t c = 0;
  for (const auto& [matches, need] : classes) {
    cap[src][c] = need;
    for (size_t k = 0; k < nk; ++k) {
      if (matches[k]) cap[c][nc + k] = need;
    }
    ++c;
  }
  for (size_t k = 0; k < nk; ++k) cap[nc + k][sink] = kind_free[k];
  long long flow = 0;
  std::vector<size_t> parent(n), queue;
  while (flow < total_need) {
    std::fill(parent.begin(), parent.end(), n);
    parent[src] = src;
    queue.assign(1, src);
    for (size_t q = 0; q < queue.size() && parent[sink] == n; ++q) {
      for (size_t v = 0; v < n; ++v) {
        if (parent[v] == n && cap[queue[q]][v] > 0) {
          parent[v] = queue[q];
          queue.push_back(v);
        }
      }
    }
    if (parent[sink] == n) break;
    long long push = total_need;
    for (size_t v = sink; v != src; v = parent[v]) push = std::min(push, cap[parent[v]][v]);
    for (size_t v = sink; v != src; v = parent[v]) {
      cap[parent[v]][v] -= push;
      cap[v][parent[v]] += push;
    }
    flow += push;
  }
  return flow >= total_need;
}

std::vector<int> TakeGuarded(const Cluster& cluster, const GpuRequirement& req, int want,
                             int own_floor, const std::vector<std::vector<int>>& candidates,
                             std::vector<int>& available, const std::vector<FloorNeed>& others) {
  std::vector<int> taken;
  if (want <= 0) return taken;
  const int groups = static_cast<int>(cluster.groups.size());
  std::vector<size_t> next(static_cast<size_t>(groups), 0);
  std::vector<FloorNeed> needs = others;
  needs.push_back(FloorNeed{&req, 0});
  // Whether taking q more from group g keeps every floor satisfiable.
  auto fits_after = [&](int g, int q) {
    available[g] -= q;
    needs.back().need = own_floor - static_cast<int>(taken.size()) - q;
    const bool fits = NeedsFit(cluster, available, needs);
    available[g] += q;
    return fits;
  };
  // A second pass only matters when the holder's own floor is still unmet after the first (a
  // group passed over early may be the only one left that can serve it).
  for (int pass = 0; pass < 2; ++pass) {
    for (int g = 0; g < groups && static_cast<int>(taken.size()) < want; ++g) {
      if (!req.Matches(cluster.groups[g])) continue;
      const int left = static_cast<int>(candidates[g].size() - next[g]);
      int q = std::min(want - static_cast<int>(taken.size()), left);
      if (q <= 0) continue;
      if (!fits_after(g, q)) {
        // Feasibility falls monotonically with q: find the largest q that still fits.
        int lo = 0, hi = q;  // fits(lo), !fits(hi)
        while (hi - lo > 1) {
          const int mid = lo + (hi - lo) / 2;
          (fits_after(g, mid) ? lo : hi) = mid;
        }
        q = lo;
      }
      for (int k = 0; k < q; ++k) taken.push_back(candidates[g][next[g]++]);
      available[g] -= q;
    }
    if (static_cast<int>(taken.size()) >= own_floor) break;
  }
  return taken;
}

}  // namespace ordo::policy::baselines
