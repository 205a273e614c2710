#include "ordo/policy/fast/service_curves.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>

#include "ordo/core/assert.h"
#include "ordo/core/validate.h"

namespace ordo::policy {
namespace {

constexpr long long kNoLimit = std::numeric_limits<int>::max();

class CountPlanner {
 public:
  CountPlanner(const Scenario& s, const std::vector<std::vector<int>>& free,
               const CurveOptions& options, bool* complete)
      : s_(s),
        complete_(complete),
        cap_(options.cap),
        avoid_(options.avoid),
        price_(options.price),
        include_(options.include),
        floor_only_(options.floor_only),
        tightest_first_(options.tightest_first),
        remaining_(free),
        counts_(s.services.size(),
                std::vector<std::vector<int>>(s.cluster.groups.size(),
                                              std::vector<int>(s.horizon_steps, 0))) {
    matching_.resize(s.services.size());
    competition_.assign(s.cluster.groups.size(), 0);
    for (size_t i = 0; i < s.services.size(); ++i) {
      for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
        if (s.services[i].requirement.Matches(s.cluster.groups[g])) {
          matching_[i].push_back(static_cast<int>(g));
          ++competition_[g];
        }
      }
    }
  }

  ServiceCounts Run() {
    const int services = static_cast<int>(s_.services.size());
    // Floors first, the services with the fewest matching GPUs first, so that a flexible service
    // never takes the only GPUs a constrained one can use.
    std::vector<int> order;
    for (int i = 0; i < services; ++i) {
      if (include_.empty() || include_[i]) order.push_back(i);
    }
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
    if (complete_ != nullptr) {
      *complete_ = !short_;
      if (short_) return std::move(counts_);
    }
    // Then the curves above the floors, highest priority first.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      if (s_.services[a].priority != s_.services[b].priority) {
        return s_.services[a].priority > s_.services[b].priority;
      }
      return a < b;
    });
    if (tightest_first_) {
      // Churn limit over peak demand, smallest first (no limit: last); priority breaks ties.
      auto tightness = [&](int i) {
        const Service& service = s_.services[i];
        const int peak = *std::max_element(service.demand.begin(), service.demand.end());
        return service.max_change_per_step
                   ? static_cast<double>(*service.max_change_per_step) / std::max(1, peak)
                   : std::numeric_limits<double>::infinity();
      };
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return tightness(a) < tightness(b); });
    }
    for (int i : order) {
      if (floor_only_.empty() || !floor_only_[i]) PlanCurve(i);
    }
    return std::move(counts_);
  }

 private:
  int Held(int i, int t) const {
    int held = 0;
    for (int g : matching_[i]) held += counts_[i][g][t];
    return held;
  }

  // Takes n more GPUs for service i at step t: first from the groups fewest services can use (a
  // flexible service leaves a constrained one its only GPUs), then from the tightest group that
  // takes all n (best fit: whole groups stay whole for large blocks), then from the group it held
  // at t-1 (fewer ids move), then from the groups with the most room. The caller guarantees room.
  void Take(int i, int t, int n) {
    if (n <= 0) return;
    std::vector<int> groups = matching_[i];
    std::stable_sort(groups.begin(), groups.end(), [&](int a, int b) {
      if (competition_[a] != competition_[b]) return competition_[a] < competition_[b];
      if (!avoid_.empty() && avoid_[a] != avoid_[b]) return avoid_[a] < avoid_[b];
      const bool fits_a = remaining_[a][t] >= n, fits_b = remaining_[b][t] >= n;
      if (fits_a != fits_b) return fits_a;
      if (fits_a && remaining_[a][t] != remaining_[b][t]) {
        return remaining_[a][t] < remaining_[b][t];
      }
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
    ORDO_ASSERT(complete_ != nullptr);
    short_ = true;
  }

  // The service's curve by dynamic programming over (step, GPUs held): maximise the demand served,
  // then hold as few GPUs as possible, subject to floor_t <= R_t <= (its ceiling, its cap, the room
  // the capacity leaves) and |R_t - R_{t-1}| <= max_change_per_step. The result is the smallest
  // curve that covers every unit of demand it can: it ramps up ahead of peaks and comes down no
  // faster than the limit. Cost O(T x max GPUs) per service, with a sliding-window maximum over
  // the churn window.
  void PlanCurve(int i) {
    const Service& service = s_.services[i];
    const int horizon = s_.horizon_steps;
    const std::vector<int> floor = ServiceFloor(s_, i);
    const std::vector<int> ceiling = ServiceCeiling(s_, i);
    std::vector<int> lo(horizon), hi(horizon);
    int top = 0;
    for (int t = 0; t < horizon; ++t) {
      long long room = 0;
      for (int g : matching_[i]) room += remaining_[g][t];
      lo[t] = floor[t];
      hi[t] = static_cast<int>(std::min<long long>(ceiling[t], Held(i, t) + room));
      if (!cap_.empty() && cap_[i] >= 0) hi[t] = std::max(lo[t], std::min(hi[t], cap_[i]));
      ORDO_ASSERT(hi[t] >= lo[t]);
      top = std::max(top, hi[t]);
    }
    const long long churn = service.max_change_per_step.value_or(top + 1);
    // Served demand first; one held GPU-step weighs less than any served unit over the horizon.
    const double kServed = 1.0;
    const double kHeld = 1.0 / (2.0 * horizon * (top + 1));
    constexpr double kNone = -std::numeric_limits<double>::infinity();
    const size_t width = static_cast<size_t>(top) + 1;
    std::vector<double> best(width, kNone), next(width, kNone);
    std::vector<int> choice(static_cast<size_t>(horizon) * width, -1);
    // With prices, a unit of demand served is worth the penalty it avoids (M x priority) and a
    // held GPU costs its step's price.
    const double worth =
        price_.empty() ? kServed : s_.objective.unmet_penalty_multiplier * service.priority;
    auto gain = [&](int t, int r) {
      const double cost = price_.empty() ? kHeld : price_[t] + kHeld;
      return worth * std::min(r, service.demand[t]) - cost * r;
    };
    for (int r = lo[0]; r <= hi[0]; ++r) best[r] = gain(0, r);
    std::deque<int> window;  // candidates r' for the sliding maximum, best value first
    for (int t = 1; t < horizon; ++t) {
      std::fill(next.begin(), next.end(), kNone);
      window.clear();
      int added = lo[t - 1];  // next r' to add to the window
      for (int r = lo[t]; r <= hi[t]; ++r) {
        const long long from = std::max<long long>(lo[t - 1], r - churn);
        const long long to = std::min<long long>(hi[t - 1], r + churn);
        for (; added <= to; ++added) {
          if (best[added] == kNone) continue;
          while (!window.empty() && best[window.back()] <= best[added]) window.pop_back();
          window.push_back(added);
        }
        while (!window.empty() && window.front() < from) window.pop_front();
        if (window.empty()) continue;
        next[r] = best[window.front()] + gain(t, r);
        choice[static_cast<size_t>(t) * width + r] = window.front();
      }
      std::swap(best, next);
    }
    int r = -1;
    for (int k = lo[horizon - 1]; k <= hi[horizon - 1]; ++k) {
      if (best[k] != kNone && (r < 0 || best[k] > best[r])) r = k;
    }
    ORDO_ASSERT(r >= 0);
    std::vector<int> curve(horizon);
    for (int t = horizon - 1; t >= 0; --t) {
      curve[t] = r;
      if (t > 0) r = choice[static_cast<size_t>(t) * width + r];
    }
    for (int t = 0; t < horizon; ++t) Take(i, t, curve[t] - Held(i, t));
  }

  const Scenario& s_;
  bool* complete_;               // where a floor that does not fit is reported (null: it is a bug)
  bool short_ = false;           // some floor did not fit
  const std::vector<int>& cap_;  // per service: most GPUs it may hold (< 0 or empty: no cap)
  const std::vector<double>& avoid_;  // per group: ranks groups before best fit (empty: none)
  const std::vector<double>& price_;  // per step: cost of a held GPU (empty: cover all demand)
  const std::vector<char>& include_;
  const std::vector<char>& floor_only_;
  bool tightest_first_;
  std::vector<std::vector<int>> remaining_;
  std::vector<std::vector<int>> matching_;
  std::vector<int> competition_;  // per group: how many services may use it
  ServiceCounts counts_;
};

}  // namespace

ServiceCounts PlanServiceCounts(const Scenario& scenario, const std::vector<std::vector<int>>& free,
                                const CurveOptions& options, bool* complete) {
  return CountPlanner(scenario, free, options, complete).Run();
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
