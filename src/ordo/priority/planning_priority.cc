// Planning priorities (see planning_priority.h for the formulas and their guarantees).
#include "ordo/priority/planning_priority.h"

#include <algorithm>
#include <cmath>

#include "ordo/core/assert.h"

namespace ordo::priority {

PlanningOptions DefaultPlanningOptions() {
  PlanningOptions o;
  o.aging.rate_per_hour = 0.25;
  o.aging.cap = 4;
  o.fair_share.half_life_hours = 24;
  o.fair_share.max_exponent = 4;
  o.size_exponent = 1;
  return o;
}

PlanningOptions OnlinePlanningOptions() {
  PlanningOptions o = DefaultPlanningOptions();
  o.size_exponent = 0;
  return o;
}

Result<void> ValidatePlanningOptions(const PlanningOptions& o) {
  if (!std::isfinite(o.aging.rate_per_hour) || o.aging.rate_per_hour < 0 ||
      o.aging.rate_per_hour > 1e6) {
    return FailInput("aging.rate_per_hour", "must be a number from 0 to 1e6");
  }
  if (!std::isfinite(o.aging.cap) || o.aging.cap < 1 || o.aging.cap > 1e6) {
    return FailInput("aging.cap", "must be a number from 1 (no aging) to 1e6");
  }
  if (!std::isfinite(o.fair_share.half_life_hours) || o.fair_share.half_life_hours <= 0 ||
      o.fair_share.half_life_hours > 1e6) {
    return FailInput("fair_share.half_life_hours", "must be a number > 0 and <= 1e6");
  }
  if (!std::isfinite(o.fair_share.max_exponent) || o.fair_share.max_exponent < 0 ||
      o.fair_share.max_exponent > 30) {
    return FailInput("fair_share.max_exponent", "must be a number from 0 to 30");
  }
  if (!std::isfinite(o.fair_share.weight) || o.fair_share.weight < 0 || o.fair_share.weight > 30) {
    return FailInput("fair_share.weight", "must be a number from 0 to 30");
  }
  if (!std::isfinite(o.wait_bound_hours) || o.wait_bound_hours < 0 || o.wait_bound_hours > 1e6) {
    return FailInput("wait_bound_hours", "must be a number from 0 (no bound) to 1e6");
  }
  if (!std::isfinite(o.bound_priority) || o.bound_priority <= 0 || o.bound_priority > 1e8) {
    return FailInput("bound_priority", "must be a number > 0 and <= 1e8");
  }
  if (!std::isfinite(o.size_exponent) || o.size_exponent < 0 || o.size_exponent > 4) {
    return FailInput("size_exponent", "must be a number from 0 (off) to 4");
  }
  if (!std::isfinite(o.ramp_reserve_hours) || o.ramp_reserve_hours < 0 ||
      o.ramp_reserve_hours > 24 * 366) {
    return FailInput("ramp_reserve_hours", "must be a number of hours from 0 (none) to 8784");
  }
  if (!std::isfinite(o.borrowing_factor) || o.borrowing_factor <= 0 || o.borrowing_factor > 1) {
    return FailInput("borrowing_factor", "must be a number > 0 and <= 1 (1: no share guarantee)");
  }
  return {};
}

double AgeFactor(double waited_hours, const AgingOptions& o) {
  if (!(waited_hours > 0)) return 1;
  return std::min(o.cap, 1 + o.rate_per_hour * waited_hours);
}

double FairShareFactor(double usage_fraction, double share, const FairShareOptions& o) {
  if (!(share > 0)) return 1;
  const double exponent =
      std::clamp(o.weight * (1 - usage_fraction / share), -o.max_exponent, o.weight);
  return std::exp2(exponent);
}

double PlanningPriority(double base, double waited_hours, double fair_share_factor,
                        const PlanningOptions& o, double job_gpu_hours) {
  if (o.wait_bound_hours > 0 && waited_hours >= o.wait_bound_hours) {
    return base + o.bound_priority;
  }
  const double size =
      o.size_exponent > 0 ? std::pow(std::max(1.0, job_gpu_hours), -o.size_exponent) : 1;
  return base * AgeFactor(waited_hours, o.aging) * fair_share_factor * size;
}

double SmallestGpuHours(const Job& job, double step_hours) {
  double smallest = 0;
  for (const Shape& shape : job.shapes) {
    const double h = shape.gpus * shape.duration_steps * step_hours;
    smallest = smallest == 0 ? h : std::min(smallest, h);
  }
  return smallest;
}

double JobPlanningPriority(const Job& job, double waited_hours, double fair_share_factor,
                           const PlanningOptions& options, double step_hours) {
  return PlanningPriority(job.priority, waited_hours, fair_share_factor, options,
                          SmallestGpuHours(job, step_hours));
}

UsageLedger::UsageLedger(int tenants, double half_life_hours)
    : half_life_hours_(half_life_hours), used_(static_cast<size_t>(std::max(0, tenants)), 0) {
  ORDO_ASSERT(half_life_hours > 0);
}

void UsageLedger::Add(double hours, std::span<const double> used_gpus, double capacity_gpus) {
  ORDO_ASSERT(used_gpus.size() == used_.size());
  const double decay = std::exp2(-hours / half_life_hours_);
  for (size_t t = 0; t < used_.size(); ++t) used_[t] = used_[t] * decay + used_gpus[t] * hours;
  capacity_ = capacity_ * decay + capacity_gpus * hours;
}

double UsageLedger::UsageFraction(int tenant) const {
  if (!(capacity_ > 0)) return 0;
  return used_[static_cast<size_t>(tenant)] / capacity_;
}

std::vector<bool> Borrowers(std::span<const ShareClaim> jobs, std::span<const double> share_gpus) {
  std::vector<int> order(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const ShareClaim& x = jobs[static_cast<size_t>(a)];
    const ShareClaim& y = jobs[static_cast<size_t>(b)];
    if (x.running != y.running) return x.running;
    return x.rank < y.rank;
  });
  std::vector<double> left(share_gpus.begin(), share_gpus.end());
  std::vector<bool> borrows(jobs.size(), false);
  for (int i : order) {
    const ShareClaim& job = jobs[static_cast<size_t>(i)];
    if (job.tenant < 0 || static_cast<size_t>(job.tenant) >= left.size() ||
        !(share_gpus[static_cast<size_t>(job.tenant)] > 0)) {
      continue;
    }
    double& room = left[static_cast<size_t>(job.tenant)];
    if (job.gpus <= room) {
      room -= job.gpus;
    } else {
      borrows[static_cast<size_t>(i)] = true;
    }
  }
  return borrows;
}

