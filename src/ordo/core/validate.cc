#include "ordo/core/validate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

namespace ordo {

Result<void> ValidateCheckpoint(const Checkpoint& checkpoint, const std::string& where) {
  if (checkpoint.every_steps < 1 || checkpoint.every_steps > Limits::kMaxDurationSteps) {
    return FailInput(where + ".every_steps", "must be an integer from 1 to 1000000 (got " +
                                                 std::to_string(checkpoint.every_steps) + ")");
  }
  if (checkpoint.restart_steps < 0 || checkpoint.restart_steps > Limits::kMaxDurationSteps) {
    return FailInput(where + ".restart_steps", "must be an integer from 0 to 1000000 (got " +
                                                   std::to_string(checkpoint.restart_steps) + ")");
  }
  return {};
}

namespace {

bool IsPowerOfTwo(long long n) { return n > 0 && (n & (n - 1)) == 0; }

std::string Path(std::string_view list, size_t index) {
  return std::string(list) + "[" + std::to_string(index) + "]";
}

Result<void> CheckPriority(double priority, const std::string& where) {
  if (!std::isfinite(priority) || priority <= 0 || priority > Limits::kMaxPriority) {
    return FailInput(where + ".priority",
                     "must be a number > 0 and <= 1e9 (got " + std::to_string(priority) + ")");
  }
  return {};
}

Result<void> CheckRequirement(const GpuRequirement& req, const std::string& where) {
  if (req.min_gpu_memory_gb &&
      (!std::isfinite(*req.min_gpu_memory_gb) || *req.min_gpu_memory_gb < 0)) {
    return FailInput(where + ".min_gpu_memory_gb", "must be a finite number >= 0");
  }
  return {};
}

Result<void> CheckCluster(const Scenario& s) {
  const auto& groups = s.cluster.groups;
  if (groups.empty()) return FailInput("cluster.node_groups", "must list at least one group");
  if (groups.size() > static_cast<size_t>(Limits::kMaxNodeGroups)) {
    return FailInput("cluster.node_groups", "more than 1024 groups");
  }
  long long total = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::string where = Path("cluster.node_groups", g);
    const NodeGroup& group = groups[g];
    if (group.nodes < 1 || group.nodes > Limits::kMaxGpus) {
      return FailInput(where + ".nodes", "must be an integer from 1 to " +
                                             std::to_string(Limits::kMaxGpus) + " (got " +
                                             std::to_string(group.nodes) + ")");
    }
    if (!IsPowerOfTwo(group.gpus_per_node) || group.gpus_per_node > 16) {
      return FailInput(where + ".gpus_per_node", "must be a power of two from 1 to 16 (got " +
                                                     std::to_string(group.gpus_per_node) + ")");
    }
    if (!std::isfinite(group.gpu_memory_gb) || group.gpu_memory_gb <= 0) {
      return FailInput(where + ".gpu_memory_gb", "must be a finite number > 0");
    }
    total += static_cast<long long>(group.nodes) * group.gpus_per_node;
    if (total > Limits::kMaxGpus) {
      return FailInput("cluster.node_groups",
                       "more than " + std::to_string(Limits::kMaxGpus) + " GPUs in all");
    }
  }
  if (total * s.horizon_steps > Limits::kMaxGpuSteps) {
    return FailInput("horizon_steps",
                     "GPUs x horizon_steps = " + std::to_string(total * s.horizon_steps) +
                         " exceeds the limit of " + std::to_string(Limits::kMaxGpuSteps));
  }
  return {};
}

Result<void> CheckJob(const Scenario& s, size_t j) {
  const Job& job = s.jobs[j];
  const std::string where = Path("jobs", j);
  if (auto ok = CheckPriority(job.priority, where); !ok) return ok;
  if (auto ok = CheckRequirement(job.requirement, where); !ok) return ok;
  if (std::abs(static_cast<long long>(job.arrival_step)) > Limits::kMaxAbsStep) {
    return FailInput(where + ".arrival_step", "must be within +-1000000 steps");
  }
  if (job.shapes.empty()) return FailInput(where + ".shapes", "must list at least one shape");
  if (job.shapes.size() > static_cast<size_t>(Limits::kMaxShapes)) {
    return FailInput(where + ".shapes", "more than 16 shapes");
  }
  const bool single = job.shapes.size() == 1;
  for (size_t k = 0; k < job.shapes.size(); ++k) {
    const std::string shape_where = single ? where : Path(where + ".shapes", k);
    const Shape& shape = job.shapes[k];
    if (!IsPowerOfTwo(shape.gpus) || shape.gpus > Limits::kMaxGpus) {
      return FailInput(shape_where + ".gpus",
                       "must be a power of two (got " + std::to_string(shape.gpus) + ")");
    }
    if (shape.duration_steps < 1 || shape.duration_steps > Limits::kMaxDurationSteps) {
      return FailInput(shape_where + ".duration_steps",
                       "must be an integer from 1 to 1000000 (got " +
                           std::to_string(shape.duration_steps) + ")");
    }
  }
  if (job.checkpoint)
    ORDO_RETURN_IF_ERROR(ValidateCheckpoint(*job.checkpoint, where + ".checkpoint"));
  if (!job.running) return {};
  const RunningPlacement& run = *job.running;
  const Shape& shape = job.shapes.front();
  if (!single) return FailInput(where + ".running", "a running job must have a single shape");
  if (run.start_step > 0) {
    return FailInput(where + ".running.start_step",
                     "must be <= 0 (got " + std::to_string(run.start_step) + ")");
  }
  if (run.start_step < job.arrival_step) {
    return FailInput(where + ".running.start_step",
                     "is before the job's arrival_step " + std::to_string(job.arrival_step));
  }
  if (run.progress_steps &&
      (*run.progress_steps < 0 || *run.progress_steps >= shape.duration_steps)) {
    return FailInput(
        where + ".running.progress_steps",
        "must be from 0 to duration_steps - 1 = " + std::to_string(shape.duration_steps - 1) +
            " (got " + std::to_string(*run.progress_steps) + ")");
  }
  if (run.restart_steps_left &&
      (*run.restart_steps_left < 0 || *run.restart_steps_left > Limits::kMaxDurationSteps)) {
    return FailInput(where + ".running.restart_steps_left",
                     "must be an integer from 0 to 1000000 (got " +
                         std::to_string(*run.restart_steps_left) + ")");
  }
  // Without progress_steps the job has worked since its start, so it ended at start + duration;
  // with it, its end o + duration - p is after step 0 by the check above.
  if (!run.progress_steps && static_cast<long long>(run.start_step) + shape.duration_steps <= 0) {
    return FailInput(where + ".running.start_step",
                     "the job ended at step " +
                         std::to_string(run.start_step + shape.duration_steps) +
                         ", before step 0: it is no longer running");
  }
  if (!s.cluster.IsAlignedBlock(run.first_gpu, shape.gpus)) {
    return FailInput(where + ".running.first_gpu",
                     "GPUs [" + std::to_string(run.first_gpu) + ", " +
                         std::to_string(static_cast<long long>(run.first_gpu) + shape.gpus) +
                         ") are not an aligned block of " + std::to_string(shape.gpus) +
                         " inside one node group");
  }
  if (!job.requirement.Matches(s.cluster.groups[s.cluster.group_of(run.first_gpu)])) {
    return FailInput(where + ".running.first_gpu",
                     "the block lies in a group that does not match the job's gpu_type / "
                     "min_gpu_memory_gb");
  }
  return {};
}

Result<void> CheckService(const Scenario& s, size_t i) {
  const Service& service = s.services[i];
  const std::string where = Path("services", i);
  if (auto ok = CheckPriority(service.priority, where); !ok) return ok;
  if (auto ok = CheckRequirement(service.requirement, where); !ok) return ok;
  if (service.min_gpus < 0) return FailInput(where + ".min_gpus", "must be >= 0");
  if (service.max_gpus < service.min_gpus) {
    return FailInput(where + ".max_gpus",
                     "must be >= min_gpus (" + std::to_string(service.min_gpus) + ")");
  }
  if (service.max_change_per_step && *service.max_change_per_step < 0) {
    return FailInput(where + ".max_change_per_step", "must be >= 0");
  }
  if (service.current_gpus && *service.current_gpus < 0) {
    return FailInput(where + ".current_gpus", "must be >= 0");
  }
  if (service.demand.size() != static_cast<size_t>(s.horizon_steps)) {
    return FailInput(where + ".demand",
                     "must have horizon_steps = " + std::to_string(s.horizon_steps) +
                         " entries (got " + std::to_string(service.demand.size()) + ")");
  }
  for (size_t t = 0; t < service.demand.size(); ++t) {
    if (service.demand[t] < 0) {
      return FailInput(Path(where + ".demand", t), "must be >= 0");
    }
  }
  const std::vector<int> floor = ServiceFloor(s, static_cast<int>(i));
  const std::vector<int> ceiling = ServiceCeiling(s, static_cast<int>(i));
  for (int t = 0; t < s.horizon_steps; ++t) {
    if (floor[t] > ceiling[t]) {
      return FailInput(
          where + ".current_gpus",
          "with max_change_per_step " + std::to_string(*service.max_change_per_step) +
              " the service cannot get from current_gpus " + std::to_string(*service.current_gpus) +
              " into [min_gpus, max_gpus] = [" + std::to_string(service.min_gpus) + ", " +
              std::to_string(service.max_gpus) + "] at step " + std::to_string(t));
    }
  }
  return {};
}

Result<void> CheckIds(const Scenario& s) {
  std::unordered_map<std::string_view, std::string> seen;
  auto add = [&](const std::string& id, const std::string& where) -> Result<void> {
    if (id.empty() || id.size() > static_cast<size_t>(Limits::kMaxIdLength)) {
      return FailInput(where + ".id", "must be 1 to 256 characters");
    }
    auto [it, inserted] = seen.emplace(id, where);
    if (!inserted) return FailInput(where + ".id", "\"" + id + "\" is also " + it->second + ".id");
    return {};
  };
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (auto ok = add(s.jobs[j].id, Path("jobs", j)); !ok) return ok;
  }
  for (size_t i = 0; i < s.services.size(); ++i) {
    if (auto ok = add(s.services[i].id, Path("services", i)); !ok) return ok;
  }
  return {};
}

