// The COIN-OR CBC adapter (CBC 2.10, Debian's coinor-libcbc-dev): CbcModel over
// OsiClpSolverInterface. This header names no COIN-OR type, so code outside solver/cbc/ can hold
// a CbcBackend; only cbc_backend.cc includes COIN-OR.
#pragma once

#include <string_view>

#include "ordo/solver/milp_backend.h"

namespace ordo::solver {

/// What CBC reported after a solve, as plain values (so the mapping is testable without CBC).
struct CbcOutcome {
  int status = -1;  // CbcModel::status(): -1 not run, 0 finished, 1 limit, 2 abandoned, 5 event
  int secondary_status = -1;  // CbcModel::secondaryStatus(): 0 done, 1 infeasible, 2 gap, 3 nodes,
                              // 4 time, 5 event, 6 solutions, 7 unbounded, 8 iterations
  bool proven_infeasible = false;     // CbcModel::isProvenInfeasible()
  bool continuous_unbounded = false;  // CbcModel::isContinuousUnbounded()
  bool has_solution = false;          // CbcModel::bestSolution() != nullptr
  bool has_start = false;             // a verified feasible MIP start was given
};

/// The one mapping from CBC's status pair to ModelStatus. Every input maps to some status; an
/// unknown combination is kError. With a start, CBC's "infeasible" means nothing beats the start
/// (it was the cutoff), so the start is optimal.
ModelStatus MapCbcStatus(const CbcOutcome& outcome);

/// CBC's LP solver (Clp) status after an LP solve, as plain values.
struct ClpOutcome {
  bool proven_optimal = false;  // isProvenOptimal()
  bool proven_primal_infeasible = false;
  bool proven_dual_infeasible = false;  // the LP is unbounded
  bool limit_reached = false;           // iteration or time limit, or the stop event
  bool abandoned = false;               // numerical trouble
};
ModelStatus MapClpStatus(const ClpOutcome& outcome);

/// Branch and cut through CBC's own driver (CbcMain0/CbcMain1 on a CbcModel over
/// OsiClpSolverInterface: preprocessing, CBC's default cut generators and heuristics), one thread,
/// wall-clock limit, log level 0 with every message captured into MilpResult::log. A maximisation
/// is handed to CBC negated. The returned solution is never worse than a feasible MIP start.
/// CBC's driver keeps file-level state, so its runs are serialised across threads in a process
/// (two backends in two threads take turns); the root LP and the LP relaxation run in parallel.
class CbcBackend final : public MilpBackend {
 public:
  [[nodiscard]] std::string_view name() const override { return "cbc"; }
  [[nodiscard]] Result<MilpResult> Solve(const MilpModel& model,
                                         const SolveParams& params) override;
  [[nodiscard]] Result<MilpResult> SolveLpRelaxation(const MilpModel& model,
                                                     const SolveParams& params) override;
};

}  // namespace ordo::solver
