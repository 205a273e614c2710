// A plan of spec/formats-v1.md: where and when each job runs, which GPUs each service holds at each
// step, and the metrics. Produced by every Policy; checked by CheckPlan (check_plan.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ordo {

/// Where a preempted job starts again (spec: `resume`); it keeps its number of GPUs.
struct ResumePlacement {
  int start_step = 0;
  int first_gpu = 0;
  friend bool operator==(const ResumePlacement&, const ResumePlacement&) = default;
};

/// One job's decision. A job not started inside the horizon has no start_step; the other fields
/// are then meaningless. For a running job the entry repeats `running.start_step`, `first_gpu`
/// and its shape. A job with a checkpoint may give its block back at `preempt_step` and start
/// again at `resume` (spec: "Preemption: checkpoints and migration").
struct JobPlacement {
  std::string id;
  std::optional<int> start_step;
  int first_gpu = 0;
  int gpus = 0;
  int duration_steps = 0;
  std::optional<int> preempt_step;        // the first step it no longer holds its first block
  std::optional<ResumePlacement> resume;  // only with preempt_step; absent: not resumed inside

  [[nodiscard]] bool started() const { return start_step.has_value(); }
  /// start + duration: the end of a fresh, never preempted stay (exclusive). A running job's end
  /// is Job::running_end_step(); a preempted job's stays are in metrics.h (JobStays).
  [[nodiscard]] int end_step() const { return *start_step + duration_steps; }
};

/// One service's GPUs: `gpus[t]` lists the GPU ids it holds at step t (horizon_steps lists).
struct ServiceAllocation {
  std::string id;
  std::vector<std::vector<int>> gpus;
};

/// Why a job does not start at step 0 (or at all). Stored and sent over the wire: values only
/// grow at the end.
enum class WaitReason : int {
  kNone = 0,                 // starts at step 0, or is running
  kNotArrived = 1,           // arrival_step > 0
  kBlockedByJob = 2,         // a job holds the block it needs (named in `blocking_id`)
  kServicePeak = 3,          // real-time services hold the GPUs it needs
  kNoBlockOfSize = 4,        // no block of its size exists in the groups it may use
  kGpuType = 5,              // no group matches its gpu_type / min_gpu_memory_gb
  kFragmented = 6,           // enough free GPUs, but no free aligned block of its size
  kLowValue = 7,             // planned jobs of at least its priority hold every block it could use
  kServiceFloor = 8,         // services' floors (min_gpus) close every block it could use, always
  kHeadOfLine = 9,           // fifo: a job ahead of it in the queue has not started yet
  kServiceReservation = 10,  // a free block is closed by a service's static peak reservation
  kNotChosen = 11,           // a block was free for its whole run; the planner did not start it
  kBlockedByService = 12,    // services hold every block it could use (not at their peak)
};

/// Who holds GPUs a waiting job needed, with the facts its message states.
struct WaitHolder {
  std::string id;
  bool service = false;
  /// Job: its run [step, end_step) in the plan. Service: the step it is named at.
  int step = 0;
  int end_step = 0;
  double priority = 0;   // job
  bool running = false;  // job: already running when the plan was made
  int demand = 0;        // service: its demand at `step`
  int peak = 0;          // service: its highest demand over the horizon
};

/// The steps [from_step, to_step) of a job's wait, all with one reason and the same holders.
struct WaitSpan {
  int from_step = 0;
  int to_step = 0;
  WaitReason reason = WaitReason::kNone;
  std::vector<WaitHolder> holders;
};

/// An explanation for a job (spec extension `x-explain`).
struct JobExplanation {
  std::string id;
  std::optional<int> planned_start;
  WaitReason reason = WaitReason::kNone;
  std::string blocking_id;  // the job or service that holds the block, when one does
  std::string message;      // one sentence for a person
  /// Every step from its earliest possible start to its planned start (or the horizon's end),
  /// each span a checkable fact; `reason` and `blocking_id` are those of the longest span.
  std::vector<WaitSpan> spans;
};

/// What an exact solver proved (full mode only).
struct SolverReport {
  std::string status;  // "optimal", "feasible", "time_limit", ...
  double best_bound = 0;
  double gap = 0;  // relative: (bound - objective) / max(1, |bound|)
  long long nodes = 0;
};

/// The spec's metrics over steps 0..horizon_steps-1 (see metrics.h for the definitions).
struct Metrics {
  double utilization = 0;
  double allocated_utilization = 0;
  double value = 0;
  double batch_value = 0;
  double objective = 0;
  long long realtime_unmet_gpu_steps = 0;
  int jobs_started = 0;
  int jobs_completed = 0;
  int preemptions = 0;           // jobs with a preempt_step
  long long lost_gpu_steps = 0;  // GPU-steps of restart or lost work inside the horizon
  double solve_ms = 0;
  std::optional<SolverReport> solver;  // written as `status`, `best_bound`, `gap`, `nodes`
};

struct Plan {
  int version = 1;
  std::string scenario;
  std::string policy;
  std::vector<JobPlacement> jobs;           // scenario order for plans a policy makes
  std::vector<ServiceAllocation> services;  // scenario order for plans a policy makes
  Metrics metrics;
  std::vector<JobExplanation> explanations;  // written under `x-explain` when not empty
};

}  // namespace ordo
