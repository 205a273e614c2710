// Full mode (policy "ordo-full"): the exact allocation MILP of ../shared/docs/milp-notes.md.
//
// Algorithm. 1) A warm start: the better of fast mode's plan (given a quarter of the time limit)
// and a simple greedy (greedy_start.h). 2) If the scenario has at most kFullModeMaxWholeColumns
// legal (job, shape, start, block) patterns and the pattern MILP (pattern_model.h) has few enough
// non-zeros for the time limit (FullModeConfig): first the pooled model (pooled_model.h: blocks
// dropped, a relaxation CBC often proves in seconds), whose solution, packed into blocks, is
// optimal when it packs whole and whose bound is kept; then the whole pattern MILP goes to CBC
// with the best plan so far as its MIP start and the pooled bound as a known bound — for all the
// remaining time when the model is small (CBC makes progress there), else for half of it; the
// tighter of the two bounds is the reported bound. If CBC has not proven optimality by then,
// large-neighbourhood search (lns.h) improves its incumbent in the rest. 3) Otherwise, an LP
// relaxation is solved for the bound (in at most a quarter of the time) and LNS improves the warm
// start until the deadline.
//
// Guarantees. Every plan passes CheckPlan; its objective is never below the warm start's (when
// the solver does not beat it, the warm start's own plan is returned, with the solver's report);
// metrics.solver holds "optimal" (CBC proved it), "feasible" or "model_too_large" (the memory
// budget left only the warm start and what fits), the best bound, the relative gap and the nodes.
// The same seed gives the same plan unless the time limit cuts a solve short.
//
// Cost. Branch and bound is exponential in the worst case, so the whole time limit is spent unless
// optimality is proven first; the model's non-zeros (about patterns x GPU atoms x steps covered)
// decide the path. What it proves within the CLI's limit: docs/measurements.md; on random
// instances up to 4,096 GPUs: docs/full-mode.md, "Figures".
//
//   auto full = ordo::policy::MakeFullPolicy();
//   PolicyOptions options; options.time_limit_s = 10;
//   Result<Plan> plan = full->Solve(scenario, options);  // plan->metrics.solver->gap
#include "ordo/policy/full/full_policy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>

#include "ordo/core/assert.h"
#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/policy/common/explain.h"
#include "ordo/policy/common/headroom.h"
#include "ordo/policy/common/plan_builder.h"
#include "ordo/policy/fast/fast_policy.h"
#include "ordo/policy/full/bound.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/full_mode.h"
#include "ordo/policy/full/greedy_start.h"
#include "ordo/policy/full/lns.h"
#include "ordo/policy/full/model_size.h"
#include "ordo/policy/full/pattern_model.h"
#include "ordo/policy/full/pooled_model.h"
#include "ordo/solver/milp_backend.h"

