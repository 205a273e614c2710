// fifo, fifo-backfill and priority-backfill: a batch queue beside static peak reservations for the
// real-time services (static_reservation.h), as a cluster manager with a FIFO or multifactor
// priority queue and backfill would run it.
//
// Jobs are taken in queue order (arrival then file order; or priority, arrival, file order), each
// on its first shape, at the earliest step allowed that has a free aligned block for its whole
// duration, on the lowest such block (steps past the horizon count as free). fifo also never starts
// a job before the job placed before it, and a job that cannot start blocks every later one; the
// backfill variants skip it (conservative backfill: a job never delays one placed before it).
// Guarantees: every plan is legal; the same scenario gives the same plan.
// Cost: O(S x G) for the reservations, then per job O(T x window x G / 64) word operations at
// worst.
//
//   one group of 8 GPUs, jobs a(8 GPUs x 4 steps, arrival 0), b(1 x 1, arrival 0), horizon 6
//   fifo:          a at 0 on GPU 0, b at 4 on GPU 0 (never before a's start, free from step 4)
//   fifo-backfill: the same here; b would start at 0 if it came before a in the queue
#include <algorithm>
#include <chrono>
#include <numeric>
#include <string_view>

#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/baselines/free_grid.h"
#include "ordo/policy/baselines/static_reservation.h"
#include "ordo/policy/common/plan_builder.h"

namespace ordo::policy {

namespace {

enum class QueueOrder { kArrival, kPriority };

class QueuePolicy : public Policy {
 public:
  QueuePolicy(std::string_view name, QueueOrder order, bool backfill)
      : name_(name), order_(order), backfill_(backfill) {}

  [[nodiscard]] std::string_view name() const override { return name_; }

  [[nodiscard]] Result<Plan> Solve(const Scenario& scenario,
                                   const PolicyOptions& /*options: cannot stop early*/) override {
    const auto started = std::chrono::steady_clock::now();
    Plan plan = MakeEmptyPlan(scenario, name_);
    const int steps = scenario.horizon_steps;
    baselines::FreeGrid grid(scenario.cluster, steps);

    for (const Job& job : scenario.jobs) {
      if (!job.running) continue;
      const Shape& shape = job.shapes.front();
      grid.Occupy(job.running->first_gpu, shape.gpus, job.running->start_step,
                  job.running_end_step());
    }

    StaticReservation reservation = ComputeStaticReservation(scenario);
    for (size_t i = 0; i < scenario.services.size(); ++i) {
      // Reserved GPUs are closed to jobs at every step, allocated or not; extra GPUs only at the
      // steps they are held.
      std::vector<int> reserved = reservation.reserved[i];
      std::sort(reserved.begin(), reserved.end());
      for (int gpu : reserved) grid.Occupy(gpu, 1, 0, steps);
      for (int t = 0; t < steps; ++t) {
        for (int gpu : reservation.allocated[i][t]) {
          if (!std::binary_search(reserved.begin(), reserved.end(), gpu)) {
            grid.Occupy(gpu, 1, t, t + 1);
          }
        }
      }
      plan.services[i].gpus = std::move(reservation.allocated[i]);
    }

    std::vector<int> queue;
    for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
      if (!scenario.jobs[j].running) queue.push_back(j);
    }
    // Stable sorts keep file order as the last tie-break.
    if (order_ == QueueOrder::kArrival) {
      std::stable_sort(queue.begin(), queue.end(), [&](int a, int b) {
        return scenario.jobs[a].arrival_step < scenario.jobs[b].arrival_step;
      });
    } else {
      std::stable_sort(queue.begin(), queue.end(), [&](int a, int b) {
        const Job& x = scenario.jobs[a];
        const Job& y = scenario.jobs[b];
        if (x.priority != y.priority) return x.priority > y.priority;
        return x.arrival_step < y.arrival_step;
      });
    }

    int previous_start = 0;  // fifo: no job starts before the one placed before it
    for (int j : queue) {
      const Job& job = scenario.jobs[j];
      const Shape& shape = job.shapes.front();
      const int earliest = backfill_ ? std::max(0, job.arrival_step)
                                     : std::max({0, job.arrival_step, previous_start});
      const auto slot =
          grid.FindEarliest(shape.gpus, shape.duration_steps, job.requirement, earliest);
      if (!slot) {
        if (!backfill_) break;  // head-of-line blocking: every later job stays unstarted too
        continue;
      }
      grid.Occupy(slot->first_gpu, shape.gpus, slot->start_step,
                  slot->start_step + shape.duration_steps);
      JobPlacement& placement = plan.jobs[j];
      placement.start_step = slot->start_step;
      placement.first_gpu = slot->first_gpu;
      placement.gpus = shape.gpus;
      placement.duration_steps = shape.duration_steps;
      previous_start = slot->start_step;
    }

    FinishPlan(scenario, started, plan);
    return plan;
  }

 private:
  std::string_view name_;
  QueueOrder order_;
  bool backfill_;
};

}  // namespace

std::unique_ptr<Policy> MakeFifoPolicy() {
  return std::make_unique<QueuePolicy>("fifo", QueueOrder::kArrival, /*backfill=*/false);
}

std::unique_ptr<Policy> MakeFifoBackfillPolicy() {
  return std::make_unique<QueuePolicy>("fifo-backfill", QueueOrder::kArrival, /*backfill=*/true);
}

std::unique_ptr<Policy> MakePriorityBackfillPolicy() {
  return std::make_unique<QueuePolicy>("priority-backfill", QueueOrder::kPriority,
                                       /*backfill=*/true);
}

}  // namespace ordo::policy
