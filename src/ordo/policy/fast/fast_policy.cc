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
//     placed again around both); last, adaptive large neighbourhood search from the plan so far
//     (neighbourhood_search.h: destroy a region, a job's competitors, the cheapest or random jobs;
//     keep or re-plan the services; repair greedily or by regret). The number of passes and the
//     loop's work are fixed by the instance's size and PolicyOptions::effort, so the same input,
//     seed and effort give the same plan; the time limit only cuts the search short on inputs
//     too large for it.
//  5. Services get concrete GPU ids that move as little as possible between steps.
//  6. Do no harm (DoNoHarm): among fast mode's plans, the four baselines' plans (and, where jobs
//     have checkpoints, the two preempting peers') and plans built from them, the best objective
//     among those with at least fifo's value and at most reactive's unmet real-time GPU-steps.
//     The baselines are planned by name (baseline_plans.h); one that fails fails fast mode.
//  7. Where a running job has a checkpoint: preemption where it pays, for a waiting job or for a
//     service's unmet peak (preemption_move.h).
//  8. The GPUs idle at step 0 lent to the services as headroom (policy/common/headroom.h).
// Code: the phases are in this directory, over one solve's SearchContext (search.h): batch passes
// (batch_passes.h), service variants (service_variants.h), local moves (local_moves.h), the
// neighbourhood search (neighbourhood_search.h), the do-no-harm selection (do_no_harm.h),
// preemption (preemption_move.h); this file runs them.
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
#include <limits>
#include <optional>

#include "ordo/core/metrics.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/common/explain.h"
#include "ordo/policy/common/headroom.h"
#include "ordo/policy/common/plan_builder.h"
#include "ordo/policy/common/promises.h"
#include "ordo/policy/fast/baseline_plans.h"
#include "ordo/policy/fast/batch_passes.h"
#include "ordo/policy/fast/do_no_harm.h"
#include "ordo/policy/fast/local_moves.h"
#include "ordo/policy/fast/neighbourhood_search.h"
#include "ordo/policy/fast/preemption_move.h"
#include "ordo/policy/fast/search.h"
#include "ordo/policy/fast/service_variants.h"

namespace ordo::policy {
namespace {

using fast::Outcome;
using fast::SearchContext;

// Fast mode computes the baselines and keeps the do-no-harm promises up to this many jobs.
constexpr size_t kMaxGuardJobs = 5'000;
// Passes each service variant's trial gets.
constexpr int kTrialPasses = 2;

// The service variants and their searches: each variant is tried with a short schedule, then the
// best one gets the rest of the pass budget (the trials of the variants that spend reactive's unmet
// budget come on top of it), followed by a few moves around the jobs that lost most reward (each
// costs about a pass), where there are services to give way: half displacements, half
// ruin-and-recreate. Every outcome is returned, the chosen one's last.
std::vector<Outcome> SearchVariants(const SearchContext& ctx, const Plan* reactive,
                                    long long unmet_limit) {
  const fast::BatchPasses batch(ctx, ctx.scenario.objective.time_decay);
  const auto variants = fast::ServiceVariants(ctx, unmet_limit, reactive);
  const int budget = fast::PassBudget(ctx.candidates.size(), ctx.options.effort);
  size_t chosen = 0;
  const bool trials =
      variants.size() > 1 && budget >= kTrialPasses * static_cast<int>(variants.size()) + 3;
  std::vector<Outcome> outcomes;  // every variant's trial, then the chosen one's full schedule
  int trial_passes = 0;           // taken from the budget
  const auto better = [&](const Outcome& a, const Outcome& b) {
    return fast::BetterOutcome(ctx.scenario, a, b, unmet_limit);
  };
  if (trials) {
    for (size_t v = 0; v < variants.size() && !ctx.OutOfTime(); ++v) {
      outcomes.push_back(fast::PlanVariant(ctx, batch, variants[v], kTrialPasses));
      if (v == 0 || better(outcomes.back(), outcomes[chosen])) chosen = v;
      if (!variants[v].spends_budget) trial_passes += kTrialPasses;
    }
  }
  const auto schedule = [&](size_t v, int passes) {
    Outcome outcome = fast::PlanVariant(ctx, batch, variants[v], passes);
    const int moves =
        ctx.scenario.services.empty() ? 0 : fast::Moves(ctx.candidates.size(), passes);
    fast::Displace(ctx, batch, moves / 2, unmet_limit, outcome);
    fast::Recreate(ctx, batch, moves - moves / 2, unmet_limit, outcome);
    fast::SearchNeighbourhoods(ctx, batch,
                               fast::NeighbourhoodBudget(ctx.candidates.size(), ctx.options.effort),
                               unmet_limit, outcome);
    return outcome;
  };
  const int passes = budget - trial_passes;
  outcomes.push_back(schedule(chosen, passes));
  // A budget variant that wins its trial may still lose to the best other variant once both are
  // searched (two passes are a noisy judge): that one gets half a schedule too, and the better of
  // the two is fast mode's plan.
  if (trials && variants[chosen].spends_budget && !ctx.OutOfTime()) {
    std::optional<size_t> other;
    for (size_t v = 0; v + 1 < outcomes.size(); ++v) {  // the trials
      if (!variants[v].spends_budget && (!other || better(outcomes[v], outcomes[*other]))) {
        other = v;
      }
    }
    if (other) {
      Outcome second = schedule(*other, passes / 2);
      if (better(second, outcomes.back())) std::swap(second, outcomes.back());
      outcomes.insert(outcomes.end() - 1, std::move(second));
    }
  }
  return outcomes;
}

// Where jobs have checkpoints, the preempting peers' plans, candidates of the do-no-harm selection
// so that fast mode's plan is never below theirs where they keep the promises.
std::vector<Plan> PeerPlans(const Scenario& s, const PolicyOptions& options) {
  std::vector<Plan> peers;
  for (auto make : {MakePriorityPreemptPolicy, MakeReactivePreemptPolicy}) {
    if (auto other = make()->Solve(s, options)) peers.push_back(std::move(*other));
  }
  return peers;
}

// Preemption where it pays (preemption_move.h): first for waiting jobs (services untouched), then
// for a service's peak (the services re-planned on the GPUs the victim gives back).
void Preempt(const SearchContext& ctx, const Promises& promises, Plan& plan) {
  Promises kept = promises;
  const Metrics m = ComputeMetrics(ctx.scenario, plan);
  kept.max_unmet_gpu_steps = std::max(kept.max_unmet_gpu_steps, m.realtime_unmet_gpu_steps);
  const auto out_of_time = [&] { return ctx.OutOfTime(); };
  if (auto better = PreemptWherePays(ctx.scenario, plan, kept, out_of_time)) {
    plan = std::move(*better);
  }
  if (auto better = PreemptForServices(ctx.scenario, plan, kept, out_of_time)) {
    plan = std::move(*better);
  }
}

class FastPolicy final : public Policy {
 public:
  explicit FastPolicy(BaselineFactories factories) : factories_(std::move(factories)) {}

