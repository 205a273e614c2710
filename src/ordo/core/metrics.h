// The spec's metrics, computed from a scenario and a plan, never by a planner itself.
#pragma once

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo {

/// One stay of a job on one block, in absolute steps (ends exclusive): it holds the block over
/// [from, to), spends [from, work_from) restarting, and works over [work_from, to), of which
/// [work_from, kept_to) is kept and [kept_to, to) is lost to a preemption.
struct Stay {
  int first_gpu = 0;
  long long from = 0;
  long long to = 0;
  long long work_from = 0;
  long long kept_to = 0;
};

/// A started job's stays under the spec's preemption rules: one, or two when it is preempted and
/// resumed. `completes` when the job does all its work in them (never when preempted and not
/// resumed); `end` is then the last stay's end. Requires p.started(); for a legal plan only.
struct JobStays {
  Stay stays[2];
  int count = 0;
  bool completes = false;
  long long end = 0;
};
JobStays StaysOf(const Job& job, const JobPlacement& p);

/// The metrics of spec/formats-v1.md over steps 0..T-1 (solve_ms and solver are left as they are
/// in `plan.metrics`). Assumes a structurally sound plan (every job and service once, in any
/// order).
Metrics ComputeMetrics(const Scenario& scenario, const Plan& plan);

/// The planning objective alone: batch rewards inside the horizon minus unmet penalties.
double ComputeObjective(const Scenario& scenario, const Plan& plan);

}  // namespace ordo
