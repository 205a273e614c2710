#include "ordo/adapters/slurm/slurm_cycle.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ordo/core/check_plan.h"
#include "ordo/policy/registry.h"

namespace ordo::slurm {
namespace {

Result<std::string> ReadCommand(SlurmClient& client, const std::vector<std::string>& argv,
                                const SlurmConfig& config) {
  // One attempt: ReadSnapshot retries the whole read, whatever failed.
  auto result = client.Run(argv, config.command_timeout_s);
  if (!result) return Fail(result.error());
  if (!result->ok()) {
    return Fail(Error{ErrorCode::kIo, "",
                      FormatCommand(argv) + " failed (exit " + std::to_string(result->exit_code) +
                          (result->timed_out ? ", timed out" : "") + "): " + FirstLine(*result)});
  }
  return std::move(result->out);
}

}  // namespace

namespace {

Result<Snapshot> ReadSnapshotOnce(SlurmClient& client, const SlurmConfig& config, int64_t now) {
  Snapshot snap;
  snap.now = now;
  auto nodes_text = ReadCommand(client, {"sinfo", "--json"}, config);
  if (!nodes_text) return Fail(nodes_text.error());
  auto nodes = ParseSinfoJson(*nodes_text);
  if (!nodes)
    return Fail(
        Error{ErrorCode::kIo, nodes.error().field, "sinfo --json: " + nodes.error().message});
  auto jobs_text = ReadCommand(client, {"squeue", "--all", "--json"}, config);
  if (!jobs_text) return Fail(jobs_text.error());
  auto jobs = ParseSqueueJson(*jobs_text);
  if (!jobs)
    return Fail(
        Error{ErrorCode::kIo, jobs.error().field, "squeue --json: " + jobs.error().message});
  snap.nodes = std::move(*nodes);
  snap.jobs = std::move(*jobs);
  return snap;
}

}  // namespace

Result<Snapshot> ReadSnapshot(SlurmClient& client, const SlurmConfig& config, int64_t now,
                              const Sleeper& sleep, const Logger& log) {
  // With slurmctld down, 22.05's `sinfo --json` / `squeue --json` exit 0 and report the failure in
  // "errors"; just after a controller restart, nodes are "unknown" until their slurmd registers
  // again (about 2 s). Both are waited out with the same backoff as a failing command.
  const int attempts = std::max(1, config.retry.attempts);
  Result<Snapshot> snap = ReadSnapshotOnce(client, config, now);
  for (int attempt = 1; attempt < attempts; ++attempt) {
    std::string why;
    if (!snap) {
      why = snap.error().ToString();
    } else {
      for (const SlurmNode& n : snap->nodes) {
        if (n.gpus > 0 && n.state == "unknown")
          why = "node " + n.name + " is still unknown (controller restarting?)";
      }
      if (why.empty()) return snap;
    }
    const double wait = std::min(config.retry.initial_backoff_s * std::pow(2.0, attempt - 1),
                                 config.retry.max_backoff_s);
    if (log) {
      std::ostringstream line;
      line << "retry " << attempt << "/" << attempts - 1 << " in " << wait
           << " s: reading the cluster: " << why;
      log(line.str());
    }
    if (sleep) sleep(wait);
    snap = ReadSnapshotOnce(client, config, now);
  }
  if (!snap) {
    return Fail(Error{snap.error().code, snap.error().field,
                      "after " + std::to_string(attempts) + " attempts: " + snap.error().message});
  }
  return snap;
}

Result<CycleReport> RunCycle(SlurmClient& client, const SlurmConfig& config,
                             const CycleOptions& options, const Sleeper& sleep, const Logger& log) {
  auto snap = ReadSnapshot(client, config, options.now, sleep, log);
  if (!snap) return Fail(snap.error());
  auto mapping = BuildScenario(*snap, config);
  if (!mapping) return Fail(mapping.error());
  CycleReport report;
  report.mapping = std::move(*mapping);
  const Scenario& sc = report.mapping.scenario;
  if (log) {
    for (const std::string& note : report.mapping.notes) log(note);
    std::ostringstream line;
    line << "cluster: " << report.mapping.nodes.size() << " nodes, " << sc.cluster.total_gpus()
         << " GPUs; " << sc.jobs.size() - report.mapping.candidates.size() << " running pieces, "
         << report.mapping.candidates.size() << " held jobs to plan, "
         << report.mapping.placeholders.size() << " placeholders, " << sc.services.size()
         << " services";
    log(line.str());
  }

  PolicyRegistry registry = MakeInTreeRegistry();
  auto policy = registry.Create(options.policy);
  if (!policy) return Fail(policy.error());
  PolicyOptions popts;
  popts.time_limit_s = options.time_limit_s;
  auto plan = (*policy)->Solve(sc, popts);
  if (!plan) return Fail(plan.error());
  const std::vector<Violation> violations = CheckPlan(sc, *plan);
  if (!violations.empty()) {
    return Fail(Error{ErrorCode::kInternal, "",
                      "policy " + options.policy + " made an illegal plan; nothing enforced: " +
                          FormatViolation(violations.front())});
  }
  report.plan = std::move(*plan);
  report.actions = DecideActions(report.mapping, report.plan, config);
  if (log) {
    int starts = 0;
    for (const Action& a : report.actions) starts += a.kind == ActionKind::kStartJob ? 1 : 0;
    log("plan (" + options.policy + "): " + std::to_string(starts) + " jobs start now, " +
        std::to_string(report.actions.size()) + " actions" + (options.dry_run ? " (dry run)" : ""));
  }
  report.applied =
      ApplyActions(client, report.actions, config, options.dry_run, options.dry_out, sleep, log);
  return report;
}

}  // namespace ordo::slurm
