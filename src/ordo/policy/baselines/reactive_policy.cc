// reactive: no reservations and no look-ahead, as an inference autoscaler beside a priority queue
// (Kubernetes with a horizontal autoscaler and a priority scheduler). Steps in order; at step t:
//   1. each service wants its demand at t clamped to [min_gpus, max_gpus], moved to within
//      max_change_per_step of its count at t-1 (of current_gpus at step 0, where given);
//   2. each keeps the lowest `want` of the GPUs it held at t-1 (shrinking gives back its highest);
//   3. services in file order that want more take free GPUs, matching groups in file order, highest
//      id down, fewer if fewer are free;
//   4. arrived, unstarted jobs by priority, arrival, file order each start at t on the lowest
//      aligned block (first shape) free at t and not held by a started job during its duration.
// reactive-preempt: a service still short after 3 preempts checkpointed jobs holding GPUs of its
// groups (lowest priority, then latest started, then file order; whole blocks; each at most once)
// and takes again until it has what it wants; a preempted job waits in 4's queue with its saved
// work and resumes on any block for its restart steps plus unsaved work (docs/baselines.md).
// At step 0 nothing is held yet (current_gpus is a count, not ids), so every service takes its GPUs
// in 3, and takes them so that later services' floors still fit (floor_guard.h; docs/baselines.md).
// Guarantees: every plan is legal; the same scenario gives the same plan.
// Cost: O(T x (G + S x G + jobs waiting x G / 64)).
//
//   one group of 8 GPUs; chat demand [2, 4, 1], churn 1; job a (4 GPUs, 2 steps) arrives at 0
//   step 0: chat {6, 7}, a starts on 0-3; step 1: chat wants 3, keeps {6, 7}, takes 5
//   step 2: chat wants 2: keeps {5, 6}
#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>

#include "ordo/core/validate.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/baselines/floor_guard.h"
#include "ordo/policy/baselines/free_grid.h"
#include "ordo/policy/baselines/preemption.h"
#include "ordo/policy/common/plan_builder.h"

namespace ordo::policy {

namespace {

using baselines::FloorNeed;
using baselines::FreeGrid;

class ReactivePolicy : public Policy {
 public:
  explicit ReactivePolicy(bool preempt) : preempt_(preempt) {}

  [[nodiscard]] std::string_view name() const override {
    return preempt_ ? "reactive-preempt" : "reactive";
  }

