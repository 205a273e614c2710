#include "ordo/report/wait_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ordo/core/metrics.h"

namespace ordo::report {
namespace {

// Jobs that ask for the same block size under the same requirement see the same free blocks, so
// blocks are scanned once per such class and step, not once per job.
struct BlockClass {
  int gpus = 0;
  GpuRequirement requirement;
};

std::tuple<int, bool, std::string, bool, double> ClassKey(int gpus, const GpuRequirement& r) {
  return {gpus, r.gpu_type.has_value(), r.gpu_type.value_or(""), r.min_gpu_memory_gb.has_value(),
          r.min_gpu_memory_gb.value_or(0)};
}

}  // namespace

namespace {

WaitSummary Summarize(std::vector<double> waits, int never_started) {
  WaitSummary w;
  w.jobs = static_cast<int>(waits.size());
  w.never_started = never_started;
  if (waits.empty()) return w;
  std::sort(waits.begin(), waits.end());
  double sum = 0;
  for (double x : waits) sum += x;
  w.mean_hours = sum / static_cast<double>(waits.size());
  const auto rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(waits.size())));
  w.p95_hours = waits[std::clamp<size_t>(rank, 1, waits.size()) - 1];
  return w;
}

}  // namespace

JobWaits ComputeJobWaits(const Scenario& s, const Plan& plan) {
  std::unordered_map<std::string_view, const JobPlacement*> placement;
  for (const JobPlacement& p : plan.jobs) placement.emplace(p.id, &p);
  const double step_hours = s.step_minutes / 60.0;
  std::vector<double> all;
  std::array<std::vector<double>, 3> by_class;
  int never = 0;
  std::array<int, 3> class_never{};
  for (const Job& job : s.jobs) {
    if (job.running) continue;
    auto it = placement.find(job.id);
    const bool started = it != placement.end() && it->second->started();
    const int until = started ? *it->second->start_step : s.horizon_steps;
    const double wait = std::max(0, until - job.arrival_step) * step_hours;
    const int c = job.priority <= 3 ? 0 : job.priority <= 7 ? 1 : 2;
    all.push_back(wait);
    by_class[c].push_back(wait);
    if (!started) {
      ++never;
      ++class_never[c];
    }
  }
  JobWaits w;
  w.all = Summarize(std::move(all), never);
  for (int c = 0; c < 3; ++c) w.by_class[c] = Summarize(std::move(by_class[c]), class_never[c]);
  return w;
}

WaitMetrics ComputeWaitMetrics(const Scenario& s, const Plan& plan) {
  WaitMetrics m;
  const int gpus = s.cluster.total_gpus();
  const int horizon = s.horizon_steps;
  if (gpus <= 0 || horizon <= 0) return m;

  std::unordered_map<std::string_view, size_t> job_index, service_index;
  for (size_t j = 0; j < s.jobs.size(); ++j) job_index.emplace(s.jobs[j].id, j);
  for (size_t i = 0; i < s.services.size(); ++i) service_index.emplace(s.services[i].id, i);

  // busy[t * G + g]: held by a job or a service at step t.
  std::vector<char> busy(static_cast<size_t>(gpus) * horizon, 0);
  std::vector<int> start(s.jobs.size(), horizon);  // first step a job holds GPUs (T: never)
  for (const JobPlacement& p : plan.jobs) {
    auto it = job_index.find(p.id);
    if (it == job_index.end() || !p.started()) continue;
    start[it->second] = std::min(start[it->second], std::max(0, *p.start_step));
    // A preempted job holds GPUs in its stays only (metrics.h), not from start to start + duration.
    const JobStays stays = StaysOf(s.jobs[it->second], p);
    for (int k = 0; k < stays.count; ++k) {
      const Stay& stay = stays.stays[k];
      const int from = static_cast<int>(std::max<long long>(0, stay.from));
      const int to = static_cast<int>(std::min<long long>(horizon, stay.to));
      for (int t = from; t < to; ++t) {
        for (int g = std::max(0, stay.first_gpu); g < std::min(gpus, stay.first_gpu + p.gpus);
             ++g) {
          busy[static_cast<size_t>(t) * gpus + g] = 1;
        }
      }
    }
  }
  for (const ServiceAllocation& a : plan.services) {
    if (!service_index.contains(a.id)) continue;
    for (int t = 0; t < std::min<int>(horizon, static_cast<int>(a.gpus.size())); ++t) {
      for (int g : a.gpus[t]) {
        if (g >= 0 && g < gpus) busy[static_cast<size_t>(t) * gpus + g] = 1;
      }
    }
  }

  // The block classes of the jobs that can wait at all (running jobs never wait).
  std::map<std::tuple<int, bool, std::string, bool, double>, int> class_of;
  std::vector<BlockClass> classes;
  std::vector<std::vector<int>> job_classes(s.jobs.size());
  std::vector<int> smallest(s.jobs.size(), 0);
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const Job& job = s.jobs[j];
    if (job.running) continue;
    smallest[j] = job.shapes.empty() ? 0 : job.shapes.front().gpus;
    for (const Shape& shape : job.shapes) {
      smallest[j] = std::min(smallest[j], shape.gpus);
      auto [it, inserted] =
          class_of.emplace(ClassKey(shape.gpus, job.requirement), static_cast<int>(classes.size()));
      if (inserted) classes.push_back(BlockClass{shape.gpus, job.requirement});
      job_classes[j].push_back(it->second);
    }
  }

  std::vector<char> usable(static_cast<size_t>(gpus));
  std::vector<char> class_waiting(classes.size());
  std::vector<char> class_has_block(classes.size());
  for (int t = 0; t < horizon; ++t) {
    const char* row = &busy[static_cast<size_t>(t) * gpus];
    const long long free_gpus = std::count(row, row + gpus, 0);

    std::fill(class_waiting.begin(), class_waiting.end(), 0);
    std::vector<size_t> waiting;
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      if (s.jobs[j].running || s.jobs[j].arrival_step > t || start[j] <= t) continue;
      waiting.push_back(j);
      for (int c : job_classes[j]) class_waiting[c] = 1;
    }
    if (waiting.empty()) continue;

    // Mark the GPUs of every free block a waiting class could take.
    std::fill(usable.begin(), usable.end(), 0);
    std::fill(class_has_block.begin(), class_has_block.end(), 0);
    for (size_t c = 0; c < classes.size(); ++c) {
      if (!class_waiting[c]) continue;
      const int size = classes[c].gpus;
      s.cluster.ForEachBlock(size, classes[c].requirement, [&](int first) {
        if (std::any_of(row + first, row + first + size, [](char b) { return b != 0; })) return;
        class_has_block[c] = 1;
        std::fill_n(usable.begin() + first, size, 1);
      });
    }
    for (int g = 0; g < gpus; ++g) {
      if (!row[g] && !usable[g]) ++m.fragmented_gpu_steps;
    }
    for (size_t j : waiting) {
      ++m.waiting_job_steps;
      const bool has_block = std::any_of(job_classes[j].begin(), job_classes[j].end(),
                                         [&](int c) { return class_has_block[c] != 0; });
      if (!has_block && free_gpus >= smallest[j]) ++m.shape_mismatch_job_steps;
    }
  }
  m.fragmentation =
      static_cast<double>(m.fragmented_gpu_steps) / (static_cast<double>(gpus) * horizon);
  if (m.waiting_job_steps > 0) {
    m.shape_mismatch_share =
        static_cast<double>(m.shape_mismatch_job_steps) / static_cast<double>(m.waiting_job_steps);
  }
  return m;
}

}  // namespace ordo::report
