// The only file that includes COIN-OR headers. Everything CBC-specific — loading a MilpModel into
// Clp, the cut generators and heuristics, the wall-clock limit, the stop flag, the MIP start, the
// message capture and the status mapping — lives here.
#include "ordo/solver/cbc/cbc_backend.h"

#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
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
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
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

/// Stops branch and bound when the caller's flag is raised, the wall-clock deadline passes (CBC
/// checks its own time limit only at some points; this is checked at every node) or the incumbent
/// reaches `enough` (CBC's internal, minimising objective; -infinity for never).
class StopEventHandler : public CbcEventHandler {
 public:
  StopEventHandler(const std::atomic<bool>* stop, Clock::time_point deadline, double enough)
      : stop_(stop), deadline_(deadline), enough_(enough) {}
  CbcAction event(CbcEvent which) override {
    // Only between nodes: "stop" answered to a solution or heuristic event means something else
    // there (and was seen to crash CBC 2.10's postprocessing).
    if (which != node && which != treeStatus) return noAction;
    if ((stop_ != nullptr && stop_->load(std::memory_order_relaxed)) || Clock::now() >= deadline_) {
      return stop;
    }
    // The known bound is about the whole model: not a heuristic's sub-model (it has a parent).
    if (model_ != nullptr && model_->parentModel() == nullptr &&
        model_->bestSolution() != nullptr && model_->getMinimizationObjValue() <= enough_) {
      return stop;
    }
    return noAction;
  }
  CbcEventHandler* clone() const override { return new StopEventHandler(*this); }