  [[nodiscard]] Result<Plan> Solve(const Scenario& scenario,
                                   const PolicyOptions& /*options: cannot stop early*/) override {
    const auto started = std::chrono::steady_clock::now();
    Plan plan = MakeEmptyPlan(scenario, name());
    const Cluster& cluster = scenario.cluster;
    const int steps = scenario.horizon_steps;
    const int groups = static_cast<int>(cluster.groups.size());
    const int services = static_cast<int>(scenario.services.size());
    // The grid holds jobs over their whole duration and services at the steps decided so far.
    // Every job in it started at or before the current step t, so a GPU a job holds at some step
    // of [t, t + d) it holds at t: "free at t and not held by a started job during the duration"
    // is "free at t" in this grid.
    FreeGrid grid(cluster, steps);
    for (const Job& job : scenario.jobs) {
      if (!job.running) continue;
      const Shape& shape = job.shapes.front();
      grid.Occupy(job.running->first_gpu, shape.gpus, job.running->start_step,
                  job.running_end_step());
    }

    const int jobs = static_cast<int>(scenario.jobs.size());
    const auto queue_order = [&](int a, int b) {
      const Job& x = scenario.jobs[a];
      const Job& y = scenario.jobs[b];
      if (x.priority != y.priority) return x.priority > y.priority;
      if (x.arrival_step != y.arrival_step) return x.arrival_step < y.arrival_step;
      return a < b;
    };
    std::vector<int> waiting;
    for (int j = 0; j < jobs; ++j) {
      if (!scenario.jobs[j].running) waiting.push_back(j);
    }
    std::sort(waiting.begin(), waiting.end(), queue_order);
    // reactive-preempt: the jobs a service may preempt (started, checkpointed, first stay not
    // given back yet), and the resumed stay's length of each job preempted so far.
    std::vector<int> preemptible;
    std::vector<int> resume_steps(static_cast<size_t>(jobs), 0);
    if (preempt_) {
      for (int j = 0; j < jobs; ++j) {
        if (scenario.jobs[j].running && scenario.jobs[j].checkpoint) preemptible.push_back(j);
      }
    }

    std::vector<int> floor0(static_cast<size_t>(services));
    for (int i = 0; i < services; ++i) floor0[i] = ServiceFloor(scenario, i)[0];

    std::vector<std::vector<int>> held(static_cast<size_t>(services));  // at t-1, ascending
    std::vector<int> want(static_cast<size_t>(services));
    std::vector<std::vector<int>> candidates(static_cast<size_t>(groups));
    std::vector<int> available(static_cast<size_t>(groups));
    std::vector<FloorNeed> later;
    for (int t = 0; t < steps; ++t) {
      // 1. What each service wants.
      for (int i = 0; i < services; ++i) {
        const Service& service = scenario.services[i];
        int w = std::clamp(service.demand[t], service.min_gpus,
                           std::max(service.min_gpus, service.max_gpus));
        const std::optional<int> before =
            t == 0 ? service.current_gpus : std::optional<int>(static_cast<int>(held[i].size()));
        if (before && service.max_change_per_step) {
          w = std::clamp(w, *before - *service.max_change_per_step,
                         *before + *service.max_change_per_step);
        }
        want[i] = w;
      }
      // 2. Keep the lowest `want` of what was held.
      for (int i = 0; i < services; ++i) {
        if (static_cast<int>(held[i].size()) > want[i]) held[i].resize(want[i]);
        for (int gpu : held[i]) grid.Occupy(gpu, 1, t, t + 1);
      }
      // 3. Grow from free GPUs, services in file order; reactive-preempt then preempts jobs
      // until the service has what it wants.
      bool requeued = false;
      for (int i = 0; i < services; ++i) {
        const Service& service = scenario.services[i];
        if (want[i] <= static_cast<int>(held[i].size())) continue;
        Grow(scenario, grid, t, i, want[i], floor0, held[i], candidates, available, later);
        while (preempt_ && static_cast<int>(held[i].size()) < want[i]) {
          const int victim = PickVictim(scenario, plan, service, t, preemptible);
          if (victim < 0) break;
          const Job& job = scenario.jobs[victim];
          JobPlacement& placement = plan.jobs[victim];
          resume_steps[victim] = baselines::ResumeSteps(job, placement, t);
          grid.Release(placement.first_gpu, placement.gpus, t,
                       baselines::FirstStayEnd(job, placement));
          placement.preempt_step = t;
          preemptible.erase(std::find(preemptible.begin(), preemptible.end(), victim));
          waiting.push_back(victim);
          requeued = true;
          Grow(scenario, grid, t, i, want[i], floor0, held[i], candidates, available, later);
        }
      }
      if (requeued) std::sort(waiting.begin(), waiting.end(), queue_order);
      for (int i = 0; i < services; ++i) plan.services[i].gpus[t] = held[i];

      // 4. Jobs that have arrived, by priority, arrival, file order.
      size_t kept = 0;
      for (size_t k = 0; k < waiting.size(); ++k) {
        const int j = waiting[k];
        const Job& job = scenario.jobs[j];
        if (job.arrival_step > t) {
          waiting[kept++] = j;
          continue;
        }
        const Shape& shape = job.shapes.front();
        const auto first = grid.FindAt(shape.gpus, 1, job.requirement, t);
        if (!first) {
          waiting[kept++] = j;
          continue;
        }
        JobPlacement& placement = plan.jobs[j];
        if (placement.preempt_step) {
          // A preempted job resumes from its last checkpoint, on any block (migration).
          grid.Occupy(*first, shape.gpus, t, t + resume_steps[j]);
          placement.resume = ResumePlacement{t, *first};
          continue;
        }
        grid.Occupy(*first, shape.gpus, t, t + shape.duration_steps);
        placement.start_step = t;
        placement.first_gpu = *first;
        placement.gpus = shape.gpus;
        placement.duration_steps = shape.duration_steps;
        if (preempt_ && job.checkpoint) preemptible.push_back(j);
      }
      waiting.resize(kept);
    }

    FinishPlan(scenario, started, plan);
    return plan;
  }

