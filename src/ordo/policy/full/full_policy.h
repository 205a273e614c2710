// Full mode: the exact allocation MILP (policy "ordo-full"), solved with COIN-OR CBC from a warm
// start, under the time limit, never worse than its warm start; past the size CBC takes whole,
// large-neighbourhood search. See full_policy.cc for the algorithm and docs/full-mode.md for the
// figures.
#pragma once

#include <memory>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/policy.h"

namespace ordo::policy {

/// Pattern columns up to which full mode may hand the whole model to CBC (if its non-zeros also
/// fit the time limit, see full_mode.h); above, it runs large-neighbourhood search.
inline constexpr int64_t kFullModeMaxWholeColumns = 40'000;

/// Full mode. Solve returns kUnavailable when the build has no CBC.
std::unique_ptr<Policy> MakeFullPolicy();

/// An upper bound on the planning objective of a validated scenario, from LP relaxations: of the
/// pooled model (blocks dropped, each node group pooled; quick, looser) and, when it has at most
/// 100,000 columns and 1M non-zeros and time is left, of the pattern MILP itself; the tighter of
/// those solved. kUnavailable when no LP is solved within `time_limit_s` or the build has no CBC.
/// For `ordo bound`.
[[nodiscard]] Result<double> LpRelaxationBound(const Scenario& scenario, double time_limit_s);

}  // namespace ordo::policy
