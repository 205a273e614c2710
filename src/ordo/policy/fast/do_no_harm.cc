#include "ordo/policy/fast/do_no_harm.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/policy/common/promises.h"
#include "ordo/policy/fast/batch_passes.h"
#include "ordo/policy/fast/service_variants.h"

namespace ordo::policy::fast {
namespace {

// The running choice of the selection.
struct Selection {
  int best = -1;         // best objective among the plans that keep both promises
  int fallback = -1;     // least unmet demand among those that keep the value promise only
  bool refused = false;  // some plan with a higher objective than `best` broke a promise
  double best_objective = 0, top_objective = -std::numeric_limits<double>::infinity();
  Metrics fallback_metrics;

  void Consider(const Promises& promises, const Metrics& m, size_t index) {
    const bool value_kept = KeepsValuePromise(m, promises);
    const bool kept = KeepsPromises(m, promises);
    if (kept && (best < 0 || m.objective > best_objective + 1e-9)) {
      best = static_cast<int>(index);
      best_objective = m.objective;
    }
    if (!kept && value_kept &&
        (fallback < 0 || m.realtime_unmet_gpu_steps < fallback_metrics.realtime_unmet_gpu_steps ||
         (m.realtime_unmet_gpu_steps == fallback_metrics.realtime_unmet_gpu_steps &&
          m.objective > fallback_metrics.objective + 1e-9))) {
      fallback = static_cast<int>(index);
      fallback_metrics = m;
    }
    top_objective = std::max(top_objective, m.objective);
    refused = best < 0 || top_objective > best_objective + 1e-9;
  }
};

// `base`'s batch work kept; the services re-planned as curves on the capacity it leaves them; then
// the jobs `base` leaves unstarted placed by one greedy pass (priority, then big blocks first)
// beside them. Empty when the services' floors do not fit beside `base`'s jobs.
std::optional<Plan> Refill(const SearchContext& ctx, const BatchPasses& batch, const Plan& base) {
  const Scenario& s = ctx.scenario;
  std::vector<Placement> placements(s.jobs.size());
  std::vector<std::vector<int>> left = ctx.free;
  BlockGrid grid = ctx.pinned;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const Job& job = s.jobs[j];
    const JobPlacement& p = base.jobs[j];
    if (job.running || !p.started()) continue;
    int shape = -1;
    for (size_t k = 0; k < job.shapes.size() && shape < 0; ++k) {
      if (job.shapes[k].gpus == p.gpus && job.shapes[k].duration_steps == p.duration_steps) {
        shape = static_cast<int>(k);
      }
    }
    if (shape < 0) return std::nullopt;
    placements[j] = Placement{shape, p.first_gpu, *p.start_step};
    Take(s, static_cast<int>(j), placements[j], grid, left);
  }
  bool complete = true;
  const ServiceCounts counts = PlanServiceCounts(s, left, {}, &complete);
  if (!complete) return std::nullopt;
  ReserveCounts(s, counts, grid);
  std::vector<int> order;
  const std::vector<std::vector<int>> seeds = batch.SeedOrders(ctx.candidates);
  for (int j : seeds.front()) {
    if (placements[j].shape < 0) order.push_back(j);
  }
  PassResult pass = batch.RunPass(grid, order, ShapeRule::kMostReward);
  for (int j : order) placements[j] = pass.placements[j];
  return Assemble(s, placements, counts);
}

// Stage 2's plans, appended to `pool`: the other variants' outcomes, every plan so far re-filled,
// the passes around the budget's service counts, and around reactive's and fifo's. Returns the
// index of the first re-filled plan (the plans from there on are built here and checked).
size_t AddStageTwoPlans(const SearchContext& ctx, const std::vector<Outcome>& outcomes,
                        const Promises& promises, const Plan& fifo, const Plan& reactive,
                        std::vector<Plan>& pool) {
  const Scenario& s = ctx.scenario;
  const BatchPasses batch(ctx, s.objective.time_decay);
  for (size_t i = 0; i + 1 < outcomes.size(); ++i) {
    pool.push_back(Assemble(s, outcomes[i].pass.placements, outcomes[i].counts));
  }
  const size_t first_refill = pool.size();
  for (size_t i = 0; i < first_refill && !ctx.OutOfTime(); ++i) {
    // Refill re-places fresh jobs around running ones pinned whole: not for preempting plans.
    if (pool[i].metrics.preemptions > 0) continue;
    if (auto plan = Refill(ctx, batch, pool[i])) pool.push_back(std::move(*plan));
  }
  // A short schedule each (a quarter of the search's, at most 12 passes per unit of effort): these
  // plans are candidates beside the search's own.
  constexpr int kCandidatePasses = 12;
  const int passes = std::max(3, std::min(PassBudget(ctx.candidates.size(), ctx.options.effort) / 4,
                                          kCandidatePasses * ctx.options.effort));
  for (auto budget : {&BudgetCounts, &PricedBudgetCounts}) {
    if (ctx.OutOfTime()) break;
    if (auto counts = budget(ctx, promises.max_unmet_gpu_steps)) {
      BlockGrid base = ctx.pinned;
      ReserveCounts(s, *counts, base);
      const PassResult pass = batch.RunSchedule(base, passes);
      pool.push_back(Assemble(s, pass.placements, *counts));
      if (auto plan = Refill(ctx, batch, pool.back())) pool.push_back(std::move(*plan));
    }
  }
  for (const Plan* baseline : {&reactive, &fifo}) {
    const ServiceCounts counts = CountsOf(s, *baseline);
    BlockGrid base = ctx.pinned;
    ReserveCounts(s, counts, base);
    // Judged by the objective's decay, and undecayed (what fifo's value counts).
    for (double decay : {s.objective.time_decay, 0.0}) {
      if (ctx.OutOfTime()) break;
      const PassResult pass = BatchPasses(ctx, decay).RunSchedule(base, passes);
      pool.push_back(Assemble(s, pass.placements, counts));
    }
  }
  return first_refill;
}

}  // namespace

