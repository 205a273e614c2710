// Written from spec/formats-v1.md ("Legal plan") alone. It shares no code with any planner: a bug
// in a planner's idea of the rules must not hide here too.
#include "ordo/core/check_plan.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace ordo {
namespace {

std::string Quote(const std::string& id) { return "\"" + id + "\""; }

class Checker {
 public:
  Checker(const Scenario& s, const Plan& plan)
      : s_(s),
        plan_(plan),
        gpus_(s.cluster.total_gpus()),
        owner_(static_cast<size_t>(gpus_) * s.horizon_steps, kFree) {}

  std::vector<Violation> Run() {
    CheckJobs();
    CheckServices();
    return std::move(violations_);
  }

 private:
  static constexpr int32_t kFree = -1;

  void Add(int rule, std::vector<std::string> ids, std::string message) {
    violations_.push_back(Violation{rule, std::move(ids), std::move(message)});
  }

  // Holder h is a job index (< jobs) or jobs + service index.
  const std::string& HolderId(int32_t h) const {
    const auto jobs = static_cast<int32_t>(s_.jobs.size());
    return h < jobs ? s_.jobs[h].id : s_.services[h - jobs].id;
  }
  std::string HolderName(int32_t h) const {
    const auto jobs = static_cast<int32_t>(s_.jobs.size());
    return (h < jobs ? "job " : "service ") + Quote(HolderId(h));
  }

  // Rule 1: a GPU serves at most one job or service at each step. Each colliding pair is reported
  // once, at its first collision.
  void Occupy(int gpu, int step, int32_t holder) {
    int32_t& cell = owner_[static_cast<size_t>(gpu) * s_.horizon_steps + step];
    if (cell == kFree) {
      cell = holder;
      return;
    }
    const auto pair = std::minmax(cell, holder);
    if (reported_pairs_.insert(pair).second) {
      Add(1, {HolderId(pair.first), HolderId(pair.second)},
          HolderName(pair.first) + " and " + HolderName(pair.second) + " both hold GPU " +
              std::to_string(gpu) + " at step " + std::to_string(step));
    }
  }

  void CheckJobs() {
    std::unordered_map<std::string_view, int32_t> index;
    for (size_t j = 0; j < s_.jobs.size(); ++j)
      index.emplace(s_.jobs[j].id, static_cast<int32_t>(j));
    std::vector<bool> seen(s_.jobs.size(), false);
    for (const JobPlacement& p : plan_.jobs) {
      auto it = index.find(p.id);
      if (it == index.end()) {
        Add(0, {p.id}, "the plan lists job " + Quote(p.id) + ", which is not in the scenario");
        continue;
      }
      if (seen[it->second]) {
        Add(0, {p.id}, "job " + Quote(p.id) + " appears more than once in the plan");
        continue;
      }
      seen[it->second] = true;
      CheckJob(s_.jobs[it->second], it->second, p);
    }
    for (size_t j = 0; j < s_.jobs.size(); ++j) {
      if (!seen[j])
        Add(0, {s_.jobs[j].id}, "job " + Quote(s_.jobs[j].id) + " is missing from the plan");
    }
  }

