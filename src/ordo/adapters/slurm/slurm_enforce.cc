#include "ordo/adapters/slurm/slurm_enforce.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace ordo::slurm {
namespace {

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The GRES request for these indices on `node`: typed per index when the node allows it.
std::string GresFor(const SlurmNode& node, const std::vector<int>& indices) {
  if (!node.index_typed()) return "gpu:" + std::to_string(indices.size());
  std::vector<std::string> items;
  items.reserve(indices.size());
  for (int i : indices) items.push_back("gpu:" + node.index_types[static_cast<size_t>(i)] + ":1");
  return Join(items, ",");
}

// Pins a waiting job to the block [first_gpu, first_gpu + gpus) and lets it start: see the
// header. `held`: it is held (else deferred: pushed out first, then made due); `marked`: its admin
// comment is ordo's mark, replaced by what stays of it (the saved work of a resumed job).
Action StartAction(const Mapping& mapping, int64_t slurm_id, int first_gpu, int gpus,
                   int duration_steps, bool held, bool marked, std::optional<int> saved_minutes,
                   const std::string& keep_until) {
  const std::string id = std::to_string(slurm_id);
  // The planned block, node by node (a block is inside one node or covers whole nodes).
  std::vector<std::string> nodes;
  std::vector<int> indices;
  const SlurmNode* first_node = nullptr;
  bool typed = true;
  for (int g = first_gpu; g < first_gpu + gpus;) {
    const auto [node, index] = mapping.Locate(g);
    const SlurmNode& n = mapping.nodes[static_cast<size_t>(node)];
    const int on_node = std::min(gpus, mapping.node_gpus[static_cast<size_t>(node)] - index);
    if (first_node == nullptr) {
      first_node = &n;
      for (int i = index; i < index + on_node; ++i) indices.push_back(i);
    }
    typed = typed && n.index_typed();
    nodes.push_back(n.name);
    g += on_node;
  }
  Action a;
  a.kind = ActionKind::kStartJob;
  a.job = slurm_id;
  a.node = Join(nodes, ",");
  a.gpus = indices;
  a.description = "start job " + id + " on " + a.node + " GPUs " + FormatIndices(indices) + " (" +
                  std::to_string(gpus) + " GPUs, " + std::to_string(duration_steps) +
                  " steps; scenario GPUs " + std::to_string(first_gpu) + "-" +
                  std::to_string(first_gpu + gpus - 1) + ")";
  const std::string num_nodes = "NumNodes=" + std::to_string(nodes.size());
  const std::string node_list = "NodeList=" + a.node;
  // A job that is not held could start the moment its begin time passes: push it out first, so
  // that it cannot start between the commands below with half its request changed.
  if (!held) a.commands.push_back({"scontrol", "update", "JobId=" + id, keep_until});
  if (typed) {
    // Two updates: clearing first is what makes 22.05 accept a typed request (see the header).
    a.commands.push_back({"scontrol", "update", "JobId=" + id, "TresPerNode="});
    a.commands.push_back({"scontrol", "update", "JobId=" + id, num_nodes, node_list,
                          "Gres=" + GresFor(*first_node, indices)});
  } else {
    a.commands.push_back({"scontrol", "update", "JobId=" + id, num_nodes, node_list,
                          "Gres=gpu:" + std::to_string(indices.size())});
  }
  if (!held || marked) {
    // Due now, and no longer ordo's deferral: a later cycle sees it as released by ordo. A resumed
    // job's mark keeps its saved work, from which its progress is counted while it runs. A
    // resumed job is due a second later: its node's slurmd refuses to launch a requeued job in
    // the second of its requeue ("Job ... already killed, do not launch batch job"), which a
    // migration's restart would otherwise hit.
    a.commands.push_back(
        {"scontrol", "update", "JobId=" + id, saved_minutes ? "StartTime=now+1" : "StartTime=now"});
    if (marked)
      a.commands.back().push_back("AdminComment=" + FormatOrdoMark({false, saved_minutes}));
  }
  if (held) a.commands.push_back({"scontrol", "release", id});
  return a;
}

}  // namespace

