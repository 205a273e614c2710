// Fast mode (policy "ordo"): the constraint-aware heuristic that answers on every request.
//
// Algorithm.
//  1. Running jobs are pinned on a BlockGrid (buddy trees of aligned blocks over steps).
//  2. Services as curves (service_curves.h): floors first, then by priority the smallest curve
//     that covers demand and obeys the churn limit (ramping up ahead of peaks), then pairs that
//     compete for the same GPUs re-planned together. Their counts are reserved per group and
//     step (or, in one variant, in the cluster as a whole); their GPU ids are chosen last.
//     Variants of how far the services give way to batch work (capped, after the batch work,
//     packed away, ...) each get a trial of two passes; the best that keeps reactive's unmet
//     demand gets the pass budget. Where the curves leave less unmet than reactive, two more
//     variants spend that budget: curves priced so they give way where batch work earns most,
//     and reactive's own counts (also tried where the curves leave more unmet than reactive).
//  3. Batch work by greedy passes over the whole horizon: jobs in a value-aware order, each at the
//     earliest start where some shape fits, on the buddy best-fit block (keeps large blocks whole);
//     among shapes, the one with the most reward (or, in some passes, the earliest finish).
//  4. Improvement: a few deterministic orders, then seeded perturbations of the best order (move
//     one job elsewhere in the order; every other move aimed at a job that lost reward; the jobs
//     before the first moved position keep the best pass's placements without a search), keeping
//     the best pass; then a few moves around the jobs that lost most reward: displacement (the
//     job takes GPUs a service's curve held, the services re-planned around it) and
//     ruin-and-recreate (the job placed first, the services planned around it, every other job
//     placed again around both). The number of passes is fixed by the instance's size and
//     PolicyOptions::effort, so the same input, seed and effort give the same plan; the time
//     limit only cuts the schedule short on inputs too large for it.
//  5. Services get concrete GPU ids that move as little as possible between steps.
//  6. Do no harm (DoNoHarm): among fast mode's plans, the four baselines' plans (and, where jobs
//     have checkpoints, the two preempting peers') and plans built from them, the best objective
//     among those with at least fifo's value and at most reactive's unmet real-time GPU-steps.
//     The baselines are planned by name (baseline_plans.h); one that fails fails fast mode.
//  7. Where a running job has a checkpoint: preemption where it pays, for a waiting job or for a
//     service's unmet peak (preemption_move.h).
//  8. The GPUs idle at step 0 lent to the services as headroom (policy/common/headroom.h).
// Guarantees: every plan is legal (CheckPlan); services are never below their floors; a job is
// never placed where it would push a service below its planned curve. On up to 5,000 jobs (and
// inside the time limit): value >= fifo's, unmet real-time demand <= reactive's wherever fast
// mode finds a plan that keeps both (some instances admit none: docs/fast-mode.md); objective >=
// every baseline's that keeps both.
// Cost: one pass is O(jobs x shapes x FindEarliest); FindEarliest is near O(log G) on free or full
// regions of the cluster, more where it is fragmented.
// Example: 8 GPUs, a chat service peaking at 6 GPUs at noon with churn 2, and 16 training jobs:
//   the service ramps 2 → 4 → 6 from 10:00, batch jobs fill the trough hours by priority, and a
//   4-GPU job is not put where it would split the only free 8-GPU node before an 8-GPU job.
#include "ordo/policy/fast/fast_policy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/common/explain.h"
#include "ordo/policy/common/headroom.h"
#include "ordo/policy/common/plan_builder.h"
#include "ordo/policy/common/promises.h"
#include "ordo/policy/fast/baseline_plans.h"
#include "ordo/policy/fast/block_grid.h"
#include "ordo/policy/fast/preemption_move.h"
#include "ordo/policy/fast/service_curves.h"

namespace ordo::policy {
namespace {

using Clock = std::chrono::steady_clock;

struct Placement {
  int shape = -1;  // -1: not started
  int first_gpu = 0;
  int start_step = 0;
};

enum class ShapeRule { kMostReward, kEarliestFinish };

struct PassResult {
  double reward = -1;
  std::vector<Placement> placements;  // by job index
};

class FastPolicy final : public Policy {
 public:
  explicit FastPolicy(BaselineFactories factories) : factories_(std::move(factories)) {}

  // Fast mode computes the baselines and keeps DoNoHarm's promises up to this many jobs.
  static constexpr size_t kMaxGuardJobs = 5'000;

  std::string_view name() const override { return "ordo"; }

  Result<Plan> Solve(const Scenario& s, const PolicyOptions& options) override {
    if (auto checked = CheckPolicyOptions(options); !checked) return Fail(checked.error());
    const auto started = Clock::now();
    deadline_ = started + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(std::max(0.0, options.time_limit_s)));
    options_ = &options;
    scenario_ = &s;
    decay_ = s.objective.time_decay;

    // Running jobs are pinned on the base grid; `free` is what they leave to everything else.
    BlockGrid pinned(s.cluster, s.horizon_steps);
    std::vector<std::vector<int>> free(s.cluster.groups.size());
    for (size_t g = 0; g < free.size(); ++g) {
      free[g].assign(s.horizon_steps, s.cluster.group_gpus(static_cast<int>(g)));
    }
    for (const Job& job : s.jobs) {
      if (!job.running) continue;
      const Shape& shape = job.shapes.front();
      const int end = job.running_end_step();
      pinned.Occupy(job.running->first_gpu, shape.gpus, 0, end);
      const int g = s.cluster.group_of(job.running->first_gpu);
      for (int t = 0; t < std::min(end, s.horizon_steps); ++t) free[g][t] -= shape.gpus;
    }
    std::vector<int> candidates;
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      if (!s.jobs[j].running && s.jobs[j].arrival_step < s.horizon_steps) {
        candidates.push_back(static_cast<int>(j));
      }
    }

    // The baselines (for DoNoHarm; reactive's unmet demand is the budget the priced variant and
    // the moves below keep to), where the guarantee runs: up to 5,000 jobs, inside the time limit.
    // A baseline that fails fails fast mode: its promises would otherwise lapse unseen.
    std::optional<BaselinePlans> baselines;
    if (s.jobs.size() <= kMaxGuardJobs && !OutOfTime()) {
      auto planned = PlanBaselines(s, options, factories_);
      if (!planned) return Fail(planned.error());
      baselines = std::move(*planned);
    }
    // Where jobs have checkpoints, the preempting peers' plans are candidates too, so fast mode's
    // plan is never below theirs where they keep the promises.
    std::vector<Plan> peers;
    const bool checkpoints = std::any_of(s.jobs.begin(), s.jobs.end(),
                                         [](const Job& job) { return job.checkpoint.has_value(); });
    if (checkpoints && baselines && !OutOfTime()) {
      for (auto make : {MakePriorityPreemptPolicy, MakeReactivePreemptPolicy}) {
        if (auto other = make()->Solve(s, options)) peers.push_back(std::move(*other));
      }
    }
    Promises promises;
    if (baselines) {
      promises.min_value = baselines->fifo.metrics.value;
      promises.max_unmet_gpu_steps = baselines->reactive.metrics.realtime_unmet_gpu_steps;
    }
    const long long unmet_limit = baselines ? baselines->reactive.metrics.realtime_unmet_gpu_steps
                                            : std::numeric_limits<long long>::max();

