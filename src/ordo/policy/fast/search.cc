#include "ordo/policy/fast/search.h"

#include <algorithm>

#include "ordo/policy/common/plan_builder.h"
#include "ordo/policy/fast/service_gpu_ids.h"

namespace ordo::policy::fast {

SearchContext::SearchContext(const Scenario& s, const PolicyOptions& o, Clock::time_point until)
    : scenario(s), options(o), deadline(until), pinned(s.cluster, s.horizon_steps) {
  // Running jobs are pinned on the base grid; `free` is what they leave to everything else.
  free.resize(s.cluster.groups.size());
  for (size_t g = 0; g < free.size(); ++g) {
    free[g].assign(s.horizon_steps, s.cluster.group_gpus(static_cast<int>(g)));
  }
  for (const Job& job : s.jobs) {
    if (!job.running) continue;
    const Shape& shape = job.shapes.front();
    const int end = job.running_end_step();
    pinned.Occupy(job.running->first_gpu, shape.gpus, 0, end);
    const int g = s.cluster.group_of(job.running->first_gpu);
    for (int t = 0; t < std::min(end, s.horizon_steps); ++t) free[g][t] -= shape.gpus;
  }
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (!s.jobs[j].running && s.jobs[j].arrival_step < s.horizon_steps) {
      candidates.push_back(static_cast<int>(j));
    }
  }
}

bool SearchContext::OutOfTime() const {
  return Clock::now() > deadline ||
         (options.stop != nullptr && options.stop->load(std::memory_order_relaxed));
}

int HeldAt(const ServiceCounts& counts, size_t service, int step) {
  int held = 0;
  for (const auto& per_group : counts[service]) held += per_group[step];
  return held;
}

long long UnmetSteps(const Scenario& s, const ServiceCounts& counts) {
  long long unmet = 0;
  for (size_t i = 0; i < s.services.size(); ++i) {
    for (int t = 0; t < s.horizon_steps; ++t) {
      unmet += std::max(0, s.services[i].demand[t] - HeldAt(counts, i, t));
    }
  }
  return unmet;
}

double UnmetPenalty(const Scenario& s, const ServiceCounts& counts) {
  double penalty = 0;
  for (size_t i = 0; i < s.services.size(); ++i) {
    for (int t = 0; t < s.horizon_steps; ++t) {
      penalty += s.objective.unmet_penalty_multiplier * s.services[i].priority *
                 std::max(0, s.services[i].demand[t] - HeldAt(counts, i, t));
    }
  }
  return penalty;
}

ServiceCounts CountsOf(const Scenario& s, const Plan& plan) {
  ServiceCounts counts(
      s.services.size(),
      std::vector<std::vector<int>>(s.cluster.groups.size(), std::vector<int>(s.horizon_steps, 0)));
  for (size_t i = 0; i < s.services.size(); ++i) {
    for (int t = 0; t < s.horizon_steps; ++t) {
      for (int gpu : plan.services[i].gpus[t]) ++counts[i][s.cluster.group_of(gpu)][t];
    }
  }
  return counts;
}

void ReserveCounts(const Scenario& s, const ServiceCounts& counts, BlockGrid& grid) {
  for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
    for (int t = 0; t < s.horizon_steps; ++t) {
      int reserved = 0;
      for (const auto& per_group : counts) reserved += per_group[g][t];
      if (reserved > 0) grid.Reserve(static_cast<int>(g), t, reserved);
    }
  }
}

void Take(const Scenario& s, int j, const Placement& p, BlockGrid& grid,
          std::vector<std::vector<int>>& left) {
  const Shape& shape = s.jobs[j].shapes[p.shape];
  grid.Occupy(p.first_gpu, shape.gpus, p.start_step, p.start_step + shape.duration_steps);
  const int g = s.cluster.group_of(p.first_gpu);
  for (int t = p.start_step; t < std::min(s.horizon_steps, p.start_step + shape.duration_steps);
       ++t) {
    left[g][t] -= shape.gpus;
  }
}

std::vector<std::vector<int>> LeftBy(const Scenario& s, const std::vector<std::vector<int>>& free,
                                     const PassResult& pass) {
  std::vector<std::vector<int>> left = free;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const Placement& p = pass.placements[j];
    if (p.shape < 0) continue;
    const Shape& shape = s.jobs[j].shapes[p.shape];
    const int g = s.cluster.group_of(p.first_gpu);
    for (int t = p.start_step; t < std::min(s.horizon_steps, p.start_step + shape.duration_steps);
         ++t) {
      left[g][t] -= shape.gpus;
    }
  }
  return left;
}

Plan Assemble(const Scenario& s, const std::vector<Placement>& placements,
              const ServiceCounts& counts) {
  Plan plan = MakeEmptyPlan(s, kPolicyName);
  const int total = s.cluster.total_gpus();
  std::vector<char> job_busy(static_cast<size_t>(total) * s.horizon_steps, 0);
  auto mark = [&](int first_gpu, int gpus, int start, int duration) {
    for (int t = std::max(0, start); t < std::min(s.horizon_steps, start + duration); ++t) {
      std::fill_n(job_busy.begin() + static_cast<long>(static_cast<size_t>(t) * total + first_gpu),
                  gpus, 1);
    }
  };
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const Job& job = s.jobs[j];
    JobPlacement& out = plan.jobs[j];
    if (job.running) {
      mark(out.first_gpu, out.gpus, *out.start_step, job.running_end_step() - *out.start_step);
      continue;
    }
    const Placement& p = placements.empty() ? Placement{} : placements[j];
    if (p.shape < 0) continue;
    const Shape& shape = job.shapes[p.shape];
    out.start_step = p.start_step;
    out.first_gpu = p.first_gpu;
    out.gpus = shape.gpus;
    out.duration_steps = shape.duration_steps;
    mark(p.first_gpu, shape.gpus, p.start_step, shape.duration_steps);
  }
  AssignServiceGpus(s, counts, job_busy, plan);
  return plan;
}

}  // namespace ordo::policy::fast
