// The only file that includes COIN-OR headers. Everything CBC-specific — loading a MilpModel into
// Clp, the cut generators and heuristics, the wall-clock limit, the stop flag, the MIP start, the
// message capture and the status mapping — lives here.
#include "ordo/solver/cbc/cbc_backend.h"

#include <CbcEventHandler.hpp>
#include <CbcHeuristic.hpp>
#include <CbcHeuristicFPump.hpp>
#include <CbcHeuristicLocal.hpp>
#include <CbcHeuristicRINS.hpp>
#include <CbcModel.hpp>
#include <CglClique.hpp>
#include <CglFlowCover.hpp>
#include <CglGomory.hpp>
#include <CglKnapsackCover.hpp>
#include <CglMixedIntegerRounding2.hpp>
#include <CglProbing.hpp>
#include <CglTwomir.hpp>
#include <ClpEventHandler.hpp>
#include <ClpSimplex.hpp>
#include <CoinError.hpp>
#include <CoinMessageHandler.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace ordo::solver {
namespace {

using Clock = std::chrono::steady_clock;

// Captured log is capped so a long search cannot grow it without bound.
constexpr size_t kMaxLogBytes = size_t{1} << 20;

/// Sends every message CBC, Clp and Cgl emit through it into a string instead of standard output.
/// Clones share the sink; the sink outlives every model that holds a clone (see Solve).
class CapturingMessageHandler : public CoinMessageHandler {
 public:
  CapturingMessageHandler(std::string* sink, int log_level) : sink_(sink) {
    setLogLevel(log_level);
  }
  int print() override {
    if (sink_->size() < kMaxLogBytes) {
      sink_->append(messageBuffer());
      sink_->push_back('\n');
    }
    return 0;
  }
  CoinMessageHandler* clone() const override { return new CapturingMessageHandler(*this); }

 private:
  std::string* sink_;
};

/// Stops branch and bound when the caller's flag is raised or the wall-clock deadline passes
/// (CBC checks its own time limit only at some points; this is checked at every node).
class StopEventHandler : public CbcEventHandler {
 public:
  StopEventHandler(const std::atomic<bool>* stop, Clock::time_point deadline)
      : stop_(stop), deadline_(deadline) {}
  CbcAction event(CbcEvent) override {
    if ((stop_ != nullptr && stop_->load(std::memory_order_relaxed)) || Clock::now() >= deadline_) {
      return stop;
    }
    return noAction;
  }
  CbcEventHandler* clone() const override { return new StopEventHandler(*this); }

 private:
  const std::atomic<bool>* stop_;
  Clock::time_point deadline_;
};

/// The same for Clp's simplex iterations (the LP relaxation and the root of branch and bound).
class ClpStopEventHandler : public ClpEventHandler {
 public:
  ClpStopEventHandler(const std::atomic<bool>* stop, Clock::time_point deadline)
      : stop_(stop), deadline_(deadline) {}
  int event(Event which) override {
    if (which != endOfIteration) return -1;
    if (++iterations_ % 64 != 0) return -1;  // the clock is not free; look every 64 iterations
    if ((stop_ != nullptr && stop_->load(std::memory_order_relaxed)) || Clock::now() >= deadline_) {
      return 0;
    }
    return -1;
  }
  ClpEventHandler* clone() const override { return new ClpStopEventHandler(*this); }

 private:
  const std::atomic<bool>* stop_;
  Clock::time_point deadline_;
  long long iterations_ = 0;
};

/// CBC 2.10's heuristics call printf directly above log level 1 (CbcHeuristic's small branch and
/// bound), bypassing every handler; so the level is capped at 1 to keep standard output clean.
int CappedLogLevel(int requested) { return std::clamp(requested, 0, 1); }

double ToCoin(double bound) {
  if (bound == kInfinity) return COIN_DBL_MAX;
  if (bound == -kInfinity) return -COIN_DBL_MAX;
  return bound;
}

Clock::time_point DeadlineAfter(Clock::time_point start, double seconds) {
  // Anything above a year is "no limit"; converting infinity to a duration is undefined.
  const double capped = std::clamp(seconds, 0.0, 365.0 * 24 * 3600);
  return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped));
}