    // Service variants (how much the services' curves give way to batch work): each is tried
    // with a short schedule, then the best one gets the rest of the pass budget. The trials of
    // the variants that spend reactive's unmet budget come on top of it.
    const auto variants =
        ServiceVariants(free, candidates, unmet_limit, baselines ? &baselines->reactive : nullptr);
    const int budget = PassBudget(candidates.size(), options.effort);
    constexpr int kTrialPasses = 2;
    size_t chosen = 0;
    const bool trials =
        variants.size() > 1 && budget >= kTrialPasses * static_cast<int>(variants.size()) + 3;
    std::vector<Outcome> outcomes;  // every variant's trial, then the chosen one's full schedule
    int trial_passes = 0;           // taken from the budget
    if (trials) {
      for (size_t v = 0; v < variants.size() && !OutOfTime(); ++v) {
        outcomes.push_back(PlanVariant(pinned, free, variants[v], candidates, kTrialPasses));
        if (v == 0 || Better(outcomes.back(), outcomes[chosen], unmet_limit)) chosen = v;
        if (!variants[v].spends_budget) trial_passes += kTrialPasses;
      }
    }
    // The chosen variant's full schedule, then a few moves around the jobs that lost most reward
    // (each costs about a pass), where there are services to give way: half displacements, half
    // ruin-and-recreate.
    auto schedule = [&](size_t v, int passes) {
      Outcome outcome = PlanVariant(pinned, free, variants[v], candidates, passes);
      const int moves = s.services.empty() ? 0 : Moves(candidates.size(), passes);
      Displace(pinned, free, candidates, moves / 2, unmet_limit, outcome);
      Recreate(pinned, free, candidates, moves - moves / 2, unmet_limit, outcome);
      return outcome;
    };
    const int passes = budget - trial_passes;
    outcomes.push_back(schedule(chosen, passes));
    // A budget variant that wins its trial may still lose to the best other variant once both
    // are searched (two passes are a noisy judge): that one gets half a schedule too, and the
    // better of the two is fast mode's plan.
    if (trials && variants[chosen].spends_budget && !OutOfTime()) {
      std::optional<size_t> other;
      for (size_t v = 0; v + 1 < outcomes.size(); ++v) {  // the trials
        if (!variants[v].spends_budget &&
            (!other || Better(outcomes[v], outcomes[*other], unmet_limit))) {
          other = v;
        }
      }
      if (other) {
        Outcome second = schedule(*other, passes / 2);
        if (Better(second, outcomes.back(), unmet_limit)) std::swap(second, outcomes.back());
        outcomes.insert(outcomes.end() - 1, std::move(second));
      }
    }

    Plan plan = Assemble(outcomes.back().pass.placements, outcomes.back().counts);
    plan = DoNoHarm(pinned, free, candidates, outcomes, std::move(baselines), std::move(peers),
                    std::move(plan));
    // Preemption where it pays (preemption_move.h): nothing to do unless a running job has a
    // checkpoint. First for waiting jobs (services untouched), then for a service's peak (the
    // services re-planned on the GPUs the victim gives back).
    if (checkpoints && !OutOfTime()) {
      Promises kept = promises;
      const Metrics m = ComputeMetrics(s, plan);
      kept.max_unmet_gpu_steps = std::max(kept.max_unmet_gpu_steps, m.realtime_unmet_gpu_steps);
      if (auto better = PreemptWherePays(s, plan, kept, [this] { return OutOfTime(); })) {
        plan = std::move(*better);
      }
      if (auto better = PreemptForServices(s, plan, kept, [this] { return OutOfTime(); })) {
        plan = std::move(*better);
      }
    }
    if (options.lend_idle_gpus) LendIdleGpus(s, plan);
    if (options.explain) plan.explanations = ExplainPlan(s, plan);
    FinishPlan(s, started, plan);
    return plan;
  }

 private:
  struct Outcome {
    double objective = 0;  // batch reward of the new jobs minus unmet penalties
    PassResult pass;
    ServiceCounts counts;
  };