 private:
  // Step 3 for service i at step t: takes free GPUs until it holds `want` (matching groups in
  // file order, highest id down; at step 0 guarded so later services' floors still fit).
  static void Grow(const Scenario& scenario, FreeGrid& grid, int t, int i, int want,
                   const std::vector<int>& floor0, std::vector<int>& held,
                   std::vector<std::vector<int>>& candidates, std::vector<int>& available,
                   std::vector<FloorNeed>& later) {
    const Cluster& cluster = scenario.cluster;
    const int groups = static_cast<int>(cluster.groups.size());
    const int services = static_cast<int>(scenario.services.size());
    const Service& service = scenario.services[i];
    const int more = want - static_cast<int>(held.size());
    if (more <= 0) return;
    std::vector<int> got;
    if (t == 0) {
      std::fill(available.begin(), available.end(), 0);
      for (int g = 0; g < groups; ++g) {
        candidates[g].clear();
        const int first = cluster.group_first_gpu(g);
        for (int gpu = first + cluster.group_gpus(g) - 1; gpu >= first; --gpu) {
          if (!grid.IsFree(gpu, t)) continue;
          ++available[g];
          if (service.requirement.Matches(cluster.groups[g])) candidates[g].push_back(gpu);
        }
      }
      later.clear();
      for (int k = i + 1; k < services; ++k) {
        later.push_back(FloorNeed{&scenario.services[k].requirement, floor0[k]});
      }
      // The floor still to reach: what it holds already counts towards it.
      const int own_floor = std::max(0, floor0[i] - static_cast<int>(held.size()));
      got = baselines::TakeGuarded(cluster, service.requirement, more, own_floor, candidates,
                                   available, later);
    } else {
      for (int g = 0; g < groups && static_cast<int>(got.size()) < more; ++g) {
        if (!service.requirement.Matches(cluster.groups[g])) continue;
        const int first = cluster.group_first_gpu(g);
        for (int gpu = first + cluster.group_gpus(g) - 1;
             gpu >= first && static_cast<int>(got.size()) < more; --gpu) {
          if (grid.IsFree(gpu, t)) got.push_back(gpu);
        }
      }
    }
    for (int gpu : got) grid.Occupy(gpu, 1, t, t + 1);
    held.insert(held.end(), got.begin(), got.end());
    std::sort(held.begin(), held.end());
  }

  // reactive-preempt's victim for `service` at step t: among the jobs that may be preempted at t
  // and hold a block in a group the service matches, the lowest priority, then the latest
  // started, then file order. -1 when there is none.
  static int PickVictim(const Scenario& scenario, const Plan& plan, const Service& service, int t,
                        const std::vector<int>& preemptible) {
    const Cluster& cluster = scenario.cluster;
    int best = -1;
    for (int j : preemptible) {
      const Job& job = scenario.jobs[j];
      const JobPlacement& p = plan.jobs[j];
      if (!baselines::CanPreemptAt(job, p, t)) continue;
      if (!service.requirement.Matches(cluster.groups[cluster.group_of(p.first_gpu)])) continue;
      if (best >= 0) {
        const Job& b = scenario.jobs[best];
        const int b_start = *plan.jobs[best].start_step;
        if (job.priority > b.priority) continue;
        if (job.priority == b.priority &&
            (*p.start_step < b_start || (*p.start_step == b_start && j > best))) {
          continue;
        }
      }
      best = j;
    }
    return best;
  }

  bool preempt_;
};

}  // namespace

std::unique_ptr<Policy> MakeReactivePolicy() {
  return std::make_unique<ReactivePolicy>(/*preempt=*/false);
}

std::unique_ptr<Policy> MakeReactivePreemptPolicy() {
  return std::make_unique<ReactivePolicy>(/*preempt=*/true);
}

}  // namespace ordo::policy