void ApplyShareGuarantee(Scenario& scenario, std::span<const int> tenant_of,
                         std::span<const double> share, double borrowing_factor) {
  ORDO_ASSERT(tenant_of.size() == scenario.jobs.size());
  if (borrowing_factor >= 1) return;
  std::vector<double> share_gpus(share.size());
  for (size_t t = 0; t < share.size(); ++t) {
    share_gpus[t] = share[t] * scenario.cluster.total_gpus();
  }
  std::vector<ShareClaim> claims(scenario.jobs.size());
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    const Job& job = scenario.jobs[j];
    ShareClaim& claim = claims[j];
    claim.tenant = tenant_of[j];
    claim.running = job.running.has_value();
    claim.gpus = job.shapes.empty() ? 0 : job.shapes.front().gpus;
    for (const Shape& shape : job.shapes) claim.gpus = std::min(claim.gpus, shape.gpus);
    // Running jobs by start, waiting ones by arrival (Kueue's StrictFIFO within a queue), ties
    // by planning priority: ranking by planning priority alone would leave a tenant's large jobs,
    // which the size term ranks last, borrowing for ever.
    claim.rank = claim.running ? job.running->start_step
                               : job.arrival_step - job.priority / (1 + std::abs(job.priority));
  }
  const std::vector<bool> borrows = Borrowers(claims, share_gpus);
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    if (!borrows[j]) continue;
    scenario.jobs[j].borrowing_factor = borrowing_factor;
    scenario.jobs[j].priority *= borrowing_factor;
  }
}

}  // namespace ordo::priority