double SecondsLeft(Clock::time_point deadline) {
  return std::max(0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
}

/// Loads `model` into `solver` as a minimisation (a maximisation is negated). Returns the sign
/// that turns the solver's objective back into the model's sense.
Result<double> Load(const MilpModel& model, OsiClpSolverInterface& solver) {
  if (model.num_nonzeros() >= INT_MAX) {
    return Fail(Error{ErrorCode::kInvalidInput, "rows", "too many non-zeros for CBC"});
  }
  const int n = model.num_variables();
  const int m = model.num_rows();
  const double sign = model.sense() == Sense::kMaximize ? -1.0 : 1.0;
  std::vector<CoinBigIndex> start(static_cast<size_t>(m) + 1);
  std::vector<int> length(static_cast<size_t>(m));
  for (int r = 0; r <= m; ++r) start[r] = static_cast<CoinBigIndex>(model.row_start()[r]);
  for (int r = 0; r < m; ++r) length[r] = static_cast<int>(start[r + 1] - start[r]);
  const CoinPackedMatrix matrix(/*colordered=*/false, n, m, start[m], model.row_value().data(),
                                model.row_index().data(), start.data(), length.data());
  std::vector<double> lower(n), upper(n), objective(n), row_lower(m), row_upper(m);
  for (int j = 0; j < n; ++j) {
    lower[j] = ToCoin(model.lower()[j]);
    upper[j] = ToCoin(model.upper()[j]);
    objective[j] = sign * model.objective()[j];
  }
  for (int r = 0; r < m; ++r) {
    row_lower[r] = ToCoin(model.row_lower()[r]);
    row_upper[r] = ToCoin(model.row_upper()[r]);
  }
  solver.loadProblem(matrix, lower.data(), upper.data(), objective.data(), row_lower.data(),
                     row_upper.data());
  for (int j = 0; j < n; ++j) {
    if (model.integer()[j]) solver.setInteger(j);
  }
  solver.setObjSense(1.0);
  solver.setHintParam(OsiDoReducePrint, true, OsiHintTry);
  return sign;
}

/// Rounds integer columns and clips to bounds: CBC's values are integral only to its tolerance.
std::vector<double> CleanSolution(const MilpModel& model, const double* values) {
  std::vector<double> x(values, values + model.num_variables());
  for (int j = 0; j < model.num_variables(); ++j) {
    if (model.integer()[j]) x[j] = std::round(x[j]);
    x[j] = std::clamp(x[j], model.lower()[j], model.upper()[j]);
  }
  return x;
}

void AddCutsAndHeuristics(CbcModel& cbc) {
  // CBC's command-line defaults, in spirit: each generator at the root and then wherever it pays.
  CglProbing probing;
  probing.setUsingObjective(1);
  probing.setMaxPass(1);
  probing.setMaxPassRoot(5);
  probing.setMaxProbe(10);
  probing.setMaxProbeRoot(1000);
  probing.setMaxLook(50);
  probing.setMaxLookRoot(500);
  probing.setMaxElements(200);
  probing.setRowCuts(3);
  cbc.addCutGenerator(&probing, -1, "Probing");
  CglGomory gomory;
  gomory.setLimit(300);
  cbc.addCutGenerator(&gomory, -1, "Gomory");
  CglKnapsackCover knapsack;
  cbc.addCutGenerator(&knapsack, -1, "Knapsack");
  CglClique clique;
  clique.setStarCliqueReport(false);
  clique.setRowCliqueReport(false);
  cbc.addCutGenerator(&clique, -1, "Clique");
  CglMixedIntegerRounding2 mir;
  cbc.addCutGenerator(&mir, -1, "MixedIntegerRounding2");
  CglFlowCover flow;
  cbc.addCutGenerator(&flow, -1, "FlowCover");
  CglTwomir twomir;
  cbc.addCutGenerator(&twomir, -99, "TwoMirCuts");  // -99: root only

  CbcRounding rounding(cbc);
  cbc.addHeuristic(&rounding);
  CbcHeuristicFPump pump(cbc);
  pump.setMaximumPasses(20);
  cbc.addHeuristic(&pump);
  CbcHeuristicLocal local(cbc);
  cbc.addHeuristic(&local);
  CbcHeuristicRINS rins(cbc);
  cbc.addHeuristic(&rins);
  // addCutGenerator and addHeuristic copy their arguments, so the locals may go.
}

void FillSolution(const MilpModel& model, double sign, CbcModel& cbc, MilpResult& result) {
  result.nodes = cbc.getNodeCount();
  const double bound = sign * cbc.getBestPossibleObjValue();
  result.best_bound = std::isfinite(bound) && std::abs(bound) < 1e50
                          ? bound + model.objective_offset()
                          : (model.sense() == Sense::kMaximize ? kInfinity : -kInfinity);
  if (!HasSolution(result.status)) return;
  result.solution = CleanSolution(model, cbc.bestSolution());
  result.objective = model.ObjectiveValue(result.solution);
  // CBC's bound can sit a tolerance on the wrong side of its own incumbent.
  if (model.sense() == Sense::kMaximize) {
    result.best_bound = std::max(result.best_bound, result.objective);
  } else {
    result.best_bound = std::min(result.best_bound, result.objective);
  }
  if (result.status == ModelStatus::kOptimal && result.nodes == 0 &&
      !std::isfinite(result.best_bound)) {
    result.best_bound = result.objective;
  }
  result.gap = RelativeGap(result.objective, result.best_bound);
}

}  // namespace