std::string FormatIndices(const std::vector<int>& indices) {
  std::string out;
  size_t i = 0;
  while (i < indices.size()) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

std::vector<Action> DecideActions(const Mapping& mapping, const Plan& plan,
                                  const SlurmConfig& config) {
  std::vector<Action> redefers;
  std::vector<Action> cancels;
  std::vector<Action> starts;
  std::vector<Action> creates;
  std::vector<Action> waits;
  const Scenario& sc = mapping.scenario;
  const std::string keep_until = "StartTime=now+" + std::to_string(SilenceSeconds(config));
  std::map<std::string, const JobPlacement*> placement;
  for (const JobPlacement& p : plan.jobs) placement[p.id] = &p;
  // ---- running jobs the plan preempts now: requeued, then kept waiting with their saved work
  // in ordo's mark; a migration (resumed at once on another block) is started again at once.
  std::vector<Action> preempts;
  for (const Preemptible& pr : mapping.preemptible) {
    const auto it = placement.find(sc.jobs[static_cast<size_t>(pr.job)].id);
    if (it == placement.end() || it->second->preempt_step != 0) continue;
    const JobPlacement& p = *it->second;
    const std::string id = std::to_string(pr.slurm_id);
    Action a;
    a.kind = ActionKind::kPreempt;
    a.job = pr.slurm_id;
    a.description = "preempt job " + id + ": requeued with " + std::to_string(pr.saved_minutes) +
                    " min of work saved, " +
                    std::to_string(pr.progress_minutes - pr.saved_minutes) + " min lost";
    a.commands = {{"scontrol", "requeue", id},
                  {"scontrol", "update", "JobId=" + id, keep_until,
                   "AdminComment=" + FormatOrdoMark({true, pr.saved_minutes})}};
    if (p.resume && p.resume->start_step == 0) {
      Action start = StartAction(mapping, pr.slurm_id, p.resume->first_gpu, p.gpus,
                                 p.duration_steps, false, true, pr.saved_minutes, keep_until);
      a.description += "; migrated: " + start.description;
      a.node = start.node;
      a.gpus = start.gpus;
      // The first command pushes its begin time out again: the requeue's update just did.
      a.commands.insert(a.commands.end(), start.commands.begin() + 1, start.commands.end());
    }
    preempts.push_back(std::move(a));
  }
  // ---- jobs the plan starts now
  for (const Candidate& c : mapping.candidates) {
    const auto it = placement.find(sc.jobs[static_cast<size_t>(c.job)].id);
    const std::string id = std::to_string(c.slurm_id);
    if (it == placement.end() || !it->second->started() || *it->second->start_step != 0) {
      // Not now: keep it waiting with a begin time `silence` from now, renewed every cycle, so
      // that it goes back to Slurm's own scheduling if ordo falls silent (docs/slurm.md).
      if (c.foreign_admin_comment) continue;  // keeps the user's hold; see Candidate
      Action a;
      a.kind = ActionKind::kDefer;
      a.job = c.slurm_id;
      const std::string mark = "AdminComment=" + FormatOrdoMark({true, c.saved_minutes});
      switch (c.waiting) {
        case Waiting::kHeld:
          a.description = "defer job " + id + ": its hold becomes a begin time " +
                          std::to_string(SilenceSeconds(config)) + " s away, renewed every cycle";
          a.commands = {{"scontrol", "update", "JobId=" + id, keep_until, mark},
                        {"scontrol", "release", id}};
          break;
        case Waiting::kDeferred:
          a.description = "renew job " + id + "'s begin time";
          a.commands = {{"scontrol", "update", "JobId=" + id, keep_until}};
          break;
        case Waiting::kReleased:
          a.description = "defer job " + id + " again (released, not started, its GPUs are taken)";
          a.commands = {{"scontrol", "update", "JobId=" + id, keep_until, mark}};
          break;
      }
      (c.waiting == Waiting::kReleased ? redefers : waits).push_back(std::move(a));
      continue;
    }
    const JobPlacement& p = *it->second;
    Action a = StartAction(mapping, c.slurm_id, p.first_gpu, p.gpus, p.duration_steps,
                           c.waiting == Waiting::kHeld, c.marked, c.saved_minutes, keep_until);
    starts.push_back(std::move(a));
  }

  // ---- services: who keeps which placeholder, which are cancelled, which are made
  std::map<std::string, int> service_index;
  for (size_t s = 0; s < sc.services.size(); ++s)
    service_index[sc.services[s].id] = static_cast<int>(s);
  std::vector<std::vector<int>> want(sc.services.size());
  std::set<int> pool;  // GPUs held by some service at step 0 of the plan
  for (const ServiceAllocation& alloc : plan.services) {
    const auto it = service_index.find(alloc.id);
    if (it == service_index.end() || alloc.gpus.empty()) continue;
    want[static_cast<size_t>(it->second)] = alloc.gpus[0];
    pool.insert(alloc.gpus[0].begin(), alloc.gpus[0].end());
  }
  auto matches = [&](int service, int gpu) {
    return sc.services[static_cast<size_t>(service)].requirement.Matches(
        sc.cluster.groups[static_cast<size_t>(sc.cluster.group_of(gpu))]);
  };
  // First try: services keep their placeholders inside the pool and fill up from the rest of it.
  std::vector<std::vector<int>> assigned(sc.services.size());
  std::set<int> claimed;
  std::set<int64_t> kept;
  for (const Placeholder& ph : mapping.placeholders) {
    const auto it = service_index.find(ph.service);
    if (it == service_index.end() || ph.gpu < 0 || !pool.contains(ph.gpu) ||
        claimed.contains(ph.gpu))
      continue;
    const int s = it->second;
    if (static_cast<int>(assigned[static_cast<size_t>(s)].size()) >=
        static_cast<int>(want[static_cast<size_t>(s)].size()))
      continue;
    if (!matches(s, ph.gpu)) continue;
    assigned[static_cast<size_t>(s)].push_back(ph.gpu);
    claimed.insert(ph.gpu);
    kept.insert(ph.slurm_id);
  }
  std::vector<std::vector<int>> fresh(sc.services.size());
  bool permuted_ok = true;
  for (size_t s = 0; s < sc.services.size() && permuted_ok; ++s) {
    std::vector<int> order = want[s];  // its own planned GPUs first, then the rest of the pool
    for (int g : pool) {
      if (std::find(want[s].begin(), want[s].end(), g) == want[s].end()) order.push_back(g);
    }
    for (int g : order) {
      if (assigned[s].size() + fresh[s].size() >= want[s].size()) break;
      if (claimed.contains(g) || !matches(static_cast<int>(s), g)) continue;
      fresh[s].push_back(g);
      claimed.insert(g);
    }
    permuted_ok = assigned[s].size() + fresh[s].size() == want[s].size();
  }
  if (!permuted_ok) {
    // Types made the swap impossible: follow the plan literally.
    kept.clear();
    for (size_t s = 0; s < sc.services.size(); ++s) {
      fresh[s].clear();
      for (int g : want[s]) {
        bool have = false;
        for (const Placeholder& ph : mapping.placeholders) {
          if (ph.service == sc.services[s].id && ph.gpu == g && !kept.contains(ph.slurm_id)) {
            kept.insert(ph.slurm_id);
            have = true;
            break;
          }
        }
        if (!have) fresh[s].push_back(g);
      }
    }
  }
  for (const Placeholder& ph : mapping.placeholders) {
    if (kept.contains(ph.slurm_id)) continue;
    Action a;
    a.kind = ActionKind::kCancelPlaceholder;
    a.job = ph.slurm_id;
    a.service = ph.service;
    std::string where = "outside the model";
    if (ph.gpu >= 0) {
      const auto [node, index] = mapping.Locate(ph.gpu);
      a.node = mapping.nodes[static_cast<size_t>(node)].name;
      a.gpus = {index};
      where = a.node + " GPU " + std::to_string(index);
    }
    a.description = "cancel placeholder " + std::to_string(ph.slurm_id) + " of service " +
                    ph.service + " on " + where;
    a.commands = {{"scancel", std::to_string(ph.slurm_id)}};
    cancels.push_back(std::move(a));
  }
  const int immediate = static_cast<int>(std::max(1.0, std::ceil(config.salloc_immediate_s)));
  for (size_t s = 0; s < sc.services.size(); ++s) {
    for (int g : fresh[s]) {
      const auto [node, index] = mapping.Locate(g);
      const SlurmNode& n = mapping.nodes[static_cast<size_t>(node)];
      Action a;
      a.kind = ActionKind::kCreatePlaceholder;
      a.service = sc.services[s].id;
      a.node = n.name;
      a.gpus = {index};
      a.description = "placeholder for service " + a.service + " on " + n.name + " GPU " +
                      std::to_string(index);
      std::vector<std::string> cmd = {"salloc", "--no-shell",
                                      "--immediate=" + std::to_string(immediate),
                                      "--job-name=" + std::string(kPlaceholderPrefix) + a.service};
      if (!config.partition.empty()) cmd.push_back("--partition=" + config.partition);
      cmd.push_back("--nodelist=" + n.name);
      cmd.push_back("--gres=" + GresFor(n, {index}));
      a.commands = {cmd};
      creates.push_back(std::move(a));
    }
  }

  std::vector<Action> all;
  for (auto* list : {&preempts, &redefers, &cancels, &starts, &creates, &waits}) {
    for (Action& a : *list) all.push_back(std::move(a));
  }
  return all;
}

ApplyReport ApplyActions(SlurmClient& client, const std::vector<Action>& actions,
                         const SlurmConfig& config, bool dry_run, std::ostream* dry_out,
                         const Sleeper& sleep, const Logger& log) {
  ApplyReport report;
  for (const Action& a : actions) {
    if (dry_run) {
      if (dry_out != nullptr) {
        for (const auto& cmd : a.commands) *dry_out << FormatCommand(cmd) << "\n";
      }
      ++report.actions_ok;
      continue;
    }
    bool ok = true;
    for (const auto& cmd : a.commands) {
      // A placeholder's salloc may wait up to --immediate for its GPU; give it that long and more.
      const double timeout = a.kind == ActionKind::kCreatePlaceholder
                                 ? config.command_timeout_s + config.salloc_immediate_s
                                 : config.command_timeout_s;
      // salloc is not repeated within a cycle: a retry after a lost reply could allocate twice.
      // The next cycle counts placeholders and fixes any surplus.
      RetryPolicy retry = config.retry;
      if (a.kind == ActionKind::kCreatePlaceholder) retry.attempts = 1;
      auto result = RunWithRetry(client, cmd, timeout, retry, false, sleep, log);
      if (!result || !result->ok()) {
        const std::string why = !result ? result.error().ToString()
                                        : "exit " + std::to_string(result->exit_code) +
                                              (result->timed_out ? " (timed out)" : "") + ": " +
                                              FirstLine(*result);
        report.failures.push_back(a.description + ": " + FormatCommand(cmd) + " failed: " + why);
        if (log) log("FAILED " + report.failures.back());
        ok = false;
        break;
      }
    }
    if (ok) {
      ++report.actions_ok;
      if (log) log(a.description);
    } else {
      ++report.actions_failed;
    }
  }
  return report;
}

}  // namespace ordo::slurm
