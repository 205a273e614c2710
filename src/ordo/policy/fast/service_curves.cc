#include "ordo/policy/fast/service_curves.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>

#include "ordo/core/assert.h"
#include "ordo/core/validate.h"
#include "ordo/policy/fast/churn_dp.h"

namespace ordo::policy {
namespace {

using fast::BestPairCurves;
using fast::kNone;
using fast::PairBounds;
using fast::PairStepBound;
using fast::SlidingBest;

// std::stable_sort without the allocation of its buffer, for the few groups a service matches
// on most clusters: an insertion sort, stable because an element moves only past greater ones.
template <typename Less>
void StableSortSmall(std::vector<int>& v, const Less& less) {
  constexpr size_t kSmall = 16;
  if (v.size() > kSmall) {
    std::stable_sort(v.begin(), v.end(), less);
    return;
  }
  for (size_t k = 1; k < v.size(); ++k) {
    const int x = v[k];
    size_t at = k;
    for (; at > 0 && less(x, v[at - 1]); --at) v[at] = v[at - 1];
    v[at] = x;
  }
}

class CountPlanner {
 public:
  CountPlanner(const Scenario& s, const std::vector<std::vector<int>>& free,
               const CurveOptions& options, bool* complete)
      : s_(s),
        complete_(complete),
        cap_(options.cap),
        avoid_(options.avoid),
        price_(options.price),
        worth_(options.worth),
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
    std::vector<int> curved;
    for (int i : order) {
      if (floor_only_.empty() || !floor_only_[i]) {
        PlanCurve(i);
        curved.push_back(i);
      }
    }
    // Then pairs that leave demand unmet where they compete for the same GPUs, re-planned
    // together: one at a time, the first takes what the second needed (to start a churn-limited
    // ramp, say), where sharing serves more demand weighted by priority.
    for (size_t a = 0; a < curved.size(); ++a) {
      for (size_t b = a + 1; b < curved.size(); ++b) PlanPair(curved[a], curved[b]);
    }
    return std::move(counts_);
  }

 private:
  // With prices: what a unit of service i's demand served is worth (CurveOptions::worth).
  double Worth(int i) const {
    return worth_.empty() ? s_.objective.unmet_penalty_multiplier * s_.services[i].priority
                          : worth_[i];
  }

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
    if (TakeUpTo(i, t, n) == 0) return;
    ORDO_ASSERT(complete_ != nullptr);
    short_ = true;
  }