// Two running jobs on overlapping blocks both hold those GPUs at step 0.
Result<void> CheckRunningOverlap(const Scenario& s) {
  std::vector<std::tuple<int, int, size_t>> blocks;  // first, end, job index
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (const auto& run = s.jobs[j].running) {
      blocks.emplace_back(run->first_gpu, run->first_gpu + s.jobs[j].shapes.front().gpus, j);
    }
  }
  std::sort(blocks.begin(), blocks.end());
  for (size_t b = 1; b < blocks.size(); ++b) {
    const auto& [first, end, j] = blocks[b];
    const auto& [prev_first, prev_end, prev_j] = blocks[b - 1];
    if (first < prev_end) {
      return FailInput(Path("jobs", std::max(j, prev_j)) + ".running.first_gpu",
                       "its block overlaps running job \"" + s.jobs[std::min(j, prev_j)].id +
                           "\" at GPU " + std::to_string(first));
    }
  }
  return {};
}

// Whether the services' floors at step 0 fit beside the running jobs. Floors only fall over time
// and running jobs only end, so step 0 is the tightest step. GPUs are matched to services by
// a max flow over (requirement class) x (group kind), which are few.
Result<void> CheckFloorsFit(const Scenario& s) {
  if (s.services.empty()) return {};
  const Cluster& cluster = s.cluster;
  std::vector<long long> free_in_group(cluster.groups.size());
  for (size_t g = 0; g < cluster.groups.size(); ++g) {
    free_in_group[g] = cluster.group_gpus(static_cast<int>(g));
  }
  for (const Job& job : s.jobs) {
    if (job.running)
      free_in_group[cluster.group_of(job.running->first_gpu)] -= job.shapes.front().gpus;
  }
  // Group kinds: groups with the same type and memory are interchangeable for services.
  std::map<std::pair<std::string, double>, long long> kinds;
  for (size_t g = 0; g < cluster.groups.size(); ++g) {
    kinds[{cluster.groups[g].gpu_type, cluster.groups[g].gpu_memory_gb}] += free_in_group[g];
  }
  std::vector<std::pair<NodeGroup, long long>> kind_list;
  for (const auto& [key, free] : kinds) {
    NodeGroup probe;
    probe.gpu_type = key.first;
    probe.gpu_memory_gb = key.second;
    kind_list.emplace_back(probe, free);
  }
  // Classes: services whose requirements match the same set of kinds compete for the same GPUs.
  // There are at most min(services, kinds + 1)-ish of them, so the graph stays small.
  std::map<std::vector<bool>, std::pair<long long, size_t>> classes;  // need, first service
  for (size_t i = 0; i < s.services.size(); ++i) {
    std::vector<bool> matches(kind_list.size());
    for (size_t k = 0; k < kind_list.size(); ++k) {
      matches[k] = s.services[i].requirement.Matches(kind_list[k].first);
    }
    auto& [need, first_service] = classes.try_emplace(matches, 0, i).first->second;
    need += ServiceFloor(s, static_cast<int>(i))[0];
  }
  // Max flow source -> class -> kind -> sink with augmenting paths.
  const size_t nc = classes.size(), nk = kind_list.size(), n = nc + nk + 2;
  const size_t src = n - 2, sink = n - 1;
  std::vector<std::vector<long long>> cap(n, std::vector<long long>(n, 0));
  std::vector<size_t> class_first_service;
  size_t c = 0;
  long long total_need = 0;
  for (const auto& [matches, value] : classes) {
    cap[src][c] = value.first;
    total_need += value.first;
    class_first_service.push_back(value.second);
    for (size_t k = 0; k < nk; ++k) {
      if (matches[k]) cap[c][nc + k] = value.first;
    }
    ++c;
  }
  for (size_t k = 0; k < nk; ++k) cap[nc + k][sink] = std::max<long long>(0, kind_list[k].second);
  long long flow = 0;
  while (true) {
    std::vector<size_t> parent(n, n);
    std::vector<size_t> queue{src};
    parent[src] = src;
    for (size_t q = 0; q < queue.size() && parent[sink] == n; ++q) {
      for (size_t v = 0; v < n; ++v) {
        if (parent[v] == n && cap[queue[q]][v] > 0) {
          parent[v] = queue[q];
          queue.push_back(v);
        }
      }
    }
    if (parent[sink] == n) break;
    long long push = -1;
    for (size_t v = sink; v != src; v = parent[v]) {
      push = push < 0 ? cap[parent[v]][v] : std::min(push, cap[parent[v]][v]);
    }
    for (size_t v = sink; v != src; v = parent[v]) {
      cap[parent[v]][v] -= push;
      cap[v][parent[v]] += push;
    }
    flow += push;
  }
  if (flow >= total_need) return {};
  for (size_t k = 0; k < nc; ++k) {
    if (cap[src][k] > 0) {
      const size_t i = class_first_service[k];
      return Fail(Error{ErrorCode::kInfeasible, Path("services", i) + ".min_gpus",
                        "at step 0 the services' minimum allocations (min_gpus, or what "
                        "max_change_per_step allows from current_gpus) need " +
                            std::to_string(total_need) + " GPUs but only " + std::to_string(flow) +
                            " matching GPUs are free beside the running jobs; service \"" +
                            s.services[i].id + "\" cannot get its minimum"});
    }
  }
  return {};
}

}  // namespace

