// Planning priorities: what a rolling planner is told a waiting job is worth, so that re-deciding
// every step does not let a small or low-priority job lose every re-plan forever. Shared by the
// simulator, `ordo serve` and `ordo slurm`: each keeps one UsageLedger per cluster, feeds it what
// every tenant held at each step, and sets a waiting job's scenario priority to
// PlanningPriority(...) before it asks a policy for a plan. Reported value and metrics stay in BASE
// priorities: the planning priority is only what the planner optimises (docs/simulator.md,
// "Starvation").
//
// What it does. planning = base x age x fair_share, and past the wait bound base + bound_priority:
//   * age = min(aging.cap, 1 + aging.rate_per_hour x hours waited): a job gains `rate` of its base
//     priority per hour it waits, up to `cap` times its base (Slurm's age factor, multiplicative
//     here because the planner's objective is priority x GPU-steps);
//   * fair_share = clamp(2^(w x (1 - usage / share)), 2^-fair_share.max_exponent, 2^w), w =
//     fair_share.weight: Slurm's classic 2^(-usage/share) rescaled so a tenant exactly at its
//     share gets 1, an idle one 2^w and one far above its share tends to the floor. `usage` is the
//     tenant's GPU-hours decayed with `half_life_hours`, over the cluster's capacity decayed the
//     same way (a fraction of the cluster, like `share`); a tenant without a share (0) gets 1.
//     Every factor stays > 0, so a planner still gives idle GPUs to whoever has work (borrowing).
//   * wait bound: a job that has waited `wait_bound_hours` or more (0: off) gets base +
//     bound_priority, which dominates every job within the bound.
//   * share guarantee (ApplyShareGuarantee, `borrowing_factor` < 1; off by default): on the
//     planning scenario, the jobs beyond their tenant's share in GPUs now (Kueue's nominal quota;
//     running jobs claim it first, then waiting ones in arrival order) borrow, and plan at
//     borrowing_factor x their planning priority; fast mode may take a borrowed block back for a
//     job within its share (policy/fast/preemption_move.h).
// Guarantees: the result is finite, > 0 and non-decreasing in the hours waited; it is base
// exactly when every mechanism is off. Cost O(1) per job; the ledger O(tenants) per step.
// Example: base 2, rate 0.5/h, cap 4, waited 3 h, tenant at half its share (usage 0.25, share
// 0.5): age = min(4, 2.5) = 2.5, fair_share = 2^(1 - 0.5) = 1.414..., planning = 7.07...
#pragma once

#include <span>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"