  // Take's choice of groups; returns how many of the n GPUs found no room.
  int TakeUpTo(int i, int t, int n) {
    if (n <= 0) return 0;
    std::vector<int>& groups = take_order_;
    groups.assign(matching_[i].begin(), matching_[i].end());
    StableSortSmall(groups, [&](int a, int b) {
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
      if (n == 0) return 0;
    }
    return n;
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
    // No optimal curve holds more than the larger of its peak demand and its highest floor:
    // clipping a curve there keeps every floor and churn limit, serves as much and holds less. So
    // the states stop there, not at max_gpus (thousands on a large cluster, where the table of
    // choices below would be T x max_gpus).
    int clip = *std::max_element(floor.begin(), floor.end());
    for (int t = 0; t < horizon; ++t) clip = std::max(clip, service.demand[t]);
    int top = 0;
    int unclipped_top = 0;  // the weights below keep their values from before the clip
    for (int t = 0; t < horizon; ++t) {
      long long room = 0;
      for (int g : matching_[i]) room += remaining_[g][t];
      lo[t] = floor[t];
      hi[t] = static_cast<int>(std::min<long long>(ceiling[t], Held(i, t) + room));
      if (!cap_.empty() && cap_[i] >= 0) hi[t] = std::max(lo[t], std::min(hi[t], cap_[i]));
      ORDO_ASSERT(hi[t] >= lo[t]);
      unclipped_top = std::max(unclipped_top, hi[t]);
      hi[t] = std::min(hi[t], std::max(lo[t], clip));
      top = std::max(top, hi[t]);
    }
    const long long churn = service.max_change_per_step.value_or(unclipped_top + 1);
    // Served demand first; one held GPU-step weighs less than any served unit over the horizon.
    const double served_weight = 1.0;
    const double held_weight = 1.0 / (2.0 * horizon * (unclipped_top + 1));
    const size_t width = static_cast<size_t>(top) + 1;
    std::vector<double> best(width, kNone), next(width, kNone);
    std::vector<int> choice(static_cast<size_t>(horizon) * width, -1);
    // With prices, a unit of demand served is worth the penalty it avoids (M x priority) and a
    // held GPU costs its step's price.
    const double worth = price_.empty() ? served_weight : Worth(i);
    auto gain = [&](int t, int r) {
      const double cost = price_.empty() ? held_weight : price_[t] + held_weight;
      return worth * std::min(r, service.demand[t]) - cost * r;
    };
    for (int r = lo[0]; r <= hi[0]; ++r) best[r] = gain(0, r);
    std::deque<int> window;
    for (int t = 1; t < horizon; ++t) {
      std::fill(next.begin(), next.end(), kNone);
      SlidingBest(
          lo[t - 1], hi[t - 1], lo[t], hi[t], churn, [&](int r) { return best[r]; },
          [&](int r, int from) {
            next[r] = best[from] + gain(t, r);
            choice[static_cast<size_t>(t) * width + r] = from;
          },
          window);
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

  // What service i's curve earns at step t holding r GPUs, in units where `weight` is a served
  // GPU-step's worth: without prices, weight x demand served minus a held GPU-step's tiny cost
  // (served demand first, then as few GPUs as possible); with prices, as PlanCurve's gain.
  double PairGain(int i, int t, int r, double weight, double held_cost) const {
    const Service& service = s_.services[i];
    const double served = std::min(r, service.demand[t]);
    if (price_.empty()) return weight * served - held_cost * r;
    return Worth(i) * served - (price_[t] + held_cost) * r;
  }

  // Services i and j re-planned together by a dynamic program over (step, GPUs of i, GPUs of j):
  // each within its floor, ceiling, cap and churn limit, i within the room of its groups, j of
  // its, and both within the room of their groups together (with two services, that is exactly
  // when the counts fit the groups). It maximises the demand served weighted by priority (then
  // the fewest GPUs held), where planning one after the other serves the first service's demand
  // before any of the second's. Kept only when it gains and the counts fit the groups; else the
  // two curves stay. Runs only where the pair leaves demand unmet and its states are few
  // (O(T x peak_i x peak_j)).
  void PlanPair(int i, int j) {
    const int horizon = s_.horizon_steps;
    if (!PairMayGain(i, j)) return;
    const std::optional<PairBounds> bounds = BoundsOfPair(i, j);
    if (!bounds) return;
    const size_t states = (static_cast<size_t>(bounds->top_i) + 1) *
                          (static_cast<size_t>(bounds->top_j) + 1) * static_cast<size_t>(horizon);
    constexpr size_t kMaxStates = 1 << 16;  // steps x states: the table stays small
    if (states > kMaxStates) return;
    const double low = std::min(s_.services[i].priority, s_.services[j].priority);
    const double weight_i = low > 0 ? s_.services[i].priority / low : 1.0;
    const double weight_j = low > 0 ? s_.services[j].priority / low : 1.0;
    const double held_cost =
        1.0 / (4.0 * horizon * static_cast<double>(bounds->top_i + bounds->top_j + 1));
    auto gain_i = [&](int t, int a) { return PairGain(i, t, a, weight_i, held_cost); };
    auto gain_j = [&](int t, int b) { return PairGain(j, t, b, weight_j, held_cost); };
    auto gain = [&](int t, int a, int b) { return gain_i(t, a) + gain_j(t, b); };
    double current = 0;
    for (int t = 0; t < horizon; ++t) current += gain(t, Held(i, t), Held(j, t));
    // Most pairs that may gain do not: the bound without churn limits rules them out first, at a
    // fraction of the program's cost.
    const std::optional<double> bound = PairStepBound(*bounds, horizon, gain_i, gain_j);
    if (!bound || *bound <= current + 1e-9) return;
    const std::optional<fast::PairCurves> curves = BestPairCurves(*bounds, horizon, gain);
    if (!curves || curves->value <= current + 1e-9) return;
    TakePair(i, j, curves->i, curves->j);
  }

  // A pair re-planned together can serve more only where it leaves demand unmet, shares a group,
  // and the room ran out for one of them at some step (else caps, ceilings and churn limits, not
  // the other service, left the demand unmet).
  bool PairMayGain(int i, int j) const {
    const int horizon = s_.horizon_steps;
    if (!price_.empty() && Worth(i) <= 0 && Worth(j) <= 0) return false;
    long long unmet = 0;
    for (int t = 0; t < horizon; ++t) {
      unmet += std::max(0, s_.services[i].demand[t] - Held(i, t)) +
               std::max(0, s_.services[j].demand[t] - Held(j, t));
    }
    if (unmet == 0) return false;
    bool shared = false;
    for (int g : matching_[i]) {
      shared =
          shared || std::find(matching_[j].begin(), matching_[j].end(), g) != matching_[j].end();
    }
    if (!shared) return false;
    for (int t = 0; t < horizon; ++t) {
      long long room_i = 0, room_j = 0;
      for (int g : matching_[i]) room_i += remaining_[g][t];
      for (int g : matching_[j]) room_j += remaining_[g][t];
      if (room_i == 0 || room_j == 0) return true;
    }
    return false;
  }

  // The pair's bounds with both services' GPUs given back; empty when its floors do not fit.
  std::optional<PairBounds> BoundsOfPair(int i, int j) const {
    const int horizon = s_.horizon_steps;
    std::vector<char> in_i(s_.cluster.groups.size(), 0), in_j(s_.cluster.groups.size(), 0);
    for (int g : matching_[i]) in_i[g] = 1;
    for (int g : matching_[j]) in_j[g] = 1;
    PairBounds b;
    b.lo_i = ServiceFloor(s_, i);
    b.lo_j = ServiceFloor(s_, j);
    const std::vector<int> ceil_i = ServiceCeiling(s_, i), ceil_j = ServiceCeiling(s_, j);
    b.hi_i.resize(horizon);
    b.hi_j.resize(horizon);
    b.room.resize(horizon);
    // Holding more than the peak demand never serves more.
    const auto peak = [&](int k) {
      return static_cast<long long>(
          *std::max_element(s_.services[k].demand.begin(), s_.services[k].demand.end()));
    };
    for (int t = 0; t < horizon; ++t) {
      long long room_i = 0, room_j = 0, room_both = 0;
      for (size_t g = 0; g < in_i.size(); ++g) {
        const long long back = remaining_[g][t] + counts_[i][g][t] + counts_[j][g][t];
        if (in_i[g]) room_i += back;
        if (in_j[g]) room_j += back;
        if (in_i[g] || in_j[g]) room_both += back;
      }
      b.hi_i[t] =
          std::max(b.lo_i[t], static_cast<int>(std::min<long long>({ceil_i[t], room_i, peak(i)})));
      b.hi_j[t] =
          std::max(b.lo_j[t], static_cast<int>(std::min<long long>({ceil_j[t], room_j, peak(j)})));
      if (!cap_.empty() && cap_[i] >= 0)
        b.hi_i[t] = std::max(b.lo_i[t], std::min(b.hi_i[t], cap_[i]));
      if (!cap_.empty() && cap_[j] >= 0)
        b.hi_j[t] = std::max(b.lo_j[t], std::min(b.hi_j[t], cap_[j]));
      b.room[t] = static_cast<int>(std::min<long long>(room_both, std::numeric_limits<int>::max()));
      if (b.hi_i[t] < b.lo_i[t] || b.hi_j[t] < b.lo_j[t] || b.lo_i[t] + b.lo_j[t] > b.room[t]) {
        return std::nullopt;
      }
      b.top_i = std::max(b.top_i, b.hi_i[t]);
      b.top_j = std::max(b.top_j, b.hi_j[t]);
    }
    b.churn_i = s_.services[i].max_change_per_step.value_or(b.top_i + 1);
    b.churn_j = s_.services[j].max_change_per_step.value_or(b.top_j + 1);
    return b;
  }

  // Gives both services' GPUs back and takes the new counts, the service with fewer groups first
  // at each step; if they do not fit the groups after all, the two curves stay.
  void TakePair(int i, int j, const std::vector<int>& curve_i, const std::vector<int>& curve_j) {
    const int horizon = s_.horizon_steps;
    const auto saved_remaining = remaining_;
    const auto saved_i = counts_[i], saved_j = counts_[j];
    for (size_t g = 0; g < s_.cluster.groups.size(); ++g) {
      for (int t = 0; t < horizon; ++t) {
        remaining_[g][t] += counts_[i][g][t] + counts_[j][g][t];
        counts_[i][g][t] = counts_[j][g][t] = 0;
      }
    }
    const bool i_first = matching_[i].size() <= matching_[j].size();
    bool fits = true;
    for (int t = 0; t < horizon && fits; ++t) {
      fits = i_first ? TakeUpTo(i, t, curve_i[t]) == 0 && TakeUpTo(j, t, curve_j[t]) == 0
                     : TakeUpTo(j, t, curve_j[t]) == 0 && TakeUpTo(i, t, curve_i[t]) == 0;
    }
    if (!fits) {
      remaining_ = saved_remaining;
      counts_[i] = saved_i;
      counts_[j] = saved_j;
    }
  }

  const Scenario& s_;
  bool* complete_;               // where a floor that does not fit is reported (null: it is a bug)
  bool short_ = false;           // some floor did not fit
  const std::vector<int>& cap_;  // per service: most GPUs it may hold (< 0 or empty: no cap)
  const std::vector<double>& avoid_;  // per group: ranks groups before best fit (empty: none)
  const std::vector<double>& price_;  // per step: cost of a held GPU (empty: cover all demand)
  const std::vector<double>& worth_;  // per service: a served GPU-step's worth against price_
  const std::vector<char>& include_;
  const std::vector<char>& floor_only_;
  bool tightest_first_;
  std::vector<std::vector<int>> remaining_;
  std::vector<std::vector<int>> matching_;
  std::vector<int> competition_;  // per group: how many services may use it
  ServiceCounts counts_;
  std::vector<int> take_order_;  // TakeUpTo's groups, kept so that each call reuses their storage
};

}  // namespace

ServiceCounts PlanServiceCounts(const Scenario& scenario, const std::vector<std::vector<int>>& free,
                                const CurveOptions& options, bool* complete) {
  return CountPlanner(scenario, free, options, complete).Run();
}

}  // namespace ordo::policy
