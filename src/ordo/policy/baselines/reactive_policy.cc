// reactive: no reservations and no look-ahead, as an inference autoscaler beside a priority queue
// (Kubernetes with a horizontal autoscaler and a priority scheduler). Steps in order; at step t:
//   1. each service wants its demand at t clamped to [min_gpus, max_gpus], moved to within
//      max_change_per_step of its count at t-1 (of current_gpus at step 0, where given);
//   2. each keeps the lowest `want` of the GPUs it held at t-1 (shrinking gives back its highest);
//   3. services in file order that want more take free GPUs, matching groups in file order, highest
//      id down, fewer if fewer are free;
//   4. arrived, unstarted jobs by priority, arrival, file order each start at t on the lowest
//      aligned block (first shape) free at t and not held by a started job during its duration.
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
#include "ordo/policy/common/plan_builder.h"

namespace ordo::policy {

namespace {

using baselines::FloorNeed;
using baselines::FreeGrid;

class ReactivePolicy : public Policy {
 public:
  [[nodiscard]] std::string_view name() const override { return "reactive"; }

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

    std::vector<int> waiting;
    for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
      if (!scenario.jobs[j].running) waiting.push_back(j);
    }
    std::stable_sort(waiting.begin(), waiting.end(), [&](int a, int b) {
      const Job& x = scenario.jobs[a];
      const Job& y = scenario.jobs[b];
      if (x.priority != y.priority) return x.priority > y.priority;
      return x.arrival_step < y.arrival_step;
    });

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
      // 3. Grow from free GPUs, services in file order.
      for (int i = 0; i < services; ++i) {
        const Service& service = scenario.services[i];
        const int more = want[i] - static_cast<int>(held[i].size());
        if (more <= 0) continue;
        std::vector<int> got;
        if (t == 0) {
          // Guarded so that a later service's floor is never taken (see the file comment).
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
          got = baselines::TakeGuarded(cluster, service.requirement, more, floor0[i], candidates,
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
        held[i].insert(held[i].end(), got.begin(), got.end());
        std::sort(held[i].begin(), held[i].end());
      }
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
        grid.Occupy(*first, shape.gpus, t, t + shape.duration_steps);
        JobPlacement& placement = plan.jobs[j];
        placement.start_step = t;
        placement.first_gpu = *first;
        placement.gpus = shape.gpus;
        placement.duration_steps = shape.duration_steps;
      }
      waiting.resize(kept);
    }

    FinishPlan(scenario, started, plan);
    return plan;
  }
};

}  // namespace

std::unique_ptr<Policy> MakeReactivePolicy() { return std::make_unique<ReactivePolicy>(); }

}  // namespace ordo::policy
