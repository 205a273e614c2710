#include "ordo/sim/sim_metrics.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

namespace ordo::sim {
namespace {

double NearestRank(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

WaitStats Summarize(const std::vector<double>& waits, int unstarted) {
  WaitStats w;
  w.jobs = static_cast<int>(waits.size());
  w.unstarted = unstarted;
  if (waits.empty()) return w;
  double sum = 0;
  for (double x : waits) sum += x;
  w.mean_hours = sum / static_cast<double>(waits.size());
  w.p95_hours = NearestRank(waits, 0.95);
  return w;
}

// Steps of [a, b) inside [from, to).
long long Overlap(long long a, long long b, long long from, long long to) {
  return std::max(0LL, std::min(b, to) - std::max(a, from));
}

}  // namespace

const char* PriorityClassName(int priority_class) {
  switch (priority_class) {
    case 0:
      return "1-3";
    case 1:
      return "4-7";
    default:
      return "8-10";
  }
}

PeriodMetrics ComputePeriodMetrics(const World& world, const SimRun& run, int from, int to) {
  PeriodMetrics m;
  m.from_step = from;
  m.to_step = to;
  const double step_hours = world.step_minutes / 60.0;
  const double unmet_multiplier = world.objective.unmet_penalty_multiplier;

  std::array<std::vector<double>, 3> waits;
  std::array<int, 3> unstarted{};
  std::array<std::vector<double>, kPriorityClasses> class_waits;
  std::array<int, kPriorityClasses> class_unstarted{};
  // Per tenant and step of the period: GPUs held and GPUs of work present (held or waiting).
  const int span = std::max(0, to - from);
  std::vector<std::vector<int>> held(world.tenants.size(), std::vector<int>(span, 0));
  std::vector<std::vector<int>> demand = held;
  std::unordered_map<std::string_view, size_t> tenant_index;
  for (size_t t = 0; t < world.tenants.size(); ++t) tenant_index.emplace(world.tenants[t].id, t);
  for (const JobOutcome& o : run.jobs) {
    const WorldJob& wj = world.jobs[o.world_index];
    for (const Stay& stay : o.stays) {
      // Kept work earns; restart steps and work lost to a preemption only hold GPUs.
      const long long kept = Overlap(stay.work_from, stay.kept_to, from, to);
      const long long held_steps = Overlap(stay.from, stay.to, from, to);
      m.batch_gpu_steps += o.gpus * kept;
      m.batch_value += wj.priority * static_cast<double>(o.gpus * kept);
      m.lost_gpu_steps += o.gpus * (held_steps - kept);
      if (&stay != &o.stays.back() || o.preempted_now) {
        if (stay.to >= from && stay.to < to) ++m.preemptions;
      }
    }
    const std::optional<int> started = o.start_step();
    if (started && *started >= from && *started < to) ++m.jobs_started;
    if (const auto end = o.end_step(); end && *end > from && *end <= to) ++m.jobs_completed;
    if (wj.arrival_step >= from && wj.arrival_step < to) {
      ++m.jobs_arrived;
      const int kind = static_cast<int>(wj.kind);
      const int until = started.value_or(run.steps);
      waits[kind].push_back((until - wj.arrival_step) * step_hours);
      if (!started) ++unstarted[kind];
      const int pc = PriorityClass(wj.priority);
      class_waits[pc].push_back((until - wj.arrival_step) * step_hours);
      if (!started) ++class_unstarted[pc];
    }
    if (auto it = tenant_index.find(wj.tenant); it != tenant_index.end() && span > 0) {
      int smallest = wj.shapes.front().gpus;
      for (const WorldShape& shape : wj.shapes) smallest = std::min(smallest, shape.gpus);
      const int start = started.value_or(run.steps);
      const long long end = o.end_step().value_or(run.steps);
      for (int t = std::max(from, wj.arrival_step); t < std::min<long long>(to, end); ++t) {
        demand[it->second][t - from] += t < start ? smallest : o.gpus;
      }
      for (const Stay& stay : o.stays) {
        const long long a = std::max<long long>(stay.from, from);
        const long long b = std::min<long long>(stay.to, to);
        for (long long t = a; t < b; ++t) held[it->second][t - from] += o.gpus;
      }
    }
  }
  long long allocated = 0;
  long long served = 0;
  double penalty = 0;
  for (size_t i = 0; i < world.services.size(); ++i) {
    const double priority = world.services[i].priority;
    for (int t = from; t < to; ++t) {
      const auto a = static_cast<long long>(run.service_gpus[i][t].size());
      const long long d = run.service_demand[i][t];
      allocated += a;
      served += std::min(a, d);
      m.service_value += priority * static_cast<double>(std::min(a, d));
      m.realtime_demand_gpu_steps += d;
      const long long unmet = std::max(0LL, d - a);
      m.realtime_unmet_gpu_steps += unmet;
      penalty += unmet_multiplier * priority * static_cast<double>(unmet);
    }
  }
  m.value = m.batch_value + m.service_value;
  m.net_value = m.value - penalty;
  const double capacity = static_cast<double>(world.cluster.total_gpus()) * (to - from);
  if (capacity > 0) {
    m.utilization = static_cast<double>(m.batch_gpu_steps + served) / capacity;
    m.allocated_utilization =
        static_cast<double>(m.batch_gpu_steps + m.lost_gpu_steps + allocated) / capacity;
  }

  std::vector<double> all;
  int all_unstarted = 0;
  for (int k = 0; k < 3; ++k) {
    m.wait_by_kind[k] = Summarize(waits[k], unstarted[k]);
    all.insert(all.end(), waits[k].begin(), waits[k].end());
    all_unstarted += unstarted[k];
  }
  m.wait_all = Summarize(all, all_unstarted);
  for (int c = 0; c < kPriorityClasses; ++c) {
    m.wait_by_class[c] = Summarize(class_waits[c], class_unstarted[c]);
  }
  const int total_gpus = world.cluster.total_gpus();
  for (size_t t = 0; t < world.tenants.size(); ++t) {
    TenantUse use;
    const double share_gpus = world.tenants[t].ShareFraction(total_gpus) * total_gpus;
    for (int k = 0; k < span; ++k) {
      use.gpu_hours += held[t][k] * step_hours;
      use.demand_gpu_hours += demand[t][k] * step_hours;
      use.entitled_gpu_hours += std::min<double>(demand[t][k], share_gpus) * step_hours;
    }
    m.tenants.push_back(use);
  }

  std::vector<double> ms;
  for (const Decision& d : run.decisions) {
    if (d.step >= from && d.step < to) ms.push_back(d.plan_ms);
  }
  m.decisions = static_cast<int>(ms.size());
  if (!ms.empty()) {
    for (double x : ms) m.plan_ms_total += x;
    m.plan_ms_mean = m.plan_ms_total / static_cast<double>(ms.size());
    m.plan_ms_p95 = NearestRank(ms, 0.95);
    m.plan_ms_max = *std::max_element(ms.begin(), ms.end());
  }
  return m;
}

StepSeries ComputeStepSeries(const SimRun& run) {
  StepSeries s;
  const int n = run.steps;
  s.batch_gpus.assign(n, 0);
  s.service_gpus.assign(n, 0);
  s.served_gpus.assign(n, 0);
  s.demand_gpus.assign(n, 0);
  s.unmet_gpus.assign(n, 0);
  for (const JobOutcome& o : run.jobs) {
    for (const Stay& stay : o.stays) {
      for (long long t = stay.from; t < std::min<long long>(n, stay.to); ++t)
        s.batch_gpus[t] += o.gpus;
    }
  }
  for (size_t i = 0; i < run.service_gpus.size(); ++i) {
    for (int t = 0; t < n; ++t) {
      const int a = static_cast<int>(run.service_gpus[i][t].size());
      const int d = run.service_demand[i][t];
      s.service_gpus[t] += a;
      s.served_gpus[t] += std::min(a, d);
      s.demand_gpus[t] += d;
      s.unmet_gpus[t] += std::max(0, d - a);
    }
  }
  return s;
}

SimMetrics ComputeSimMetrics(const World& world, const SimRun& run) {
  SimMetrics m;
  m.total = ComputePeriodMetrics(world, run, 0, run.steps);
  const int spd = world.steps_per_day();
  for (int from = 0; from < run.steps; from += spd) {
    m.days.push_back(ComputePeriodMetrics(world, run, from, std::min(run.steps, from + spd)));
  }
  return m;
}

}  // namespace ordo::sim
