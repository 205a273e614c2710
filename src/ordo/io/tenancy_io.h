// The fair-share parts of ordo's config formats, read alike by worlds (the simulator), `ordo serve`
// and `ordo slurm`: a tenant's `share` and the `planning` object (priority/planning_priority.h), so
// the three accept the same values and name the same fields in their errors.
//
//   "share": 16 | "25%"
//   "planning": {"aging": {"rate_per_hour": 0.25, "cap": 4},
//                "fair_share": {"half_life_hours": 24, "max_exponent": 4, "weight": 1},
//                "wait_bound_hours": 0, "bound_priority": 1000, "size_exponent": 0,
//                "ramp_reserve_hours": 0}
#pragma once

#include <optional>

#include "ordo/core/error.h"
#include "ordo/io/json_fields.h"
#include "ordo/priority/planning_priority.h"

namespace ordo::io {

/// A tenant's share of the cluster (Kueue's nominal quota): GPUs, or a percentage of the cluster.
struct TenantShare {
  double amount = 0;  // GPUs, or percent when `percent`
  bool percent = false;

  /// The share as a fraction of a cluster of `total_gpus` GPUs.
  [[nodiscard]] double Fraction(int total_gpus) const {
    if (percent) return amount / 100.0;
    return total_gpus > 0 ? amount / total_gpus : 0;
  }
};

/// `obj`'s `share`, when present: a number of GPUs or a percentage such as "25%", not negative, a
/// percentage at most 100%. Errors name `<path>.share`. Whether the shares together fit the
/// cluster is the caller's check (it knows the cluster).
[[nodiscard]] Result<std::optional<TenantShare>> ReadShare(const internal::ObjectReader& obj);

/// `top`'s optional `planning` object over `defaults` (absent fields keep theirs), checked by
/// priority::ValidatePlanningOptions; errors name `planning.aging.cap` and so on.
[[nodiscard]] Result<priority::PlanningOptions> ReadPlanningOptions(
    const internal::ObjectReader& top, const priority::PlanningOptions& defaults);

}  // namespace ordo::io