  // A plan from batch placements (by job index; running jobs stay) and service counts.
  Plan Assemble(const std::vector<Placement>& placements, const ServiceCounts& counts) const {
    const Scenario& s = *scenario_;
    Plan plan = MakeEmptyPlan(s, name());
    const int total = s.cluster.total_gpus();
    std::vector<char> job_busy(static_cast<size_t>(total) * s.horizon_steps, 0);
    auto mark = [&](int first_gpu, int gpus, int start, int duration) {
      for (int t = std::max(0, start); t < std::min(s.horizon_steps, start + duration); ++t) {
        std::fill_n(
            job_busy.begin() + static_cast<long>(static_cast<size_t>(t) * total + first_gpu), gpus,
            1);
      }
    };
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      const Job& job = s.jobs[j];
      JobPlacement& out = plan.jobs[j];
      if (job.running) {
        mark(out.first_gpu, out.gpus, *out.start_step, job.running_end_step() - *out.start_step);
        continue;
      }
      const Placement& p = placements.empty() ? Placement{} : placements[j];
      if (p.shape < 0) continue;
      const Shape& shape = job.shapes[p.shape];
      out.start_step = p.start_step;
      out.first_gpu = p.first_gpu;
      out.gpus = shape.gpus;
      out.duration_steps = shape.duration_steps;
      mark(p.first_gpu, shape.gpus, p.start_step, shape.duration_steps);
    }
    AssignServiceGpus(s, counts, job_busy, plan);
    return plan;
  }

  // The operator's guarantee, on instances of up to 5,000 jobs (where the baselines cost little
  // next to a pass): fast mode's plan has at least fifo's value (undecayed, the spec's `value`)
  // and no more unmet real-time GPU-steps than reactive's autoscaler. The planning objective
  // decays over the horizon and may value batch work above unmet demand, so the plan with the
  // best objective can trade late GPU-steps for earlier high-priority work, or real-time demand
  // for batch work; this selection forbids those two trades and keeps the best objective among
  // the plans that make neither:
  //  1. fast mode's plan and the four baselines' plans;
  //  2. only when the best of those by objective breaks a promise: the other service variants'
  //     outcomes; every plan so far re-filled (its batch work kept, the services re-planned as
  //     curves on what it leaves, the jobs it left unstarted placed by a greedy pass); fast mode's
  //     passes around services capped (BudgetCounts) or priced (PricedBudgetCounts) as far as
  //     reactive's unmet demand allows, each re-filled too; and its passes around the services
  //     exactly as reactive and as fifo run them (their unmet demand is then theirs, by
  //     construction).
  // Every plan built here is checked with CheckPlan. When no candidate keeps both promises, the
  // one with the least unmet demand among those that keep fifo's value is returned.
  // `baselines`: empty where the guarantee does not run.
  Plan DoNoHarm(const BlockGrid& pinned, const std::vector<std::vector<int>>& free,
                const std::vector<int>& candidates, const std::vector<Outcome>& outcomes,
                std::optional<BaselinePlans> baselines, std::vector<Plan> peers, Plan own) const {
    const Scenario& s = *scenario_;
    if (!baselines || OutOfTime()) return own;
    // Stage 1: fast mode's plan and the baselines' (their metrics come with them).
    std::vector<Plan> pool;
    pool.push_back(std::move(own));
    pool.back().metrics = ComputeMetrics(s, pool.back());
    const Plan fifo = baselines->fifo, reactive = baselines->reactive;
    for (Plan* other : {&baselines->fifo, &baselines->fifo_backfill, &baselines->priority_backfill,
                        &baselines->reactive}) {
      other->policy = std::string(name());
      pool.push_back(std::move(*other));
    }
    for (Plan& other : peers) {
      other.policy = std::string(name());
      pool.push_back(std::move(other));
    }
    Promises promises;
    promises.min_value = fifo.metrics.value;
    promises.max_unmet_gpu_steps = reactive.metrics.realtime_unmet_gpu_steps;
    Selection selection;
    for (size_t i = 0; i < pool.size(); ++i) selection.Consider(promises, pool[i].metrics, i);
    if (!selection.refused) return std::move(pool[selection.best]);

    // Stage 2, where a promise binds: the other service variants' outcomes, every plan so far
    // re-filled, and fast mode's passes around reactive's and fifo's services.
    const size_t considered = pool.size();
    for (size_t i = 0; i + 1 < outcomes.size(); ++i) {
      pool.push_back(Assemble(outcomes[i].pass.placements, outcomes[i].counts));
    }
    const size_t first_refill = pool.size();
    for (size_t i = 0; i < first_refill && !OutOfTime(); ++i) {
      // Refill re-places fresh jobs around running ones pinned whole: not for preempting plans.
      if (pool[i].metrics.preemptions > 0) continue;
      if (auto plan = Refill(pinned, free, candidates, pool[i])) pool.push_back(std::move(*plan));
    }
    const int passes = std::max(3, PassBudget(candidates.size(), options_->effort) / 4);
    for (auto budget : {&FastPolicy::BudgetCounts, &FastPolicy::PricedBudgetCounts}) {
      if (OutOfTime()) break;
      if (auto counts = (this->*budget)(free, promises.max_unmet_gpu_steps)) {
        BlockGrid base = pinned;
        ReserveCounts(*counts, base);
        const PassResult pass = RunSchedule(base, candidates, passes);
        pool.push_back(Assemble(pass.placements, *counts));
        if (auto plan = Refill(pinned, free, candidates, pool.back())) {
          pool.push_back(std::move(*plan));
        }
      }
    }
    for (const Plan* baseline : {&reactive, &fifo}) {
      const ServiceCounts counts = CountsOf(*baseline);
      BlockGrid base = pinned;
      ReserveCounts(counts, base);
      // Judged by the objective's decay, and undecayed (what fifo's value counts).
      for (double decay : {s.objective.time_decay, 0.0}) {
        if (OutOfTime()) break;
        decay_ = decay;
        const PassResult pass = RunSchedule(base, candidates, passes);
        pool.push_back(Assemble(pass.placements, counts));
      }
      decay_ = s.objective.time_decay;
    }
    for (size_t i = considered; i < pool.size(); ++i) {
      // Plans built here are checked: a re-planned service floor that does not fit beside
      // another plan's jobs makes Refill give up, but CheckPlan is the independent word.
      if (i >= first_refill && !CheckPlan(s, pool[i]).empty()) continue;
      selection.Consider(promises, ComputeMetrics(s, pool[i]), i);
    }
    const int chosen = selection.best >= 0       ? selection.best
                       : selection.fallback >= 0 ? selection.fallback
                                                 : 0;
    return std::move(pool[chosen]);
  }

  // The running choice of DoNoHarm.
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

  // Services first, each capped (a steady most-GPUs, as the quantile variants) as low as the
  // budget of `unmet` real-time GPU-steps allows, the services whose unmet demand costs least
  // (M x priority) capped first: the most room for batch work that keeps reactive's promise.
  // Empty when even uncapped curves leave more unmet. Cost: O(log demand) curve plans per service.
  std::optional<ServiceCounts> BudgetCounts(const std::vector<std::vector<int>>& free,
                                            long long unmet) const {
    const Scenario& s = *scenario_;
    std::vector<int> caps(s.services.size(), -1);
    ServiceCounts counts = PlanServiceCounts(s, free, {.cap = caps});
    if (UnmetSteps(counts) > unmet) return std::nullopt;
    std::vector<int> order(s.services.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return s.services[a].priority < s.services[b].priority; });
    for (int i : order) {
      const auto& demand = s.services[i].demand;
      int lo = 0, hi = *std::max_element(demand.begin(), demand.end());  // hi always keeps it
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        caps[i] = mid;
        ServiceCounts trial = PlanServiceCounts(s, free, {.cap = caps});
        if (UnmetSteps(trial) <= unmet) {
          hi = mid;
          counts = std::move(trial);
        } else {
          lo = mid + 1;
        }
      }
      caps[i] = hi;
    }
    counts = PlanServiceCounts(s, free, {.cap = caps});
    if (UnmetSteps(counts) > unmet) return std::nullopt;
    return counts;
  }

  // Per step: what a GPU earns a job of priority `lambda` there, at steps where some waiting job
  // has arrived (0 before any has).
  std::vector<double> Prices(double lambda) const {
    const Scenario& s = *scenario_;
    int first_arrival = s.horizon_steps;
    for (const Job& job : s.jobs) {
      if (!job.running) first_arrival = std::min(first_arrival, std::max(0, job.arrival_step));
    }
    std::vector<double> price(s.horizon_steps, 0.0);
    for (int t = first_arrival; t < s.horizon_steps; ++t) {
      price[t] = lambda * (1.0 - s.objective.time_decay * t / s.horizon_steps);
    }
    return price;
  }

  // Priced services (PlanServiceCounts' `price`): a GPU-step at t costs what a job of priority
  // lambda earns there, so each service serves its demand where that is worth more (M x priority,
  // or 1 for every service where M is 0 and only the budget gives served demand a worth) and gives
  // way where batch work is; with a time decay, services serve late peaks and leave early steps to
  // batch work. Lambda is the highest whose curves leave at most `unmet` real-time GPU-steps
  // (bisection; unmet demand grows with the price). Empty when no price does.
  std::optional<ServiceCounts> PricedBudgetCounts(const std::vector<std::vector<int>>& free,
                                                  long long unmet) const {
    const Scenario& s = *scenario_;
    double top = 0;
    for (const Job& job : s.jobs) top = std::max(top, job.priority);
    CurveOptions options;
    for (const Service& service : s.services) {
      const double m = s.objective.unmet_penalty_multiplier;
      options.worth.push_back(m > 0 ? m * service.priority : 1.0);
    }
    double lo = 0, hi = top;
    std::optional<ServiceCounts> best;
    for (int k = 0; k < 12; ++k) {
      const double mid = k == 0 ? hi : 0.5 * (lo + hi);
      options.price = Prices(mid);
      ServiceCounts counts = PlanServiceCounts(s, free, options);
      if (UnmetSteps(counts) <= unmet) {
        best = std::move(counts);
        if (k == 0) break;
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return best;
  }

  long long UnmetSteps(const ServiceCounts& counts) const {
    const Scenario& s = *scenario_;
    long long unmet = 0;
    for (size_t i = 0; i < s.services.size(); ++i) {
      for (int t = 0; t < s.horizon_steps; ++t) {
        int held = 0;
        for (const auto& per_group : counts[i]) held += per_group[t];
        unmet += std::max(0, s.services[i].demand[t] - held);
      }
    }
    return unmet;
  }

  // Per service, group and step: how many GPUs `plan` gives the service.
  ServiceCounts CountsOf(const Plan& plan) const {
    const Scenario& s = *scenario_;
    ServiceCounts counts(s.services.size(),
                         std::vector<std::vector<int>>(s.cluster.groups.size(),
                                                       std::vector<int>(s.horizon_steps, 0)));
    for (size_t i = 0; i < s.services.size(); ++i) {
      for (int t = 0; t < s.horizon_steps; ++t) {
        for (int gpu : plan.services[i].gpus[t]) ++counts[i][s.cluster.group_of(gpu)][t];
      }
    }
    return counts;
  }

  void ReserveCounts(const ServiceCounts& counts, BlockGrid& grid) const {
    const Scenario& s = *scenario_;
    for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
      for (int t = 0; t < s.horizon_steps; ++t) {
        int reserved = 0;
        for (const auto& per_group : counts) reserved += per_group[g][t];
        if (reserved > 0) grid.Reserve(static_cast<int>(g), t, reserved);
      }
    }
  }

  // `base`'s batch work kept; the services re-planned as curves on the capacity it leaves them;
  // then the jobs `base` leaves unstarted placed by one greedy pass (priority, then big blocks
  // first) beside them. Empty when the services' floors do not fit beside `base`'s jobs.
  std::optional<Plan> Refill(const BlockGrid& pinned, const std::vector<std::vector<int>>& free,
                             const std::vector<int>& candidates, const Plan& base) const {
    const Scenario& s = *scenario_;
    std::vector<Placement> placements(s.jobs.size());
    std::vector<std::vector<int>> left = free;
    BlockGrid grid = pinned;
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
      Take(static_cast<int>(j), placements[j], grid, left);
    }
    bool complete = true;
    const ServiceCounts counts = PlanServiceCounts(s, left, {}, &complete);
    if (!complete) return std::nullopt;
    ReserveCounts(counts, grid);
    std::vector<int> order;
    const std::vector<std::vector<int>> seeds = SeedOrders(candidates);
    for (int j : seeds.front()) {
      if (placements[j].shape < 0) order.push_back(j);
    }
    PassResult pass = RunPass(grid, order, ShapeRule::kMostReward);
    for (int j : order) placements[j] = pass.placements[j];
    return Assemble(placements, counts);
  }

  bool OutOfTime() const {
    return Clock::now() > deadline_ ||
           (options_->stop != nullptr && options_->stop->load(std::memory_order_relaxed));
  }

  // How much the services give way to batch work; the first variant is "services first".
  struct ServiceVariant {
    std::vector<char> after;  // services planned only after the batch work (floors before)
    CurveOptions curves;      // how the services are planned before it (floor_only = after)
    // The services' GPUs reserved in the cluster as a whole (BlockGrid::ReserveAnywhere), their
    // groups chosen step by step after the batch work, on what it leaves.
    bool anywhere = false;
    // The services' counts as given, not planned again (the first variant's, the priced
    // variant's, reactive's).
    std::optional<ServiceCounts> counts;
    // One of the two variants added for reactive's unmet budget (priced to it, or reactive's own
    // counts): its trial is not taken from the pass budget.
    bool spends_budget = false;
  };

  // The variants: services first; services capped at the same quantile (50%, 75%, 90%) of their
  // own demand, which leaves a steady block of capacity to long rigid jobs, as a peak reservation
  // would, without its idle troughs; when some service's worth per GPU-step (M x priority, the
  // penalty avoided) is below a waiting job's priority, those services after the batch work;
  // where the first variant leaves less demand unmet than reactive (`unmet_limit`), services
  // priced to spend that budget (PricedBudgetCounts), and where it leaves some unmet, reactive's
  // own counts (they leave exactly the budget unmet, where reactive's autoscaler put it); services
  // packed away from the groups type-bound jobs need; with several services, the churn-limited
  // ones' curves first where their demand exceeds the GPUs free of running jobs; and, with
  // several groups, the services that can use every group reserved in the cluster as a whole,
  // their groups chosen after the batch work.
  // Each variant is judged by the planning objective, never by a rule of thumb (but a variant
  // that keeps reactive's unmet budget first: Better).
  std::vector<ServiceVariant> ServiceVariants(const std::vector<std::vector<int>>& free,
                                              const std::vector<int>& candidates,
                                              long long unmet_limit, const Plan* reactive) const {
    const Scenario& s = *scenario_;
    std::vector<ServiceVariant> variants(1);
    if (s.services.empty() || candidates.empty()) return variants;
    variants[0].counts = PlanServiceCounts(s, free);
    for (double quantile : {0.5, 0.75, 0.9}) {
      ServiceVariant variant;
      for (const Service& service : s.services) {
        std::vector<int> demand = service.demand;
        std::sort(demand.begin(), demand.end());
        const size_t k = std::min(
            demand.size() - 1, static_cast<size_t>(quantile * static_cast<double>(demand.size())));
        variant.curves.cap.push_back(demand[k]);
      }
      if (variants.size() == 1 || variants.back().curves.cap != variant.curves.cap) {
        variants.push_back(std::move(variant));
      }
    }
    double top_priority = 0;
    for (int j : candidates) top_priority = std::max(top_priority, s.jobs[j].priority);
    std::vector<char> after(s.services.size(), 0);
    bool any = false;
    for (size_t i = 0; i < s.services.size(); ++i) {
      if (s.objective.unmet_penalty_multiplier * s.services[i].priority < top_priority) {
        after[i] = 1;
        any = true;
      }
    }
    if (any) variants.push_back(ServiceVariant{.after = after, .curves = {.floor_only = after}});
    // The budget's variants: priced to it where the first variant leaves part of it unspent;
    // reactive's counts also where the first variant leaves more unmet than reactive (they keep
    // the budget by construction). Where both leave nothing unmet there is nothing to spend, and
    // their trials would only cost time (so on the 8-GPU benchmark instance).
    const long long first_unmet = UnmetSteps(*variants[0].counts);
    if (reactive != nullptr && first_unmet < unmet_limit) {
      if (auto priced = PricedBudgetCounts(free, unmet_limit)) {
        variants.push_back(ServiceVariant{.counts = std::move(*priced), .spends_budget = true});
      }
    }
    if (reactive != nullptr && (first_unmet < unmet_limit || first_unmet > 0)) {
      variants.push_back(ServiceVariant{.counts = CountsOf(*reactive), .spends_budget = true});
    }
    // Services packed away from the groups that type-bound batch work needs: best fit alone puts
    // a service into the smallest group that takes it, which may be the only group a waiting
    // job can use. The worth of each job that matches only some of the groups is spread over them.
    std::vector<double> avoid(s.cluster.groups.size(), 0.0);
    bool bound = false;
    for (int j : candidates) {
      const Job& job = s.jobs[j];
      std::vector<int> groups;
      for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
        if (job.requirement.Matches(s.cluster.groups[g])) groups.push_back(static_cast<int>(g));
      }
      if (groups.empty() || groups.size() == s.cluster.groups.size()) continue;
      const Shape& shape = job.shapes.front();
      const int steps =
          std::min(shape.duration_steps, s.horizon_steps - std::max(0, job.arrival_step));
      for (int g : groups) {
        avoid[g] += job.priority * shape.gpus * steps / static_cast<double>(groups.size());
      }
      bound = true;
    }
    if (bound) variants.push_back(ServiceVariant{.curves = {.avoid = std::move(avoid)}});
    // The churn-limited services' curves first where several services compete: planned by
    // priority, a service may take the GPUs another needed to start its ramp in time.
    const auto limited = std::count_if(s.services.begin(), s.services.end(), [](const Service& x) {
      return x.max_change_per_step.has_value();
    });
    bool compete = false;  // the services' demand exceeds what the running jobs leave somewhere
    for (int t = 0; t < s.horizon_steps && s.services.size() > 1 && !compete; ++t) {
      int demand = 0, room = 0;
      for (const Service& service : s.services) demand += service.demand[t];
      for (const auto& per_group : free) room += per_group[t];
      compete = demand > room;
    }
    if (compete && limited > 0) {
      variants.push_back(ServiceVariant{.curves = {.tightest_first = true}});
    }
    // Services held anywhere, where some service can use every group of several: a reservation
    // per group, one ranking of groups for the whole horizon, keeps a service in a group while a
    // job that can run only there (its GPU type, or the only group wide enough) waits; placed
    // after the batch work, the service moves between groups over time.
    if (s.cluster.groups.size() > 1 &&
        std::any_of(s.services.begin(), s.services.end(),
                    [&](const Service& x) { return UsesEveryGroup(x); })) {
      variants.push_back(ServiceVariant{.anywhere = true});
    }
    return variants;
  }

  // Services (some perhaps at their floors only), then batch passes, then the services left for
  // after on what the batch work leaves.
  Outcome PlanVariant(const BlockGrid& pinned, const std::vector<std::vector<int>>& free,
                      const ServiceVariant& variant, const std::vector<int>& candidates,
                      int passes) const {
    const Scenario& s = *scenario_;
    const std::vector<char>& after = variant.after;
    Outcome outcome;
    outcome.counts = variant.counts ? *variant.counts : PlanServiceCounts(s, free, variant.curves);
    BlockGrid base = pinned;
    if (variant.anywhere) {
      // The services that can use every group anywhere; the others in their groups.
      ServiceCounts in_groups = outcome.counts;
      for (int t = 0; t < s.horizon_steps; ++t) {
        int anywhere = 0;
        for (size_t i = 0; i < s.services.size(); ++i) {
          if (!UsesEveryGroup(s.services[i])) continue;
          for (auto& per_group : in_groups[i]) {
            anywhere += per_group[t];
            per_group[t] = 0;
          }
        }
        base.ReserveAnywhere(t, anywhere);
      }
      ReserveCounts(in_groups, base);
    } else {
      ReserveCounts(outcome.counts, base);
    }
    outcome.pass = RunSchedule(base, candidates, passes);
    if (variant.anywhere) {
      // The curves again, on the GPUs the batch work leaves in each group (as many in all as
      // were reserved; the groups of the services held anywhere chosen step by step).
      bool complete = true;
      ServiceCounts counts = PlanServiceCounts(s, LeftBy(free, outcome.pass), {}, &complete);
      if (complete) {
        outcome.counts = std::move(counts);
      } else {  // some floor did not fit where it was reserved anywhere: reserve per group
        base = pinned;
        ReserveCounts(outcome.counts, base);
        outcome.pass = RunSchedule(base, candidates, passes);
      }
    }
    if (!after.empty()) {
      // Capacity left after the jobs and the services planned first.
      std::vector<std::vector<int>> left = LeftBy(free, outcome.pass);
      for (size_t i = 0; i < s.services.size(); ++i) {
        if (after[i]) continue;
        for (size_t g = 0; g < free.size(); ++g) {
          for (int t = 0; t < s.horizon_steps; ++t) left[g][t] -= outcome.counts[i][g][t];
        }
      }
      ServiceCounts later = PlanServiceCounts(s, left, {.include = after});
      for (size_t i = 0; i < s.services.size(); ++i) {
        if (after[i]) outcome.counts[i] = std::move(later[i]);
      }
    }
    outcome.objective = outcome.pass.reward - UnmetPenalty(outcome.counts);
    return outcome;
  }

  bool UsesEveryGroup(const Service& service) const {
    return std::all_of(scenario_->cluster.groups.begin(), scenario_->cluster.groups.end(),
                       [&](const NodeGroup& g) { return service.requirement.Matches(g); });
  }

  // Per group and step: what `free` leaves after the jobs `pass` starts.
  std::vector<std::vector<int>> LeftBy(const std::vector<std::vector<int>>& free,
                                       const PassResult& pass) const {
    const Scenario& s = *scenario_;
    std::vector<std::vector<int>> left = free;
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      const Placement& p = pass.placements[j];
      if (p.shape < 0) continue;
      const Shape& shape = s.jobs[j].shapes[p.shape];
      const int g = s.cluster.group_of(p.first_gpu);
      for (int t = p.start_step; t < std::min(s.horizon_steps, p.start_step + shape.duration_steps);
           ++t) {
        left[g][t] -= shape.gpus;
      }
    }
    return left;
  }

  // Displacement moves: a job that the outcome starts later than its arrival allows (or not at
  // all), the ones that lose most reward first, is put at its earliest start beside the other
  // jobs alone, as if no service held GPUs, and the services are re-planned as curves on what the
  // jobs leave; the move is kept when the objective (batch reward minus unmet penalty) rises. It
  // lets a valuable rigid job take capacity a service's curve held (its ramp ahead of a peak, or
  // demand worth less than the job), which no order of the passes can. At most `tries` moves.
  // A move never leaves more unmet real-time GPU-steps than `unmet_limit` (reactive's, where
  // known) or than the outcome already does, so it does not break DoNoHarm's promise.
  void Displace(const BlockGrid& pinned, const std::vector<std::vector<int>>& free,
                const std::vector<int>& candidates, int tries, long long unmet_limit,
                Outcome& outcome) const {
    const Scenario& s = *scenario_;
    if (tries <= 0 || outcome.pass.placements.empty()) return;
    const std::vector<int> losers = Losers(outcome.pass, candidates);
    for (size_t k = 0; k < losers.size() && tries > 0 && !OutOfTime(); ++k, --tries) {
      const int j = losers[k];
      const Job& job = s.jobs[j];
      BlockGrid grid = pinned;
      std::vector<std::vector<int>> left = free;
      double reward = 0;
      for (int other : candidates) {
        const Placement& p = outcome.pass.placements[other];
        if (other == j || p.shape < 0) continue;
        Take(other, p, grid, left);
        reward += Reward(s.jobs[other], s.jobs[other].shapes[p.shape], p.start_step);
      }
      double moved_reward = 0;
      const Placement moved = ChooseShape(grid, job, ShapeRule::kMostReward, moved_reward);
      if (moved.shape < 0) continue;
      Take(j, moved, grid, left);
      bool complete = true;
      ServiceCounts counts = PlanServiceCounts(s, left, {}, &complete);
      if (!complete) continue;
      const double objective = reward + moved_reward - UnmetPenalty(counts);
      if (!Improves(outcome, objective, counts, unmet_limit)) continue;
      outcome.pass.placements[j] = moved;
      outcome.pass.reward = reward + moved_reward;
      outcome.counts = std::move(counts);
      outcome.objective = objective;
    }
  }

  // Job `j` at `p`: busy on `grid`, its GPUs taken from `left` (per group and step).
  void Take(int j, const Placement& p, BlockGrid& grid, std::vector<std::vector<int>>& left) const {
    const Scenario& s = *scenario_;
    const Shape& shape = s.jobs[j].shapes[p.shape];
    grid.Occupy(p.first_gpu, shape.gpus, p.start_step, p.start_step + shape.duration_steps);
    const int g = s.cluster.group_of(p.first_gpu);
    for (int t = p.start_step; t < std::min(s.horizon_steps, p.start_step + shape.duration_steps);
         ++t) {
      left[g][t] -= shape.gpus;
    }
  }

  // The variant choice: an outcome that keeps reactive's unmet budget beats one that does not
  // (DoNoHarm would refuse the latter), then the higher objective.
  bool Better(const Outcome& a, const Outcome& b, long long unmet_limit) const {
    const bool keeps_a = UnmetSteps(a.counts) <= unmet_limit;
    const bool keeps_b = UnmetSteps(b.counts) <= unmet_limit;
    if (keeps_a != keeps_b) return keeps_a;
    return a.objective > b.objective;
  }

  // A move's verdict: a higher objective than `outcome`'s, with no more unmet real-time
  // GPU-steps than `unmet_limit` or than the outcome already leaves (DoNoHarm's promise).
  bool Improves(const Outcome& outcome, double objective, const ServiceCounts& counts,
                long long unmet_limit) const {
    return objective > outcome.objective + 1e-9 &&
           UnmetSteps(counts) <= std::max(unmet_limit, UnmetSteps(outcome.counts));
  }

  // The jobs that `pass` starts later than their arrival allows (or not at all), the ones that
  // lose most reward first.
  std::vector<int> Losers(const PassResult& pass, const std::vector<int>& candidates) const {
    std::vector<std::pair<double, int>> losers;  // (lost reward, job)
    const std::vector<double> lost = LostReward(pass, candidates);
    for (size_t k = 0; k < candidates.size(); ++k) {
      if (lost[k] > 0) losers.emplace_back(lost[k], candidates[k]);
    }
    std::stable_sort(losers.begin(), losers.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<int> jobs;
    jobs.reserve(losers.size());
    for (const auto& loser : losers) jobs.push_back(loser.second);
    return jobs;
  }

  // Ruin-and-recreate moves around one job: a job that lost reward (as in Displace) is committed
  // first, in its most rewarding shape at its earliest start beside the running jobs alone; the
  // services are planned as curves on what it leaves; then every other job is placed again by
  // one greedy pass, in the order the outcome started them. Where Displace keeps the other jobs
  // and can only use the gaps they leave, this lets a wide, long, valuable job take the capacity
  // a service's demand held and the smaller jobs that were in the way move around it (the
  // optimum's trade on contended instances: docs/full-mode.md, "The exceptions", class a). Kept
  // when the objective rises, under the same bound on unmet demand as Displace.
  void Recreate(const BlockGrid& pinned, const std::vector<std::vector<int>>& free,
                const std::vector<int>& candidates, int tries, long long unmet_limit,
                Outcome& outcome) const {
    const Scenario& s = *scenario_;
    if (tries <= 0 || outcome.pass.placements.empty()) return;
    const std::vector<int> losers = Losers(outcome.pass, candidates);
    for (size_t k = 0; k < losers.size() && tries > 0 && !OutOfTime(); ++k, --tries) {
      const int j = losers[k];
      const Job& job = s.jobs[j];
      BlockGrid grid = pinned;
      double committed_reward = 0;
      const Placement committed = ChooseShape(grid, job, ShapeRule::kMostReward, committed_reward);
      if (committed.shape < 0) continue;
      std::vector<std::vector<int>> left = free;
      Take(j, committed, grid, left);
      bool complete = true;
      ServiceCounts counts = PlanServiceCounts(s, left, {}, &complete);
      if (!complete) continue;
      ReserveCounts(counts, grid);
      // The others in the order the outcome started them (the unstarted last, in candidate
      // order): the same plan where the committed job is not in the way.
      std::vector<int> order;
      for (int other : candidates) {
        if (other != j) order.push_back(other);
      }
      const auto& placed = outcome.pass.placements;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const int sa = placed[a].shape < 0 ? s.horizon_steps : placed[a].start_step;
        const int sb = placed[b].shape < 0 ? s.horizon_steps : placed[b].start_step;
        return sa < sb;
      });
      PassResult pass = RunPass(grid, order, ShapeRule::kMostReward);
      const double objective = pass.reward + committed_reward - UnmetPenalty(counts);
      if (!Improves(outcome, objective, counts, unmet_limit)) continue;
      pass.placements[j] = committed;
      pass.reward += committed_reward;
      outcome.pass = std::move(pass);
      outcome.counts = std::move(counts);
      outcome.objective = objective;
    }
  }

  double UnmetPenalty(const ServiceCounts& counts) const {
    const Scenario& s = *scenario_;
    double penalty = 0;
    for (size_t i = 0; i < s.services.size(); ++i) {
      for (int t = 0; t < s.horizon_steps; ++t) {
        int held = 0;
        for (const auto& per_step : counts[i]) held += per_step[t];
        penalty += s.objective.unmet_penalty_multiplier * s.services[i].priority *
                   std::max(0, s.services[i].demand[t] - held);
      }
    }
    return penalty;
  }

  // The pass schedule: the seed orders, then seeded perturbations of the best order. It depends
  // only on `passes` (the instance's size and the effort), so the plan is deterministic.
  PassResult RunSchedule(const BlockGrid& base, const std::vector<int>& candidates,
                         int passes) const {
    PassResult best;
    std::vector<int> best_order;
    ShapeRule best_rule = ShapeRule::kMostReward;
    bool best_is_pass = false;  // best is RunPass(best_order, best_rule)'s result
    // `replay`: the first positions of `order` are best_order's, placed as best places them.
    auto consider = [&](const std::vector<int>& order, ShapeRule rule, size_t replay = 0) {
      PassResult result = RunPass(base, order, rule, replay > 0 ? &best : nullptr, replay);
      if (result.reward > best.reward) {
        best = std::move(result);
        best_order = order;
        best_rule = rule;
        best_is_pass = true;
      }
    };
    int done = 0;
    const bool alternatives = HasAlternativeShapes(candidates);
    for (const auto& order : SeedOrders(candidates)) {
      if (done >= passes || (done > 0 && OutOfTime())) break;
      consider(order, ShapeRule::kMostReward);
      ++done;
      if (alternatives && done < passes) {
        consider(order, ShapeRule::kEarliestFinish);
        ++done;
      }
    }
    // The time-stepped schedule (what an online scheduler with perfect service curves would do):
    // it never holds capacity idle for later work, which wins where long low-priority jobs can run
    // now. Its start order then seeds the perturbations if it is the best so far.
    if (done < passes && !OutOfTime()) {
      std::vector<int> started_order;
      PassResult stepped = RunTimeStepped(base, candidates, started_order);
      ++done;
      if (stepped.reward > best.reward) {
        best = std::move(stepped);
        best_order = std::move(started_order);
        best_is_pass = false;
      }
    }
    if (best.placements.empty()) {
      best = RunPass(base, candidates, ShapeRule::kMostReward);
      best_order = candidates;
      best_is_pass = true;
    }
    // The perturbations share the budget left, counted in job placements searched: a move leaves
    // the order before its first moved position as it was, so those jobs are placed where the
    // best pass placed them (no search; counted as half of one, what marking the grid costs) and
    // only the rest is searched.
    std::mt19937_64 rng(options_->seed);
    const size_t n = candidates.size();
    const long long budget =
        static_cast<long long>(std::max(0, passes - done)) * static_cast<long long>(n);
    constexpr long long kReplaysPerSearch = 2;
    for (long long spent = 0; spent < budget && n > 1 && !OutOfTime(); ++done) {
      std::vector<int> order = best_order;
      size_t from = rng() % n, to = 0;
      // Every other move is aimed: a job that the best pass starts later than it could have (or
      // not at all), drawn in proportion to the reward that costs, goes to an earlier position
      // (ahead of the work that took its place). The others move one job anywhere, biased
      // towards nearby positions.
      std::vector<double> lost = (done % 2 == 0) ? LostReward(best, order) : std::vector<double>{};
      if (!lost.empty()) lost.front() = 0;  // the first job cannot move earlier
      const double total_lost = std::accumulate(lost.begin(), lost.end(), 0.0);
      if (total_lost > 0) {
        double pick = total_lost * static_cast<double>(rng() % 1'000'000) / 1e6;
        for (from = 0; from + 1 < n && pick >= lost[from]; ++from) pick -= lost[from];
        to = from == 0 ? 0 : rng() % from;
      } else {
        const size_t window = std::max<size_t>(2, n / 4);
        const long long shift =
            static_cast<long long>(rng() % (2 * window + 1)) - static_cast<long long>(window);
        to = static_cast<size_t>(std::clamp<long long>(static_cast<long long>(from) + shift, 0,
                                                       static_cast<long long>(n) - 1));
      }
      const int job = order[from];
      order.erase(order.begin() + static_cast<long>(from));
      order.insert(order.begin() + static_cast<long>(to), job);
      const ShapeRule rule =
          alternatives && rng() % 4 == 0 ? ShapeRule::kEarliestFinish : ShapeRule::kMostReward;
      const size_t replay = best_is_pass && rule == best_rule ? std::min(from, to) : 0;
      consider(order, rule, replay);
      spent +=
          static_cast<long long>(n - replay) + static_cast<long long>(replay) / kReplaysPerSearch;
    }
    return best;
  }

  // Per position of `order`: the reward its job loses in `pass` against starting at its arrival
  // in its best shape (the whole of that when it is not started).
  std::vector<double> LostReward(const PassResult& pass, const std::vector<int>& order) const {
    const Scenario& s = *scenario_;
    std::vector<double> lost(order.size(), 0.0);
    for (size_t k = 0; k < order.size(); ++k) {
      const Job& job = s.jobs[order[k]];
      const int arrival = std::max(0, job.arrival_step);
      double ideal = 0;
      for (const Shape& shape : job.shapes) ideal = std::max(ideal, Reward(job, shape, arrival));
      const Placement& p = pass.placements[order[k]];
      const double got = p.shape < 0 ? 0.0 : Reward(job, job.shapes[p.shape], p.start_step);
      lost[k] = std::max(0.0, ideal - got);
    }
    return lost;
  }

  bool HasAlternativeShapes(const std::vector<int>& candidates) const {
    return std::any_of(candidates.begin(), candidates.end(),
                       [&](int j) { return scenario_->jobs[j].shapes.size() > 1; });
  }

  // Displacement and ruin-and-recreate moves after a schedule of `passes` (each costs about a
  // pass, a recreation up to two): one per four waiting jobs, at least 4 and at most 8, and no
  // more than a quarter of the passes. Like the passes beyond 32 (PassBudget), they grow with the
  // work to search: 4 on the 16-job 8-GPU benchmark instance, which keeps it inside its latency
  // target, 8 from 32 jobs. Eight on every instance finds better plans more often but takes that
  // instance past its target (docs/fast-mode.md, "The search's length").
  static int Moves(size_t jobs, int passes) {
    return std::min(std::clamp(static_cast<int>(jobs / 4), 4, 8), passes / 4);
  }

  // Greedy passes in all: about kPlacementBudget job placements, at least kMinPasses (the best
  // seed orders) and at most kMaxPasses. A placement costs more on a larger cluster
  // (bench/fast_bench.cc), so a budget counted in placements keeps every size inside its latency
  // target. 48 rather than 32 because more perturbations still pay on small instances; no more
  // than two per job beyond 32 because 48 passes take the 16-job benchmark instance past its
  // target (docs/fast-mode.md, "The search's length"). `effort` (PolicyOptions::effort)
  // multiplies it.
  static int PassBudget(size_t jobs, int effort) {
    constexpr size_t kPlacementBudget = 16'000, kMinPasses = 3, kMaxPasses = 48;
    if (jobs == 0) return 0;
    return effort * static_cast<int>(std::clamp(
                        std::min(kPlacementBudget / jobs, std::max<size_t>(32, 2 * jobs)),
                        kMinPasses, kMaxPasses));
  }

  double Reward(const Job& job, const Shape& shape, int start) const {
    const Scenario& s = *scenario_;
    const int end = std::min(s.horizon_steps, start + shape.duration_steps);
    const double steps = end - start;
    const double step_sum = (static_cast<double>(start) + end - 1) * steps / 2.0;
    return job.priority * shape.gpus * (steps - decay_ * step_sum / s.horizon_steps);
  }

  // Deterministic starting orders; all put higher priority first, they differ in what breaks ties.
  std::vector<std::vector<int>> SeedOrders(const std::vector<int>& candidates) const {
    const auto& jobs = scenario_->jobs;
    auto area = [&](int j) {
      const Shape& shape = jobs[j].shapes.front();
      return static_cast<long long>(shape.gpus) * shape.duration_steps;
    };
    auto by = [&](auto key_less) {
      std::vector<int> order = candidates;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        if (jobs[a].priority != jobs[b].priority) return jobs[a].priority > jobs[b].priority;
        return key_less(a, b);
      });
      return order;
    };
    std::vector<std::vector<int>> orders;
    // Big rocks first: the hardest blocks to fit go in while the grid is emptiest.
    orders.push_back(by([&](int a, int b) {
      if (area(a) != area(b)) return area(a) > area(b);
      return jobs[a].arrival_step < jobs[b].arrival_step;
    }));
    // Earliest arrival first, then small first: more jobs finish early, decayed reward is kept.
    orders.push_back(by([&](int a, int b) {
      if (jobs[a].arrival_step != jobs[b].arrival_step) {
        return jobs[a].arrival_step < jobs[b].arrival_step;
      }
      return area(a) < area(b);
    }));
    // Widest first (fragmentation), then longest.
    orders.push_back(by([&](int a, int b) {
      const Shape& sa = jobs[a].shapes.front();
      const Shape& sb = jobs[b].shapes.front();
      if (sa.gpus != sb.gpus) return sa.gpus > sb.gpus;
      return sa.duration_steps > sb.duration_steps;
    }));
    // Arrival order, as an online scheduler sees the work: it keeps long low-priority jobs that
    // can start now from waiting behind later high-priority ones when that is worth more.
    std::vector<int> online = candidates;
    std::stable_sort(online.begin(), online.end(), [&](int a, int b) {
      if (jobs[a].arrival_step != jobs[b].arrival_step) {
        return jobs[a].arrival_step < jobs[b].arrival_step;
      }
      return jobs[a].priority > jobs[b].priority;
    });
    orders.push_back(std::move(online));
    // Reward density regardless of priority ties: priority x GPUs inside the horizon.
    std::vector<int> density = candidates;
    std::stable_sort(density.begin(), density.end(), [&](int a, int b) {
      return jobs[a].priority * jobs[a].shapes.front().gpus >
             jobs[b].priority * jobs[b].shapes.front().gpus;
    });
    orders.push_back(std::move(density));
    return orders;
  }

  // Steps through time; at each step the arrived jobs, highest priority first, start if some shape
  // fits now (the shape with most reward). A job's earliest possible start only grows as the grid
  // fills, so each job is searched again only when that step comes. `started_order` receives the
  // jobs in the order they started, then the others.
  PassResult RunTimeStepped(const BlockGrid& base, const std::vector<int>& candidates,
                            std::vector<int>& started_order) const {
    const Scenario& s = *scenario_;
    BlockGrid grid = base;
    PassResult result;
    result.reward = 0;
    result.placements.assign(s.jobs.size(), Placement{});
    std::vector<int> pending = candidates;
    std::stable_sort(pending.begin(), pending.end(), [&](int a, int b) {
      if (s.jobs[a].priority != s.jobs[b].priority) return s.jobs[a].priority > s.jobs[b].priority;
      return s.jobs[a].arrival_step < s.jobs[b].arrival_step;
    });
    std::vector<int> next_try(s.jobs.size(), 0);
    for (int j : pending) next_try[j] = std::max(0, s.jobs[j].arrival_step);
    started_order.clear();
    for (int t = 0; t < s.horizon_steps && !pending.empty(); ++t) {
      std::vector<int> still;
      for (int j : pending) {
        if (next_try[j] > t) {
          still.push_back(j);
          continue;
        }
        const Job& job = s.jobs[j];
        Placement chosen;
        double chosen_reward = -1;
        int earliest = s.horizon_steps;
        for (size_t k = 0; k < job.shapes.size(); ++k) {
          const Shape& shape = job.shapes[k];
          const auto found =
              grid.FindEarliest(shape.gpus, shape.duration_steps, job.requirement, t);
          if (!found) continue;
          earliest = std::min(earliest, found->start_step);
          if (found->start_step != t) continue;
          const double reward = Reward(job, shape, t);
          if (reward > chosen_reward) {
            chosen = Placement{static_cast<int>(k), found->first_gpu, t};
            chosen_reward = reward;
          }
        }
        if (chosen.shape < 0) {
          next_try[j] = earliest;  // horizon_steps when nothing fits any more
          if (earliest < s.horizon_steps) still.push_back(j);
          continue;
        }
        const Shape& shape = job.shapes[chosen.shape];
        grid.Occupy(chosen.first_gpu, shape.gpus, t, t + shape.duration_steps);
        result.reward += chosen_reward;
        result.placements[j] = chosen;
        started_order.push_back(j);
      }
      pending = std::move(still);
    }
    for (int j : candidates) {
      if (result.placements[j].shape < 0) started_order.push_back(j);
    }
    return result;
  }

  // Each of the job's shapes at its earliest free block on `grid` (from its arrival), and the one
  // `rule` prefers; shape < 0 when none fits. `reward` is the chosen placement's.
  Placement ChooseShape(const BlockGrid& grid, const Job& job, ShapeRule rule,
                        double& reward) const {
    Placement chosen;
    int chosen_finish = 0;
    for (size_t k = 0; k < job.shapes.size(); ++k) {
      const Shape& shape = job.shapes[k];
      const auto found = grid.FindEarliest(shape.gpus, shape.duration_steps, job.requirement,
                                           std::max(0, job.arrival_step));
      if (!found) continue;
      const double r = Reward(job, shape, found->start_step);
      const int finish = found->start_step + shape.duration_steps;
      const bool better =
          chosen.shape < 0 ||
          (rule == ShapeRule::kMostReward
               ? r > reward
               : (finish < chosen_finish || (finish == chosen_finish && r > reward)));
      if (better) {
        chosen = Placement{static_cast<int>(k), found->first_gpu, found->start_step};
        reward = r;
        chosen_finish = finish;
      }
    }
    return chosen;
  }

  // One greedy pass over `order`. The first `replay` jobs are placed where `replayed` (a pass
  // over an order that begins with the same jobs, by the same rule) placed them, without a search:
  // the same placements a search would find.
  PassResult RunPass(const BlockGrid& base, const std::vector<int>& order, ShapeRule rule,
                     const PassResult* replayed = nullptr, size_t replay = 0) const {
    const Scenario& s = *scenario_;
    BlockGrid grid = base;
    PassResult result;
    result.reward = 0;
    result.placements.assign(s.jobs.size(), Placement{});
    for (size_t k = 0; k < order.size(); ++k) {
      // A stop (not the deadline: the first pass always completes, so plans stay fixed by the
      // input) ends even a pass; the jobs not reached stay unstarted, which is legal.
      if (k % 64 == 0 && options_->stop != nullptr &&
          options_->stop->load(std::memory_order_relaxed)) {
        break;
      }
      const int j = order[k];
      const Job& job = s.jobs[j];
      if (k < replay) {
        const Placement& p = replayed->placements[j];
        if (p.shape < 0) continue;
        const Shape& shape = job.shapes[p.shape];
        grid.Occupy(p.first_gpu, shape.gpus, p.start_step, p.start_step + shape.duration_steps);
        result.reward += Reward(job, shape, p.start_step);
        result.placements[j] = p;
        continue;
      }
      double chosen_reward = 0;
      const Placement chosen = ChooseShape(grid, job, rule, chosen_reward);
      if (chosen.shape < 0) continue;
      const Shape& shape = job.shapes[chosen.shape];
      grid.Occupy(chosen.first_gpu, shape.gpus, chosen.start_step,
                  chosen.start_step + shape.duration_steps);
      result.reward += chosen_reward;
      result.placements[j] = chosen;
    }
    return result;
  }

  BaselineFactories factories_;  // the baselines DoNoHarm keeps its promises against
  const Scenario* scenario_ = nullptr;
  const PolicyOptions* options_ = nullptr;
  // The time decay the passes judge placements by: the objective's, or 0 where DoNoHarm builds
  // plans for the undecayed value (mutable: only DoNoHarm switches it, and switches it back).
  mutable double decay_ = 0;
  Clock::time_point deadline_;
};

}  // namespace

std::unique_ptr<Policy> MakeFastPolicy() {
  return std::make_unique<FastPolicy>(InTreeBaselineFactories());
}

std::unique_ptr<Policy> MakeFastPolicyWithBaselines(BaselineFactories baselines) {
  return std::make_unique<FastPolicy>(std::move(baselines));
}

}  // namespace ordo::policy