ModelStatus MapCbcStatus(const CbcOutcome& o) {
  if (o.continuous_unbounded || o.secondary_status == 7) return ModelStatus::kUnbounded;
  switch (o.status) {
    case 0:  // finished: a solution is optimal, no solution is a proof of infeasibility
      if (o.has_solution) return ModelStatus::kOptimal;
      return ModelStatus::kInfeasible;
    case 1:  // stopped on a limit
    case 5:  // stopped by the event handler (the stop flag or the deadline)
      if (o.proven_infeasible && !o.has_solution) return ModelStatus::kInfeasible;
      if (o.secondary_status == 2 && o.has_solution) return ModelStatus::kOptimal;  // gap reached
      return o.has_solution ? ModelStatus::kFeasibleAtLimit : ModelStatus::kNoSolutionAtLimit;
    case 2:  // abandoned: numerical difficulties
    case -1:  // branch and bound never ran
    default:
      return ModelStatus::kError;
  }
}

ModelStatus MapClpStatus(const ClpOutcome& o) {
  if (o.proven_optimal) return ModelStatus::kOptimal;
  if (o.proven_primal_infeasible) return ModelStatus::kInfeasible;
  if (o.proven_dual_infeasible) return ModelStatus::kUnbounded;
  if (o.limit_reached) return ModelStatus::kNoSolutionAtLimit;
  return ModelStatus::kError;  // abandoned or an unknown state
}

Result<MilpResult> CbcBackend::Solve(const MilpModel& model, const SolveParams& params) {
  const Clock::time_point started = Clock::now();
  const Clock::time_point deadline = DeadlineAfter(started, params.time_limit_s);
  if (auto valid = FindErrorInModel(model); !valid) return Fail(valid.error());
  if (params.relative_gap < 0 || std::isnan(params.relative_gap)) {
    return FailInput("relative_gap", "must be >= 0");
  }
  if (std::isnan(params.time_limit_s) || params.time_limit_s < 0) {
    return FailInput("time_limit_s", "must be >= 0");
  }
  if (!params.mip_start.empty() &&
      static_cast<int>(params.mip_start.size()) != model.num_variables()) {
    return FailInput("mip_start", "has " + std::to_string(params.mip_start.size()) +
                                      " values for " + std::to_string(model.num_variables()) +
                                      " variables");
  }
  MilpResult result;
  // Declared before every COIN object that holds a clone of the handler, so it outlives them.
  std::string log;
  const int log_level = CappedLogLevel(params.log_level);
  try {
    CapturingMessageHandler handler(&log, log_level);
    OsiClpSolverInterface solver;
    solver.passInMessageHandler(&handler);
    solver.messageHandler()->setLogLevel(log_level);
    auto sign = Load(model, solver);
    if (!sign) return Fail(sign.error());
    solver.getModelPtr()->setRandomSeed(params.seed);

    CbcModel cbc(solver);  // copies the solver
    cbc.passInMessageHandler(&handler);
    cbc.solver()->passInMessageHandler(&handler);
    cbc.setLogLevel(log_level);
    cbc.solver()->messageHandler()->setLogLevel(log_level);
    cbc.setNumberThreads(0);
    cbc.setRandomSeed(params.seed);
    cbc.setUseElapsedTime(true);
    cbc.setMaximumSeconds(SecondsLeft(deadline));
    if (params.max_nodes >= 0) {
      cbc.setMaximumNodes(static_cast<int>(std::min<long long>(params.max_nodes, INT_MAX)));
    }
    cbc.setAllowableFractionGap(params.relative_gap);
    cbc.setAllowableGap(1e-9);
    cbc.setNumberStrong(5);
    cbc.setNumberBeforeTrust(10);
    cbc.setPrintFrequency(0);
    const StopEventHandler stop_handler(params.stop, deadline);
    cbc.passInEventHandler(&stop_handler);
    ClpStopEventHandler clp_stop(params.stop, deadline);
    if (auto* clp = dynamic_cast<OsiClpSolverInterface*>(cbc.solver())) {
      clp->getModelPtr()->passInEventHandler(&clp_stop);
    }
    AddCutsAndHeuristics(cbc);

    cbc.initialSolve();
    if (cbc.solver()->isProvenPrimalInfeasible()) {
      result.status = ModelStatus::kInfeasible;
      result.log = std::move(log);
      return result;
    }
    if (cbc.solver()->isProvenDualInfeasible()) {
      result.status = ModelStatus::kUnbounded;
      result.log = std::move(log);
      return result;
    }
    if (!params.mip_start.empty() && model.IsFeasible(params.mip_start)) {
      std::vector<double> start = params.mip_start;
      for (int j = 0; j < model.num_variables(); ++j) {
        if (model.integer()[j]) start[j] = std::round(start[j]);
      }
      const double internal =
          *sign * (model.ObjectiveValue(start) - model.objective_offset());
      cbc.setBestSolution(start.data(), model.num_variables(), internal, /*check=*/true);
      result.mip_start_accepted = cbc.bestSolution() != nullptr;
    }
    if (SecondsLeft(deadline) > 0 && !(params.stop != nullptr && params.stop->load())) {
      cbc.setMaximumSeconds(SecondsLeft(deadline));
      cbc.branchAndBound();
    }
    CbcOutcome outcome;
    outcome.status = cbc.status();
    outcome.secondary_status = cbc.secondaryStatus();
    outcome.proven_infeasible = cbc.isProvenInfeasible();
    outcome.continuous_unbounded = cbc.isContinuousUnbounded();
    outcome.has_solution = cbc.bestSolution() != nullptr;
    if (outcome.status == -1) {
      // Branch and bound never ran (no time left, or stopped): a stop, not a solver failure.
      outcome.status = 5;
    }
    result.status = MapCbcStatus(outcome);
    FillSolution(model, *sign, cbc, result);
  } catch (const CoinError& e) {
    return Fail(Error{ErrorCode::kInternal, "", "CBC failed: " + e.message()});
  } catch (const std::bad_alloc&) {
    return Fail(Error{ErrorCode::kInternal, "", "CBC ran out of memory"});
  } catch (const std::exception& e) {
    return Fail(Error{ErrorCode::kInternal, "", std::string("CBC failed: ") + e.what()});
  }
  result.log = std::move(log);
  return result;
}

