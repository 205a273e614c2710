// The interface every MILP solver adapter implements, and its result types. The call status (did
// the call work at all?) is the Result<>; the model status (what the solver learnt about the model)
// is ModelStatus inside a successful result — kept apart as HiGHS keeps HighsStatus apart from
// HighsModelStatus. "Infeasible" or "stopped at the time limit" are data, not errors.
#pragma once

#include <atomic>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/solver/milp_model.h"

namespace ordo::solver {

/// What the solver learnt about the model. Exhaustive: every backend maps every outcome to one of
/// these. Sent over the wire in reports: values only grow at the end.
enum class ModelStatus : int {
  kOptimal = 0,            // a solution proven optimal within SolveParams::relative_gap
  kFeasibleAtLimit = 1,    // a solution, stopped by a limit or the stop flag before the proof
  kInfeasible = 2,         // proven: no solution exists
  kUnbounded = 3,          // the relaxation is unbounded (the objective has no finite optimum)
  kNoSolutionAtLimit = 4,  // stopped by a limit or the stop flag before finding any solution
  kError = 5,              // the solver gave up (numerical trouble); no claim about the model
};

/// "optimal", "feasible_at_limit", "infeasible", "unbounded", "no_solution_at_limit", "error".
std::string_view ModelStatusName(ModelStatus status);

/// True for the statuses that come with a solution.
inline bool HasSolution(ModelStatus status) {
  return status == ModelStatus::kOptimal || status == ModelStatus::kFeasibleAtLimit;
}

struct SolveParams {
  /// Wall-clock seconds for the whole call (model loading included); infinity for none.
  double time_limit_s = kInfinity;
  /// Stop once the proven relative gap (RelativeGap) is at most this; the result is then
  /// kOptimal. 0 asks for a proof of optimality up to the solver's own tolerances.
  double relative_gap = 0;
  /// Deterministic work limit (branch-and-bound nodes); negative for none. Unlike the time limit,
  /// the same limit gives the same answer on any machine.
  long long max_nodes = -1;
  /// A full column vector to start from. It is checked first (MilpModel::IsFeasible); an
  /// infeasible start is ignored and MilpResult::mip_start_accepted says so. Empty for none.
  std::vector<double> mip_start;
  /// When set, the solve stops at the next opportunity once it reads true; the result is then
  /// kFeasibleAtLimit or kNoSolutionAtLimit. Owned by the caller, read from the solver's thread.
  const std::atomic<bool>* stop = nullptr;
  /// A bound on the model's optimum proven elsewhere (a relaxation solved first), in the model's
  /// sense with the offset; NaN for none. The search stops as soon as its incumbent is within
  /// `relative_gap` of it (the result is then kOptimal), and the reported best_bound is the
  /// tighter of the solver's and this one.
  double known_bound = std::numeric_limits<double>::quiet_NaN();
  /// Seed for the solver's randomised choices.
  int seed = 1;
  /// Solver log verbosity (0 or 1: CBC prints past its handlers above 1, so more is capped); the
  /// log always goes to MilpResult::log, never to standard output.
  int log_level = 0;
};

struct MilpResult {
  ModelStatus status = ModelStatus::kError;
  /// Objective of `solution` in the model's sense, offset included; NaN without a solution.
  double objective = std::numeric_limits<double>::quiet_NaN();
  /// The best proven bound in the model's sense (>= every solution's objective when maximising),
  /// offset included; +/- infinity when none was proven.
  double best_bound = std::numeric_limits<double>::quiet_NaN();
  /// (|best_bound - objective|) / max(1, |best_bound|); infinity without a solution or bound.
  double gap = kInfinity;
  long long nodes = 0;
  /// One value per variable when HasSolution(status), else empty.
  std::vector<double> solution;
  /// Whether SolveParams::mip_start was feasible and handed to the solver.
  bool mip_start_accepted = false;
  /// Everything the solver said, captured (never printed). Bounded in size.
  std::string log;
};

/// A MILP solver. Solve is called once per model; an instance holds no state between calls, but
/// is not thread-safe: use one instance per thread.
class MilpBackend {
 public:
  virtual ~MilpBackend() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;

  /// Solves the model (validated first with FindErrorInModel: an invalid model is a kInvalidInput
  /// error). An Error means the call itself failed; every outcome about the model is a status.
  [[nodiscard]] virtual Result<MilpResult> Solve(const MilpModel& model,
                                                 const SolveParams& params) = 0;

  /// Solves the LP relaxation (integrality dropped). On kOptimal, `objective` and `best_bound`
  /// are the relaxation's optimum — a bound on the MILP. `max_nodes`, `relative_gap` and
  /// `mip_start` are ignored.
  [[nodiscard]] virtual Result<MilpResult> SolveLpRelaxation(const MilpModel& model,
                                                             const SolveParams& params) = 0;
};

/// The backend of that name ("cbc"), or kUnavailable when it is not built in, or kNotFound.
[[nodiscard]] Result<std::unique_ptr<MilpBackend>> MakeMilpBackend(std::string_view name = "cbc");

/// True when this build has CBC, i.e. MakeMilpBackend("cbc") succeeds. The build option
/// ORDO_WITH_CBC is seen only by the solver's own sources; everyone else asks here.
bool HasCbc();

/// The relative gap as MilpResult::gap defines it.
double RelativeGap(double objective, double best_bound);

}  // namespace ordo::solver