std::vector<int> ServiceFloor(const Scenario& scenario, int service) {
  const Service& s = scenario.services[service];
  std::vector<int> floor(scenario.horizon_steps, s.min_gpus);
  if (s.current_gpus && s.max_change_per_step) {
    for (int t = 0; t < scenario.horizon_steps; ++t) {
      const long long down = static_cast<long long>(*s.current_gpus) -
                             static_cast<long long>(*s.max_change_per_step) * (t + 1);
      floor[t] = static_cast<int>(std::max<long long>(s.min_gpus, down));
    }
  }
  return floor;
}

std::vector<int> ServiceCeiling(const Scenario& scenario, int service) {
  const Service& s = scenario.services[service];
  std::vector<int> ceiling(scenario.horizon_steps, s.max_gpus);
  if (s.current_gpus && s.max_change_per_step) {
    for (int t = 0; t < scenario.horizon_steps; ++t) {
      const long long up = static_cast<long long>(*s.current_gpus) +
                           static_cast<long long>(*s.max_change_per_step) * (t + 1);
      ceiling[t] = static_cast<int>(std::min<long long>(s.max_gpus, up));
    }
  }
  return ceiling;
}

Result<void> ValidateScenario(const Scenario& s) {
  if (s.version != 1) return FailInput("version", "must be 1");
  if (s.step_minutes < 1 || s.step_minutes > 7 * 24 * 60) {
    return FailInput("step_minutes", "must be an integer from 1 to 10080");
  }
  if (s.horizon_steps < 1 || s.horizon_steps > Limits::kMaxHorizonSteps) {
    return FailInput("horizon_steps",
                     "must be an integer from 1 to " + std::to_string(Limits::kMaxHorizonSteps));
  }
  if (!std::isfinite(s.objective.time_decay) || s.objective.time_decay < 0 ||
      s.objective.time_decay > 1) {
    return FailInput("objective.time_decay", "must be a number from 0 to 1");
  }
  if (!std::isfinite(s.objective.unmet_penalty_multiplier) ||
      s.objective.unmet_penalty_multiplier < 0 || s.objective.unmet_penalty_multiplier > 1e6) {
    return FailInput("objective.unmet_penalty_multiplier", "must be a number from 0 to 1e6");
  }
  if (auto ok = CheckCluster(s); !ok) return ok;
  if (s.cluster.total_gpus() != [&] {
        long long total = 0;
        for (const auto& g : s.cluster.groups)
          total += static_cast<long long>(g.nodes) * g.gpus_per_node;
        return total;
      }()) {
    return Fail(Error{ErrorCode::kInternal, "cluster", "Cluster::Index() was not called"});
  }
  if (s.jobs.size() > static_cast<size_t>(Limits::kMaxJobs)) {
    return FailInput("jobs", "more than 1000000 jobs");
  }
  if (s.services.size() > static_cast<size_t>(Limits::kMaxServices)) {
    return FailInput("services", "more than 10000 services");
  }
  if (auto ok = CheckIds(s); !ok) return ok;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (auto ok = CheckJob(s, j); !ok) return ok;
  }
  if (auto ok = CheckRunningOverlap(s); !ok) return ok;
  for (size_t i = 0; i < s.services.size(); ++i) {
    if (auto ok = CheckService(s, i); !ok) return ok;
  }
  return CheckFloorsFit(s);
}

}  // namespace ordo
