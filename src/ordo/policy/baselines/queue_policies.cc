// fifo, fifo-backfill, priority-backfill and priority-preempt: a batch queue beside static peak
// reservations for the real-time services (static_reservation.h), as a cluster manager with a FIFO
// or multifactor priority queue and backfill (and, for priority-preempt, QoS preemption with
// requeue) would run it.
//
// Jobs are taken in queue order (arrival then file order; or priority, arrival, file order), each
// on its first shape, at the earliest step allowed that has a free aligned block for its whole
// duration, on the lowest such block (steps past the horizon count as free). fifo also never starts
// a job before the job placed before it, and a job that cannot start blocks every later one; the
// backfill variants skip it (conservative backfill: a job never delays one placed before it).
// priority-preempt: a job with no free block at its arrival first looks for the lowest block held,
// over its run, only by running checkpointed jobs of strictly lower priority; they give it back at
// that step and are requeued at their place in the queue, to resume (restart steps plus unsaved
// work) from their preempt step under the same rules (docs/baselines.md).
// Guarantees: every plan is legal; the same scenario gives the same plan.
// Cost: O(S x G) for the reservations, then per job O(T x window x G / 64) word operations at
// worst; priority-preempt adds, per job with no free block at its arrival, O(G x window) cell
// checks (none when no running job has a checkpoint).
//
//   one group of 8 GPUs, jobs a(8 GPUs x 4 steps, arrival 0), b(1 x 1, arrival 0), horizon 6
//   fifo:          a at 0 on GPU 0, b at 4 on GPU 0 (never before a's start, free from step 4)
//   fifo-backfill: the same here; b would start at 0 if it came before a in the queue
#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <optional>
#include <string_view>

#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/baselines/free_grid.h"
#include "ordo/policy/baselines/preemption.h"
#include "ordo/policy/baselines/static_reservation.h"
#include "ordo/policy/common/plan_builder.h"

namespace ordo::policy {

namespace {

enum class QueueOrder { kArrival, kPriority };

// priority-preempt's preemption: which running jobs hold which GPUs, and taking a block from
// running, checkpointed jobs of strictly lower priority. Only running jobs can be taken from:
// every job placed before a waiting job in priority order has at least its priority, and a
// resumed stay is never preempted again (once per plan).
class Preemptor {
 public:
  Preemptor(const Scenario& scenario, baselines::FreeGrid& grid, Plan& plan)
      : scenario_(scenario),
        grid_(grid),
        plan_(plan),
        owner_(static_cast<size_t>(scenario.cluster.total_gpus()), -1) {
    for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
      const Job& job = scenario.jobs[j];
      if (!job.running || !job.checkpoint) continue;
      any_ = true;
      for (int g = 0; g < job.shapes.front().gpus; ++g) owner_[job.running->first_gpu + g] = j;
    }
  }

  /// The steps the resumed stay of requeued job j holds its block.
  [[nodiscard]] int ResumeStepsOf(int j) const { return resume_steps_.at(j); }

  /// The lowest aligned block for job j over [at, at + duration) (inside the horizon) whose every
  /// busy GPU-step is held by a running job that may be preempted at `at` and has a strictly
  /// lower priority; those jobs give their blocks back at `at` and are requeued. Empty (and
  /// nothing changes) when no block qualifies.
  std::optional<int> TakeBlock(int j, int duration, int at) {
    if (!any_) return std::nullopt;
    const Job& job = scenario_.jobs[j];
    const int gpus = job.shapes.front().gpus;
    const int to = std::min(scenario_.horizon_steps, at + duration);
    std::optional<int> found;
    std::vector<int> victims;
    scenario_.cluster.ForEachBlock(gpus, job.requirement, [&](int first) {
      if (found) return;
      victims.clear();
      for (int gpu = first; gpu < first + gpus; ++gpu) {
        for (int t = at; t < to; ++t) {
          if (grid_.IsFree(gpu, t)) continue;
          const int o = owner_[gpu];
          // A running job holds its block from before step 0 until its end without a gap.
          if (o < 0 || !Preemptible(o, job.priority, at) ||
              t >= baselines::FirstStayEnd(scenario_.jobs[o], plan_.jobs[o])) {
            return;
          }
          if (std::find(victims.begin(), victims.end(), o) == victims.end()) victims.push_back(o);
        }
      }
      found = first;
    });
    if (!found) return std::nullopt;
    for (int o : victims) {
      const Job& victim = scenario_.jobs[o];
      JobPlacement& placement = plan_.jobs[o];
      resume_steps_[o] = baselines::ResumeSteps(victim, placement, at);
      grid_.Release(placement.first_gpu, placement.gpus, at,
                    baselines::FirstStayEnd(victim, placement));
      placement.preempt_step = at;
      for (int g = 0; g < placement.gpus; ++g) owner_[placement.first_gpu + g] = -1;
    }
    return found;
  }

