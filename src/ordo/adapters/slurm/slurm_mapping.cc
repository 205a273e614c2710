#include "ordo/adapters/slurm/slurm_mapping.h"

#include <algorithm>
#include <map>
#include <set>

#include "ordo/core/validate.h"

namespace ordo::slurm {
namespace {

int FloorPowerOfTwo(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

int CeilDiv(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

// Splits a sorted set of GPU ids into legal blocks: the whole set when it is one aligned block,
// else the largest aligned power-of-two pieces inside single nodes.
std::vector<std::pair<int, int>> AlignedPieces(const Cluster& cluster,
                                               const std::vector<int>& ids) {
  std::vector<std::pair<int, int>> pieces;  // first, size
  if (ids.empty()) return pieces;
  const int n = static_cast<int>(ids.size());
  const bool contiguous = ids.back() - ids.front() + 1 == n;
  if (contiguous && (n & (n - 1)) == 0 && cluster.IsAlignedBlock(ids.front(), n)) {
    pieces.emplace_back(ids.front(), n);
    return pieces;
  }
  const std::set<int> held(ids.begin(), ids.end());
  size_t i = 0;
  while (i < ids.size()) {
    const int first = ids[i];
    int size = 1;
    while (true) {
      const int next = size * 2;
      bool fits = cluster.IsAlignedBlock(first, next);
      for (int g = first; fits && g < first + next; ++g) fits = held.contains(g);
      if (!fits) break;
      size = next;
    }
    pieces.emplace_back(first, size);
    i += static_cast<size_t>(size);
  }
  return pieces;
}

// How long a job of `gpus` GPUs is expected to run: its metadata (the shape of that size, else its
// duration, else its first shape), else its time limit; none when unlimited.
std::optional<int> ExpectedMinutes(const std::optional<OrdoMetadata>& meta, int gpus,
                                   std::optional<int> time_limit_minutes) {
  if (meta) {
    for (const auto& s : meta->shapes) {
      if (s.gpus == gpus) return s.minutes;
    }
    if (meta->duration_minutes) return meta->duration_minutes;
    if (!meta->shapes.empty()) return meta->shapes.front().minutes;
  }
  return time_limit_minutes;
}

std::string JobLabel(const SlurmJob& job) {
  return "job " + std::to_string(job.id) + (job.name.empty() ? "" : " (" + job.name + ")");
}

}  // namespace

std::pair<int, int> Mapping::Locate(int gpu) const {
  const auto it = std::upper_bound(node_first_gpu.begin(), node_first_gpu.end(), gpu);
  const int node = static_cast<int>(it - node_first_gpu.begin()) - 1;
  return {node, gpu - node_first_gpu[static_cast<size_t>(node)]};
}

Result<Mapping> BuildScenario(const Snapshot& snapshot, const SlurmConfig& config) {
  Mapping m;
  Scenario& sc = m.scenario;
  sc.name = "slurm";
  sc.description = "built by ordo slurm from squeue and sinfo";
  sc.step_minutes = config.step_minutes;
  sc.horizon_steps = config.horizon_steps;
  sc.objective = config.objective;
  const int64_t step_s = int64_t{config.step_minutes} * 60;
  const int64_t now = snapshot.now;

  // ---- nodes and groups
  for (const SlurmNode& node : snapshot.nodes) {
    if (node.gpus <= 0) continue;
    if (!config.partition.empty() && std::find(node.partitions.begin(), node.partitions.end(),
                                               config.partition) == node.partitions.end()) {
      continue;
    }
    if (!node.usable()) {
      m.notes.push_back("node " + node.name + " left out: state " + node.state);
      continue;
    }
    m.nodes.push_back(node);
  }
  if (m.nodes.empty()) {
    return FailInput("nodes", "no usable node with GPUs" +
                                  (config.partition.empty() ? std::string()
                                                            : " in partition " + config.partition));
  }
  std::sort(m.nodes.begin(), m.nodes.end(),
            [](const SlurmNode& a, const SlurmNode& b) { return NaturalLess(a.name, b.name); });
  std::map<std::string, int> node_index;
  int next_gpu = 0;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const SlurmNode& node = m.nodes[i];
    const int gpn = std::min(16, FloorPowerOfTwo(node.gpus));
    if (gpn != node.gpus) {
      m.notes.push_back("node " + node.name + ": " + std::to_string(node.gpus) + " GPUs, " +
                        std::to_string(gpn) + " modelled (a power of two, at most 16)");
    }
    node_index[node.name] = static_cast<int>(i);
    m.node_first_gpu.push_back(next_gpu);
    m.node_gpus.push_back(gpn);
    next_gpu += gpn;
    if (!sc.cluster.groups.empty() && sc.cluster.groups.back().gpus_per_node == gpn &&
        sc.cluster.groups.back().gpu_type == node.gpu_type) {
      NodeGroup& g = sc.cluster.groups.back();
      ++g.nodes;
      g.name = g.name.substr(0, g.name.find("..")) + ".." + node.name;
    } else {
      sc.cluster.groups.push_back(NodeGroup{node.name, 1, gpn, node.gpu_type, 80});
    }
  }
  sc.cluster.Index();
  const int total_gpus = sc.cluster.total_gpus();

  // The scenario GPU id of (node name, index), or -1 outside the model.
  auto gpu_id = [&](const std::string& node, int index) {
    const auto it = node_index.find(node);
    if (it == node_index.end() || index < 0 ||
        index >= m.node_gpus[static_cast<size_t>(it->second)])
      return -1;
    return m.node_first_gpu[static_cast<size_t>(it->second)] + index;
  };

  std::vector<int> owner(static_cast<size_t>(total_gpus),
                         0);  // 1 when a running job or placeholder holds it
  std::map<std::string, int> placeholders_per_service;

  auto metadata_of = [&](const SlurmJob& job) -> std::optional<OrdoMetadata> {
    auto meta = ParseOrdoComment(job.comment);
    if (!meta) return std::nullopt;
    return *meta;
  };

  // A job's checkpoint in steps: saves no more often than it says, restarts no faster.
  auto checkpoint_of = [&](const OrdoMetadata& meta) {
    const int step_min = config.step_minutes;
    return Checkpoint{std::max(1, CeilDiv(*meta.checkpoint_minutes, step_min)),
                      CeilDiv(meta.restart_minutes, step_min)};
  };
  // ordo may preempt it: it saves, and Slurm may requeue it.
  auto may_preempt = [](const SlurmJob& job, const OrdoMetadata* meta) {
    return meta != nullptr && meta->checkpoint_minutes && job.requeue && job.batch;
  };

  auto add_pinned = [&](const SlurmJob& job, const std::vector<int>& ids, int start_step,
                        int elapsed_steps) {
    const std::optional<OrdoMetadata> meta = metadata_of(job);
    const std::optional<int> minutes =
        ExpectedMinutes(meta, static_cast<int>(ids.size()), job.time_limit_minutes);
    int duration = minutes ? CeilDiv(*minutes, step_s / 60) : config.horizon_steps + elapsed_steps;
    duration = std::clamp(std::max(duration, elapsed_steps + 1), 1, Limits::kMaxDurationSteps);
    if (job.state == "COMPLETING") duration = elapsed_steps + 1;  // ending: its GPUs free soon
    const auto pieces = AlignedPieces(sc.cluster, ids);
    // A running job ordo resumed after a preemption: its mark says what it had saved; its work
    // since then starts after its restart.
    const std::optional<OrdoMark> mark = ParseOrdoMark(job.admin_comment);
    const std::optional<int> resumed_from = mark ? mark->saved_minutes : std::nullopt;
    const bool running = job.state == "RUNNING";  // not ending, not released and yet to start
    const int elapsed_min =
        static_cast<int>(std::clamp<int64_t>((now - job.start_time) / 60, 0, Limits::kMaxAbsStep));
    const int restart_min = meta ? meta->restart_minutes : 0;
    const int progress_min =
        resumed_from ? *resumed_from + std::max(0, elapsed_min - restart_min) : elapsed_min;
    const int progress_steps = progress_min / config.step_minutes;
    if (running && resumed_from) {
      duration = std::clamp(std::max(duration, progress_steps + 1), 1, Limits::kMaxDurationSteps);
    }
    const bool preemptible = running && may_preempt(job, meta ? &*meta : nullptr);
    if (running && meta && meta->checkpoint_minutes && !preemptible) {
      m.notes.push_back(JobLabel(job) + ": has checkpoint= but " +
                        (job.batch ? "was not submitted --requeue" : "is not a batch job") +
                        ": ordo never preempts it");
    }
    for (size_t k = 0; k < pieces.size(); ++k) {
      Job j;
      j.id = std::to_string(job.id) + (pieces.size() > 1 ? "/" + std::to_string(k) : "");
      if (meta) {
        j.kind = meta->kind;
        j.priority = meta->priority;
      }
      j.arrival_step = start_step;
      j.shapes = {Shape{pieces[k].second, duration}};
      j.running = RunningPlacement{start_step, pieces[k].first};
      if (running && resumed_from && pieces.size() == 1) {
        j.running->progress_steps = std::min(progress_steps, duration - 1);
        const int restart_left_min = std::max(0, restart_min - elapsed_min);
        if (restart_left_min > 0) {
          j.running->restart_steps_left = CeilDiv(restart_left_min, config.step_minutes);
        }
      }
      if (preemptible && pieces.size() == 1) {
        j.checkpoint = checkpoint_of(*meta);
        m.preemptible.push_back(
            Preemptible{static_cast<int>(sc.jobs.size()), job.id, progress_min,
                        progress_min / *meta->checkpoint_minutes * *meta->checkpoint_minutes});
      }
      sc.jobs.push_back(std::move(j));
      m.accounts.push_back(job.account);
    }
    for (int g : ids) owner[static_cast<size_t>(g)] = 1;
  };

  // ---- running jobs and placeholders first: they hold GPUs whatever the plan says
  for (const SlurmJob& job : snapshot.jobs) {
    if (!job.running()) continue;
    const bool placeholder = job.name.rfind(kPlaceholderPrefix, 0) == 0;
    std::vector<int> ids;
    bool outside = false;
    for (size_t k = 0; k < job.nodes.size(); ++k) {
      std::vector<int> indices =
          k < job.gpu_indices.size() ? job.gpu_indices[k] : std::vector<int>();
      if (indices.empty() && job.gpus_per_node > 0) {
        // gres_detail missing (an old Slurm): fall back on a typed request's indices.
        indices = job.requested_indices;
      }
      for (int index : indices) {
        const int g = gpu_id(job.nodes[k], index);
        if (g < 0) {
          outside = true;
          continue;
        }
        if (owner[static_cast<size_t>(g)] == 0) ids.push_back(g);
      }
    }
    std::sort(ids.begin(), ids.end());
    if (placeholder) {
      Placeholder p{job.id, job.name.substr(kPlaceholderPrefix.size()),
                    ids.size() == 1 ? ids[0] : -1};
      m.placeholders.push_back(p);
      const bool known =
          std::any_of(config.services.begin(), config.services.end(),
                      [&](const ServiceSpec& s) { return s.service.id == p.service; });
      if (p.gpu >= 0 && known) {
        owner[static_cast<size_t>(p.gpu)] = 1;
        ++placeholders_per_service[p.service];
      }
      continue;
    }
    if (ids.empty()) {
      if (job.gpus_per_node > 0 || outside)
        m.notes.push_back(JobLabel(job) + ": running outside the modelled GPUs");
      continue;
    }
    const int64_t elapsed_s = std::max<int64_t>(0, now - job.start_time);
    const int elapsed_steps =
        static_cast<int>(std::min<int64_t>(elapsed_s / step_s, Limits::kMaxAbsStep));
    add_pinned(job, ids, -elapsed_steps, elapsed_steps);
  }

  // ---- jobs ordo released that Slurm has not started yet: pinned at step 0 where ordo put them
  struct Waiter {
    const SlurmJob* job;
    Waiting waiting;
  };
  std::vector<Waiter> pending;
  for (const SlurmJob& job : snapshot.jobs) {
    if (!job.pending()) continue;
    auto meta = ParseOrdoComment(job.comment);
    if (meta && !*meta) continue;  // not ordo's
    if (job.held_by_admin()) {
      m.notes.push_back(JobLabel(job) + ": held by an administrator; left alone");
      continue;
    }
    if (job.held()) {
      pending.push_back({&job, Waiting::kHeld});
      continue;
    }
    if (job.deferred_by_ordo()) {
      // Its begin time may have passed (ordo was silent): Slurm may start it any moment, and
      // until it does, it is ordo's again.
      pending.push_back({&job, Waiting::kDeferred});
      continue;
    }
    if (!meta) continue;  // released, bad metadata: left to Slurm
    std::vector<int> ids;
    bool ok = !job.required_nodes.empty();
    for (const std::string& node : job.required_nodes) {
      std::vector<int> indices = job.requested_indices;
      const auto it = node_index.find(node);
      if (indices.empty() && it != node_index.end() &&
          job.gpus_per_node == m.node_gpus[static_cast<size_t>(it->second)]) {
        for (int i = 0; i < job.gpus_per_node; ++i) indices.push_back(i);  // a whole node
      }
      if (indices.empty()) ok = false;
      for (int index : indices) {
        const int g = gpu_id(node, index);
        if (g < 0 || owner[static_cast<size_t>(g)] != 0)
          ok = false;
        else
          ids.push_back(g);
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ok && !ids.empty()) {
      add_pinned(job, ids, 0, 0);
    } else if (!job.required_nodes.empty()) {
      // Released onto GPUs that are not free (or no longer exist): take it back and replan.
      m.notes.push_back(JobLabel(job) + ": released but its GPUs are taken; deferred again");
      pending.push_back({&job, Waiting::kReleased});
    }
  }

  // ---- ordo's waiting jobs: the work to plan, oldest first (FIFO's order for the baselines)
  std::sort(pending.begin(), pending.end(), [](const Waiter& a, const Waiter& b) {
    return a.job->submit_time != b.job->submit_time ? a.job->submit_time < b.job->submit_time
                                                    : a.job->id < b.job->id;
  });
  for (const auto& [job, waiting] : pending) {
    auto meta = ParseOrdoComment(job->comment);
    if (!meta) {
      m.notes.push_back(JobLabel(*job) + ": left out: " + meta.error().ToString());
      continue;
    }
    const OrdoMetadata& md = **meta;
    Job j;
    j.id = std::to_string(job->id);
    j.kind = md.kind;
    j.priority = md.priority;
    const int64_t waited = std::max<int64_t>(0, now - job->submit_time) / step_s;
    j.arrival_step = -static_cast<int>(std::min<int64_t>(waited, Limits::kMaxAbsStep));
    if (md.gpu_type) j.requirement.gpu_type = md.gpu_type;
    if (may_preempt(*job, &md)) j.checkpoint = checkpoint_of(md);
    const std::optional<OrdoMark> mark = ParseOrdoMark(job->admin_comment);
    const std::optional<int> saved = mark ? mark->saved_minutes : std::nullopt;
    std::string bad;
    if (saved && j.checkpoint) {
      // Preempted by ordo, waiting to resume on a block of the size it had: the work it has not
      // saved plus its restart (a waiting job has no field for either, so its duration carries
      // both, as in the simulator and `ordo serve`).
      const int gpus = job->gpus_per_node * job->node_count;
      const int step_min = config.step_minutes;
      const int saved_steps = *saved / step_min;
      const std::optional<int> minutes = ExpectedMinutes(md, gpus, job->time_limit_minutes);
      const int work = std::max(minutes ? CeilDiv(*minutes, step_min) : 1, saved_steps + 1);
      j.shapes.push_back(Shape{gpus, j.checkpoint->ResumedStaySteps(work, saved_steps)});
    } else if (!md.shapes.empty()) {
      for (const auto& s : md.shapes)
        j.shapes.push_back(Shape{s.gpus, std::max(1, CeilDiv(s.minutes, step_s / 60))});
    } else {
      const int gpus = job->gpus_per_node * job->node_count;
      if (gpus <= 0) bad = "asks for no GPU (submit with --gres=gpu:N)";
      j.shapes.push_back(Shape{gpus, std::max(1, CeilDiv(*md.duration_minutes, step_s / 60))});
    }
    for (const Shape& s : j.shapes) {
      if (bad.empty() && (s.gpus <= 0 || (s.gpus & (s.gpus - 1)) != 0)) {
        bad = "needs " + std::to_string(s.gpus) + " GPUs, not a power of two";
      }
      if (bad.empty() && s.duration_steps > Limits::kMaxDurationSteps) bad = "duration too long";
    }
    if (!bad.empty()) {
      m.notes.push_back(JobLabel(*job) + ": left out: " + bad);
      continue;
    }
    Candidate cand{static_cast<int>(sc.jobs.size()), job->id, waiting};
    cand.marked = mark && mark->deferred;
    cand.foreign_admin_comment = waiting == Waiting::kHeld && !mark && !job->admin_comment.empty();
    cand.submit_time = job->submit_time;
    cand.account = job->account;
    cand.saved_minutes = saved;
    m.candidates.push_back(cand);
    sc.jobs.push_back(std::move(j));
    m.accounts.push_back(job->account);
  }

  // ---- services
  for (const ServiceSpec& spec : config.services) {
    Service s = spec.service;
    s.demand = DemandWindow(spec, config.step_minutes, config.horizon_steps, now);
    s.max_gpus = s.max_gpus < 0 ? total_gpus : std::min(s.max_gpus, total_gpus);
    s.min_gpus = std::min(s.min_gpus, s.max_gpus);
    s.current_gpus = std::min(placeholders_per_service[s.id], s.max_gpus);
    sc.services.push_back(std::move(s));
  }

  auto valid = ValidateScenario(sc);
  if (!valid && !sc.services.empty()) {
    // The churn limit from the current placeholders cannot be met beside the running jobs (a
    // node went away, say): plan as if the services started fresh.
    for (Service& s : sc.services) s.current_gpus.reset();
    m.notes.push_back("services' churn limits dropped this cycle: " + valid.error().ToString());
    valid = ValidateScenario(sc);
  }
  if (!valid) return Fail(valid.error());
  return m;
}

}  // namespace ordo::slurm
