// Two measures the spec does not define but the report shows (docs/cli.md, "Metrics"): how much
// free capacity no waiting job could use (fragmentation), and how much of the waiting happened
// although enough GPUs were free, because none of them formed a block the job could take (shape
// mismatch). Computed from a scenario and a plan alone, like the spec's metrics. Also how long jobs
// wait (mean, p95, never started, by priority class).
#pragma once

#include <array>
#include <optional>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::report {

struct WaitMetrics {
  /// Free GPU-steps at which some job waits but no waiting job has a free aligned block (of any of
  /// its shapes, in a group it may use) containing that GPU.
  long long fragmented_gpu_steps = 0;
  /// fragmented_gpu_steps / (G * T).
  double fragmentation = 0;
  /// (job, step) pairs in 0..T-1 where the job has arrived, is not running and has not started.
  long long waiting_job_steps = 0;
  /// Of those, the pairs where at least the job's smallest shape's GPU count was free in the
  /// cluster, yet no free aligned block of any of its shapes existed in a group it may use.
  long long shape_mismatch_job_steps = 0;
  /// shape_mismatch_job_steps / waiting_job_steps; empty when nothing waited.
  std::optional<double> shape_mismatch_share;
};

/// How long jobs wait in one plan, in hours. A job's wait is start - arrival (a job queued before
/// the plan, arrival < 0, counts the time it has already waited); a job the plan never starts is
/// counted with the horizon's end - arrival, a lower bound, so leaving a job out never lowers a
/// wait. Running jobs are not counted. Classes by priority: 1-3 (p <= 3), 4-7 (p <= 7), 8-10.
struct WaitSummary {
  int jobs = 0;
  int never_started = 0;
  double mean_hours = 0;
  double p95_hours = 0;  // nearest rank
};
struct JobWaits {
  WaitSummary all;
  std::array<WaitSummary, 3> by_class{};  // 1-3, 4-7, 8-10
};
inline constexpr const char* kPriorityClassNames[3] = {"1-3", "4-7", "8-10"};
JobWaits ComputeJobWaits(const Scenario& scenario, const Plan& plan);

/// Occupancy comes from the plan: started jobs (running ones included) hold their block over
/// [start, start + duration); services hold the GPUs listed at each step. Ids and GPUs the scenario
/// does not know are ignored, so any plan that the readers accept can be measured, legal or not.
/// Cost O(T * (G * C + J)) where C is the number of distinct (block size, GPU requirement) pairs.
WaitMetrics ComputeWaitMetrics(const Scenario& scenario, const Plan& plan);

}  // namespace ordo::report
