#include "ordo/policy/common/explain.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ordo::policy {
namespace {

// "3", "2.5": priorities are numbers; whole ones read best without decimals.
std::string PriorityText(double priority) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", priority);
  return text;
}

constexpr int kFree = -1;

std::string Quote(const std::string& id) { return "\"" + id + "\""; }

std::string Planned(const std::optional<int>& start) {
  return start ? "; planned start: step " + std::to_string(*start) : "; not in the horizon";
}

}  // namespace

std::string_view WaitReasonName(WaitReason reason) {
  switch (reason) {
    case WaitReason::kNone: return "none";
    case WaitReason::kNotArrived: return "not_arrived";
    case WaitReason::kBlockedByJob: return "blocked_by_job";
    case WaitReason::kServicePeak: return "service_peak";
    case WaitReason::kNoBlockOfSize: return "no_block_of_size";
    case WaitReason::kGpuType: return "gpu_type";
    case WaitReason::kFragmented: return "fragmented";
    case WaitReason::kLowValue: return "low_value";
  }
  return "unknown";
}

std::vector<JobExplanation> ExplainPlan(const Scenario& s, const Plan& plan) {
  const int total = s.cluster.total_gpus();
  const int horizon = s.horizon_steps;
  const int jobs = static_cast<int>(s.jobs.size());
  // owner[t * G + gpu]: job index, jobs + service index, or kFree.
  std::vector<int> owner(static_cast<size_t>(total) * horizon, kFree);
  std::vector<const JobPlacement*> placement(s.jobs.size(), nullptr);
  std::unordered_map<std::string_view, int> job_index;
  for (int j = 0; j < jobs; ++j) job_index.emplace(s.jobs[j].id, j);
  for (const JobPlacement& p : plan.jobs) {
    if (auto it = job_index.find(p.id); it != job_index.end()) placement[it->second] = &p;
  }
  for (int j = 0; j < jobs; ++j) {
    const JobPlacement* p = placement[j];
    if (p == nullptr || !p->started()) continue;
    for (int t = std::max(0, *p->start_step); t < std::min(horizon, p->end_step()); ++t) {
      for (int g = p->first_gpu; g < p->first_gpu + p->gpus; ++g) {
        owner[static_cast<size_t>(t) * total + g] = j;
      }
    }
  }
  for (size_t i = 0; i < plan.services.size() && i < s.services.size(); ++i) {
    for (int t = 0; t < horizon && t < static_cast<int>(plan.services[i].gpus.size()); ++t) {
      for (int gpu : plan.services[i].gpus[t]) {
        owner[static_cast<size_t>(t) * total + gpu] = jobs + static_cast<int>(i);
      }
    }
  }
  auto holder_name = [&](int h) {
    return h < jobs ? "job " + Quote(s.jobs[h].id) : "service " + Quote(s.services[h - jobs].id);
  };

  std::vector<JobExplanation> out;
  for (int j = 0; j < jobs; ++j) {
    const Job& job = s.jobs[j];
    const JobPlacement* p = placement[j];
    if (job.running || (p != nullptr && p->started() && *p->start_step == 0)) continue;
    JobExplanation e;
    e.id = job.id;
    if (p != nullptr && p->started()) e.planned_start = *p->start_step;
    const std::string planned = Planned(e.planned_start);
    const bool any_group = std::any_of(s.cluster.groups.begin(), s.cluster.groups.end(),
                                       [&](const NodeGroup& g) { return job.requirement.Matches(g); });
    if (job.arrival_step > 0 && (job.arrival_step >= horizon || e.planned_start == job.arrival_step)) {
      e.reason = WaitReason::kNotArrived;
      e.message = "arrives at step " + std::to_string(job.arrival_step) + planned;
    } else if (!any_group) {
      e.reason = WaitReason::kGpuType;
      e.message = "no node group matches its gpu_type " + job.requirement.gpu_type.value_or("(any)") +
                  " / min_gpu_memory_gb " +
                  (job.requirement.min_gpu_memory_gb
                       ? std::to_string(*job.requirement.min_gpu_memory_gb)
                       : std::string("(any)")) +
                  planned;
    } else {
      // The shape it uses, or its first.
      Shape shape = job.shapes.front();
      if (p != nullptr && p->started()) shape = Shape{p->gpus, p->duration_steps};
      const int t0 = std::max(0, job.arrival_step);
      const int t1 = std::min(horizon, t0 + shape.duration_steps);
      int blocks = 0;
      int service_block_holder = -1;
      bool free_block = false;
      int best_job_holder = -1;
      int best_release = std::numeric_limits<int>::max();
      s.cluster.ForEachBlock(shape.gpus, job.requirement, [&](int first) {
        ++blocks;
        int release = 0, top_job = -1, a_service = -1;
        for (int t = t0; t < t1; ++t) {
          for (int g = first; g < first + shape.gpus; ++g) {
            const int h = owner[static_cast<size_t>(t) * total + g];
            if (h == kFree || h == j) continue;
            if (h < jobs) {
              release = std::max(release, placement[h]->end_step());
              if (top_job < 0 || s.jobs[h].priority > s.jobs[top_job].priority) top_job = h;
            } else if (a_service < 0) {
              a_service = h;
            }
          }
        }
        if (top_job < 0 && a_service < 0) free_block = true;
        if (top_job < 0 && a_service >= 0 && service_block_holder < 0) service_block_holder = a_service;
        if (top_job >= 0 && release < best_release) {
          best_release = release;
          best_job_holder = top_job;
        }
      });
      int free_gpus = 0;
      for (int g = 0; g < total; ++g) {
        if (!job.requirement.Matches(s.cluster.groups[s.cluster.group_of(g)])) continue;
        bool free_all = true;
        for (int t = t0; t < t1 && free_all; ++t) {
          free_all = owner[static_cast<size_t>(t) * total + g] == kFree;
        }
        free_gpus += free_all ? 1 : 0;
      }
      const std::string size = std::to_string(shape.gpus) + " GPUs";
      if (blocks == 0) {
        e.reason = WaitReason::kNoBlockOfSize;
        e.message = "no block of " + size + " exists in the groups it may use" + planned;
      } else if (free_block) {
        e.reason = WaitReason::kLowValue;
        e.message = "a block of " + size + " was free at step " + std::to_string(t0) +
                    " but the plan gave priority to other work" + planned;
      } else if (service_block_holder >= 0) {
        e.reason = WaitReason::kServicePeak;
        e.blocking_id = s.services[service_block_holder - jobs].id;
        e.message = "real-time " + holder_name(service_block_holder) + " holds the GPUs at its peak" +
                    planned;
      } else if (free_gpus >= shape.gpus) {
        e.reason = WaitReason::kFragmented;
        e.message = std::to_string(free_gpus) + " GPUs are free but no aligned block of " + size +
                    " is" + planned;
      } else {
        e.reason = WaitReason::kBlockedByJob;
        e.blocking_id = s.jobs[best_job_holder].id;
        e.message = "waits for a block of " + size + " held by " + holder_name(best_job_holder) +
                    " (priority " + PriorityText(s.jobs[best_job_holder].priority) +
                    ") until step " + std::to_string(best_release) + planned;
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace ordo::policy
