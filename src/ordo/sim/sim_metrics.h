// Metrics of a committed timeline, per day and over the whole window: the spec's metrics
// (spec/formats-v1.md, "Metrics", with the window in place of the horizon), waits by job kind,
// unmet real-time demand and planning time per decision.
//
//   SimMetrics m = ComputeSimMetrics(world, run);
//   m.total.value, m.total.realtime_unmet_gpu_steps, m.days[2].wait_by_kind[0].p95_hours
//
// Definitions (G GPUs, steps [from, to) of the period, actual demand and durations):
// - batch_value: sum over steps of priority * gpus of the jobs doing kept work (not restarting
//   from a checkpoint, not doing work a preemption later throws away); service_value: sum of
//   priority * min(allocated, demand); value = batch_value + service_value (the spec's `value`).
// - net_value = value - M * sum over services and steps of priority * max(0, demand - allocated):
//   the spec's objective without its time decay, which has no meaning over a rolling window.
// - utilization, allocated_utilization, realtime_unmet_gpu_steps: as the spec, over the period.
// - preemptions: stays cut by a preemption inside the period (a job preempted twice counts
//   twice); lost_gpu_steps: GPU-steps of restart and of lost work inside the period.
// - jobs_started: starts inside the period; jobs_completed: jobs whose actual end falls in
//   (from, to]; jobs_arrived: arrivals in [from, to).
// - waits, by the period in which a job arrives: start - arrival; a job never started counts with
//   the window's end - arrival (a lower bound: censored), so starving a job never lowers a wait.
// - waits by priority class (the job's base priority): 1-3 (p <= 3), 4-7 (3 < p <= 7), 8-10
//   (p > 7), counted as the waits above.
// - per tenant: gpu_hours held; demand_gpu_hours = sum over steps of the GPUs of its jobs that
//   have arrived and not ended (a waiting job counts its smallest shape); entitled_gpu_hours =
//   sum over steps of min(demand, share) — what its share promises it when it has the work.
// - planning time: the wall time of each decision taken inside the period.
#pragma once

#include <array>
#include <vector>

#include "ordo/sim/simulator.h"
#include "ordo/sim/world.h"

namespace ordo::sim {

struct WaitStats {
  int jobs = 0;       // arrived in the period
  int unstarted = 0;  // of them, never started inside the window (censored waits)
  double mean_hours = 0;
  double p95_hours = 0;  // nearest rank
};

/// Priority classes of the wait tables (core/scenario.h: 1-3, 4-7, 8-10).
using ordo::kPriorityClasses;
using ordo::PriorityClass;
const char* PriorityClassName(int priority_class);  // "1-3", "4-7", "8-10"

struct TenantUse {
  double gpu_hours = 0;
  double demand_gpu_hours = 0;
  double entitled_gpu_hours = 0;  // min(demand, share), step by step
};

struct PeriodMetrics {
  int from_step = 0;
  int to_step = 0;  // exclusive
  double utilization = 0;
  double allocated_utilization = 0;
  double value = 0;
  double batch_value = 0;
  double service_value = 0;
  double net_value = 0;
  long long batch_gpu_steps = 0;
  long long realtime_demand_gpu_steps = 0;
  long long realtime_unmet_gpu_steps = 0;
  int preemptions = 0;
  long long lost_gpu_steps = 0;
  int jobs_arrived = 0;
  int jobs_started = 0;
  int jobs_completed = 0;
  std::array<WaitStats, 3> wait_by_kind{};  // indexed by JobKind
  WaitStats wait_all;
  std::array<WaitStats, kPriorityClasses> wait_by_class{};
  std::vector<TenantUse> tenants;  // world order; empty without tenants
  int decisions = 0;
  double plan_ms_mean = 0;
  double plan_ms_p95 = 0;
  double plan_ms_max = 0;
  double plan_ms_total = 0;
};

struct SimMetrics {
  PeriodMetrics total;
  std::vector<PeriodMetrics> days;  // one per day of the window
};

SimMetrics ComputeSimMetrics(const World& world, const SimRun& run);

/// The committed timeline step by step, summed over jobs and services.
struct StepSeries {
  std::vector<int> batch_gpus;    // GPUs running batch jobs
  std::vector<int> service_gpus;  // allocated to services
  std::vector<int> served_gpus;   // min(allocated, demand), summed over services
  std::vector<int> demand_gpus;   // actual demand
  std::vector<int> unmet_gpus;    // max(0, demand - allocated), summed over services
};
StepSeries ComputeStepSeries(const SimRun& run);

/// Metrics over steps [from, to) of the run.
PeriodMetrics ComputePeriodMetrics(const World& world, const SimRun& run, int from, int to);

}  // namespace ordo::sim