Result<MilpResult> CbcBackend::SolveLpRelaxation(const MilpModel& model,
                                                 const SolveParams& params) {
  const Clock::time_point deadline = DeadlineAfter(Clock::now(), params.time_limit_s);
  if (auto valid = FindErrorInModel(model); !valid) return Fail(valid.error());
  if (std::isnan(params.time_limit_s) || params.time_limit_s < 0) {
    return FailInput("time_limit_s", "must be >= 0");
  }
  MilpResult result;
  std::string log;
  const int log_level = CappedLogLevel(params.log_level);
  try {
    CapturingMessageHandler handler(&log, log_level);
    OsiClpSolverInterface solver;
    solver.passInMessageHandler(&handler);
    auto sign = Load(model, solver);
    if (!sign) return Fail(sign.error());
    for (int j = 0; j < model.num_variables(); ++j) solver.setContinuous(j);
    ClpSimplex* clp = solver.getModelPtr();
    clp->passInMessageHandler(&handler);
    clp->setLogLevel(log_level);
    clp->setRandomSeed(params.seed);
    clp->setMaximumWallSeconds(SecondsLeft(deadline));
    ClpStopEventHandler clp_stop(params.stop, deadline);
    clp->passInEventHandler(&clp_stop);
    solver.initialSolve();
    ClpOutcome outcome;
    outcome.proven_optimal = solver.isProvenOptimal();
    outcome.proven_primal_infeasible = solver.isProvenPrimalInfeasible();
    outcome.proven_dual_infeasible = solver.isProvenDualInfeasible();
    outcome.limit_reached = clp->status() == 3 || clp->status() == 5;
    outcome.abandoned = solver.isAbandoned();
    result.status = MapClpStatus(outcome);
    if (result.status == ModelStatus::kOptimal) {
      result.solution.assign(solver.getColSolution(),
                             solver.getColSolution() + model.num_variables());
      result.objective = *sign * solver.getObjValue() + model.objective_offset();
      result.best_bound = result.objective;
      result.gap = 0;
    }
  } catch (const CoinError& e) {
    return Fail(Error{ErrorCode::kInternal, "", "Clp failed: " + e.message()});
  } catch (const std::bad_alloc&) {
    return Fail(Error{ErrorCode::kInternal, "", "Clp ran out of memory"});
  } catch (const std::exception& e) {
    return Fail(Error{ErrorCode::kInternal, "", std::string("Clp failed: ") + e.what()});
  }
  result.log = std::move(log);
  return result;
}

}  // namespace ordo::solver
