#include "ordo/policy/full/decisions.h"

#include <algorithm>
#include <unordered_map>

#include "ordo/core/assert.h"
#include "ordo/core/metrics.h"
#include "ordo/policy/common/plan_builder.h"

namespace ordo::policy::full {

Decisions EmptyDecisions(const Scenario& scenario) {
  Decisions d;
  d.jobs.assign(scenario.jobs.size(), std::nullopt);
  d.preemptions.assign(scenario.jobs.size(), std::nullopt);
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
    if (p.preempt_step && job.checkpoint) {
      d.preemptions[it->second] = Preemption{*p.preempt_step, p.resume};
    }
    if (job.running) continue;
    for (size_t k = 0; k < job.shapes.size(); ++k) {
      if (job.shapes[k] == Shape{p.gpus, p.duration_steps}) {
        d.jobs[it->second] = Placement{static_cast<int>(k), *p.start_step, p.first_gpu};
        break;
      }
    }
    if (!d.jobs[it->second]) d.preemptions[it->second].reset();
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

JobPlacement PlacementOf(const Scenario& scenario, const Decisions& decisions, int j) {
  const Job& job = scenario.jobs[j];
  JobPlacement p;
  if (job.running) {
    p = RunningJobEntry(job);
  } else {
    ORDO_ASSERT(decisions.jobs[j].has_value());
    p.id = job.id;
    const Placement& placed = *decisions.jobs[j];
    const Shape& shape = job.shapes[placed.shape];
    p.start_step = placed.start;
    p.first_gpu = placed.first_gpu;
    p.gpus = shape.gpus;
    p.duration_steps = shape.duration_steps;
  }
  if (const auto& preemption = decisions.preemptions[j]) {
    p.preempt_step = preemption->step;
    p.resume = preemption->resume;
  }
  return p;
}

namespace {
// Sum over the kept work steps inside the horizon of `per_step(t)`.
template <typename PerStep>
double OverKeptWork(const Scenario& scenario, const Job& job, const JobPlacement& p,
                    PerStep&& per_step) {
  const JobStays stays = StaysOf(job, p);
  double sum = 0;
  for (int k = 0; k < stays.count; ++k) {
    const long long from = std::max<long long>(0, stays.stays[k].work_from);
    const long long to = std::min<long long>(scenario.horizon_steps, stays.stays[k].kept_to);
    for (long long t = from; t < to; ++t) sum += per_step(static_cast<int>(t));
  }
  return sum;
}
}  // namespace

double KeptReward(const Scenario& scenario, const Job& job, const JobPlacement& p) {
  if (!p.preempt_step && !job.running) {
    return PlacementReward(scenario, job, Shape{p.gpus, p.duration_steps}, *p.start_step);
  }
  const double decay = scenario.objective.time_decay / scenario.horizon_steps;
  return job.priority * p.gpus *
         OverKeptWork(scenario, job, p, [&](int t) { return 1.0 - decay * t; });
}

double KeptValue(const Scenario& scenario, const Job& job, const JobPlacement& p) {
  return job.priority * p.gpus * OverKeptWork(scenario, job, p, [](int) { return 1.0; });
}

double JobReward(const Scenario& scenario, const Decisions& decisions, int j) {
  const Job& job = scenario.jobs[j];
  if (!job.running && !decisions.jobs[j]) return 0;
  if (!decisions.preemptions[j]) {
    if (job.running) return RunningJobReward(scenario, job);
    const Placement& p = *decisions.jobs[j];
    return PlacementReward(scenario, job, job.shapes[p.shape], p.start);
  }
  return KeptReward(scenario, job, PlacementOf(scenario, decisions, j));
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
    objective += JobReward(scenario, decisions, static_cast<int>(j));
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
    if (skip_jobs != nullptr && (*skip_jobs)[j]) continue;
    if (decisions != nullptr && decisions->preemptions[j]) {
      const JobPlacement p = PlacementOf(scenario, *decisions, static_cast<int>(j));
      ForEachStayInHorizon(scenario, job, p, [&](int first_gpu, int from, int to) {
        mark(first_gpu, p.gpus, from, to - from);
      });
    } else if (job.running) {
      mark(job.running->first_gpu, job.shapes.front().gpus, job.running->start_step,
           job.running_end_step() - job.running->start_step);
    } else if (decisions != nullptr && decisions->jobs[j]) {
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
    if (!scenario.jobs[j].running && !decisions.jobs[j]) continue;
    plan.jobs[j] = PlacementOf(scenario, decisions, static_cast<int>(j));
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
