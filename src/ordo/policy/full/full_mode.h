// Full mode's engine behind the policy, with its knobs and what it did, for the measurement
// driver (bench/tools/full_measure.cc) and tests; the policy runs it with the defaults.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/full/full_policy.h"
#include "ordo/policy/full/lns.h"
#include "ordo/policy/full/pattern_model.h"
#include "ordo/policy/policy.h"

namespace ordo::policy::full {

struct FullModeConfig {
  /// CBC gets the whole model when it has at most this many pattern columns and at most
  /// min(max_whole_nonzeros, whole_nonzeros_per_second * time limit) non-zeros; else LNS. The
  /// root LP's time grows with the non-zeros (docs/full-mode.md, "The solve").
  int64_t max_whole_columns = kFullModeMaxWholeColumns;
  double max_whole_nonzeros = 1'000'000;
  double whole_nonzeros_per_second = 25'000;
  /// Share of the remaining time CBC gets on a whole model of more than whole_alone_nonzeros
  /// non-zeros (smaller ones get all of it); when CBC has not proven optimality by then, LNS
  /// improves its incumbent in the rest: on the largest models CBC rarely gets past its root
  /// (docs/full-mode.md, "The solve").
  double whole_share = 0.5;
  double whole_alone_nonzeros = 100'000;
  /// Shares of the remaining time the pooled model (pooled_model.h) may take before the whole
  /// pattern model, and then the packing of its solution into blocks (whole path). Chosen on the
  /// contended instances of docs/full-mode.md: a smaller share cut off pooled models that CBC
  /// proves just inside this one.
  double pooled_share = 0.45;
  double pack_share = 0.1;
  /// Share of the remaining time the LP bound may take before LNS starts (LNS path).
  double lp_bound_share = 0.25;
  /// LNS settings; deadline, stop and seed come from the policy options.
  LnsOptions lns;
  /// When set, the model keeps fast mode's two promises as constraints (whole model only: CBC
  /// gets all the time, no LNS; kInvalidArgument when the model is too large for that).
  std::optional<Promises> promises;
};

struct FullModeStats {
  bool whole = false;         // CBC got the whole model (else LNS)
  int64_t columns = 0;        // pattern columns, counted up to max_whole_columns + 1
  int64_t nonzeros = 0;       // of the whole pattern model, when it was built
  double warm_objective = 0;  // of the warm start
  std::string warm_source;    // "fast" or "greedy"
  bool lp_bound = false;      // LNS: the LP relaxation was solved in time for the bound
  std::string pooled_status;  // whole path: the pooled model's status ("" when not solved)
  double pooled_bound = std::numeric_limits<double>::quiet_NaN();
  bool packed = false;  // the pooled optimum was packed into blocks whole (so it is optimal)
  /// A model the algorithm would have built was over the memory budget and skipped
  /// (metrics.solver.status "model_too_large" unless the plan is proven optimal anyway).
  bool too_large = false;
  LnsStats lns;
};

/// What MakeFullPolicy()->Solve does, with `config` instead of the defaults.
[[nodiscard]] Result<Plan> SolveFullMode(const Scenario& scenario, const PolicyOptions& options,
                                         const FullModeConfig& config,
                                         FullModeStats* stats = nullptr);

}  // namespace ordo::policy::full
