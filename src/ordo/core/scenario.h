// The planning problem of spec/formats-v1.md as plain data: cluster, batch jobs, real-time
// services, objective, time grid. Built by the readers in io/ or by code (the simulator, the
// service, tests); ValidateScenario (validate.h) checks the rules no type can express.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"

namespace ordo {

/// Stored and sent over the wire: values only grow at the end.
enum class JobKind : int { kTraining = 0, kBatchInference = 1, kQuantization = 2 };

std::string_view JobKindName(JobKind kind);  // "training", "batch_inference", "quantization"
std::optional<JobKind> ParseJobKind(std::string_view name);

/// `nodes` identical nodes of `gpus_per_node` GPUs. GPU ids are global (see Cluster).
struct NodeGroup {
  std::string name;
  int nodes = 0;
  int gpus_per_node = 0;  // a power of two
  std::string gpu_type = "gpu";
  double gpu_memory_gb = 80;
};

/// What a job or service asks of the GPUs it may use (spec: `gpu_type`, `min_gpu_memory_gb`).
struct GpuRequirement {
  std::optional<std::string> gpu_type;
  std::optional<double> min_gpu_memory_gb;

  [[nodiscard]] bool Matches(const NodeGroup& group) const {
    return (!gpu_type || *gpu_type == group.gpu_type) &&
           (!min_gpu_memory_gb || group.gpu_memory_gb >= *min_gpu_memory_gb);
  }
};

/// The GPUs of a cluster, numbered as the spec says: groups in file order, nodes in order, GPUs in
/// order. Call Index() after changing `groups`; the accessors rely on it.
struct Cluster {
  std::vector<NodeGroup> groups;

  void Index();  // computes first ids and the GPU -> group table
  [[nodiscard]] int total_gpus() const { return total_gpus_; }
  [[nodiscard]] int group_first_gpu(int group) const { return group_first_[group]; }
  [[nodiscard]] int group_gpus(int group) const {
    return groups[group].nodes * groups[group].gpus_per_node;
  }
  /// The group that owns `gpu`; gpu must be in [0, total_gpus()).
  [[nodiscard]] int group_of(int gpu) const;

  /// True when [first_gpu, first_gpu + gpus) is a legal block under rule 3: inside one group,
  /// aligned to `gpus` from the group's first id, within one node or covering whole nodes.
  /// `gpus` must be a power of two.
  [[nodiscard]] bool IsAlignedBlock(int first_gpu, int gpus) const;

  /// Calls fn(first_gpu) for every legal block of `gpus` GPUs in groups matching `req`, lowest
  /// first id first.
  template <typename Fn>
  void ForEachBlock(int gpus, const GpuRequirement& req, Fn&& fn) const {
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
      if (!req.Matches(groups[g])) continue;
      const int size = group_gpus(g);
      const int gpn = groups[g].gpus_per_node;
      if (gpus > size || (gpus > gpn && gpus % gpn != 0)) continue;
      for (int offset = 0; offset + gpus <= size; offset += gpus) fn(group_first_[g] + offset);
    }
  }

 private:
  int total_gpus_ = 0;
  std::vector<int> group_first_;
  std::vector<int> gpu_group_;  // GPU id -> group index
};

/// One way to run a job: a power-of-two block held for `duration_steps` consecutive steps.
struct Shape {
  int gpus = 0;
  int duration_steps = 0;
  friend bool operator==(const Shape&, const Shape&) = default;
};

/// A job already running when the plan is made: left alone it keeps this block until
/// Job::running_end_step().
struct RunningPlacement {
  int start_step = 0;  // <= 0
  int first_gpu = 0;
  /// Work steps done by step 0, 0 <= p < duration; absent means -start_step (never interrupted).
  std::optional<int> progress_steps;
  /// Restart steps still to spend from step 0 before work goes on; absent means 0.
  std::optional<int> restart_steps_left;
};

/// How a preemptible job saves its work (spec: `checkpoint`).
struct Checkpoint {
  int every_steps = 1;    // a save after every `every_steps` work steps, >= 1
  int restart_steps = 0;  // steps a resumed stay spends loading before it works, >= 0
  friend bool operator==(const Checkpoint&, const Checkpoint&) = default;

  /// The progress a resume starts from after `progress` work steps: floor(progress / c) * c.
  [[nodiscard]] int SavedProgress(int progress) const {
    return progress / every_steps * every_steps;
  }
  /// How long a resumed stay holds its block: the restart, then the work not saved.
  [[nodiscard]] int ResumedStaySteps(int duration_steps, int saved_progress) const {
    return restart_steps + duration_steps - saved_progress;
  }
};

