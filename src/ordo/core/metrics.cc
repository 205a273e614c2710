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

}  // namespace

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
  for (const JobPlacement& p : plan.jobs) {
    auto it = job_index.find(p.id);
    if (it == job_index.end() || !p.started()) continue;
    const Job& job = s.jobs[it->second];
    const int from = std::max(0, *p.start_step);
    const int to = std::min(horizon, p.end_step());
    const double steps = std::max(0, to - from);
    batch_gpu_steps += steps * p.gpus;
    m.batch_value += job.priority * p.gpus * steps;
    reward += job.priority * p.gpus * WeightSum(s, from, to);
    if (!job.running && *p.start_step >= 0 && *p.start_step < horizon) ++m.jobs_started;
    if (p.end_step() <= horizon) ++m.jobs_completed;
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
      penalty += s.objective.unmet_penalty_multiplier * service.priority * static_cast<double>(unmet);
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
  m.allocated_utilization = (batch_gpu_steps + allocated_service) / grid;
  m.objective = reward - penalty;
  return m;
}

double ComputeObjective(const Scenario& scenario, const Plan& plan) {
  return ComputeMetrics(scenario, plan).objective;
}

}  // namespace ordo