namespace ordo::policy {
namespace {

using Clock = std::chrono::steady_clock;
using full::Decisions;
using namespace full;  // NOLINT(google-build-using-namespace): this file is full mode

constexpr std::string_view kName = "ordo-full";
// Relative gap at which CBC may call a solution optimal: far below any difference that matters,
// above the noise of its floating-point bound.
constexpr double kRelativeGap = 1e-7;
// Seconds per GPU-step that realising, checking and measuring a plan take at the end, set aside
// from the search (generous: an optimised build on a loaded machine).
constexpr double kFinishSecondsPerGpuStep = 3e-8;
// Seconds per GPU-step fast mode takes beyond its own time limit (its first pass, building and
// measuring its plan, which it does not cut) plus checking its plan here. Fast mode runs as a
// warm start only when that and its limit fit before the search deadline; else the greedy alone
// is the warm start.
constexpr double kFastFixedSecondsPerGpuStep = 6e-8;
// Share of the time left the greedy gets when it is the only warm start: the rest realises its
// plan and leaves the search what it can.
constexpr double kGreedyAloneShare = 0.6;

double SecondsLeft(Clock::time_point deadline) {
  return std::max(0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
}

bool Better(double a, double b) { return a > b + 1e-9 * std::max(1.0, std::abs(b)); }

/// The policy's seed as the solver takes it (an int).
int SolverSeed(const PolicyOptions& options) { return static_cast<int>(options.seed % 1'000'003); }

struct WarmStart {
  Plan plan;
  Decisions decisions;
  double objective = 0;
  std::string source;  // "fast" or "greedy"
  bool keeps = true;   // keeps the promises asked of the model (if any)
};

/// Whether `plan` keeps `promises` (none asked: it does).
bool PlanKeeps(const Scenario& scenario, const Plan& plan,
               const std::optional<Promises>& promises) {
  return !promises || KeepsPromises(ComputeMetrics(scenario, plan), *promises);
}

/// The better of fast mode's plan (given `fast_seconds`) and the simple greedy (given
/// `greedy_seconds`; cut there, it leaves the rest of the jobs unstarted), a plan that keeps
/// `promises` before one that does not. Either is checked before it is trusted; fast mode failing
/// or erring leaves the greedy. When fast mode's fixed cost (kFastFixedSecondsPerGpuStep) and its
/// limit do not fit before `deadline`, it does not run and the greedy gets most of the time left
/// instead: on the largest inputs the greedy is the plan that is always ready in time.
WarmStart MakeWarmStart(const Scenario& scenario, const PolicyOptions& options, double fast_seconds,
                        double greedy_seconds, const std::optional<Promises>& promises,
                        Clock::time_point deadline) {
  const double gpu_steps =
      static_cast<double>(scenario.cluster.total_gpus()) * scenario.horizon_steps;
  // Below a tenth of a second fast mode always runs: on small inputs it is the better start.
  const double fast_fixed_s = kFastFixedSecondsPerGpuStep * gpu_steps;
  const bool run_fast =
      fast_fixed_s <= 0.1 || SecondsLeft(deadline) >= fast_seconds + fast_fixed_s + greedy_seconds;
  if (!run_fast) greedy_seconds = kGreedyAloneShare * SecondsLeft(deadline);
  WarmStart warm;
  warm.decisions = full::GreedyDecisions(
      scenario,
      std::min(deadline, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(greedy_seconds))),
      options.stop);
  warm.plan = full::Realize(scenario, warm.decisions, kName);
  warm.objective = ComputeObjective(scenario, warm.plan);
  warm.source = "greedy";
  warm.keeps = PlanKeeps(scenario, warm.plan, promises);
  if (!run_fast || (options.stop != nullptr && options.stop->load())) return warm;
  PolicyOptions fast_options = options;
  fast_options.time_limit_s = fast_seconds;
  fast_options.explain = false;
  fast_options.lend_idle_gpus = false;  // lent once, at the end, to the plan full mode returns
  auto fast = MakeFastPolicy()->Solve(scenario, fast_options);
  if (fast && CheckPlan(scenario, *fast).empty()) {
    const double objective = ComputeObjective(scenario, *fast);
    const bool keeps = PlanKeeps(scenario, *fast, promises);
    if ((keeps && !warm.keeps) || (keeps == warm.keeps && Better(objective, warm.objective))) {
      warm.decisions = full::DecisionsFromPlan(scenario, *fast);
      warm.plan = std::move(*fast);
      warm.plan.explanations.clear();
      warm.objective = objective;
      warm.source = "fast";
      warm.keeps = keeps;
    }
  }
  return warm;
}

/// What the pooled model (pooled_model.h) gave: its best bound (NaN for none) and, when its
/// solution could be packed into blocks, that plan and its objective.
struct Pooled {
  double bound = std::numeric_limits<double>::quiet_NaN();
  std::optional<Decisions> packed;
  double objective = -std::numeric_limits<double>::infinity();
};

/// Solves the pooled model (in at most config.pooled_share of the time left), then packs its
/// solution into blocks with the pattern model restricted to its choices (config.pack_share).
/// Small, and free of the symmetry between interchangeable blocks, the pooled model is often
/// solved to optimality in seconds; when its plan packs, that plan is optimal.
Pooled SolvePooled(const Scenario& scenario, const Decisions& warm, const Promises* promises,
                   const std::vector<uint8_t>& running, solver::MilpBackend& backend,
                   const FullModeConfig& config, const PolicyOptions& options,
                   Clock::time_point deadline, FullModeStats& stats) {
  Pooled out;
  const PooledModel pooled(scenario, running, /*integer=*/true, promises);
  solver::SolveParams params;
  params.time_limit_s = config.pooled_share * SecondsLeft(deadline);
  params.relative_gap = kRelativeGap;
  // The warm start as MIP start, except under promises. Without it CBC proves far fewer pooled
  // optima (its improvement heuristics start from the incumbent); a cutoff at its objective does
  // not replace it. Under promises, completing the start (a small branch and bound) can crash CBC
  // 2.10.8 with SIGSEGV in CbcNode::chooseDynamicBranch (docs/full-mode.md, "CBC"); there the
  // pooled model goes without.
  if (promises == nullptr) params.mip_start = pooled.ToColumns(warm);
  params.stop = options.stop;
  params.seed = SolverSeed(options);
  auto result = backend.Solve(pooled.milp(), params);
  if (!result) return out;
  stats.pooled_status = std::string(solver::ModelStatusName(result->status));
  if (std::isfinite(result->best_bound)) out.bound = stats.pooled_bound = result->best_bound;
  if (!solver::HasSolution(result->status)) return out;

  Window pack = WholeProblem(scenario);
  pack.pinned = pooled.Placements(result->solution);
  const PatternModel packing(scenario, pack, running, RunningReward(scenario), promises);
  params.time_limit_s = config.pack_share * SecondsLeft(deadline);
  params.mip_start.clear();
  // A packing that earns the pooled solution's objective is what is looked for: stop there.
  params.known_bound = result->objective;
  auto packed = backend.Solve(packing.milp(), params);
  if (!packed || !solver::HasSolution(packed->status)) return out;
  Decisions decisions = warm;
  packing.Apply(packed->solution, decisions);
  out.objective = DecisionsObjective(scenario, decisions);
  out.packed = std::move(decisions);
  // Packed whole, the pooled optimum is a plan, so it is the optimum.
  stats.packed = result->status == solver::ModelStatus::kOptimal &&
                 solver::RelativeGap(out.objective, result->objective) <= kRelativeGap;
  return out;
}

class FullPolicy final : public Policy {
 public:
  [[nodiscard]] std::string_view name() const override { return kName; }

