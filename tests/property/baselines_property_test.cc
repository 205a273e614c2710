// The four baselines on random scenarios of varied shape (tests/support/random_scenario.h):
// every plan passes CheckPlan, the same scenario gives the same plan, the metrics are
// ComputeMetrics of the plan, and each plan follows its spec rule step by step — checked by a
// naive replay written from the spec (a plain GPU x step grid), not by the policies' own code.
// Every failure names the seed; RandomScenario(seed) rebuilds the instance.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/baselines/static_reservation.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo::testing {
namespace {

constexpr uint64_t kVariedInstances = 1000;
constexpr uint64_t kContendedInstances = 300;

// A plain occupancy grid: who holds GPU g at step t (inside the horizon).
class NaiveGrid {
 public:
  NaiveGrid(int gpus, int steps) : steps_(steps), busy_(static_cast<size_t>(gpus) * steps, 0) {}
  void Mark(int first, int gpus, int from, int to) {
    for (int t = std::max(0, from); t < std::min(steps_, to); ++t) {
      for (int g = first; g < first + gpus; ++g) busy_[Index(g, t)] = 1;
    }
  }
  bool Free(int first, int gpus, int from, int to) const {
    for (int t = std::max(0, from); t < std::min(steps_, to); ++t) {
      for (int g = first; g < first + gpus; ++g) {
        if (busy_[Index(g, t)]) return false;
      }
    }
    return true;
  }