namespace ordo::priority {

struct AgingOptions {
  double rate_per_hour = 0;  // 0: no aging
  double cap = 1;            // the age factor's ceiling, >= 1
};

struct FairShareOptions {
  double half_life_hours = 24;  // > 0
  double max_exponent = 4;      // the factor's floor is 2^-max_exponent; >= 0
  double weight = 1;            // the exponent's multiplier: the ceiling is 2^weight; >= 0
};

struct PlanningOptions {
  AgingOptions aging;
  FairShareOptions fair_share;
  double wait_bound_hours = 0;  // 0: no bound
  double bound_priority = 1000;
  /// Short-job preference: the priority is divided by max(1, the job's GPU-hours)^size_exponent
  /// (0: off), so a planner whose objective is priority x GPU-steps stops preferring the jobs
  /// that fill most of its horizon.
  double size_exponent = 0;
  /// A ramp reserve (forecast/ramp_reserve.h): each real-time service with a churn limit is
  /// planned above its forecast by its largest rise of observed demand over the last this-many
  /// hours, less what its churn limit lets it rise in that time. 0: none.
  double ramp_reserve_hours = 0;
  /// The share guarantee (ApplyShareGuarantee): a job that borrows beyond its tenant's share
  /// plans at this fraction of its planning priority, so that work within a share wins every
  /// contended GPU and borrowed GPUs are taken back first; in (0, 1], 1: off. Borrowers still get
  /// idle GPUs: the factor is > 0.
  double borrowing_factor = 1;
};

/// The defaults ordo plans with (tuned on one week of the ITP trace; docs/simulator.md).
PlanningOptions DefaultPlanningOptions();

/// The defaults of the planners that serve users, `ordo serve` and `ordo slurm`:
/// DefaultPlanningOptions without the short-job preference (size_exponent 0), which is on only
/// where it was tuned, in the simulator; a config's `planning` may set it.
PlanningOptions OnlinePlanningOptions();

/// Errors name the field: `aging.rate_per_hour`, `aging.cap` (below 1),
/// `fair_share.half_life_hours`, `fair_share.max_exponent`, `fair_share.weight`,
/// `wait_bound_hours`, `bound_priority`, `size_exponent`, `ramp_reserve_hours`,
/// `borrowing_factor`.
[[nodiscard]] Result<void> ValidatePlanningOptions(const PlanningOptions& options);

/// min(cap, 1 + rate x waited_hours); 1 for a negative wait.
double AgeFactor(double waited_hours, const AgingOptions& options);

/// clamp(2^(weight x (1 - usage_fraction / share)), 2^-max_exponent, 2^weight); 1 when share <= 0
/// (no share).
double FairShareFactor(double usage_fraction, double share, const FairShareOptions& options);

/// base x AgeFactor x fair_share_factor / max(1, job_gpu_hours)^size_exponent, or base +
/// bound_priority once waited_hours reaches a wait bound that is on.
double PlanningPriority(double base, double waited_hours, double fair_share_factor,
                        const PlanningOptions& options, double job_gpu_hours = 0);

/// The smallest GPU-hours among `job`'s shapes: its size as the planner sees it (0 without a
/// shape).
double SmallestGpuHours(const Job& job, double step_hours);

/// The planning priority of a waiting `job` whose `priority` is still its base one: what the
/// simulator, the service and `ordo slurm` each set before planning. `fair_share_factor` is its
/// tenant's (1 without a tenant).
double JobPlanningPriority(const Job& job, double waited_hours, double fair_share_factor,
                           const PlanningOptions& options, double step_hours);

/// Each tenant's recent use of the cluster, decayed: the input of FairShareFactor. Tenants are
/// numbered 0..n-1 by the caller. A value type: the caller owns it and advances it once per step
/// (not thread-safe; one per planning loop).
class UsageLedger {
 public:
  UsageLedger(int tenants, double half_life_hours);

  /// One period of `hours` during which tenant t held used_gpus[t] GPUs of `capacity_gpus`: what
  /// was recorded before decays by 2^(-hours / half_life) first. used_gpus has one entry per
  /// tenant.
  void Add(double hours, std::span<const double> used_gpus, double capacity_gpus);

  /// Decayed GPU-hours of tenant t over decayed GPU-hours of capacity; 0 before any period.
  [[nodiscard]] double UsageFraction(int tenant) const;

  [[nodiscard]] int tenants() const { return static_cast<int>(used_.size()); }

 private:
  double half_life_hours_;
  std::vector<double> used_;  // decayed GPU-hours per tenant
  double capacity_ = 0;       // decayed GPU-hours of the cluster
};

/// A job as the share guarantee sees it: its tenant (-1: none), its GPUs, whether it runs now, and
/// its rank within its tenant (a smaller rank claims the share first).
struct ShareClaim {
  int tenant = -1;
  int gpus = 0;
  bool running = false;
  double rank = 0;
};

/// Which jobs borrow beyond their tenant's share (Kueue's nominal quota): per tenant, running jobs
/// claim `share_gpus[tenant]` first, then waiting ones, each in increasing rank; a job whose GPUs
/// no longer fit in what is left of the share borrows (a smaller later one may still fit). Jobs
/// without a tenant, or of a tenant without a share (<= 0), never borrow. O(n log n).
/// Example: share 8; running 4 (rank 0) and waiting 8 (rank 1), 2 (rank 2): the 8 borrows, the 2
/// fits (4 + 2 <= 8).
std::vector<bool> Borrowers(std::span<const ShareClaim> jobs, std::span<const double> share_gpus);

/// The share guarantee on a planning scenario whose waiting jobs carry their planning priorities:
/// marks the jobs Borrowers finds (running ones rank by start, earliest first, so the latest
/// admitted borrow, as Kueue reclaims them; waiting ones by arrival, earliest first, ties by
/// planning priority, each counting its smallest shape) and multiplies their priority by
/// `borrowing_factor`, which it records in Job::borrowing_factor. tenant_of[j] is scenario job j's
/// tenant (-1: none); share[t] tenant t's share as a fraction of the scenario's cluster, as
/// FairShareFactor takes it (<= 0: none). Nothing changes with a factor of 1 or no share.
void ApplyShareGuarantee(Scenario& scenario, std::span<const int> tenant_of,
                         std::span<const double> share, double borrowing_factor);

}  // namespace ordo::priority
