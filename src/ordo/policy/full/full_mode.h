// Full mode's engine behind the policy, with its knobs and what it did, for the measurement
// driver (bench/tools/full_measure.cc) and tests; the policy runs it with the defaults.
#pragma once

#include <cstdint>
#include <string>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/full/full_policy.h"
#include "ordo/policy/full/lns.h"
#include "ordo/policy/policy.h"

namespace ordo::policy::full {

struct FullModeConfig {
  /// CBC gets the whole model when it has at most this many pattern columns and at most
  /// min(max_whole_nonzeros, whole_nonzeros_per_second * time limit) non-zeros; else LNS. The
  /// root LP alone takes about 3 CPU s at 400k non-zeros (docs/full-mode.md).
  int64_t max_whole_columns = kFullModeMaxWholeColumns;
  double max_whole_nonzeros = 1'000'000;
  double whole_nonzeros_per_second = 25'000;
  /// Share of the remaining time the LP bound may take before LNS starts.
  double lp_bound_share = 0.25;
  /// LNS settings; deadline, stop and seed come from the policy options.
  LnsOptions lns;
};

struct FullModeStats {
  bool whole = false;         // CBC got the whole model (else LNS)
  int64_t columns = 0;        // pattern columns, counted up to max_whole_columns + 1
  int64_t nonzeros = 0;       // of the whole pattern model, when it was built
  double warm_objective = 0;  // of the warm start
  std::string warm_source;    // "fast" or "greedy"
  bool lp_bound = false;      // LNS: the LP relaxation was solved in time for the bound
  LnsStats lns;
};

/// What MakeFullPolicy()->Solve does, with `config` instead of the defaults.
[[nodiscard]] Result<Plan> SolveFullMode(const Scenario& scenario, const PolicyOptions& options,
                                         const FullModeConfig& config,
                                         FullModeStats* stats = nullptr);

}  // namespace ordo::policy::full
