// What ordo reads from Slurm, as plain data, and the parsers for every Slurm output it reads:
// `sinfo --json` (nodes), `squeue --json` (jobs), hostlists ("n[1-3,7]"), GRES strings
// ("gpu:g4:1(IDX:4)", "gres:gpu:8") and ordo's metadata in a job's comment ("ordo:kind=...").
// Parsers never throw; malformed input is an Error naming the field (`jobs[2].gres_detail`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"

namespace ordo::slurm {

/// One node as `sinfo --json` reports it.
struct SlurmNode {
  std::string name;
  std::string state;               // lower case: "idle", "mixed", "allocated", "down", ...
  std::vector<std::string> flags;  // upper case: "DRAIN", "NOT_RESPONDING", ...
  int gpus = 0;                    // GPUs in its GRES
  /// One GRES type per GPU index (`gpu:g0:1,gpu:g1:1,...`, type = letters + the index): jobs
  /// can then be pinned to exact indices. `index_types[i]` is the type of index i.
  std::vector<std::string> index_types;
  std::string gpu_type = "gpu";  // the GRES type when all GPUs share one, else a `gpu_X` feature
  std::vector<std::string> partitions;

  /// Up and accepting work (not down, drained, draining, failed or unresponsive).
  [[nodiscard]] bool usable() const;
  [[nodiscard]] bool index_typed() const { return !index_types.empty(); }
};

/// The admin comment ordo puts on a job it keeps waiting with a begin time instead of a hold
/// (docs/slurm.md, "When ordo stops"): how a restarted ordo tells its own deferrals from a begin
/// time a user chose.
inline constexpr std::string_view kDeferredMark = "ordo:deferred";

/// What ordo keeps in a job's admin comment (users cannot change it): `ordo:` and comma-separated
/// items, `deferred` (kDeferredMark) and `saved=MINUTES` — the work a job preempted by ordo had
/// saved, kept while it waits to resume and while it runs again (docs/slurm.md, "Preemption").
struct OrdoMark {
  bool deferred = false;
  std::optional<int> saved_minutes;
};
/// The mark in an admin comment; nullopt for a comment that is not ordo's (empty, another text,
/// or an item ordo does not write).
[[nodiscard]] std::optional<OrdoMark> ParseOrdoMark(std::string_view admin_comment);
/// The admin comment for a mark: "" when it says nothing, "ordo:deferred", "ordo:saved=180m", ...
[[nodiscard]] std::string FormatOrdoMark(const OrdoMark& mark);

/// One job as `squeue --json` reports it.
struct SlurmJob {
  int64_t id = 0;
  std::string name;
  std::string state;   // "PENDING", "RUNNING", "COMPLETING", ...
  std::string reason;  // state_reason: "JobHeldUser", "Resources", ...
  std::string comment;
  std::string admin_comment;  // ordo's deferral mark lives here (kDeferredMark)
  std::string partition;
  std::string account;  // the Slurm account: a tenant of the config's `tenants` (fair share)
  int64_t priority = 0;
  std::vector<std::string> nodes;           // allocated nodes (expanded), empty while pending
  std::vector<std::string> required_nodes;  // the NodeList a job was pinned to (expanded)
  int node_count = 1;
  int gpus_per_node = 0;  // from tres_per_node ("gres:gpu:4"); 0 when it asks for none
  /// Typed per-index request (`gres:gpu:g4:1,gres:gpu:g5:1`, count > 0 only): the indices.
  std::vector<int> requested_indices;
  /// GPU indices held on each node of `nodes` (from gres_detail), while running.
  std::vector<std::vector<int>> gpu_indices;
  int64_t submit_time = 0;  // Unix seconds
  int64_t start_time = 0;
  int64_t eligible_time = 0;  // Unix seconds: its begin time (StartTime=), 0 when unknown
  std::optional<int> time_limit_minutes;  // none when unlimited
  bool requeue = false;  // submitted requeue-able (`--requeue`, or the cluster's JobRequeue=1)
  bool batch = true;     // a batch job (sbatch); salloc allocations cannot be requeued

  /// Held: pending with priority 0 (a user or admin hold).
  [[nodiscard]] bool held() const;
  /// Held by an operator or administrator (`scontrol hold` as one): ordo never releases it.
  [[nodiscard]] bool held_by_admin() const { return held() && reason == "JobHeldAdmin"; }
  /// Pending with ordo's deferral mark: a begin time ordo set and renews every cycle.
  [[nodiscard]] bool deferred_by_ordo() const;
  [[nodiscard]] bool running() const;  // RUNNING, COMPLETING, SUSPENDED, CONFIGURING
  [[nodiscard]] bool pending() const { return state == "PENDING"; }
};

/// ordo's metadata: a comment `ordo:kind=training,priority=5,duration=90m[,shapes=4x6h|8x3h]
/// [,gpu_type=H100][,checkpoint=1h[,restart=10m]]` (spec/formats-v1.md, "Slurm").
struct OrdoMetadata {
  struct ShapeMinutes {
    int gpus = 0;
    int minutes = 0;
  };
  JobKind kind = JobKind::kTraining;
  double priority = 1;
  std::optional<int> duration_minutes;
  std::vector<ShapeMinutes> shapes;
  std::optional<std::string> gpu_type;
  /// How often the job saves its work; with it (and `--requeue`) ordo may preempt the job.
  std::optional<int> checkpoint_minutes;
  int restart_minutes = 0;  // what resuming from a save costs before work goes on
};

[[nodiscard]] Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text);
[[nodiscard]] Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);

/// "n[1-3,7],gpu-a01" -> n1 n2 n3 n7 gpu-a01 (zero padding kept: "a[01-03]" -> a01 a02 a03).
[[nodiscard]] Result<std::vector<std::string>> ExpandHostlist(std::string_view text);
/// "0-3,6" -> 0 1 2 3 6. "N/A" and "" are empty.
[[nodiscard]] Result<std::vector<int>> ParseIndexList(std::string_view text);

/// One item of a GRES string: `[gres:]name[:type]:count[(IDX:list)|(S:list)]`.
struct GresItem {
  std::string name;  // "gpu"
  std::string type;  // "" when untyped
  int count = 0;
  std::optional<std::vector<int>> indices;  // from "(IDX:...)"
};
/// Parses a comma-separated GRES list ("gpu:g0:1(IDX:0),gpu:g5:1(IDX:5)", "gres:gpu:8",
/// "gpu:h100:8(S:0-1)"). Items whose name is not "gpu" are kept; callers filter.
[[nodiscard]] Result<std::vector<GresItem>> ParseGres(std::string_view text);

/// A duration in minutes: "90" (minutes), "90m", "6h", "1h30m", "2d".
[[nodiscard]] Result<int> ParseDurationMinutes(std::string_view text);

/// The metadata of a comment that starts with "ordo:", nullopt for any other comment. The error
/// names the key (`comment.duration`).
[[nodiscard]] Result<std::optional<OrdoMetadata>> ParseOrdoComment(std::string_view comment);

/// Natural order for node names: "n2" < "n10".
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace ordo::slurm
