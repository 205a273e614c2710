#include "ordo/adapters/slurm/slurm_cycle.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
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

// Each tenant's share as a fraction of the cluster; GPU shares must fit the cluster, which is known
// only now.
Result<std::vector<double>> ShareFractions(const SlurmConfig& config, int total_gpus) {
  std::vector<double> fractions;
  double gpus = 0;
  for (size_t k = 0; k < config.tenants.size(); ++k) {
    fractions.push_back(config.tenants[k].share.Fraction(total_gpus));
    gpus += fractions.back() * total_gpus;
    if (gpus > total_gpus + 1e-9) {
      return FailInput("tenants[" + std::to_string(k) + "].share",
                       "the tenants' shares sum to " + std::to_string(gpus) +
                           " GPUs, above the cluster's " + std::to_string(total_gpus));
    }
  }
  return fractions;
}

int TenantIndex(const SlurmConfig& config, const std::string& account) {
  for (size_t k = 0; k < config.tenants.size(); ++k) {
    if (config.tenants[k].account == account) return static_cast<int>(k);
  }
  return -1;
}

// The scenario the planner is given: the mapping's, each candidate's priority its planning one.
// The usage ledger is fed first with the GPUs each tenant's running jobs hold on the modelled
// nodes, over the time since the previous cycle (one step on the first).
Result<Scenario> PlanningScenario(const Mapping& mapping, const Snapshot& snap,
                                  const SlurmConfig& config, int64_t now, CycleMemory& memory,
                                  std::vector<double>& priorities) {
  Scenario planned = mapping.scenario;
  const int total = planned.cluster.total_gpus();
  ORDO_ASSIGN_OR_RETURN(const std::vector<double> shares, ShareFractions(config, total));
  std::vector<double> used(config.tenants.size(), 0);
  for (const SlurmJob& job : snap.jobs) {
    const int t = TenantIndex(config, job.account);
    if (t < 0 || !job.running()) continue;
    const bool modelled = std::any_of(job.nodes.begin(), job.nodes.end(), [&](const auto& name) {
      return std::any_of(mapping.nodes.begin(), mapping.nodes.end(),
                         [&](const SlurmNode& n) { return n.name == name; });
    });
    if (modelled) used[static_cast<size_t>(t)] += job.gpus_per_node * job.node_count;
  }
  const double step_hours = config.step_minutes / 60.0;
  if (!memory.usage) {
    memory.usage.emplace(static_cast<int>(config.tenants.size()),
                         config.planning.fair_share.half_life_hours);
  }
  const double hours = memory.last_now > 0 && now > memory.last_now
                           ? static_cast<double>(now - memory.last_now) / 3600.0
                           : step_hours;
  if (memory.last_now == 0 || now > memory.last_now) memory.usage->Add(hours, used, total);
  memory.last_now = std::max(memory.last_now, now);
  priorities.clear();
  for (const Candidate& c : mapping.candidates) {
    Job& job = planned.jobs[static_cast<size_t>(c.job)];
    const double waited_hours =
        static_cast<double>(std::max<int64_t>(0, now - c.submit_time)) / 3600.0;
    const int t = TenantIndex(config, c.account);
    const double fair_share = t < 0 ? 1.0
                                    : priority::FairShareFactor(memory.usage->UsageFraction(t),
                                                                shares[static_cast<size_t>(t)],
                                                                config.planning.fair_share);
    job.priority =
        priority::JobPlanningPriority(job, waited_hours, fair_share, config.planning, step_hours);
    priorities.push_back(job.priority);
  }
  if (config.planning.borrowing_factor < 1) {
    std::vector<int> tenant_of(planned.jobs.size());
    for (size_t j = 0; j < planned.jobs.size(); ++j) {
      tenant_of[j] = TenantIndex(config, mapping.accounts[j]);
    }
    priority::ApplyShareGuarantee(planned, tenant_of, shares, config.planning.borrowing_factor);
    for (size_t k = 0; k < mapping.candidates.size(); ++k) {
      priorities[k] = planned.jobs[static_cast<size_t>(mapping.candidates[k].job)].priority;
    }
  }
  return planned;
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
                             const CycleOptions& options, const Sleeper& sleep, const Logger& log,
                             CycleMemory* memory) {
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

  CycleMemory one_cycle;
  ORDO_ASSIGN_OR_RETURN(
      const Scenario planned,
      PlanningScenario(report.mapping, *snap, config, options.now,
                       memory != nullptr ? *memory : one_cycle, report.planning_priorities));
  PolicyRegistry registry = MakeInTreeRegistry();
  auto policy = registry.Create(options.policy);
  if (!policy) return Fail(policy.error());
  PolicyOptions popts;
  popts.time_limit_s = options.time_limit_s;
  // A service's GPUs are placeholder jobs here: a loan of idle GPUs would be submitted and
  // cancelled again every cycle, holding nodes from Slurm's own scheduler in between.
  popts.lend_idle_gpus = false;
  auto plan = (*policy)->Solve(planned, popts);
  if (!plan) return Fail(plan.error());
  // Reported in base priorities: aging and fair share only steer the planner.
  plan->metrics = ComputeMetrics(sc, *plan);
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
    int preempts = 0;
    for (const Action& a : report.actions) {
      starts += a.kind == ActionKind::kStartJob ? 1 : 0;
      preempts += a.kind == ActionKind::kPreempt ? 1 : 0;
    }
    log("plan (" + options.policy + "): " + std::to_string(starts) + " jobs start now, " +
        std::to_string(preempts) + " preempted now, " + std::to_string(report.actions.size()) +
        " actions" + (options.dry_run ? " (dry run)" : ""));
  }
  report.applied =
      ApplyActions(client, report.actions, config, options.dry_run, options.dry_out, sleep, log);
  return report;
}

}  // namespace ordo::slurm