 private:
  size_t Index(int gpu, int step) const { return static_cast<size_t>(gpu) * steps_ + step; }
  int steps_;
  std::vector<char> busy_;
};

std::vector<int> Blocks(const Scenario& s, const Job& job) {
  std::vector<int> blocks;
  s.cluster.ForEachBlock(job.shapes.front().gpus, job.requirement,
                         [&](int first) { blocks.push_back(first); });
  return blocks;
}

// The spec: a running job left alone ends at restart_steps_left + duration - progress_steps, with
// progress_steps -start_step and restart_steps_left 0 by default.
int NaiveRunningEnd(const Job& job) {
  const RunningPlacement& run = *job.running;
  return run.restart_steps_left.value_or(0) + job.shapes.front().duration_steps -
         run.progress_steps.value_or(-run.start_step);
}

// Where a placed job's stay ends: a running job's from the scenario, any other's from the plan.
int NaiveEnd(const Job& job, const JobPlacement& placed) {
  return job.running ? NaiveRunningEnd(job) : placed.end_step();
}

void MarkRunning(const Scenario& s, NaiveGrid& grid) {
  for (const Job& job : s.jobs) {
    if (job.running) {
      grid.Mark(job.running->first_gpu, job.shapes.front().gpus, job.running->start_step,
                NaiveRunningEnd(job));
    }
  }
}

bool SamePlan(const Plan& a, const Plan& b) {
  if (a.jobs.size() != b.jobs.size() || a.services.size() != b.services.size()) return false;
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    const JobPlacement& x = a.jobs[j];
    const JobPlacement& y = b.jobs[j];
    if (x.id != y.id || x.start_step != y.start_step) return false;
    if (x.started() &&
        (x.first_gpu != y.first_gpu || x.gpus != y.gpus || x.duration_steps != y.duration_steps)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.services.size(); ++i) {
    if (a.services[i].id != b.services[i].id || a.services[i].gpus != b.services[i].gpus) {
      return false;
    }
  }
  return true;
}

void ExpectMetricsFromPlan(const Scenario& s, const Plan& plan, uint64_t seed) {
  const Metrics m = ComputeMetrics(s, plan);
  const Metrics& p = plan.metrics;
  EXPECT_DOUBLE_EQ(p.utilization, m.utilization) << "seed " << seed << " " << plan.policy;
  EXPECT_DOUBLE_EQ(p.allocated_utilization, m.allocated_utilization) << "seed " << seed;
  EXPECT_DOUBLE_EQ(p.value, m.value) << "seed " << seed << " " << plan.policy;
  EXPECT_DOUBLE_EQ(p.batch_value, m.batch_value) << "seed " << seed << " " << plan.policy;
  EXPECT_DOUBLE_EQ(p.objective, m.objective) << "seed " << seed << " " << plan.policy;
  EXPECT_EQ(p.realtime_unmet_gpu_steps, m.realtime_unmet_gpu_steps) << "seed " << seed;
  EXPECT_EQ(p.jobs_started, m.jobs_started) << "seed " << seed << " " << plan.policy;
  EXPECT_EQ(p.jobs_completed, m.jobs_completed) << "seed " << seed << " " << plan.policy;
  EXPECT_EQ(p.preemptions, m.preemptions) << "seed " << seed << " " << plan.policy;
  EXPECT_EQ(p.lost_gpu_steps, m.lost_gpu_steps) << "seed " << seed << " " << plan.policy;
  EXPECT_GE(p.solve_ms, 0) << "seed " << seed;
}

// The static reservation against the spec's paragraph: reserved GPUs avoid running blocks and
// each other; inside a group a service gets the highest GPUs still available at its turn; the
// count per step follows the ramp from current_gpus towards the reservation (never below the
// floor); the reserved ids allocated are the highest of the reservation. Without floors (every
// min_gpus 0, no forced ramp down) the reservation is exactly min(clamped peak, available).
void CheckReservation(const Scenario& s, const policy::StaticReservation& r, const Plan& plan,
                      uint64_t seed) {
  const Cluster& cluster = s.cluster;
  const int gpus = cluster.total_gpus();
  std::vector<char> unavailable(static_cast<size_t>(gpus), 0);
  for (const Job& job : s.jobs) {
    if (job.running) {
      for (int g = 0; g < job.shapes.front().gpus; ++g) unavailable[job.running->first_gpu + g] = 1;
    }
  }
  bool any_floor = false;
  for (int i = 0; i < static_cast<int>(s.services.size()); ++i) {
    any_floor |= ServiceFloor(s, i)[0] > 0;
  }
  for (size_t i = 0; i < s.services.size(); ++i) {
    const Service& service = s.services[i];
    const std::vector<int>& reserved = r.reserved[i];
    std::vector<std::vector<int>> per_group(cluster.groups.size());
    for (int gpu : reserved) {
      ASSERT_FALSE(unavailable[gpu]) << "seed " << seed << ": " << service.id << " reserves " << gpu
                                     << ", running or reserved before";
      ASSERT_TRUE(service.requirement.Matches(cluster.groups[cluster.group_of(gpu)]))
          << "seed " << seed;
      per_group[cluster.group_of(gpu)].push_back(gpu);
    }
    int available_total = 0;
    for (size_t g = 0; g < cluster.groups.size(); ++g) {
      if (!service.requirement.Matches(cluster.groups[g])) continue;
      std::vector<int> free_ids;  // highest first
      const int first = cluster.group_first_gpu(static_cast<int>(g));
      for (int gpu = first + cluster.group_gpus(static_cast<int>(g)) - 1; gpu >= first; --gpu) {
        if (!unavailable[gpu]) free_ids.push_back(gpu);
      }
      available_total += static_cast<int>(free_ids.size());
      std::vector<int> taken = per_group[g];
      std::sort(taken.begin(), taken.end(), std::greater<>());
      const std::vector<int> highest(free_ids.begin(), free_ids.begin() + taken.size());
      EXPECT_EQ(taken, highest) << "seed " << seed << ": " << service.id << " in group " << g;
    }
    const int peak = *std::max_element(service.demand.begin(), service.demand.end());
    const int target = std::clamp(peak, service.min_gpus, service.max_gpus);
    EXPECT_LE(static_cast<int>(reserved.size()), target) << "seed " << seed;
    if (!any_floor) {
      EXPECT_EQ(static_cast<int>(reserved.size()), std::min(target, available_total))
          << "seed " << seed << ": " << service.id;
    }
    for (int gpu : reserved) unavailable[gpu] = 1;

    // Counts and ids per step.
    const std::vector<int> floor = ServiceFloor(s, static_cast<int>(i));
    std::vector<int> by_id = reserved;
    std::sort(by_id.begin(), by_id.end(), std::greater<>());
    const int size = static_cast<int>(reserved.size());
    long long ramp = service.current_gpus.value_or(size);
    for (int t = 0; t < s.horizon_steps; ++t) {
      if (service.current_gpus && service.max_change_per_step) {
        const int limit = *service.max_change_per_step;
        ramp = ramp < size ? std::min<long long>(size, ramp + limit)
                           : std::max<long long>(size, ramp - limit);
      } else {
        ramp = size;
      }
      const int count = std::max(static_cast<int>(ramp), floor[t]);
      const std::vector<int>& held = plan.services[i].gpus[t];
      ASSERT_EQ(static_cast<int>(held.size()), count)
          << "seed " << seed << ": " << service.id << " at step " << t;
      std::vector<int> held_reserved;
      for (int gpu : held) {
        if (std::find(by_id.begin(), by_id.end(), gpu) != by_id.end()) held_reserved.push_back(gpu);
      }
      std::sort(held_reserved.begin(), held_reserved.end(), std::greater<>());
      const std::vector<int> expected(by_id.begin(), by_id.begin() + std::min(size, count));
      EXPECT_EQ(held_reserved, expected) << "seed " << seed << ": " << service.id << " step " << t;
    }
  }
}

// fifo / fifo-backfill / priority-backfill, replayed from the spec on a naive grid: each job in
// queue order takes the earliest start (>= arrival; >= the previous start for fifo) with a block
// free for its whole duration, the lowest such block; fifo stops at the first job that cannot
// start. This is conservative backfill's invariant: every start is the earliest feasible given
// the jobs before it.
void CheckQueueReplay(const Scenario& s, const Plan& plan, bool by_priority, bool backfill,
                      uint64_t seed) {
  const int steps = s.horizon_steps;
  NaiveGrid grid(s.cluster.total_gpus(), steps);
  MarkRunning(s, grid);
  const policy::StaticReservation reservation = policy::ComputeStaticReservation(s);
  CheckReservation(s, reservation, plan, seed);
  for (size_t i = 0; i < s.services.size(); ++i) {
    for (int gpu : reservation.reserved[i]) grid.Mark(gpu, 1, 0, steps);
    for (int t = 0; t < steps; ++t) {
      for (int gpu : plan.services[i].gpus[t]) grid.Mark(gpu, 1, t, t + 1);
    }
  }
  std::vector<size_t> order;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (!s.jobs[j].running) order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Job& x = s.jobs[a];
    const Job& y = s.jobs[b];
    if (by_priority && x.priority != y.priority) return x.priority > y.priority;
    return x.arrival_step < y.arrival_step;
  });
  int previous = 0;
  bool blocked = false;
  for (size_t j : order) {
    const Job& job = s.jobs[j];
    const JobPlacement& placed = plan.jobs[j];
    if (blocked) {
      EXPECT_FALSE(placed.started()) << "seed " << seed << ": " << plan.policy << " starts "
                                     << job.id << " behind a job that cannot start";
      continue;
    }
    const Shape& shape = job.shapes.front();
    const int earliest = std::max({0, job.arrival_step, backfill ? 0 : previous});
    std::optional<std::pair<int, int>> expected;
    const std::vector<int> blocks = Blocks(s, job);
    for (int t = earliest; t < steps && !expected; ++t) {
      for (int first : blocks) {
        if (grid.Free(first, shape.gpus, t, t + shape.duration_steps)) {
          expected = std::make_pair(t, first);
          break;
        }
      }
    }
    if (!expected) {
      EXPECT_FALSE(placed.started()) << "seed " << seed << ": " << plan.policy << " " << job.id;
      blocked = !backfill;
      continue;
    }
    ASSERT_TRUE(placed.started()) << "seed " << seed << ": " << plan.policy << " leaves " << job.id
                                  << " unstarted; it fits at step " << expected->first;
    EXPECT_EQ(std::make_pair(*placed.start_step, placed.first_gpu), *expected)
        << "seed " << seed << ": " << plan.policy << " " << job.id;
    EXPECT_EQ(placed.gpus, shape.gpus) << "seed " << seed;
    EXPECT_EQ(placed.duration_steps, shape.duration_steps) << "seed " << seed;
    grid.Mark(expected->second, shape.gpus, expected->first,
              expected->first + shape.duration_steps);
    previous = expected->first;
  }
}

