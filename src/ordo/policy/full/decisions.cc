#include "ordo/policy/full/decisions.h"

#include <algorithm>
#include <unordered_map>

#include "ordo/core/assert.h"
#include "ordo/policy/common/plan_builder.h"

namespace ordo::policy::full {

Decisions EmptyDecisions(const Scenario& scenario) {
  Decisions d;
  d.jobs.assign(scenario.jobs.size(), std::nullopt);
  d.service_gpus.assign(scenario.services.size(),
                        std::vector<std::vector<int>>(scenario.cluster.groups.size(),
                                                      std::vector<int>(scenario.horizon_steps, 0)));
  return d;
}

Decisions DecisionsFromPlan(const Scenario& scenario, const Plan& plan) {
  Decisions d = EmptyDecisions(scenario);
  std::unordered_map<std::string_view, size_t> job_index, service_index;
  for (size_t j = 0; j < scenario.jobs.size(); ++j) job_index.emplace(scenario.jobs[j].id, j);
  for (size_t s = 0; s < scenario.services.size(); ++s) {
    service_index.emplace(scenario.services[s].id, s);
  }
  for (const JobPlacement& p : plan.jobs) {
    auto it = job_index.find(p.id);
    if (it == job_index.end() || !p.started()) continue;
    const Job& job = scenario.jobs[it->second];
    if (job.running) continue;
    for (size_t k = 0; k < job.shapes.size(); ++k) {
      if (job.shapes[k] == Shape{p.gpus, p.duration_steps}) {
        d.jobs[it->second] = Placement{static_cast<int>(k), *p.start_step, p.first_gpu};
        break;
      }
    }
  }
  const int total = scenario.cluster.total_gpus();
  for (const ServiceAllocation& a : plan.services) {
    auto it = service_index.find(a.id);
    if (it == service_index.end()) continue;
    auto& counts = d.service_gpus[it->second];
    for (int t = 0; t < scenario.horizon_steps && t < static_cast<int>(a.gpus.size()); ++t) {
      for (int gpu : a.gpus[t]) {
        if (gpu >= 0 && gpu < total) ++counts[scenario.cluster.group_of(gpu)][t];
      }
    }
  }
  return d;
}

double PlacementReward(const Scenario& scenario, const Job& job, const Shape& shape, int start) {
  const int from = std::max(0, start);
  const int to = std::min(scenario.horizon_steps, start + shape.duration_steps);
  if (to <= from) return 0;
  const double n = to - from;
  const double step_sum = (static_cast<double>(from) + (to - 1)) * n / 2.0;
  const double weight = n - scenario.objective.time_decay * step_sum / scenario.horizon_steps;
  return job.priority * shape.gpus * weight;
}

double PlacementValue(const Scenario& scenario, const Job& job, const Shape& shape, int start) {
  const int inside =
      std::min(scenario.horizon_steps, start + shape.duration_steps) - std::max(0, start);
  return job.priority * shape.gpus * std::max(0, inside);
}

// A running job earns from the end of its restart steps left to its end (Job::running_end_step).
double RunningJobReward(const Scenario& scenario, const Job& job) {
  const int work_from = job.running->restart_steps_left.value_or(0);
  const Shape rest{job.shapes.front().gpus, job.running_end_step() - work_from};
  return PlacementReward(scenario, job, rest, work_from);
}

double RunningJobValue(const Scenario& scenario, const Job& job) {
  const int work_from = job.running->restart_steps_left.value_or(0);
  const Shape rest{job.shapes.front().gpus, job.running_end_step() - work_from};
  return PlacementValue(scenario, job, rest, work_from);
}

double RunningReward(const Scenario& scenario) {
  double reward = 0;
  for (const Job& job : scenario.jobs) {
    if (job.running) {
      reward += RunningJobReward(scenario, job);
    }
  }
  return reward;
}

double DecisionsObjective(const Scenario& scenario, const Decisions& decisions) {
  double objective = 0;
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    const Job& job = scenario.jobs[j];
    if (job.running) {
      objective += RunningJobReward(scenario, job);
    } else if (decisions.jobs[j]) {
      const Placement& p = *decisions.jobs[j];
      objective += PlacementReward(scenario, job, job.shapes[p.shape], p.start);
    }
  }
  for (size_t s = 0; s < scenario.services.size(); ++s) {
    const Service& service = scenario.services[s];
    for (int t = 0; t < scenario.horizon_steps; ++t) {
      int held = 0;
      for (const auto& per_group : decisions.service_gpus[s]) held += per_group[t];
      const int unmet = std::max(0, service.demand[t] - held);
      objective -= scenario.objective.unmet_penalty_multiplier * service.priority * unmet;
    }
  }
  return objective;
}