 private:
  [[nodiscard]] bool Preemptible(int o, double priority, int at) const {
    const Job& victim = scenario_.jobs[o];
    return victim.priority < priority && baselines::CanPreemptAt(victim, plan_.jobs[o], at);
  }

  const Scenario& scenario_;
  baselines::FreeGrid& grid_;
  Plan& plan_;
  std::vector<int> owner_;  // per GPU: the running, checkpointed job holding it, or -1
  std::map<int, int> resume_steps_;
  bool any_ = false;
};

class QueuePolicy : public Policy {
 public:
  QueuePolicy(std::string_view name, QueueOrder order, bool backfill, bool preempt)
      : name_(name), order_(order), backfill_(backfill), preempt_(preempt) {}

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

    // priority-preempt also queues the running jobs it may preempt; they take their turn only
    // once requeued (preempted_at set), to place their resumed stay.
    const int jobs = static_cast<int>(scenario.jobs.size());
    std::vector<int> queue;
    for (int j = 0; j < jobs; ++j) {
      const Job& job = scenario.jobs[j];
      if (!job.running || (preempt_ && job.checkpoint)) queue.push_back(j);
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

    Preemptor preemptor(scenario, grid, plan);
    int previous_start = 0;  // fifo: no job starts before the one placed before it
    for (int j : queue) {
      const Job& job = scenario.jobs[j];
      const Shape& shape = job.shapes.front();
      JobPlacement& placement = plan.jobs[j];
      if (job.running && !placement.preempt_step) continue;  // not requeued: keeps its block
      // A requeued job is a waiting job from its preempt step, holding its resumed block for the
      // restart steps and the work its checkpoint did not save.
      const bool resume = job.running.has_value();
      const int arrival = resume ? *placement.preempt_step : std::max(0, job.arrival_step);
      const int duration = resume ? preemptor.ResumeStepsOf(j) : shape.duration_steps;
      const int earliest = backfill_ ? arrival : std::max(arrival, previous_start);
      std::optional<baselines::FreeGrid::Slot> slot;
      if (preempt_ && arrival < steps &&
          !grid.FindAt(shape.gpus, duration, job.requirement, arrival)) {
        if (auto first = preemptor.TakeBlock(j, duration, arrival)) {
          slot = baselines::FreeGrid::Slot{arrival, *first};
        }
      }
      if (!slot) slot = grid.FindEarliest(shape.gpus, duration, job.requirement, earliest);
      if (!slot) {
        if (!backfill_) break;  // head-of-line blocking: every later job stays unstarted too
        continue;
      }
      grid.Occupy(slot->first_gpu, shape.gpus, slot->start_step, slot->start_step + duration);
      if (resume) {
        placement.resume = ResumePlacement{slot->start_step, slot->first_gpu};
      } else {
        placement.start_step = slot->start_step;
        placement.first_gpu = slot->first_gpu;
        placement.gpus = shape.gpus;
        placement.duration_steps = shape.duration_steps;
      }
      previous_start = slot->start_step;
    }

    FinishPlan(scenario, started, plan);
    return plan;
  }

 private:
  std::string_view name_;
  QueueOrder order_;
  bool backfill_;
  bool preempt_;
};

}  // namespace

std::unique_ptr<Policy> MakeFifoPolicy() {
  return std::make_unique<QueuePolicy>("fifo", QueueOrder::kArrival, /*backfill=*/false,
                                       /*preempt=*/false);
}

std::unique_ptr<Policy> MakeFifoBackfillPolicy() {
  return std::make_unique<QueuePolicy>("fifo-backfill", QueueOrder::kArrival, /*backfill=*/true,
                                       /*preempt=*/false);
}

std::unique_ptr<Policy> MakePriorityBackfillPolicy() {
  return std::make_unique<QueuePolicy>("priority-backfill", QueueOrder::kPriority,
                                       /*backfill=*/true, /*preempt=*/false);
}

std::unique_ptr<Policy> MakePriorityPreemptPolicy() {
  return std::make_unique<QueuePolicy>("priority-preempt", QueueOrder::kPriority,
                                       /*backfill=*/true, /*preempt=*/true);
}

}  // namespace ordo::policy
