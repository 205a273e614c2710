// From what Slurm reports to a scenario ordo can plan (spec/formats-v1.md), and back: which Slurm
// node and GPU index each scenario GPU id is.
//
// Nodes: the usable nodes with GPUs (of the configured partition), in natural name order; runs of
// consecutive nodes with the same GPU count and type form one node group. A node's GPU count is
// rounded down to a power of two (at most 16); GPUs above are left out of the model.
// Jobs: every running job is pinned where it runs (one running job when its GPUs form one aligned
// block, else one pinned piece per aligned block); pending jobs whose comment starts with "ordo:"
// and that are held by their user or deferred by ordo (kDeferredMark) are the jobs to plan; a job
// ordo released that has not started yet is pinned at step 0 on the GPUs it was given. Jobs held
// by an administrator are left alone. A running job with `checkpoint=` in its comment, submitted
// requeue-able, carries its `checkpoint` and progress (its mark's saved work plus what it did
// since, less its restart) so that the planner may preempt it; a job ordo preempted waits to resume
// with the work it had saved (Candidate::saved_minutes). Services: each configured service's demand
// window, with current_gpus = the placeholder allocations (`ordo-svc-ID`) it holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ordo/adapters/slurm/slurm_config.h"
#include "ordo/adapters/slurm/slurm_state.h"
#include "ordo/core/error.h"
#include "ordo/core/scenario.h"

namespace ordo::slurm {

/// The job-name prefix of service placeholder allocations: `ordo-svc-<service id>`.
inline constexpr std::string_view kPlaceholderPrefix = "ordo-svc-";

/// What one reconciliation cycle saw.
struct Snapshot {
  std::vector<SlurmNode> nodes;
  std::vector<SlurmJob> jobs;
  int64_t now = 0;  // Unix seconds: step 0 starts here
};

/// How a job ordo plans is being kept from starting, which decides the commands that start it or
/// keep it waiting (slurm_enforce.h).
enum class Waiting {
  kHeld,      // the user's hold (`sbatch --hold`): not yet seen by ordo, or never deferrable
  kDeferred,  // ordo's begin time (StartTime=), marked kDeferredMark; may have passed
  kReleased,  // ordo released it, its GPUs were taken before it started: deferred again now
};

/// A job ordo may start: scenario.jobs[job] is Slurm job `slurm_id`.
struct Candidate {
  int job = 0;
  int64_t slurm_id = 0;
  Waiting waiting = Waiting::kHeld;
  /// Its admin comment is kDeferredMark (cleared when ordo starts it).
  bool marked = false;
  /// Held, with an admin comment that is not ordo's: ordo does not overwrite it, so the job keeps
  /// its hold (no expiry) until ordo starts it.
  bool foreign_admin_comment = false;
  int64_t submit_time = 0;  // Unix seconds: its wait, for the planning priority
  std::string account;      // its tenant, for the fair-share factor
  /// Work it had saved when ordo preempted it (its mark's `saved=`): it waits to resume, and its
  /// mark keeps this when it starts again.
  std::optional<int> saved_minutes;
};

/// A running job ordo may preempt (`scontrol requeue`): scenario.jobs[job] carries its
/// `checkpoint`. Only batch jobs submitted requeue-able whose comment has `checkpoint=`.
struct Preemptible {
  int job = 0;
  int64_t slurm_id = 0;
  int progress_minutes = 0;  // work done by now
  int saved_minutes = 0;     // what it keeps if preempted now: its last save
};

/// A running placeholder allocation of one GPU for a service.
struct Placeholder {
  int64_t slurm_id = 0;
  std::string service;  // from the job name; may name a service no longer configured
  int gpu = -1;         // scenario GPU id, -1 when outside the model (then it is cancelled)
};

struct Mapping {
  Scenario scenario;
  std::vector<SlurmNode> nodes;     // modelled nodes, in GPU id order
  std::vector<int> node_first_gpu;  // scenario GPU id of each node's index 0
  std::vector<int> node_gpus;       // GPUs of each node in the model (a power of two)
  std::vector<Candidate> candidates;
  /// scenario.jobs[j]'s Slurm account (its tenant), for running pieces and candidates alike.
  std::vector<std::string> accounts;
  std::vector<Preemptible> preemptible;
  std::vector<Placeholder> placeholders;
  /// One line per job or allocation left out of the model, and why.
  std::vector<std::string> notes;

  /// The node (index into `nodes`) and GPU index of scenario GPU id `gpu`.
  [[nodiscard]] std::pair<int, int> Locate(int gpu) const;
};

/// Builds and validates the scenario for one cycle. Fails only when the cluster cannot be modelled
/// at all (no usable GPU node) or the scenario is invalid (a service's floor cannot fit); jobs
/// with bad metadata are left out with a note.
[[nodiscard]] Result<Mapping> BuildScenario(const Snapshot& snapshot, const SlurmConfig& config);

}  // namespace ordo::slurm
