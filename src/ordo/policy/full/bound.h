// Upper bounds on the planning objective, for the gap full mode reports.
#pragma once

#include <atomic>
#include <cstdint>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
#include "ordo/solver/milp_backend.h"

namespace ordo::policy::full {

/// Up to these sizes the LP relaxation of the pattern model itself is tried; above, only the
/// pooled model's (pooled_model.h). The pattern LP is dense (a pattern sits in one clique per GPU
/// atom and step it covers): 400k non-zeros solve in about 3 CPU seconds, 1.8M did not in a minute.
inline constexpr int64_t kMaxPatternLpColumns = 100'000;
inline constexpr int64_t kMaxPatternLpNonzeros = 1'000'000;

/// An LP bound on the planning objective: the LP relaxation of the pooled model — one column
/// per (job, shape, start, node group), a capacity row per (group, step) instead of per-GPU
/// cliques, far sparser, solved first — then, when within the sizes above and time is left, of the
/// pattern model itself; the tighter of those solved. Both relax the exact MILP, so both bound it.
/// `pattern_model`, when given, is the whole pattern model already built. A model whose estimate
/// (model_size.h) is over `memory_budget_bytes` is not built. kUnavailable when no LP is solved
/// within the time and the budget.
[[nodiscard]] Result<double> LpBound(const Scenario& scenario, solver::MilpBackend& backend,
                                     double time_limit_s, const std::atomic<bool>* stop = nullptr,
                                     const solver::MilpModel* pattern_model = nullptr,
                                     double memory_budget_bytes = 1e300);

/// A bound that needs no solver: running jobs' reward plus, for every other job, the most any one
/// of its placements could earn; no penalty. Loose, but always available.
double TrivialBound(const Scenario& scenario);

}  // namespace ordo::policy::full