  void CheckJob(const Job& job, int32_t holder, const JobPlacement& p) {
    const std::string name = "job " + Quote(job.id);
    if (job.running) {
      const Shape& shape = job.shapes.front();
      if (!p.started() || *p.start_step != job.running->start_step ||
          p.first_gpu != job.running->first_gpu || p.gpus != shape.gpus ||
          p.duration_steps != shape.duration_steps) {
        Add(2, {job.id},
            name + " is running and must keep its block: start_step " +
                std::to_string(job.running->start_step) + ", first_gpu " +
                std::to_string(job.running->first_gpu) + ", " + std::to_string(shape.gpus) +
                " GPUs for " + std::to_string(shape.duration_steps) + " steps");
        return;
      }
    } else {
      if (!p.started()) {
        if (p.preempt_step || p.resume) {
          Add(0, {job.id}, name + " is not started but has a preempt_step or resume");
        }
        return;
      }
      const int start = *p.start_step;
      if (start >= s_.horizon_steps) {
        Add(0, {job.id},
            name + " starts at step " + std::to_string(start) +
                ", past the horizon: a job not started inside it has start_step null");
        return;
      }
      if (start < 0) {
        Add(5, {job.id}, name + " starts at step " + std::to_string(start) + ", in the past");
        return;
      }
      if (start < job.arrival_step) {
        Add(5, {job.id},
            name + " starts at step " + std::to_string(start) + " before its arrival_step " +
                std::to_string(job.arrival_step));
      }
      const Shape used{p.gpus, p.duration_steps};
      if (std::find(job.shapes.begin(), job.shapes.end(), used) == job.shapes.end()) {
        Add(2, {job.id},
            name + " uses " + std::to_string(p.gpus) + " GPUs for " +
                std::to_string(p.duration_steps) + " steps, not one of its shapes");
        return;
      }
    }
    if (!CheckBlock(job, name, p.first_gpu, p.gpus, "")) return;
    // The end of the first stay when the job is left alone: a running job first spends
    // restart_steps_left from step 0, then does the duration_steps - progress_steps it has left.
    long long natural_end = static_cast<long long>(*p.start_step) + p.duration_steps;
    if (job.running) {
      const long long progress = job.running->progress_steps.value_or(-job.running->start_step);
      natural_end = job.running->restart_steps_left.value_or(0) + p.duration_steps - progress;
    }
    if (!p.preempt_step) {
      if (p.resume) {
        Add(0, {job.id}, name + " has a resume but no preempt_step");
      }
      Hold(holder, p.first_gpu, p.gpus, *p.start_step, natural_end);
      return;
    }
    // Rule 5 for preemption: only a job with a checkpoint, after its start, before its end.
    // A broken preemption is reported, then the plan is judged as written (the first stay held
    // until q, within the stay), so one mistake is one violation.
    const int q = *p.preempt_step;
    const std::string at = " is preempted at step " + std::to_string(q);
    if (!job.checkpoint) {
      Add(5, {job.id}, name + at + " but has no checkpoint: only jobs with one may be preempted");
    } else if (q < 0) {
      Add(5, {job.id}, name + at + ", in the past");
    } else if (q <= *p.start_step) {
      Add(5, {job.id},
          name + at + ", not after its start at step " + std::to_string(*p.start_step));
    } else if (q >= natural_end) {
      Add(5, {job.id}, name + at + ", not before its end at step " + std::to_string(natural_end));
    } else if (q >= s_.horizon_steps) {
      Add(0, {job.id}, name + at + ", past the horizon: a preemption outside it is not planned");
    }
    const long long held_to = std::clamp<long long>(q, *p.start_step, natural_end);
    Hold(holder, p.first_gpu, p.gpus, *p.start_step, held_to);
    if (!p.resume) return;
    const int s2 = p.resume->start_step;
    if (s2 < q) {
      Add(5, {job.id},
          name + " resumes at step " + std::to_string(s2) +
              ", before it gives its block back at step " + std::to_string(q) +
              ": a job never holds two blocks at one step");
      return;
    }
    if (s2 >= s_.horizon_steps) {
      Add(0, {job.id},
          name + " resumes at step " + std::to_string(s2) +
              ", past the horizon: a job not resumed inside it has no resume");
      return;
    }
    if (!CheckBlock(job, name, p.resume->first_gpu, p.gpus, "resumed ")) return;
    // The work done by the preemption, of which only whole checkpoints survive; the resumed stay
    // restarts, then does the rest.
    long long done = held_to - *p.start_step;
    if (job.running) {
      const long long progress = job.running->progress_steps.value_or(-job.running->start_step);
      done =
          progress + std::max<long long>(0, held_to - job.running->restart_steps_left.value_or(0));
    }
    const long long c = job.checkpoint ? job.checkpoint->every_steps : 1;
    const long long restart = job.checkpoint ? job.checkpoint->restart_steps : 0;
    const long long saved = std::min<long long>(done, p.duration_steps) / c * c;
    Hold(holder, p.resume->first_gpu, p.gpus, s2, s2 + restart + p.duration_steps - saved);
  }

  // Rule 3 for one stay's block [first_gpu, first_gpu + gpus). `stay` prefixes "block" in the
  // message ("resumed "). False when the block is not even inside the cluster.
  bool CheckBlock(const Job& job, const std::string& name, int first_gpu, int gpus,
                  const std::string& stay) {
    if (first_gpu < 0 || gpus <= 0 || static_cast<long long>(first_gpu) + gpus > gpus_) {
      Add(3, {job.id},
          name + " uses " + stay + "GPUs [" + std::to_string(first_gpu) + ", " +
              std::to_string(static_cast<long long>(first_gpu) + gpus) + "), outside the cluster");
      return false;
    }
    if (!s_.cluster.IsAlignedBlock(first_gpu, gpus)) {
      Add(3, {job.id},
          name + "'s " + stay + "block [" + std::to_string(first_gpu) + ", " +
              std::to_string(first_gpu + gpus) +
              ") is not aligned, crosses a node boundary or spans two groups");
      return false;
    }
    const NodeGroup& group = s_.cluster.groups[s_.cluster.group_of(first_gpu)];
    if (!job.requirement.Matches(group)) {
      Add(3, {job.id},
          name + " runs " + (stay.empty() ? "" : "its " + stay + "stay ") + "in group " +
              Quote(group.name) + " (" + group.gpu_type +
              "), which does not match its gpu_type / min_gpu_memory_gb");
    }
    return true;
  }

