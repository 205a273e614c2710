// Upper bounds on the planning objective, for the gap full mode reports.
#pragma once

#include <chrono>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
#include "ordo/solver/milp_backend.h"

namespace ordo::policy::full {

/// Pattern columns up to which the LP relaxation of the pattern model itself is solved; above it,
/// the aggregated relaxation (AggregatedLpBound) stands in.
inline constexpr int64_t kMaxPatternLpColumns = 400'000;

/// The LP relaxation of the pattern model (kMaxPatternLpColumns or fewer columns) or, for bigger
/// instances, of the aggregated model: one column per (job, shape, start, node group) with a
/// capacity row per (group, step) instead of per-GPU cliques. Both relax the exact MILP, so both
/// bound it. kUnavailable when the LP is not solved within the time.
[[nodiscard]] Result<double> LpBound(const Scenario& scenario, solver::MilpBackend& backend,
                                     double time_limit_s, const std::atomic<bool>* stop = nullptr);

/// A bound that needs no solver: running jobs' reward plus, for every other job, the most any one
/// of its placements could earn; no penalty. Loose, but always available.
double TrivialBound(const Scenario& scenario);

}  // namespace ordo::policy::full
