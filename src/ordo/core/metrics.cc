#include "ordo/core/metrics.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ordo {
namespace {

// Sum of (1 - alpha t / T) over steps t in [from, to): an arithmetic series.
double WeightSum(const Scenario& s, int from, int to) {
  if (to <= from) return 0;
  const double n = to - from;
  const double step_sum = (static_cast<double>(from) + (to - 1)) * n / 2.0;
  return n - s.objective.time_decay * step_sum / s.horizon_steps;
}

// Clips [from, to) to the horizon: the GPU-steps and reward of that part.
struct Clipped {
  int from = 0;
  int to = 0;
  [[nodiscard]] int steps() const { return std::max(0, to - from); }
};
Clipped Clip(long long from, long long to, int horizon) {
  return Clipped{static_cast<int>(std::clamp<long long>(from, 0, horizon)),
                 static_cast<int>(std::clamp<long long>(to, 0, horizon))};
}

}  // namespace

JobStays StaysOf(const Job& job, const JobPlacement& p) {
  JobStays out;
  const long long duration = p.duration_steps;
  // The first stay: a running job first spends its restart steps left, then works on from its
  // progress; a fresh job works from its start with no progress.
  Stay first;
  first.first_gpu = p.first_gpu;
  first.from = *p.start_step;
  long long progress = 0;  // at work_from
  if (job.running) {
    first.work_from = std::max<long long>(first.from, job.running->restart_steps_left.value_or(0));
    progress = job.running_progress_steps();
    first.to = job.running_end_step();
  } else {
    first.work_from = first.from;
    first.to = first.from + duration;
  }
  if (!p.preempt_step) {
    first.kept_to = first.to;
    out.stays[out.count++] = first;
    out.completes = true;
    out.end = first.to;
    return out;
  }
  const Checkpoint checkpoint = job.checkpoint.value_or(Checkpoint{});
  first.to = *p.preempt_step;
  const long long done = progress + std::max<long long>(0, first.to - first.work_from);
  const long long saved = checkpoint.SavedProgress(static_cast<int>(std::min(done, duration)));
  // Work steps whose progress index is below the saved progress survive the preemption.
  first.kept_to = std::clamp(first.work_from + (saved - progress), first.work_from,
                             std::max(first.work_from, first.to));
  out.stays[out.count++] = first;
  if (!p.resume) return out;
  Stay second;
  second.first_gpu = p.resume->first_gpu;
  second.from = p.resume->start_step;
  second.work_from = second.from + checkpoint.restart_steps;
  second.to = second.work_from + (duration - saved);
  second.kept_to = second.to;
  out.stays[out.count++] = second;
  out.completes = true;
  out.end = second.to;
  return out;
}

Metrics ComputeMetrics(const Scenario& s, const Plan& plan) {
  Metrics m;
  m.solve_ms = plan.metrics.solve_ms;
  m.solver = plan.metrics.solver;
  const int horizon = s.horizon_steps;
  std::unordered_map<std::string_view, size_t> job_index, service_index;
  for (size_t j = 0; j < s.jobs.size(); ++j) job_index.emplace(s.jobs[j].id, j);
  for (size_t i = 0; i < s.services.size(); ++i) service_index.emplace(s.services[i].id, i);

  double batch_gpu_steps = 0, useful_service = 0, allocated_service = 0;
  double reward = 0, penalty = 0;
  double held_gpu_steps = 0;  // batch GPU-steps of restart and lost work: allocated, not useful
  for (const JobPlacement& p : plan.jobs) {
    auto it = job_index.find(p.id);
    if (it == job_index.end() || !p.started()) continue;
    const Job& job = s.jobs[it->second];
    const JobStays stays = StaysOf(job, p);
    for (int k = 0; k < stays.count; ++k) {
      const Stay& stay = stays.stays[k];
      const Clipped held = Clip(stay.from, std::max(stay.from, stay.to), horizon);
      const Clipped kept = Clip(stay.work_from, std::max(stay.work_from, stay.kept_to), horizon);
      const double kept_steps = kept.steps();
      const double wasted = static_cast<double>(held.steps() - kept.steps()) * p.gpus;
      batch_gpu_steps += kept_steps * p.gpus;
      held_gpu_steps += wasted;
      m.lost_gpu_steps += static_cast<long long>(wasted);
      m.batch_value += job.priority * p.gpus * kept_steps;
      reward += job.priority * p.gpus * WeightSum(s, kept.from, kept.to);
    }
    if (p.preempt_step) ++m.preemptions;
    if (!job.running && *p.start_step >= 0 && *p.start_step < horizon) ++m.jobs_started;
    if (stays.completes && stays.end <= horizon) ++m.jobs_completed;
  }
  m.value = m.batch_value;
  std::vector<bool> listed(s.services.size(), false);
  for (const ServiceAllocation& a : plan.services) {
    auto it = service_index.find(a.id);
    if (it == service_index.end() || listed[it->second]) continue;
    listed[it->second] = true;
    const Service& service = s.services[it->second];
    for (int t = 0; t < horizon; ++t) {
      const long long allocated =
          t < static_cast<int>(a.gpus.size()) ? static_cast<long long>(a.gpus[t].size()) : 0;
      const long long demand = service.demand[t];
      const long long served = std::min(allocated, demand);
      const long long unmet = std::max(0LL, demand - allocated);
      useful_service += static_cast<double>(served);
      allocated_service += static_cast<double>(allocated);
      m.value += service.priority * static_cast<double>(served);
      m.realtime_unmet_gpu_steps += unmet;
      penalty +=
          s.objective.unmet_penalty_multiplier * service.priority * static_cast<double>(unmet);
    }
  }
  // Unmet demand of a service the plan omits still counts (the plan gives it nothing).
  for (size_t i = 0; i < s.services.size(); ++i) {
    if (listed[i]) continue;
    const Service& service = s.services[i];
    for (int d : service.demand) {
      m.realtime_unmet_gpu_steps += d;
      penalty += s.objective.unmet_penalty_multiplier * service.priority * d;
    }
  }
  const double grid = static_cast<double>(s.cluster.total_gpus()) * horizon;
  m.utilization = (batch_gpu_steps + useful_service) / grid;
  m.allocated_utilization = (batch_gpu_steps + held_gpu_steps + allocated_service) / grid;
  m.objective = reward - penalty;
  return m;
}

double ComputeObjective(const Scenario& scenario, const Plan& plan) {
  return ComputeMetrics(scenario, plan).objective;
}

}  // namespace ordo