  // Rule 1 over the steps of [from, to) inside the horizon. The rest of rule 5 holds by
  // construction of the format: one block per stay, held from its start to its end.
  void Hold(int32_t holder, int first_gpu, int gpus, long long from, long long to) {
    const int lo = static_cast<int>(std::max<long long>(0, from));
    const int hi = static_cast<int>(std::min<long long>(s_.horizon_steps, to));
    // GPU by GPU: the owner grid is GPU-major, so a job's stay is a run of adjacent cells per GPU
    // (step by step, a long job on few GPUs would touch a new page at every step).
    for (int g = first_gpu; g < first_gpu + gpus; ++g) {
      for (int t = lo; t < hi; ++t) Occupy(g, t, holder);
    }
  }

  void CheckServices() {
    std::unordered_map<std::string_view, size_t> index;
    for (size_t i = 0; i < s_.services.size(); ++i) index.emplace(s_.services[i].id, i);
    std::vector<bool> seen(s_.services.size(), false);
    for (const ServiceAllocation& a : plan_.services) {
      auto it = index.find(a.id);
      if (it == index.end()) {
        Add(0, {a.id}, "the plan lists service " + Quote(a.id) + ", which is not in the scenario");
        continue;
      }
      if (seen[it->second]) {
        Add(0, {a.id}, "service " + Quote(a.id) + " appears more than once in the plan");
        continue;
      }
      seen[it->second] = true;
      CheckService(s_.services[it->second], static_cast<int32_t>(s_.jobs.size() + it->second), a);
    }
    for (size_t i = 0; i < s_.services.size(); ++i) {
      if (!seen[i]) {
        Add(0, {s_.services[i].id},
            "service " + Quote(s_.services[i].id) + " is missing from the plan");
      }
    }
  }

  void CheckService(const Service& service, int32_t holder, const ServiceAllocation& a) {
    const std::string name = "service " + Quote(service.id);
    if (a.gpus.size() != static_cast<size_t>(s_.horizon_steps)) {
      Add(0, {service.id},
          name + " has " + std::to_string(a.gpus.size()) + " lists of GPUs; the horizon has " +
              std::to_string(s_.horizon_steps) + " steps");
      return;
    }
    std::optional<long long> previous;
    if (service.current_gpus) previous = *service.current_gpus;
    bool type_reported = false;
    for (int t = 0; t < s_.horizon_steps; ++t) {
      const std::vector<int>& ids = a.gpus[t];
      const auto count = static_cast<long long>(ids.size());
      std::vector<int> sorted = ids;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); ++k) {
        const int gpu = sorted[k];
        if (gpu < 0 || gpu >= gpus_) {
          Add(0, {service.id},
              name + " lists GPU " + std::to_string(gpu) + " at step " + std::to_string(t) +
                  ", which is not in the cluster");
          continue;
        }
        if (k > 0 && sorted[k - 1] == gpu) {
          Add(1, {service.id},
              name + " lists GPU " + std::to_string(gpu) + " twice at step " + std::to_string(t));
          continue;
        }
        if (!type_reported &&
            !service.requirement.Matches(s_.cluster.groups[s_.cluster.group_of(gpu)])) {
          type_reported = true;
          Add(3, {service.id},
              name + " holds GPU " + std::to_string(gpu) + " at step " + std::to_string(t) +
                  ", in a group that does not match its gpu_type / min_gpu_memory_gb");
        }
        Occupy(gpu, t, holder);
      }
      if (count < service.min_gpus || count > service.max_gpus) {
        Add(2, {service.id},
            name + " holds " + std::to_string(count) + " GPUs at step " + std::to_string(t) +
                ", outside [min_gpus, max_gpus] = [" + std::to_string(service.min_gpus) + ", " +
                std::to_string(service.max_gpus) + "]");
      }
      if (previous && service.max_change_per_step &&
          std::abs(count - *previous) > *service.max_change_per_step) {
        Add(4, {service.id},
            name + " changes from " + std::to_string(*previous) + " to " + std::to_string(count) +
                " GPUs " +
                (t == 0 ? std::string("into step 0 (from current_gpus)")
                        : "at step " + std::to_string(t)) +
                ", more than max_change_per_step " + std::to_string(*service.max_change_per_step));
      }
      previous = count;
    }
  }

  const Scenario& s_;
  const Plan& plan_;
  const int gpus_;
  std::vector<int32_t> owner_;  // [gpu * T + step] -> holder, or kFree
  std::set<std::pair<int32_t, int32_t>> reported_pairs_;
  std::vector<Violation> violations_;
};

}  // namespace

std::vector<Violation> CheckPlan(const Scenario& scenario, const Plan& plan) {
  return Checker(scenario, plan).Run();
}

std::string FormatViolation(const Violation& violation) {
  return (violation.rule == 0 ? std::string("plan structure")
                              : "rule " + std::to_string(violation.rule)) +
         ": " + violation.message;
}

}  // namespace ordo