std::vector<uint8_t> BatchOccupancy(const Scenario& scenario, const Decisions* decisions,
                                    const std::vector<char>* skip_jobs) {
  const int steps = scenario.horizon_steps;
  std::vector<uint8_t> held(static_cast<size_t>(scenario.cluster.total_gpus()) * steps, 0);
  const auto mark = [&](int first_gpu, int gpus, int start, int duration) {
    const int from = std::max(0, start);
    const int to = std::min(steps, start + duration);
    for (int g = first_gpu; g < first_gpu + gpus; ++g) {
      for (int t = from; t < to; ++t) held[static_cast<size_t>(g) * steps + t] = 1;
    }
  };
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    const Job& job = scenario.jobs[j];
    if (job.running) {
      mark(job.running->first_gpu, job.shapes.front().gpus, job.running->start_step,
           job.running_end_step() - job.running->start_step);
    } else if (decisions != nullptr && decisions->jobs[j] &&
               (skip_jobs == nullptr || !(*skip_jobs)[j])) {
      const Placement& p = *decisions->jobs[j];
      const Shape& shape = job.shapes[p.shape];
      mark(p.first_gpu, shape.gpus, p.start, shape.duration_steps);
    }
  }
  return held;
}

Plan Realize(const Scenario& scenario, const Decisions& decisions, std::string_view policy_name) {
  Plan plan = MakeEmptyPlan(scenario, policy_name);
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    if (scenario.jobs[j].running || !decisions.jobs[j]) continue;
    const Placement& p = *decisions.jobs[j];
    const Shape& shape = scenario.jobs[j].shapes[p.shape];
    JobPlacement& out = plan.jobs[j];
    out.start_step = p.start;
    out.first_gpu = p.first_gpu;
    out.gpus = shape.gpus;
    out.duration_steps = shape.duration_steps;
  }
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  const std::vector<uint8_t> batch = BatchOccupancy(scenario, &decisions);
  const size_t services = scenario.services.size();
  // taken[gpu] = step + 1 when a service took the GPU at `step` (a per-step "free" marker that
  // needs no clearing between steps).
  std::vector<int> taken(static_cast<size_t>(cluster.total_gpus()), 0);
  std::vector<int> kept(services);
  for (int t = 0; t < steps; ++t) {
    for (int g = 0; g < static_cast<int>(cluster.groups.size()); ++g) {
      const int first = cluster.group_first_gpu(g);
      const int end = first + cluster.group_gpus(g);
      const auto is_free = [&](int gpu) {
        return batch[static_cast<size_t>(gpu) * steps + t] == 0 && taken[gpu] != t + 1;
      };
      // First every service keeps what it held at t-1 in this group (lowest ids first), so that
      // no service takes another's GPUs before that one had its turn.
      for (size_t s = 0; s < services; ++s) {
        const int want = decisions.service_gpus[s][g][t];
        kept[s] = 0;
        if (t == 0 || want == 0) continue;
        for (int gpu : plan.services[s].gpus[t - 1]) {
          if (kept[s] == want) break;
          if (gpu < first || gpu >= end || !is_free(gpu)) continue;
          taken[gpu] = t + 1;
          plan.services[s].gpus[t].push_back(gpu);
          ++kept[s];
        }
      }
      // Then the rest from the highest free id down, which leaves low ids to batch blocks.
      int cursor = end - 1;
      for (size_t s = 0; s < services; ++s) {
        int missing = decisions.service_gpus[s][g][t] - kept[s];
        while (missing > 0 && cursor >= first) {
          if (is_free(cursor)) {
            taken[cursor] = t + 1;
            plan.services[s].gpus[t].push_back(cursor);
            --missing;
          }
          --cursor;
        }
        ORDO_ASSERT(missing == 0);
      }
    }
    for (size_t s = 0; s < services; ++s) {
      std::sort(plan.services[s].gpus[t].begin(), plan.services[s].gpus[t].end());
    }
  }
  return plan;
}

}  // namespace ordo::policy::full