// reactive, replayed step by step from its four rules, given the plan's own earlier steps.
void CheckReactiveReplay(const Scenario& s, const Plan& plan, uint64_t seed) {
  const Cluster& cluster = s.cluster;
  const int gpus = cluster.total_gpus();
  const int steps = s.horizon_steps;
  const int services = static_cast<int>(s.services.size());
  bool floors_free = true;  // the step-0 floor guard is a no-op
  for (int i = 0; i < services; ++i) floors_free &= ServiceFloor(s, i)[0] == 0;

  std::vector<size_t> order;
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (!s.jobs[j].running) order.push_back(j);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Job& x = s.jobs[a];
    const Job& y = s.jobs[b];
    if (x.priority != y.priority) return x.priority > y.priority;
    return x.arrival_step < y.arrival_step;
  });

  for (int t = 0; t < steps; ++t) {
    // Jobs holding GPUs at t that started before t (running ones included, even from step 0).
    std::vector<char> job_held(static_cast<size_t>(gpus), 0);
    for (size_t j = 0; j < plan.jobs.size(); ++j) {
      const JobPlacement& p = plan.jobs[j];
      const bool before = p.started() && (s.jobs[j].running || *p.start_step < t);
      if (before && NaiveEnd(s.jobs[j], p) > t) {
        for (int g = p.first_gpu; g < p.first_gpu + p.gpus; ++g) job_held[g] = 1;
      }
    }
    // 1-3: services.
    std::vector<char> held_now = job_held;
    std::vector<std::vector<int>> kept(static_cast<size_t>(services));
    std::vector<int> want(static_cast<size_t>(services));
    for (int i = 0; i < services; ++i) {
      const Service& service = s.services[i];
      const std::vector<int> before = t > 0 ? plan.services[i].gpus[t - 1] : std::vector<int>{};
      int w = std::clamp(service.demand[t], service.min_gpus, service.max_gpus);
      std::optional<int> reference = service.current_gpus;
      if (t > 0) reference = static_cast<int>(before.size());
      if (reference && service.max_change_per_step) {
        w = std::clamp(w, *reference - *service.max_change_per_step,
                       *reference + *service.max_change_per_step);
      }
      want[i] = w;
      kept[i].assign(before.begin(), before.begin() + std::min<size_t>(before.size(), w));
      const std::vector<int>& now = plan.services[i].gpus[t];
      for (int gpu : kept[i]) {
        EXPECT_TRUE(std::binary_search(now.begin(), now.end(), gpu))
            << "seed " << seed << ": reactive " << service.id << " drops GPU " << gpu
            << " it should keep at step " << t;
        held_now[gpu] = 1;
      }
      EXPECT_LE(static_cast<int>(now.size()), w) << "seed " << seed << " " << service.id;
    }
    if (t > 0 || floors_free) {
      for (int i = 0; i < services; ++i) {
        const Service& service = s.services[i];
        const int more = want[i] - static_cast<int>(kept[i].size());
        std::vector<int> expected = kept[i];
        for (size_t g = 0; g < cluster.groups.size() && more > 0; ++g) {
          if (!service.requirement.Matches(cluster.groups[g])) continue;
          const int first = cluster.group_first_gpu(static_cast<int>(g));
          for (int gpu = first + cluster.group_gpus(static_cast<int>(g)) - 1; gpu >= first; --gpu) {
            if (static_cast<int>(expected.size()) == want[i]) break;
            if (!held_now[gpu]) expected.push_back(gpu);
          }
        }
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(plan.services[i].gpus[t], expected)
            << "seed " << seed << ": reactive " << service.id << " at step " << t;
        for (int gpu : expected) held_now[gpu] = 1;
      }
    }
    // 4: jobs, against a literal reading: free at t of services, and not held by an already
    // started job at any step of the duration.
    NaiveGrid started(gpus, steps);
    for (size_t j = 0; j < plan.jobs.size(); ++j) {
      const JobPlacement& p = plan.jobs[j];
      if (p.started() && (s.jobs[j].running || *p.start_step < t)) {
        started.Mark(p.first_gpu, p.gpus, *p.start_step, NaiveEnd(s.jobs[j], p));
      }
    }
    NaiveGrid services_now(gpus, steps);
    for (int i = 0; i < services; ++i) {
      for (int gpu : plan.services[i].gpus[t]) services_now.Mark(gpu, 1, t, t + 1);
    }
    for (size_t j : order) {
      const Job& job = s.jobs[j];
      const JobPlacement& placed = plan.jobs[j];
      if (job.arrival_step > t || (placed.started() && *placed.start_step < t)) continue;
      const Shape& shape = job.shapes.front();
      std::optional<int> expected;
      for (int first : Blocks(s, job)) {
        if (services_now.Free(first, shape.gpus, t, t + 1) &&
            started.Free(first, shape.gpus, t, t + shape.duration_steps)) {
          expected = first;
          break;
        }
      }
      if (!expected) {
        EXPECT_FALSE(placed.started() && *placed.start_step == t)
            << "seed " << seed << ": reactive starts " << job.id << " at " << t;
        continue;
      }
      ASSERT_TRUE(placed.started() && *placed.start_step == t)
          << "seed " << seed << ": reactive does not start " << job.id << " at step " << t
          << " although block " << *expected << " is free";
      EXPECT_EQ(placed.first_gpu, *expected) << "seed " << seed << ": reactive " << job.id;
      EXPECT_EQ(placed.gpus, shape.gpus);
      started.Mark(*expected, shape.gpus, t, t + shape.duration_steps);
    }
  }
}

