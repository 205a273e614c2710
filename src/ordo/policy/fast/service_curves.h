// Real-time services as curves: how many GPUs each service holds at each step, in which group, and
// then which GPU ids.
#pragma once

#include <vector>

#include "ordo/core/scenario.h"

namespace ordo::policy {

/// counts[service][group][step]: GPUs a service holds in a group at a step.
using ServiceCounts = std::vector<std::vector<std::vector<int>>>;

/// How PlanServiceCounts plans (empty vectors: the default of each).
struct CurveOptions {
  /// Services with `include[i] == 0` get no GPUs at all (they are planned in another call).
  std::vector<char> include;
  /// Services with `floor_only[i] != 0` get their floors only.
  std::vector<char> floor_only;
  /// Per service: the most GPUs it may hold (< 0: no cap).
  std::vector<int> cap;
  /// Per group: ranks groups before best fit — a service takes GPUs from the groups with the least
  /// `avoid` first (fast mode passes the batch work that can run only in a few groups, so services
  /// keep out of the groups type-bound jobs need).
  std::vector<double> avoid;
  /// Per step: what a held GPU costs (the batch reward it displaces). Each curve then maximises
  /// M x priority x demand served minus price x GPUs held instead of covering all the demand it
  /// can, so a service gives way to batch work where the work is worth more.
  std::vector<double> price;
  /// Per service, with `price`: what a unit of demand served is worth (empty: the penalty it
  /// avoids, M x priority). A budget on unmet demand gives it a worth where M gives none.
  std::vector<double> worth;
  /// Curves of the services whose churn limit is tightest against their peak first (else by
  /// priority): a churn-limited service that must ramp early gets the GPUs it needs for the ramp
  /// before a less constrained one takes them.
  bool tightest_first = false;
};

/// Plans the services' GPU counts before any batch work, on the GPUs the running jobs leave:
///  - floors first (min_gpus, or the churn limit's way down from current_gpus), the most
///    constrained services first, so every legal floor is kept;
///  - then services by priority (highest first, ties in file order) get, on the capacity left and
///    under their caps, the smallest curve that covers all the demand it can and obeys
///    max_change_per_step: it ramps up ahead of a peak and never holds more than the demand and
///    the churn limit need. Shortfall falls on the lowest priority;
///  - then each pair of those services that leaves demand unmet where one of them ran out of
///    room is re-planned together (a dynamic program over both counts), kept where it serves
///    more demand weighted by priority: one at a time, the first may take the GPUs the second
///    needed to start a churn-limited ramp.
/// Group choice packs services to keep large blocks whole: the groups fewest services can use
/// first, then the tightest group that takes the whole request (best fit), then the group held at
/// the step before. `free[group][step]` is the capacity left to services; `options` as above.
/// The floors must fit `free`; when the caller cannot promise that, it passes `complete`, which is
/// set to false (and the counts are then below some floor) where they do not, instead of an
/// assertion failing. Cost O(S x T x groups), plus O(T x peak_i x peak_j) per pair re-planned (only
/// where that is at most 65,536 states).
ServiceCounts PlanServiceCounts(const Scenario& scenario, const std::vector<std::vector<int>>& free,
                                const CurveOptions& options = {}, bool* complete = nullptr);

}  // namespace ordo::policy
