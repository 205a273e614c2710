#include "ordo/policy/fast/service_variants.h"

#include <algorithm>
#include <numeric>

namespace ordo::policy::fast {
namespace {

bool UsesEveryGroup(const Scenario& s, const Service& service) {
  return std::all_of(s.cluster.groups.begin(), s.cluster.groups.end(),
                     [&](const NodeGroup& g) { return service.requirement.Matches(g); });
}

// Services capped at the same quantile of their own demand (50%, 75%, 90%), each cap set kept
// once.
void AddQuantileVariants(const Scenario& s, std::vector<ServiceVariant>& variants) {
  for (double quantile : {0.5, 0.75, 0.9}) {
    ServiceVariant variant;
    for (const Service& service : s.services) {
      std::vector<int> demand = service.demand;
      std::sort(demand.begin(), demand.end());
      const size_t k = std::min(demand.size() - 1,
                                static_cast<size_t>(quantile * static_cast<double>(demand.size())));
      variant.curves.cap.push_back(demand[k]);
    }
    if (variants.size() == 1 || variants.back().curves.cap != variant.curves.cap) {
      variants.push_back(std::move(variant));
    }
  }
}

// The services whose worth per GPU-step (M x priority) is below a waiting job's priority, after
// the batch work (floors before).
void AddAfterVariant(const SearchContext& ctx, std::vector<ServiceVariant>& variants) {
  const Scenario& s = ctx.scenario;
  double top_priority = 0;
  for (int j : ctx.candidates) top_priority = std::max(top_priority, s.jobs[j].priority);
  std::vector<char> after(s.services.size(), 0);
  bool any = false;
  for (size_t i = 0; i < s.services.size(); ++i) {
    if (s.objective.unmet_penalty_multiplier * s.services[i].priority < top_priority) {
      after[i] = 1;
      any = true;
    }
  }
  if (any) variants.push_back(ServiceVariant{.after = after, .curves = {.floor_only = after}});
}

// Services packed away from the groups that type-bound batch work needs: best fit alone puts a
// service into the smallest group that takes it, which may be the only group a waiting job can
// use. The worth of each job that matches only some of the groups is spread over them.
void AddAvoidVariant(const SearchContext& ctx, std::vector<ServiceVariant>& variants) {
  const Scenario& s = ctx.scenario;
  std::vector<double> avoid(s.cluster.groups.size(), 0.0);
  bool bound = false;
  for (int j : ctx.candidates) {
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
}

// The churn-limited services' curves first where several services compete: planned by priority,
// a service may take the GPUs another needed to start its ramp in time.
void AddTightestFirstVariant(const SearchContext& ctx, std::vector<ServiceVariant>& variants) {
  const Scenario& s = ctx.scenario;
  const auto limited = std::count_if(s.services.begin(), s.services.end(), [](const Service& x) {
    return x.max_change_per_step.has_value();
  });
  bool compete = false;  // the services' demand exceeds what the running jobs leave somewhere
  for (int t = 0; t < s.horizon_steps && s.services.size() > 1 && !compete; ++t) {
    int demand = 0, room = 0;
    for (const Service& service : s.services) demand += service.demand[t];
    for (const auto& per_group : ctx.free) room += per_group[t];
    compete = demand > room;
  }
  if (compete && limited > 0) {
    variants.push_back(ServiceVariant{.curves = {.tightest_first = true}});
  }
}

// The services that can use every group reserved anywhere in the cluster, step by step; the
// others in their groups.
void ReserveAnywhere(const Scenario& s, const ServiceCounts& counts, BlockGrid& base) {
  ServiceCounts in_groups = counts;
  for (int t = 0; t < s.horizon_steps; ++t) {
    int anywhere = 0;
    for (size_t i = 0; i < s.services.size(); ++i) {
      if (!UsesEveryGroup(s, s.services[i])) continue;
      for (auto& per_group : in_groups[i]) {
        anywhere += per_group[t];
        per_group[t] = 0;
      }
    }
    base.ReserveAnywhere(t, anywhere);
  }
  ReserveCounts(s, in_groups, base);
}

// The services planned after the batch work, on the capacity the jobs and the services planned
// first leave.
void PlanServicesAfter(const SearchContext& ctx, const std::vector<char>& after, Outcome& outcome) {
  const Scenario& s = ctx.scenario;
  std::vector<std::vector<int>> left = LeftBy(s, ctx.free, outcome.pass);
  for (size_t i = 0; i < s.services.size(); ++i) {
    if (after[i]) continue;
    for (size_t g = 0; g < ctx.free.size(); ++g) {
      for (int t = 0; t < s.horizon_steps; ++t) left[g][t] -= outcome.counts[i][g][t];
    }
  }
  ServiceCounts later = PlanServiceCounts(s, left, {.include = after});
  for (size_t i = 0; i < s.services.size(); ++i) {
    if (after[i]) outcome.counts[i] = std::move(later[i]);
  }
}

}  // namespace

std::vector<ServiceVariant> ServiceVariants(const SearchContext& ctx, long long unmet_limit,
                                            const Plan* reactive) {
  const Scenario& s = ctx.scenario;
  std::vector<ServiceVariant> variants(1);
  if (s.services.empty() || ctx.candidates.empty()) return variants;
  variants[0].counts = PlanServiceCounts(s, ctx.free);
  AddQuantileVariants(s, variants);
  AddAfterVariant(ctx, variants);
  // The budget's variants: priced to it where the first variant leaves part of it unspent;
  // reactive's counts also where the first variant leaves more unmet than reactive (they keep the
  // budget by construction). Where both leave nothing unmet there is nothing to spend, and their
  // trials would only cost time (so on the 8-GPU benchmark instance).
  const long long first_unmet = UnmetSteps(s, *variants[0].counts);
  if (reactive != nullptr && first_unmet < unmet_limit) {
    if (auto priced = PricedBudgetCounts(ctx, unmet_limit)) {
      variants.push_back(ServiceVariant{.counts = std::move(*priced), .spends_budget = true});
    }
  }
  if (reactive != nullptr && (first_unmet < unmet_limit || first_unmet > 0)) {
    variants.push_back(ServiceVariant{.counts = CountsOf(s, *reactive), .spends_budget = true});
  }
  AddAvoidVariant(ctx, variants);
  AddTightestFirstVariant(ctx, variants);
  // Services held anywhere, where some service can use every group of several: a reservation per
  // group, one ranking of groups for the whole horizon, keeps a service in a group while a job
  // that can run only there (its GPU type, or the only group wide enough) waits; placed after the
  // batch work, the service moves between groups over time.
  if (s.cluster.groups.size() > 1 &&
      std::any_of(s.services.begin(), s.services.end(),
                  [&](const Service& x) { return UsesEveryGroup(s, x); })) {
    variants.push_back(ServiceVariant{.anywhere = true});
  }
  return variants;
}

Outcome PlanVariant(const SearchContext& ctx, const BatchPasses& batch,
                    const ServiceVariant& variant, int passes) {
  const Scenario& s = ctx.scenario;
  Outcome outcome;
  outcome.counts =
      variant.counts ? *variant.counts : PlanServiceCounts(s, ctx.free, variant.curves);
  BlockGrid base = ctx.pinned;
  if (variant.anywhere) {
    ReserveAnywhere(s, outcome.counts, base);
  } else {
    ReserveCounts(s, outcome.counts, base);
  }
  outcome.pass = batch.RunSchedule(base, passes);
  if (variant.anywhere) {
    // The curves again, on the GPUs the batch work leaves in each group (as many in all as were
    // reserved; the groups of the services held anywhere chosen step by step).
    bool complete = true;
    ServiceCounts counts = PlanServiceCounts(s, LeftBy(s, ctx.free, outcome.pass), {}, &complete);
    if (complete) {
      outcome.counts = std::move(counts);
    } else {  // some floor did not fit where it was reserved anywhere: reserve per group
      base = ctx.pinned;
      ReserveCounts(s, outcome.counts, base);
      outcome.pass = batch.RunSchedule(base, passes);
    }
  }
  if (!variant.after.empty()) PlanServicesAfter(ctx, variant.after, outcome);
  outcome.objective = outcome.pass.reward - UnmetPenalty(s, outcome.counts);
  return outcome;
}

bool BetterOutcome(const Scenario& s, const Outcome& a, const Outcome& b, long long unmet_limit) {
  const bool keeps_a = UnmetSteps(s, a.counts) <= unmet_limit;
  const bool keeps_b = UnmetSteps(s, b.counts) <= unmet_limit;
  if (keeps_a != keeps_b) return keeps_a;
  return a.objective > b.objective;
}

std::optional<ServiceCounts> BudgetCounts(const SearchContext& ctx, long long unmet) {
  return BudgetCountsOn(ctx.scenario, ctx.free, unmet);
}

std::optional<ServiceCounts> BudgetCountsOn(const Scenario& s,
                                            const std::vector<std::vector<int>>& free,
                                            long long unmet, int* plans) {
  int planned = 0;
  bool floors_fit = true;  // the floors fit `free` (caps never go below them)
  const auto plan = [&](const std::vector<int>& caps) {
    ++planned;
    return PlanServiceCounts(s, free, {.cap = caps}, &floors_fit);
  };
  std::vector<int> caps(s.services.size(), -1);
  ServiceCounts counts = plan(caps);
  std::optional<ServiceCounts> result;
  if (floors_fit && UnmetSteps(s, counts) <= unmet) {
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
        if (UnmetSteps(s, plan(caps)) <= unmet) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      caps[i] = hi;
    }
    counts = plan(caps);
    if (UnmetSteps(s, counts) <= unmet) result = std::move(counts);
  }
  if (plans != nullptr) *plans = planned;
  return result;
}

std::vector<double> ServedWorth(const Scenario& s) {
  std::vector<double> worth;
  for (const Service& service : s.services) {
    const double m = s.objective.unmet_penalty_multiplier;
    worth.push_back(m > 0 ? m * service.priority : 1.0);
  }
  return worth;
}

std::vector<double> Prices(const Scenario& s, double lambda) {
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

std::optional<ServiceCounts> PricedBudgetCounts(const SearchContext& ctx, long long unmet) {
  const Scenario& s = ctx.scenario;
  double top = 0;
  for (const Job& job : s.jobs) top = std::max(top, job.priority);
  CurveOptions options;
  options.worth = ServedWorth(s);
  double lo = 0, hi = top;
  std::optional<ServiceCounts> best;
  for (int k = 0; k < 12; ++k) {
    const double mid = k == 0 ? hi : 0.5 * (lo + hi);
    options.price = Prices(s, mid);
    ServiceCounts counts = PlanServiceCounts(s, ctx.free, options);
    if (UnmetSteps(s, counts) <= unmet) {
      best = std::move(counts);
      if (k == 0) break;
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return best;
}

}  // namespace ordo::policy::fast
