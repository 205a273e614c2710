#include "ordo/solver/milp_backend.h"

#include <algorithm>
#include <cmath>

#if defined(ORDO_WITH_CBC)
#include "ordo/solver/cbc/cbc_backend.h"
#endif

namespace ordo::solver {

std::string_view ModelStatusName(ModelStatus status) {
  switch (status) {
    case ModelStatus::kOptimal:
      return "optimal";
    case ModelStatus::kFeasibleAtLimit:
      return "feasible_at_limit";
    case ModelStatus::kInfeasible:
      return "infeasible";
    case ModelStatus::kUnbounded:
      return "unbounded";
    case ModelStatus::kNoSolutionAtLimit:
      return "no_solution_at_limit";
    case ModelStatus::kError:
      return "error";
  }
  return "error";
}

double RelativeGap(double objective, double best_bound) {
  if (!std::isfinite(objective) || !std::isfinite(best_bound)) return kInfinity;
  return std::abs(best_bound - objective) / std::max(1.0, std::abs(best_bound));
}

Result<std::unique_ptr<MilpBackend>> MakeMilpBackend(std::string_view name) {
  if (name == "cbc") {
#if defined(ORDO_WITH_CBC)
    return std::unique_ptr<MilpBackend>(std::make_unique<CbcBackend>());
#else
    return Fail(Error{ErrorCode::kUnavailable, "solver",
                      "this build has no CBC (configure with -DORDO_WITH_CBC=ON)"});
#endif
  }
  return Fail(Error{ErrorCode::kNotFound, "solver",
                    "unknown MILP backend '" + std::string(name) + "' (known: cbc)"});
}

bool HasCbc() {
#if defined(ORDO_WITH_CBC)
  return true;
#else
  return false;
#endif
}

}  // namespace ordo::solver
