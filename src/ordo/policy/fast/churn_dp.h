// The dynamic programs over a service's GPU count by step under a churn limit (service_curves.cc):
// the step of one service's curve, and the best curves of two services planned together.
#pragma once

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <vector>

namespace ordo::policy::fast {

/// A dynamic program's value that no path reaches.
inline constexpr double kNone = -std::numeric_limits<double>::infinity();

/// One step of a churn-limited dynamic program: for every count r in [lo, hi], the previous count
/// r' in [prev_lo, prev_hi] with |r - r'| <= churn whose value(r') is highest (values of kNone are
/// skipped); emit(r, r') for each r that has one. A sliding-window maximum: O(hi - lo + prev_hi -
/// prev_lo). `window` is scratch space kept across calls.
template <typename Value, typename Emit>
void SlidingBest(int prev_lo, int prev_hi, int lo, int hi, long long churn, const Value& value,
                 const Emit& emit, std::deque<int>& window) {
  window.clear();
  int added = prev_lo;  // next r' to add to the window
  for (int r = lo; r <= hi; ++r) {
    const long long from = std::max<long long>(prev_lo, r - churn);
    const long long to = std::min<long long>(prev_hi, r + churn);
    for (; added <= to; ++added) {
      if (value(added) == kNone) continue;
      while (!window.empty() && value(window.back()) <= value(added)) window.pop_back();
      window.push_back(added);
    }
    while (!window.empty() && window.front() < from) window.pop_front();
    if (!window.empty()) emit(r, window.front());
  }
}

/// Two services' counts by step: service i within [lo_i, hi_i] and j within [lo_j, hi_j] at
/// each step, i + j within `room`, each within its churn limit between steps.
struct PairBounds {
  std::vector<int> lo_i, hi_i, lo_j, hi_j, room;
  int top_i = 0, top_j = 0;  // the highest of hi_i, hi_j
  long long churn_i = 0, churn_j = 0;
};

/// Two curves and the total gain they earn.
struct PairCurves {
  std::vector<int> i, j;
  double value = kNone;
};

/// The pair of curves with the highest total `gain(t, a, b)` under `bounds`, by a dynamic program
/// over (step, a, b) with sliding maxima over each churn window in turn: O(T x (top_i + 1) x
/// (top_j + 1)). Empty when no pair of curves meets the bounds.
template <typename Gain>
std::optional<PairCurves> BestPairCurves(const PairBounds& bounds, int horizon, const Gain& gain) {
  const auto& [lo_i, hi_i, lo_j, hi_j, room, top_i, top_j, churn_i, churn_j] = bounds;
  const size_t wi = static_cast<size_t>(top_i) + 1, wj = static_cast<size_t>(top_j) + 1;
  auto at = [&](size_t a, size_t b) { return a * wj + b; };
  std::vector<double> best(wi * wj, kNone), along_j(wi * wj, kNone), next(wi * wj, kNone);
  std::vector<int> arg_j(wi * wj, -1);
  std::vector<int> choice(static_cast<size_t>(horizon) * wi * wj, -1);  // previous (a, b)
  for (int a = lo_i[0]; a <= hi_i[0]; ++a) {
    for (int b = lo_j[0]; b <= hi_j[0] && a + b <= room[0]; ++b) best[at(a, b)] = gain(0, a, b);
  }
  std::deque<int> window;
  for (int t = 1; t < horizon; ++t) {
    // Sliding maxima of the previous step's values: first over b' within j's churn (for every
    // a'), then over a' within i's churn.
    std::fill(along_j.begin(), along_j.end(), kNone);
    for (int a = lo_i[t - 1]; a <= hi_i[t - 1]; ++a) {
      SlidingBest(
          lo_j[t - 1], hi_j[t - 1], lo_j[t], hi_j[t], churn_j,
          [&](int b) { return best[at(a, b)]; },
          [&](int b, int from) {
            along_j[at(a, b)] = best[at(a, from)];
            arg_j[at(a, b)] = from;
          },
          window);
    }
    std::fill(next.begin(), next.end(), kNone);
    for (int b = lo_j[t]; b <= hi_j[t]; ++b) {
      SlidingBest(
          lo_i[t - 1], hi_i[t - 1], lo_i[t], hi_i[t], churn_i,
          [&](int a) { return along_j[at(a, b)]; },
          [&](int a, int pa) {
            if (a + b > room[t]) return;
            const int pb = arg_j[at(pa, b)];
            next[at(a, b)] = along_j[at(pa, b)] + gain(t, a, b);
            choice[static_cast<size_t>(t) * wi * wj + at(a, b)] = static_cast<int>(at(pa, pb));
          },
          window);
    }
    std::swap(best, next);
  }
  size_t end = best.size();
  for (size_t k = 0; k < best.size(); ++k) {
    if (best[k] != kNone && (end == best.size() || best[k] > best[end])) end = k;
  }
  if (end == best.size()) return std::nullopt;
  PairCurves curves{std::vector<int>(horizon), std::vector<int>(horizon), best[end]};
  for (int t = horizon - 1; t >= 0; --t) {
    curves.i[t] = static_cast<int>(end / wj);
    curves.j[t] = static_cast<int>(end % wj);
    if (t > 0) end = static_cast<size_t>(choice[static_cast<size_t>(t) * wi * wj + end]);
  }
  return curves;
}

/// The most BestPairCurves could earn under `bounds` with a gain that is a sum, gain_i(t, a) +
/// gain_j(t, b), were neither service churn-limited: the sum over steps of each step's best (a, b)
/// on its own. An upper bound on BestPairCurves' value (its curves are among those counted here,
/// and a floating-point sum only grows with its terms) at O(T x (top_i + top_j)) against the
/// program's O(T x top_i x top_j); empty where some step has no (a, b) within the bounds, where
/// the program finds no curves either.
template <typename GainI, typename GainJ>
std::optional<double> PairStepBound(const PairBounds& bounds, int horizon, const GainI& gain_i,
                                    const GainJ& gain_j) {
  std::vector<double> best_j;  // [b - lo_j]: the most gain_j earns at b or below
  double total = 0;
  for (int t = 0; t < horizon; ++t) {
    const int lo_j = bounds.lo_j[t], hi_j = bounds.hi_j[t];
    best_j.clear();
    for (int b = lo_j; b <= hi_j; ++b) {
      best_j.push_back(std::max(best_j.empty() ? kNone : best_j.back(), gain_j(t, b)));
    }
    double step = kNone;
    for (int a = bounds.lo_i[t]; a <= bounds.hi_i[t]; ++a) {
      const int most_b = std::min(hi_j, bounds.room[t] - a);
      if (most_b < lo_j) break;  // a larger a leaves j even less room
      step = std::max(step, gain_i(t, a) + best_j[most_b - lo_j]);
    }
    if (step == kNone) return std::nullopt;
    total += step;
  }
  return total;
}

}  // namespace ordo::policy::fast