  std::string_view name() const override { return fast::kPolicyName; }

  Result<Plan> Solve(const Scenario& s, const PolicyOptions& options) override {
    if (auto checked = CheckPolicyOptions(options); !checked) return Fail(checked.error());
    const auto started = fast::Clock::now();
    const SearchContext ctx(
        s, options,
        started + std::chrono::duration_cast<fast::Clock::duration>(
                      std::chrono::duration<double>(std::max(0.0, options.time_limit_s))));

    // The baselines (for the do-no-harm selection; reactive's unmet demand is the budget the
    // priced variant and the moves keep to), where the guarantee runs: up to 5,000 jobs, inside
    // the time limit. A baseline that fails fails fast mode: its promises would otherwise lapse
    // unseen.
    std::optional<BaselinePlans> baselines;
    if (s.jobs.size() <= kMaxGuardJobs && !ctx.OutOfTime()) {
      auto planned = PlanBaselines(s, options, factories_);
      if (!planned) return Fail(planned.error());
      baselines = std::move(*planned);
    }
    const bool checkpoints = std::any_of(s.jobs.begin(), s.jobs.end(),
                                         [](const Job& job) { return job.checkpoint.has_value(); });
    std::vector<Plan> peers;
    if (checkpoints && baselines && !ctx.OutOfTime()) peers = PeerPlans(s, options);
    Promises promises;
    if (baselines) {
      promises.min_value = baselines->fifo.metrics.value;
      promises.max_unmet_gpu_steps = baselines->reactive.metrics.realtime_unmet_gpu_steps;
    }
    const long long unmet_limit = baselines ? baselines->reactive.metrics.realtime_unmet_gpu_steps
                                            : std::numeric_limits<long long>::max();

    const std::vector<Outcome> outcomes =
        SearchVariants(ctx, baselines ? &baselines->reactive : nullptr, unmet_limit);
    Plan plan = fast::Assemble(s, outcomes.back().pass.placements, outcomes.back().counts);
    if (baselines && !ctx.OutOfTime()) {
      plan =
          fast::DoNoHarm(ctx, outcomes, std::move(*baselines), std::move(peers), std::move(plan));
    }
    if (checkpoints && !ctx.OutOfTime()) Preempt(ctx, promises, plan);
    if (options.lend_idle_gpus) LendIdleGpus(s, plan);
    if (options.explain) plan.explanations = ExplainPlan(s, plan);
    FinishPlan(s, started, plan);
    return plan;
  }

 private:
  BaselineFactories factories_;  // the baselines the do-no-harm selection keeps promises against
};

}  // namespace

std::unique_ptr<Policy> MakeFastPolicy() {
  return std::make_unique<FastPolicy>(InTreeBaselineFactories());
}

std::unique_ptr<Policy> MakeFastPolicyWithBaselines(BaselineFactories baselines) {
  return std::make_unique<FastPolicy>(std::move(baselines));
}

}  // namespace ordo::policy