Plan DoNoHarm(const SearchContext& ctx, const std::vector<Outcome>& outcomes,
              BaselinePlans baselines, std::vector<Plan> peers, Plan own) {
  const Scenario& s = ctx.scenario;
  // Stage 1: fast mode's plan and the baselines' (their metrics come with them).
  std::vector<Plan> pool;
  pool.push_back(std::move(own));
  pool.back().metrics = ComputeMetrics(s, pool.back());
  const Plan fifo = baselines.fifo, reactive = baselines.reactive;
  for (Plan* other : {&baselines.fifo, &baselines.fifo_backfill, &baselines.priority_backfill,
                      &baselines.reactive}) {
    other->policy = std::string(kPolicyName);
    pool.push_back(std::move(*other));
  }
  for (Plan& other : peers) {
    other.policy = std::string(kPolicyName);
    pool.push_back(std::move(other));
  }
  Promises promises;
  promises.min_value = fifo.metrics.value;
  promises.max_unmet_gpu_steps = reactive.metrics.realtime_unmet_gpu_steps;
  Selection selection;
  for (size_t i = 0; i < pool.size(); ++i) selection.Consider(promises, pool[i].metrics, i);
  if (!selection.refused) return std::move(pool[selection.best]);

  // Stage 2, where a promise binds.
  const size_t considered = pool.size();
  const size_t first_refill = AddStageTwoPlans(ctx, outcomes, promises, fifo, reactive, pool);
  for (size_t i = considered; i < pool.size(); ++i) {
    // Plans built here are checked: a re-planned service floor that does not fit beside another
    // plan's jobs makes Refill give up, but CheckPlan is the independent word.
    if (i >= first_refill && !CheckPlan(s, pool[i]).empty()) continue;
    selection.Consider(promises, ComputeMetrics(s, pool[i]), i);
  }
  const int chosen = selection.best >= 0       ? selection.best
                     : selection.fallback >= 0 ? selection.fallback
                                               : 0;
  return std::move(pool[chosen]);
}

}  // namespace ordo::policy::fast