  [[nodiscard]] Result<Plan> Solve(const Scenario& scenario,
                                   const PolicyOptions& options) override {
    return full::SolveFullMode(scenario, options, full::FullModeConfig{});
  }
};

}  // namespace

namespace full {

Result<Plan> SolveFullMode(const Scenario& scenario, const PolicyOptions& options,
                           const FullModeConfig& config, FullModeStats* stats) {
  if (auto checked = CheckPolicyOptions(options); !checked) return Fail(checked.error());
  const Clock::time_point started = Clock::now();
  const double limit = std::isfinite(options.time_limit_s) && options.time_limit_s > 0
                           ? std::min(options.time_limit_s, 365.0 * 24 * 3600)
                           : 0.0;
  const Clock::time_point deadline =
      started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit));
  auto backend = solver::MakeMilpBackend("cbc");
  if (!backend) return Fail(backend.error());
  FullModeStats local;
  const auto budget = static_cast<double>(options.memory_budget_bytes);
  // Realising, checking and measuring the plan at the end is linear in the GPU-steps and cannot
  // stop early: the search ends soon enough to leave it that time.
  const double gpu_steps =
      static_cast<double>(scenario.cluster.total_gpus()) * scenario.horizon_steps;
  const double finish_s = std::min(0.3 * limit, kFinishSecondsPerGpuStep * gpu_steps);
  const Clock::time_point search_deadline = deadline - std::chrono::duration_cast<Clock::duration>(
                                                           std::chrono::duration<double>(finish_s));

