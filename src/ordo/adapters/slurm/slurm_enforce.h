// From a plan to Slurm commands, and running them. Only step 0 of a plan is enforced; the next
// cycle re-plans from what Slurm then reports, so every decision here is idempotent:
//  - a held job the plan starts now is pinned to exactly its planned nodes and GPU indices and
//    released: `scontrol update JobId=X TresPerNode=` (clears the untyped request: Slurm 22.05
//    refuses an untyped -> typed GRES change and adds typed changes to the old ones), then
//    `scontrol update JobId=X NumNodes=K NodeList=a,b Gres=gpu:g4:1,...`, then `scontrol release
//    X`. A deferred job (below) is first pushed out, then pinned the same way, then made due:
//    `scontrol update JobId=X StartTime=now AdminComment=`. Only waiting jobs are candidates and a
//    started one no longer carries ordo's mark, so a job is never started twice.
//  - every other candidate is kept waiting by a begin time, not an indefinite hold: a held job is
//    deferred (`scontrol update JobId=X StartTime=now+SILENCE AdminComment=ordo:deferred`, then
//    `scontrol release X`) and a deferred one renewed (`StartTime=now+SILENCE`) every cycle. When
//    ordo stops, the begin times pass and Slurm's own priority scheduling starts the jobs; a
//    restarted ordo recognises its mark and takes the still-waiting ones back.
//  - a running job the plan preempts at step 0 (only a Preemptible one: checkpointed, requeue-able)
//    is requeued, `scontrol requeue X`, and kept waiting at once: `scontrol update JobId=X
//    StartTime=now+SILENCE AdminComment=ordo:deferred,saved=180m` (its saved work: Slurm does not
//    know it). Planned to resume at step 0 on another block (a migration), it is then pinned there
//    and made due like a deferred job. Slurm frees its GPUs when the requeue has killed it.
//  - a service's capacity is one placeholder allocation per GPU (`salloc --no-shell -J
//    ordo-svc-ID -w NODE --gres=gpu:gI:1`): placeholders the plan no longer wants are cancelled
//    first, then jobs start, then new placeholders are made. Placeholders stay where they are when
//    the plan only permutes which service-held GPU is whose.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ordo/adapters/slurm/slurm_client.h"
#include "ordo/adapters/slurm/slurm_config.h"
#include "ordo/adapters/slurm/slurm_mapping.h"
#include "ordo/core/plan.h"

namespace ordo::slurm {

/// Stored in logs only; values may change.
enum class ActionKind { kDefer, kCancelPlaceholder, kStartJob, kCreatePlaceholder, kPreempt };

/// One decision and the commands that carry it out, in order.
struct Action {
  ActionKind kind = ActionKind::kStartJob;
  int64_t job = 0;          // the Slurm job (defer, cancel, start)
  std::string service;      // placeholders
  std::string node;         // start: the node list; placeholders: the node
  std::vector<int> gpus;    // GPU indices (per node) the action concerns
  std::string description;  // one line for the log
  std::vector<std::vector<std::string>> commands;
};

/// The actions that make Slurm follow step 0 of `plan` (a legal plan of mapping.scenario), in the
/// order they must run: preemptions (and migrations), re-deferrals of released jobs whose GPUs were
/// taken, placeholder cancellations, job starts, new placeholders, then the deferrals and renewals
/// that keep every other candidate waiting for `SilenceSeconds(config)` more.
std::vector<Action> DecideActions(const Mapping& mapping, const Plan& plan,
                                  const SlurmConfig& config);

struct ApplyReport {
  int actions_ok = 0;
  int actions_failed = 0;
  std::vector<std::string> failures;  // one line each
};

/// Runs the actions' commands (with retries on transient failures); an action stops at its first
/// failing command and the others still run. With `dry_run`, prints each command to `dry_out`
/// instead, one per line.
ApplyReport ApplyActions(SlurmClient& client, const std::vector<Action>& actions,
                         const SlurmConfig& config, bool dry_run, std::ostream* dry_out,
                         const Sleeper& sleep, const Logger& log);

/// "0-3,6" for log lines.
std::string FormatIndices(const std::vector<int>& indices);

}  // namespace ordo::slurm