struct Baseline {
  const char* name;
  std::function<std::unique_ptr<Policy>()> make;
};

const std::vector<Baseline>& Baselines() {
  static const std::vector<Baseline> kBaselines = {
      {"fifo", policy::MakeFifoPolicy},
      {"fifo-backfill", policy::MakeFifoBackfillPolicy},
      {"priority-backfill", policy::MakePriorityBackfillPolicy},
      {"reactive", policy::MakeReactivePolicy}};
  return kBaselines;
}

void CheckInstance(const Scenario& s, uint64_t seed) {
  ASSERT_TRUE(ValidateScenario(s).has_value()) << "seed " << seed;
  for (const Baseline& baseline : Baselines()) {
    auto policy = baseline.make();
    PolicyOptions options;
    options.seed = seed;
    const Result<Plan> plan = policy->Solve(s, options);
    ASSERT_TRUE(plan.has_value()) << "seed " << seed << ": " << baseline.name << ": "
                                  << plan.error().ToString();
    ASSERT_EQ(plan->policy, baseline.name);
    ASSERT_EQ(plan->jobs.size(), s.jobs.size());
    ASSERT_EQ(plan->services.size(), s.services.size());
    for (size_t j = 0; j < s.jobs.size(); ++j) ASSERT_EQ(plan->jobs[j].id, s.jobs[j].id);
    ExpectLegal(s, *plan, seed);
    ExpectMetricsFromPlan(s, *plan, seed);

    // The same scenario gives the same plan, from a fresh instance and from the same one.
    options.seed = seed + 1;  // baselines are not randomised: the seed must not matter
    const Result<Plan> again = baseline.make()->Solve(s, options);
    const Result<Plan> reused = policy->Solve(s, options);
    ASSERT_TRUE(again.has_value() && reused.has_value());
    EXPECT_TRUE(SamePlan(*plan, *again)) << "seed " << seed << ": " << baseline.name;
    EXPECT_TRUE(SamePlan(*plan, *reused)) << "seed " << seed << ": " << baseline.name;

    const std::string name = baseline.name;
    if (name == "reactive") {
      CheckReactiveReplay(s, *plan, seed);
    } else {
      CheckQueueReplay(s, *plan, name == "priority-backfill", name != "fifo", seed);
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(BaselinesProperty, VariedRandomScenarios) {
  for (uint64_t seed = 1; seed <= kVariedInstances; ++seed) {
    const Scenario s = RandomScenario(seed);
    CheckInstance(s, seed);
    if (HasFatalFailure()) return;
  }
}

TEST(BaselinesProperty, ContendedRandomScenarios) {
  RandomScenarioOptions options;
  options.contended = true;
  for (uint64_t seed = 1; seed <= kContendedInstances; ++seed) {
    const Scenario s = RandomScenario(seed, options);
    CheckInstance(s, seed);
    if (HasFatalFailure()) return;
  }
}

// Checkpointed jobs, and running jobs with progress and restart steps left: the baselines
// (which never preempt) pin each running job exactly until its true end.
TEST(BaselinesProperty, CheckpointedRandomScenarios) {
  RandomScenarioOptions options;
  options.contended = true;
  options.running_fraction = 0.4;
  options.checkpoint_fraction = 0.5;
  for (uint64_t seed = 1; seed <= kContendedInstances; ++seed) {
    const Scenario s = RandomScenario(seed + 2'000'000, options);
    CheckInstance(s, seed + 2'000'000);
    if (HasFatalFailure()) return;
  }
}

// Services with floors, churn and current_gpus on small clusters crowded by running jobs: where
// the literal reservation or step-0 growth would starve a later service (docs/baselines.md).
TEST(BaselinesProperty, FloorHeavyScenarios) {
  RandomScenarioOptions options;
  options.max_nodes = 4;
  options.max_services = 6;
  options.running_fraction = 0.5;
  options.requirement_fraction = 0.5;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Scenario s = RandomScenario(seed + 1'000'000, options);
    CheckInstance(s, seed + 1'000'000);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace ordo::testing