  // Fast mode sizes its own work; a quarter of the time bounds it on inputs too large for that.
  // The greedy is microseconds on small inputs; a tenth of the time bounds it on huge ones.
  WarmStart warm =
      MakeWarmStart(scenario, options, 0.25 * limit, 0.1 * limit, config.promises, search_deadline);
  local.warm_objective = warm.objective;
  local.warm_source = warm.source;
  const auto stopped = [&] { return options.stop != nullptr && options.stop->load(); };

  // Sizes first, from the scenario: nothing is built that the memory budget cannot hold.
  const bool grids_fit = BuildGridBytes(scenario) <= budget;
  std::vector<uint8_t> running;
  const Window whole = WholeProblem(scenario);
  ModelSize whole_size;
  if (grids_fit && !stopped() && Clock::now() < search_deadline) {
    running = FixedOccupancy(scenario, whole);
    whole_size = PatternModelSize(scenario, whole, BlockedIndex(scenario, running),
                                  config.max_whole_columns);
    local.columns = static_cast<int64_t>(whole_size.columns - ServicePartSize(scenario).columns);
  } else {
    local.columns = config.max_whole_columns + 1;
    local.too_large = !grids_fit;
  }
  // The pooled model has no preemption: with checkpointed jobs its optimum is no bound.
  const bool pooled_fits = grids_fit && !whole.preemption &&
                           BuildAndSolveBytes(scenario, PooledModelSize(scenario)) <= budget;
  // Past the whole model's size, the bound comes from the pooled LP: without it (over the memory
  // budget), the status says the model was too large even when no time was left to try. With
  // preemption the pooled model does not apply: the bound is the pattern LP's or the trivial one.
  if (local.columns > config.max_whole_columns && !pooled_fits && !whole.preemption) {
    local.too_large = true;
  }

  std::optional<Decisions> improved;
  bool proven = false;
  double bound = std::numeric_limits<double>::quiet_NaN();
  long long nodes = 0;
  // The whole model when CBC can get through its root LP with time to spare: few enough columns
  // and, since the pattern LP is dense, few enough non-zeros for the time limit; and when it fits
  // the memory budget.
  std::optional<PatternModel> model;
  if (local.columns <= config.max_whole_columns) {
    if (BuildAndSolveBytes(scenario, whole_size) > budget) {
      local.too_large = true;
    } else if (!stopped() && Clock::now() < search_deadline) {
      model.emplace(scenario, whole, running, FixedReward(scenario, whole),
                    config.promises ? &*config.promises : nullptr);
      local.nonzeros = model->milp().num_nonzeros();
      local.whole = static_cast<double>(local.nonzeros) <=
                    std::min(config.max_whole_nonzeros,
                             config.whole_nonzeros_per_second * std::max(limit, 1.0));
    }
  }
  if (config.promises && !local.whole) {
    return FailInput("promises", "the model is too large to solve whole within the time limit");
  }
  if (local.whole) {
    const Promises* promises = config.promises ? &*config.promises : nullptr;
    const Pooled pooled = pooled_fits
                              ? SolvePooled(scenario, warm.decisions, promises, running, **backend,
                                            config, options, search_deadline, local)
                              : Pooled{};
    if (pooled.packed && (Better(pooled.objective, warm.objective) || !warm.keeps)) {
      improved = pooled.packed;
    }
    solver::SolveParams params;
    const bool alone = static_cast<double>(local.nonzeros) <= config.whole_alone_nonzeros ||
                       config.promises.has_value();
    params.time_limit_s = (alone ? 1.0 : config.whole_share) * SecondsLeft(search_deadline);
    params.relative_gap = kRelativeGap;
    params.known_bound = pooled.bound;
    params.mip_start = model->ToColumns(improved ? *improved : warm.decisions);
    params.stop = options.stop;
    params.seed = SolverSeed(options);
    auto result = (*backend)->Solve(model->milp(), params);
    // A failed call leaves the warm start (or the packed pooled plan), reported as feasible
    // with the pooled bound or the trivial one.
    if (std::isfinite(pooled.bound)) bound = pooled.bound;
    if (result) {
      nodes = result->nodes;
      bound = result->best_bound;
      proven = result->status == solver::ModelStatus::kOptimal;
      if (solver::HasSolution(result->status)) {
        Decisions candidate = warm.decisions;
        model->Apply(result->solution, candidate);
        improved = std::move(candidate);
      }
    }
    // Not proven in its share of the time: LNS improves CBC's incumbent in the rest (CBC keeps
    // the bound). Below the share, CBC had everything it needed.
    model.reset();
    if (!proven && SecondsLeft(search_deadline) > 0 && !stopped()) {
      LnsOptions lns = config.lns;
      lns.deadline = search_deadline;
      lns.memory_budget_bytes = budget;
      lns.stop = options.stop;
      lns.seed = options.seed;
      improved =
          ImproveByLns(scenario, improved ? *improved : warm.decisions, **backend, lns, &local.lns);
    }
  } else if (!stopped() && SecondsLeft(search_deadline) > 0) {
    if (auto lp = LpBound(scenario, **backend, config.lp_bound_share * SecondsLeft(search_deadline),
                          options.stop, model ? &model->milp() : nullptr, budget)) {
      bound = *lp;
      local.lp_bound = true;
    }
    model.reset();
    running = {};
    LnsOptions lns = config.lns;
    lns.deadline = search_deadline;
    lns.stop = options.stop;
    lns.seed = options.seed;
    lns.memory_budget_bytes = budget;
    improved = ImproveByLns(scenario, warm.decisions, **backend, lns, &local.lns);
    if (local.lns.too_large) local.too_large = true;
    // Nothing better than the warm start: its plan is already realised and checked.
    if (local.lns.improvements == 0) improved.reset();
  }