 private:
  const std::atomic<bool>* stop_;
  Clock::time_point deadline_;
  double enough_;
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

/// Serialises CbcMain0/CbcMain1 across threads: CbcSolver.cpp keeps file-level state. Timed, so
/// that a solve waiting behind another one still ends at its own deadline or stop.
std::timed_mutex& DriverMutex() {
  static std::timed_mutex mutex;
  return mutex;
}

/// CbcMain1's per-phase callback: nothing to do (0 = carry on).
int NoCallback(CbcModel* /*model*/, int /*where_from*/) { return 0; }

/// Formats a number for CBC's argument parser.
std::string Arg(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

/// Fills the solution, objective, bound and gap after CbcMain1. The solution is the better of
/// CBC's incumbent and the verified start (`start`, empty for none): CBC prunes against the start's
/// objective and may keep no vector of its own when nothing beats it.
void FillSolution(const MilpModel& model, double sign, CbcModel& cbc, bool searched,
                  bool stopped_at_gap, const std::vector<double>& start, double root_bound,
                  MilpResult& result) {
  const bool maximise = model.sense() == Sense::kMaximize;
  const double none = maximise ? kInfinity : -kInfinity;
  const auto better = [&](double a, double b) { return maximise ? a > b : a < b; };
  result.nodes = cbc.getNodeCount();
  result.best_bound = root_bound;  // the root LP's optimum bounds the model in any case
  if (!HasSolution(result.status)) return;
  double cbc_objective = std::numeric_limits<double>::quiet_NaN();
  if (cbc.bestSolution() != nullptr) {
    result.solution = CleanSolution(model, cbc.bestSolution());
    result.objective = cbc_objective = model.ObjectiveValue(result.solution);
  }
  if (!start.empty()) {
    const double start_objective = model.ObjectiveValue(start);
    if (result.solution.empty() || better(start_objective, result.objective)) {
      result.solution = start;
      result.objective = start_objective;
    }
  }
  // CBC's "best possible" falls back to its incumbent when no bound was computed (the root not
  // solved), so without a proof of optimality a bound equal to the incumbent is no bound.
  const double internal = cbc.getBestPossibleObjValue();
  double bound = none;
  if (searched && std::abs(internal) < 1e49) {
    bound = sign * internal + model.objective_offset();
    const double tolerance = 1e-9 * std::max(1.0, std::abs(bound));
    const bool fallback =
        std::isfinite(cbc_objective) && std::abs(bound - cbc_objective) <= tolerance;
    const bool wrong_side = better(result.objective, bound + (maximise ? tolerance : -tolerance));
    if (wrong_side || (fallback && result.status != ModelStatus::kOptimal)) bound = none;
  }
  if (result.status == ModelStatus::kOptimal && !(stopped_at_gap && std::isfinite(bound))) {
    // Proven: the bound is the objective. CBC's own figure can be a stale LP value when the proof
    // came from the start's cutoff (nothing better exists); only a stop at the requested gap
    // leaves a real distance to report.
    bound = result.objective;
  }
  // The root LP's optimum bounds the model too; keep the tighter of the two.
  if (!std::isfinite(bound) || better(bound, root_bound)) bound = root_bound;
  result.best_bound = bound;
  result.gap = RelativeGap(result.objective, result.best_bound);
}

/// Tightens the result's bound with SolveParams::known_bound and calls a solution within the
/// requested gap of it optimal. A known bound on the wrong side of the solution (rounding) is the
/// solution's objective.
void TakeKnownBound(const MilpModel& model, const SolveParams& params, MilpResult& result) {
  const bool maximise = model.sense() == Sense::kMaximize;
  double bound = params.known_bound;
  if (HasSolution(result.status)) {
    bound = maximise ? std::max(bound, result.objective) : std::min(bound, result.objective);
  }
  if (!std::isfinite(result.best_bound) ||
      (maximise ? bound < result.best_bound : bound > result.best_bound)) {
    result.best_bound = bound;
  }
  if (!HasSolution(result.status)) return;
  result.gap = RelativeGap(result.objective, result.best_bound);
  if (result.gap <= params.relative_gap) result.status = ModelStatus::kOptimal;
}

}  // namespace

ModelStatus MapCbcStatus(const CbcOutcome& o) {
  if (o.continuous_unbounded || o.secondary_status == 7) return ModelStatus::kUnbounded;
  // With a verified start, "infeasible" means "nothing beats the start": CBC searched with the
  // start's objective as its cutoff.
  const bool any = o.has_solution || o.has_start;
  switch (o.status) {
    case 0:  // finished: the best solution is optimal; none at all proves infeasibility
      return any ? ModelStatus::kOptimal : ModelStatus::kInfeasible;
    case 1:  // stopped on a limit
    case 5:  // stopped by the event handler (the stop flag or the deadline)
      if (o.proven_infeasible) return any ? ModelStatus::kOptimal : ModelStatus::kInfeasible;
      if (o.secondary_status == 2 && any) return ModelStatus::kOptimal;  // requested gap reached
      return any ? ModelStatus::kFeasibleAtLimit : ModelStatus::kNoSolutionAtLimit;
    case 2:   // abandoned: numerical difficulties
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

    // The root LP first, under the deadline and the stop flag: CbcMain1 cannot be interrupted
    // inside it (a dense pattern LP of 1.8M non-zeros ran for 15 minutes past a 30 s limit), and a
    // stopped LP inside CbcMain1 would be mistaken for an infeasible node. Solved here, it is a
    // valid bound even when branch and bound gets no further, and CbcMain1 starts from its basis.
    std::vector<double> start;
    if (!params.mip_start.empty() && model.IsFeasible(params.mip_start)) {
      start = CleanSolution(model, params.mip_start.data());
    }
    double root_bound = 0;  // the root LP's optimum, set once it is solved
    {
      ClpStopEventHandler clp_stop(params.stop, deadline);
      solver.getModelPtr()->passInEventHandler(&clp_stop);
      solver.getModelPtr()->setMaximumWallSeconds(SecondsLeft(deadline));
      solver.initialSolve();
      ClpEventHandler idle;  // no stops from here on (see above)
      solver.getModelPtr()->passInEventHandler(&idle);
      solver.getModelPtr()->setMaximumWallSeconds(-1);
      ClpOutcome root;
      root.proven_optimal = solver.isProvenOptimal();
      root.proven_primal_infeasible = solver.isProvenPrimalInfeasible();
      root.proven_dual_infeasible = solver.isProvenDualInfeasible();
      root.limit_reached =
          solver.getModelPtr()->status() == 3 || solver.getModelPtr()->status() == 5;
      root.abandoned = solver.isAbandoned();
      const ModelStatus lp = MapClpStatus(root);
      if (lp != ModelStatus::kOptimal) {
        // Infeasible or unbounded relaxations settle the model; a stopped or failed one leaves
        // only the start (if any), with no bound.
        result.status = lp == ModelStatus::kInfeasible || lp == ModelStatus::kUnbounded ? lp
                        : !start.empty()            ? ModelStatus::kFeasibleAtLimit
                        : lp == ModelStatus::kError ? ModelStatus::kError
                                                    : ModelStatus::kNoSolutionAtLimit;
        if (lp == ModelStatus::kInfeasible && !start.empty()) result.status = ModelStatus::kError;
        result.best_bound = model.sense() == Sense::kMaximize ? kInfinity : -kInfinity;
        if (HasSolution(result.status)) {
          result.solution = start;
          result.objective = model.ObjectiveValue(start);
          result.mip_start_accepted = true;
        }
        if (std::isfinite(params.known_bound) && lp != ModelStatus::kInfeasible &&
            lp != ModelStatus::kUnbounded) {
          TakeKnownBound(model, params, result);
        }
        result.log = std::move(log);
        return result;
      }
      root_bound = *sign * solver.getObjValue() + model.objective_offset();
    }
    // Without integer columns (or without any: every job fixed, no service) the root LP is the
    // optimum; CbcMain1 would not even start on an empty model.
    if (std::none_of(model.integer().begin(), model.integer().end(), [](auto i) { return i; })) {
      result.status = ModelStatus::kOptimal;
      result.solution = CleanSolution(model, solver.getColSolution());
      result.objective = model.ObjectiveValue(result.solution);
      result.best_bound = result.objective;
      result.gap = 0;
      result.log = std::move(log);
      return result;
    }

    CbcModel cbc(solver);  // copies the solver, with its optimal basis
    // CbcMain0/CbcMain1 are CBC's own driver (the command-line solver's code path): its tuned cut
    // generators, heuristics and search. A CbcModel assembled by hand with the usual generators was
    // measured to stall at the root for whole time limits where this proves optimality in seconds.
    // Preprocessing is off: CBC 2.10.8's CglPreProcess::postProcess crashed (SIGSEGV) whenever the
    // time limit stopped the root after a MIP start; without it no crash in thousands of solves,
    // and the whole-model results were no worse.
    // Our own parameter block: the two-argument CbcMain0/CbcMain1 share a static one, and with it
    // may install a SIGINT handler. CbcSolver.cpp still keeps other file-level state, so runs of
    // its driver are serialised (DriverMutex).
    CbcSolverUsefulData driver_data;
    driver_data.noPrinting_ = true;
    driver_data.useSignalHandler_ = false;
    std::unique_lock<std::timed_mutex> driver_lock(DriverMutex(), std::defer_lock);
    while (!driver_lock.try_lock_for(std::chrono::milliseconds(20))) {
      if (Clock::now() >= deadline || (params.stop != nullptr && params.stop->load())) break;
    }
    if (!driver_lock.owns_lock()) {
      // Another solve held CBC's driver past this one's deadline (or the stop came first): the
      // root LP's bound and the start are all there is.
      result.status =
          start.empty() ? ModelStatus::kNoSolutionAtLimit : ModelStatus::kFeasibleAtLimit;
      result.best_bound = root_bound;
      if (!start.empty()) {
        result.solution = start;
        result.objective = model.ObjectiveValue(start);
        result.mip_start_accepted = true;
        result.gap = RelativeGap(result.objective, result.best_bound);
      }
      if (std::isfinite(params.known_bound)) TakeKnownBound(model, params, result);
      result.log = std::move(log);
      return result;
    }
    CbcMain0(cbc, driver_data);
    cbc.passInMessageHandler(&handler);
    cbc.solver()->passInMessageHandler(&handler);
    cbc.setLogLevel(log_level);
    cbc.solver()->messageHandler()->setLogLevel(log_level);
    // The stop flag is read between nodes. No Clp event handler here: an LP stopped inside
    // CbcMain1's preprocessing was seen to crash its postprocessing.
    // A bound known from elsewhere: stop once the incumbent is within the requested gap of it.
    double enough = -kInfinity;
    if (std::isfinite(params.known_bound)) {
      const double slack = params.relative_gap * std::max(1.0, std::abs(params.known_bound));
      const double target = model.sense() == Sense::kMaximize ? params.known_bound - slack
                                                              : params.known_bound + slack;
      enough = *sign * (target - model.objective_offset());
    }
    const StopEventHandler stop_handler(params.stop, deadline, enough);
    cbc.passInEventHandler(&stop_handler);
    // CbcMain1 takes the start by column name (CbcModel::setBestSolution before CbcMain1 was
    // measured to be lost there).
    if (!start.empty()) {
      std::vector<std::pair<std::string, double>> named;
      named.reserve(start.size());
      for (int j = 0; j < model.num_variables(); ++j) {
        named.emplace_back(cbc.solver()->getColName(j), start[j]);
      }
      cbc.setMIPStart(named);
      result.mip_start_accepted = true;
    }
    const bool stopped = params.stop != nullptr && params.stop->load();
    // A start already within the gap of the known bound needs no search (nor CBC's root cuts).
    const bool start_enough =
        !start.empty() &&
        *sign * (model.ObjectiveValue(start) - model.objective_offset()) <= enough;
    const bool search = SecondsLeft(deadline) > 0 && !stopped && !start_enough;
    if (search) {
      // clang-format off
      std::vector<std::string> args = {"ordo",
                                       "-log", Arg(log_level),
                                       "-slog", "0",
                                       "-timeMode", "elapsed",
                                       "-sec", Arg(SecondsLeft(deadline)),
                                       "-ratioGap", Arg(params.relative_gap),
                                       "-randomCbcSeed", Arg(std::max(1, params.seed)),
                                       "-threads", "0",
                                       "-preprocess", "off",
                                       // CBC 2.10.8's two-step MIR cuts can cut off feasible
                                       // solutions (coin-or/Cbc#562); seen here: a pooled model
                                       // "proven" at 4,894.05 with a 4,912 solution at hand, on
                                       // 4 of 22 seeds, never with these cuts off.
                                       "-twoMirCuts", "off"};
      // clang-format on
      if (params.max_nodes >= 0) {
        args.insert(args.end(),
                    {"-maxNodes",
                     Arg(static_cast<double>(std::min<long long>(params.max_nodes, INT_MAX)))});
      }
      args.insert(args.end(), {"-solve", "-quit"});
      std::vector<const char*> argv;
      argv.reserve(args.size());
      for (const std::string& arg : args) argv.push_back(arg.c_str());
      CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, NoCallback, driver_data);
    }
    CbcOutcome outcome;
    outcome.status = cbc.status();
    outcome.secondary_status = cbc.secondaryStatus();
    outcome.proven_infeasible = cbc.isProvenInfeasible();
    outcome.continuous_unbounded = cbc.isContinuousUnbounded();
    outcome.has_solution = cbc.bestSolution() != nullptr;
    outcome.has_start = !start.empty();
    if (outcome.status == -1) {
      // Branch and bound never ran (no time left, or stopped): a stop, not a solver failure.
      outcome.status = 5;
    }
    result.status = MapCbcStatus(outcome);
    FillSolution(model, *sign, cbc, search, outcome.secondary_status == 2, start, root_bound,
                 result);
    if (std::isfinite(params.known_bound)) TakeKnownBound(model, params, result);
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