/// Priority classes, as Slurm's QOS tiers or Kubernetes' priority classes: 1-3 (0), 4-7 (1) and
/// 8-10 (2). The reports' wait tables are by class, and fast mode preempts a job only for one of a
/// higher class.
inline constexpr int kPriorityClasses = 3;
[[nodiscard]] inline int PriorityClass(double priority) {
  if (priority <= 3) return 0;
  if (priority <= 7) return 1;
  return 2;
}

/// Batch work: training, batch inference or quantization. One block at a time; only a job with
/// a `checkpoint` may be preempted (and then resumed once per plan, on any block of its size).
struct Job {
  std::string id;
  JobKind kind = JobKind::kTraining;
  double priority = 1;
  int arrival_step = 0;
  std::vector<Shape> shapes;  // alternatives; the plan picks at most one. Never empty.
  GpuRequirement requirement;
  std::optional<RunningPlacement> running;  // then shapes.size() == 1
  std::optional<Checkpoint> checkpoint;     // absent: the job is never preempted
  /// The `features` object as JSON text, kept for the forecasters; empty when absent.
  std::string features_json;
  /// Below 1 when the job runs or would run beyond its tenant's share, on capacity lent by the
  /// others (Kueue's borrowing): its priority was multiplied by this. Set on a planning scenario by
  /// the rolling layer (priority::ApplyShareGuarantee), never read from or written to a file. Fast
  /// mode may preempt a borrowing job for a waiting one that does not borrow.
  double borrowing_factor = 1;

  [[nodiscard]] bool borrowing() const { return borrowing_factor < 1; }
  /// The priority before the share guarantee scaled it: what its priority class is judged on.
  [[nodiscard]] double unscaled_priority() const { return priority / borrowing_factor; }

  /// Work steps a running job has done by step 0 (`running.progress_steps`, default -start_step).
  /// Requires `running`.
  [[nodiscard]] int running_progress_steps() const {
    return running->progress_steps.value_or(-running->start_step);
  }
  /// The step a running job left alone frees its block: restart_steps_left + duration - progress.
  /// Every planner pins a running job until this step; requires `running`.
  [[nodiscard]] int running_end_step() const {
    return running->restart_steps_left.value_or(0) + shapes.front().duration_steps -
           running_progress_steps();
  }
};

/// Real-time inference: elastic, follows a demand curve.
struct Service {
  std::string id;
  double priority = 1;
  int min_gpus = 0;
  int max_gpus = 0;  // readers fill the spec's default (cluster size)
  std::optional<int> max_change_per_step;
  std::optional<int> current_gpus;  // allocation at step -1
  GpuRequirement requirement;
  std::vector<int> demand;  // horizon_steps entries
  /// GPUs of each step's demand that a planner added above the forecast as headroom (the ramp
  /// reserve, forecast/ramp_reserve.h): empty when none, else horizon_steps entries. Never read
  /// from or written to a file. Preemption is judged without it: a job is not preempted for GPUs
  /// the service may not need.
  std::vector<int> reserve;

  /// The demand at `step` without the reserve.
  [[nodiscard]] int forecast_demand(int step) const {
    return demand[step] - (reserve.empty() ? 0 : reserve[step]);
  }
};

struct Objective {
  double time_decay = 0.5;              // alpha
  double unmet_penalty_multiplier = 8;  // M
};

struct Scenario {
  int version = 1;
  std::string name;
  std::string description;
  int step_minutes = 60;
  int horizon_steps = 24;
  Cluster cluster;
  Objective objective;
  std::vector<Job> jobs;
  std::vector<Service> services;

  /// Reward of one batch GPU-step at step t for a job of this priority: p * (1 - alpha * t / T).
  [[nodiscard]] double StepWeight(int step) const {
    return 1.0 - objective.time_decay * static_cast<double>(step) / horizon_steps;
  }
};

/// Hard limits no input may exceed, so nothing allocates without bound. Readers and
/// ValidateScenario enforce them.
struct Limits {
  static constexpr int kMaxHorizonSteps = 10'080;  // a week of minutes-long steps
  static constexpr int kMaxGpus = 1 << 20;
  static constexpr int64_t kMaxGpuSteps = int64_t{1}
                                          << 26;  // G * T: bounds every grid (256 MiB of int32)
  static constexpr int kMaxJobs = 1'000'000;
  static constexpr int kMaxServices = 10'000;
  static constexpr int kMaxShapes = 16;
  static constexpr int kMaxNodeGroups = 1'024;
  static constexpr int kMaxDurationSteps = 1'000'000;
  static constexpr int kMaxAbsStep = 1'000'000;  // arrival and start steps
  static constexpr int kMaxIdLength = 256;
  static constexpr int kMaxStringLength = 65'536;
  static constexpr int kMaxNesting = 64;
  static constexpr int64_t kMaxFileBytes = int64_t{512} << 20;
  static constexpr double kMaxPriority = 1e9;
};

}  // namespace ordo