  Plan plan;
  bool from_solver = false;
  if (improved) {
    Plan candidate = Realize(scenario, *improved, kName);
    const double objective = ComputeObjective(scenario, candidate);
    const bool legal = CheckPlan(scenario, candidate).empty();
    ORDO_ASSERT(legal);  // the model encodes every rule; a violation here is a bug
    if (!legal) proven = false;
    // Under promises the solver's plan keeps them: it replaces a warm start that does not.
    if (legal && (Better(objective, warm.objective) || !warm.keeps)) {
      plan = std::move(candidate);
      from_solver = true;
    }
  }
  if (!from_solver) plan = std::move(warm.plan);
  plan.policy = std::string(kName);

  const double objective = ComputeObjective(scenario, plan);
  if (!std::isfinite(bound)) bound = TrivialBound(scenario);
  // A bound a rounding error below a feasible objective is that objective.
  bound = std::max(bound, objective);
  SolverReport report;
  report.gap = solver::RelativeGap(objective, bound);
  report.status = proven || report.gap <= kRelativeGap ? "optimal"
                  : local.too_large                    ? "model_too_large"
                                                       : "feasible";
  report.best_bound = bound;
  report.nodes = nodes;
  plan.metrics.solver = report;
  plan.explanations.clear();
  if (options.lend_idle_gpus) LendIdleGpus(scenario, plan);
  if (options.explain) plan.explanations = ExplainPlan(scenario, plan);
  FinishPlan(scenario, started, plan);
  if (stats != nullptr) *stats = std::move(local);
  return plan;
}

}  // namespace full

std::unique_ptr<Policy> MakeFullPolicy() { return std::make_unique<FullPolicy>(); }

Result<double> LpRelaxationBound(const Scenario& scenario, double time_limit_s) {
  if (std::isnan(time_limit_s) || time_limit_s < 0) {
    return FailInput("time_limit_s", "must be a number >= 0");
  }
  auto backend = solver::MakeMilpBackend("cbc");
  if (!backend) return Fail(backend.error());
  return full::LpBound(scenario, **backend, time_limit_s);
}

}  // namespace ordo::policy
