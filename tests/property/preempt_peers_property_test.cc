// The two preempting peers (priority-preempt, reactive-preempt; docs/baselines.md) on random
// checkpointed scenarios: every plan passes CheckPlan, the same scenario gives the same plan, the
// metrics are ComputeMetrics of the plan, and each plan equals the plan of a second, naive planner
// written here from the spec's rules on a plain GPU x step grid of owners. Without any checkpoint
// each peer's plan is its base policy's. Every failure names the seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/baselines/floor_guard.h"
#include "ordo/policy/baselines/static_reservation.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo::testing {
namespace {

constexpr uint64_t kInstances = 1000;
constexpr int kFree = -1;
constexpr int kService = -2;

// Who holds each GPU at each step inside the horizon: a job's index, kService or kFree.
class OwnerGrid {
 public:
  OwnerGrid(int gpus, int steps)
      : steps_(steps), owner_(static_cast<size_t>(gpus) * steps, kFree) {}
  int& At(int gpu, int step) { return owner_[static_cast<size_t>(gpu) * steps_ + step]; }
  void Set(int first, int gpus, int from, int to, int who) {
    for (int t = std::max(0, from); t < std::min(steps_, to); ++t) {
      for (int g = first; g < first + gpus; ++g) At(g, t) = who;
    }
  }
  bool Free(int first, int gpus, int from, int to) {
    for (int t = std::max(0, from); t < std::min(steps_, to); ++t) {
      for (int g = first; g < first + gpus; ++g) {
        if (At(g, t) != kFree) return false;
      }
    }
    return true;
  }

 private:
  int steps_;
  std::vector<int> owner_;
};

std::vector<int> Blocks(const Scenario& s, const Job& job) {
  std::vector<int> blocks;
  s.cluster.ForEachBlock(job.shapes.front().gpus, job.requirement,
                         [&](int first) { blocks.push_back(first); });
  return blocks;
}

// One job's stays as the naive planners decide them.
struct NaiveJob {
  std::optional<int> start;
  int first = 0;
  int end = 0;  // of the first stay (exclusive)
  std::optional<int> preempt;
  std::optional<std::pair<int, int>> resume;  // start, first GPU
  int resume_steps = 0;
};

std::vector<NaiveJob> InitialJobs(const Scenario& s) {
  std::vector<NaiveJob> out(s.jobs.size());
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const Job& job = s.jobs[j];
    if (!job.running) continue;
    const RunningPlacement& run = *job.running;
    out[j].start = run.start_step;
    out[j].first = run.first_gpu;
    // The spec: left alone it ends at restart_steps_left + duration - progress_steps.
    out[j].end = run.restart_steps_left.value_or(0) + job.shapes.front().duration_steps -
                 run.progress_steps.value_or(-run.start_step);
  }
  return out;
}

// The spec's preemption at q: work done (a running job first spends its restart steps left from
// step 0), saved = floor(done / c) * c, and the resumed stay = restart + duration - saved.
void Preempt(const Scenario& s, int j, int q, std::vector<NaiveJob>& jobs, OwnerGrid& grid) {
  const Job& job = s.jobs[j];
  NaiveJob& n = jobs[j];
  const int duration = job.shapes.front().duration_steps;
  int done = q - *n.start;
  if (job.running) {
    done = job.running->progress_steps.value_or(-job.running->start_step) +
           std::max(0, q - job.running->restart_steps_left.value_or(0));
  }
  done = std::min(done, duration);
  const int c = job.checkpoint->every_steps;
  const int saved = done / c * c;
  n.preempt = q;
  n.resume_steps = job.checkpoint->restart_steps + duration - saved;
  grid.Set(n.first, job.shapes.front().gpus, q, n.end, kFree);
}

bool PreemptibleAt(const Job& job, const NaiveJob& n, int q) {
  return job.checkpoint && n.start && !n.preempt && q >= 0 && *n.start < q && q < n.end;
}

bool QueueBefore(const Scenario& s, size_t a, size_t b) {
  const Job& x = s.jobs[a];
  const Job& y = s.jobs[b];
  if (x.priority != y.priority) return x.priority > y.priority;
  if (x.arrival_step != y.arrival_step) return x.arrival_step < y.arrival_step;
  return a < b;
}

// priority-preempt from the spec: priority-backfill's queue, where a job (or a requeued one, from
// its preempt step) that has no free block at its arrival takes the lowest block whose busy
// GPU-steps over its run all belong to running checkpointed jobs of strictly lower priority that
// may be preempted then; those are requeued with their saved work, in the same order.
std::vector<NaiveJob> NaivePriorityPreempt(const Scenario& s) {
  const int steps = s.horizon_steps;
  OwnerGrid grid(s.cluster.total_gpus(), steps);
  std::vector<NaiveJob> jobs = InitialJobs(s);
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (s.jobs[j].running) {
      grid.Set(jobs[j].first, s.jobs[j].shapes.front().gpus, jobs[j].start.value(), jobs[j].end,
               static_cast<int>(j));
    }
  }
  const policy::StaticReservation reservation = policy::ComputeStaticReservation(s);
  for (size_t i = 0; i < s.services.size(); ++i) {
    for (int gpu : reservation.reserved[i]) grid.Set(gpu, 1, 0, steps, kService);
    for (int t = 0; t < steps; ++t) {
      for (int gpu : reservation.allocated[i][t]) grid.Set(gpu, 1, t, t + 1, kService);
    }
  }
  std::vector<size_t> order;
  for (size_t j = 0; j < s.jobs.size(); ++j) order.push_back(j);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return QueueBefore(s, a, b); });
  for (size_t j : order) {
    const Job& job = s.jobs[j];
    if (job.running && !jobs[j].preempt) continue;
    const bool resumed = job.running.has_value();
    const int gpus = job.shapes.front().gpus;
    const int arrival = resumed ? *jobs[j].preempt : std::max(0, job.arrival_step);
    const int length = resumed ? jobs[j].resume_steps : job.shapes.front().duration_steps;
    const std::vector<int> blocks = Blocks(s, job);
    std::optional<std::pair<int, int>> at;
    bool free_at_arrival = false;
    for (int first : blocks) free_at_arrival |= grid.Free(first, gpus, arrival, arrival + length);
    if (arrival < steps && !free_at_arrival) {
      for (int first : blocks) {
        std::vector<int> victims;
        bool ok = true;
        for (int g = first; g < first + gpus && ok; ++g) {
          for (int t = arrival; t < std::min(steps, arrival + length) && ok; ++t) {
            const int o = grid.At(g, t);
            if (o == kFree) continue;
            ok = o >= 0 && s.jobs[o].running && s.jobs[o].priority < job.priority &&
                 PreemptibleAt(s.jobs[o], jobs[o], arrival);
            if (ok && std::find(victims.begin(), victims.end(), o) == victims.end()) {
              victims.push_back(o);
            }
          }
        }
        if (!ok) continue;
        for (int o : victims) Preempt(s, o, arrival, jobs, grid);
        at = std::make_pair(arrival, first);
        break;
      }
    }
    for (int t = arrival; t < steps && !at; ++t) {
      for (int first : blocks) {
        if (grid.Free(first, gpus, t, t + length)) {
          at = std::make_pair(t, first);
          break;
        }
      }
    }
    if (!at) continue;
    grid.Set(at->second, gpus, at->first, at->first + length, static_cast<int>(j));
    if (resumed) {
      jobs[j].resume = at;
    } else {
      jobs[j].start = at->first;
      jobs[j].first = at->second;
      jobs[j].end = at->first + length;
    }
  }
  return jobs;
}

// reactive-preempt from the spec, step by step: reactive's services, where a service still short
// after taking the free GPUs preempts, one whole block at a time, the checkpointed job holding GPUs
// of a matching group that may be preempted at t with the lowest priority, then the latest start,
// then file order, and takes again; then the waiting jobs (preempted ones included, resuming for
// their restart steps and unsaved work) start on the lowest block free at t of services and of
// started jobs over their whole run.
std::pair<std::vector<NaiveJob>, std::vector<std::vector<std::vector<int>>>> NaiveReactivePreempt(
    const Scenario& s) {
  const Cluster& cluster = s.cluster;
  const int steps = s.horizon_steps;
  const int services = static_cast<int>(s.services.size());
  const int gpus_total = cluster.total_gpus();
  OwnerGrid grid(gpus_total, steps);  // jobs only; services at step t in `service_at`
  std::vector<NaiveJob> jobs = InitialJobs(s);
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    if (s.jobs[j].running) {
      grid.Set(jobs[j].first, s.jobs[j].shapes.front().gpus, jobs[j].start.value(), jobs[j].end,
               static_cast<int>(j));
    }
  }
  std::vector<int> floor0(static_cast<size_t>(services));
  for (int i = 0; i < services; ++i) floor0[i] = ServiceFloor(s, i)[0];
  std::vector<std::vector<std::vector<int>>> service_gpus(
      static_cast<size_t>(services), std::vector<std::vector<int>>(static_cast<size_t>(steps)));
  for (int t = 0; t < steps; ++t) {
    std::vector<char> service_at(static_cast<size_t>(gpus_total), 0);
    std::vector<int> want(static_cast<size_t>(services));
    std::vector<std::vector<int>> held(static_cast<size_t>(services));
    for (int i = 0; i < services; ++i) {
      const Service& service = s.services[i];
      int w = std::clamp(service.demand[t], service.min_gpus, service.max_gpus);
      std::optional<int> before = service.current_gpus;
      if (t > 0) before = static_cast<int>(service_gpus[i][t - 1].size());
      if (before && service.max_change_per_step) {
        w = std::clamp(w, *before - *service.max_change_per_step,
                       *before + *service.max_change_per_step);
      }
      want[i] = w;
      if (t > 0) {
        const std::vector<int>& last = service_gpus[i][t - 1];
        held[i].assign(last.begin(), last.begin() + std::min<size_t>(last.size(), w));
      }
      for (int gpu : held[i]) service_at[gpu] = 1;
    }
    const auto free_now = [&](int gpu) { return !service_at[gpu] && grid.At(gpu, t) == kFree; };
    for (int i = 0; i < services; ++i) {
      const Service& service = s.services[i];
      const auto take = [&] {
        const int more = want[i] - static_cast<int>(held[i].size());
        if (more <= 0) return;
        std::vector<int> got;
        if (t == 0) {
          // Step 0 keeps later services' floors satisfiable with the library's guard (tested on
          // its own); it changes nothing when no service has a floor.
          std::vector<std::vector<int>> candidates(cluster.groups.size());
          std::vector<int> available(cluster.groups.size(), 0);
          for (size_t g = 0; g < cluster.groups.size(); ++g) {
            const int first = cluster.group_first_gpu(static_cast<int>(g));
            for (int gpu = first + cluster.group_gpus(static_cast<int>(g)) - 1; gpu >= first;
                 --gpu) {
              if (!free_now(gpu)) continue;
              ++available[g];
              if (service.requirement.Matches(cluster.groups[g])) candidates[g].push_back(gpu);
            }
          }
          std::vector<policy::baselines::FloorNeed> later;
          for (int k = i + 1; k < services; ++k) {
            later.push_back({&s.services[k].requirement, floor0[k]});
          }
          got = policy::baselines::TakeGuarded(
              cluster, service.requirement, more,
              std::max(0, floor0[i] - static_cast<int>(held[i].size())), candidates, available,
              later);
        } else {
          for (size_t g = 0; g < cluster.groups.size(); ++g) {
            if (!service.requirement.Matches(cluster.groups[g])) continue;
            const int first = cluster.group_first_gpu(static_cast<int>(g));
            for (int gpu = first + cluster.group_gpus(static_cast<int>(g)) - 1; gpu >= first;
                 --gpu) {
              if (static_cast<int>(got.size()) < more && free_now(gpu)) got.push_back(gpu);
            }
          }
        }
        for (int gpu : got) {
          service_at[gpu] = 1;
          held[i].push_back(gpu);
        }
      };
      take();
      while (static_cast<int>(held[i].size()) < want[i]) {
        int victim = -1;
        for (int j = 0; j < static_cast<int>(s.jobs.size()); ++j) {
          const Job& job = s.jobs[j];
          if (!PreemptibleAt(job, jobs[j], t)) continue;
          if (!service.requirement.Matches(cluster.groups[cluster.group_of(jobs[j].first)])) {
            continue;
          }
          if (victim < 0 || job.priority < s.jobs[victim].priority ||
              (job.priority == s.jobs[victim].priority && *jobs[j].start > *jobs[victim].start)) {
            victim = j;
          }
        }
        if (victim < 0) break;
        Preempt(s, victim, t, jobs, grid);
        take();
      }
      std::sort(held[i].begin(), held[i].end());
      service_gpus[i][t] = held[i];
    }
    std::vector<size_t> order;
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      const Job& job = s.jobs[j];
      const bool waiting = !job.running && !jobs[j].start;
      const bool requeued = jobs[j].preempt && !jobs[j].resume;
      if ((waiting || requeued) && job.arrival_step <= t) order.push_back(j);
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return QueueBefore(s, a, b); });
    for (size_t j : order) {
      const Job& job = s.jobs[j];
      const int gpus = job.shapes.front().gpus;
      const bool resumed = jobs[j].preempt.has_value();
      const int length = resumed ? jobs[j].resume_steps : job.shapes.front().duration_steps;
      for (int first : Blocks(s, job)) {
        bool services_free = true;
        for (int g = first; g < first + gpus; ++g) services_free &= !service_at[g];
        if (!services_free || !grid.Free(first, gpus, t, t + length)) continue;
        grid.Set(first, gpus, t, t + length, static_cast<int>(j));
        if (resumed) {
          jobs[j].resume = std::make_pair(t, first);
        } else {
          jobs[j].start = t;
          jobs[j].first = first;
          jobs[j].end = t + length;
        }
        break;
      }
    }
  }
  return {jobs, service_gpus};
}

void ExpectSameJobs(const Scenario& s, const Plan& plan, const std::vector<NaiveJob>& naive,
                    uint64_t seed) {
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const JobPlacement& p = plan.jobs[j];
    const NaiveJob& n = naive[j];
    const std::string at = "seed " + std::to_string(seed) + ": " + plan.policy + " " + s.jobs[j].id;
    ASSERT_EQ(p.start_step, n.start) << at;
    if (!n.start) continue;
    EXPECT_EQ(p.first_gpu, n.first) << at;
    EXPECT_EQ(p.gpus, s.jobs[j].shapes.front().gpus) << at;
    EXPECT_EQ(p.preempt_step, n.preempt) << at;
    ASSERT_EQ(p.resume.has_value(), n.resume.has_value()) << at;
    if (n.resume) {
      EXPECT_EQ(p.resume->start_step, n.resume->first) << at;
      EXPECT_EQ(p.resume->first_gpu, n.resume->second) << at;
    }
  }
}

bool SamePlan(const Plan& a, const Plan& b) {
  if (a.jobs.size() != b.jobs.size() || a.services.size() != b.services.size()) return false;
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    const JobPlacement& x = a.jobs[j];
    const JobPlacement& y = b.jobs[j];
    if (x.start_step != y.start_step || x.preempt_step != y.preempt_step || x.resume != y.resume) {
      return false;
    }
    if (x.started() && (x.first_gpu != y.first_gpu || x.gpus != y.gpus)) return false;
  }
  for (size_t i = 0; i < a.services.size(); ++i) {
    if (a.services[i].gpus != b.services[i].gpus) return false;
  }
  return true;
}

struct Counts {
  int plans_with_preemption = 0;
  int resumed = 0;
};

void CheckInstance(const Scenario& s, uint64_t seed, Counts& counts) {
  ASSERT_TRUE(ValidateScenario(s).has_value()) << "seed " << seed;
  for (const bool reactive : {false, true}) {
    auto policy =
        reactive ? policy::MakeReactivePreemptPolicy() : policy::MakePriorityPreemptPolicy();
    const Result<Plan> plan = policy->Solve(s, PolicyOptions{});
    ASSERT_TRUE(plan.has_value()) << "seed " << seed << ": " << plan.error().ToString();
    ASSERT_EQ(plan->policy, reactive ? "reactive-preempt" : "priority-preempt");
    ASSERT_EQ(plan->jobs.size(), s.jobs.size());
    ExpectLegal(s, *plan, seed);
    const Metrics m = ComputeMetrics(s, *plan);
    EXPECT_DOUBLE_EQ(plan->metrics.objective, m.objective) << "seed " << seed;
    EXPECT_DOUBLE_EQ(plan->metrics.value, m.value) << "seed " << seed;
    EXPECT_EQ(plan->metrics.preemptions, m.preemptions) << "seed " << seed;
    EXPECT_EQ(plan->metrics.lost_gpu_steps, m.lost_gpu_steps) << "seed " << seed;
    const Result<Plan> again = policy->Solve(s, PolicyOptions{});
    ASSERT_TRUE(again.has_value());
    EXPECT_TRUE(SamePlan(*plan, *again)) << "seed " << seed << ": " << plan->policy;

    if (reactive) {
      const auto [jobs, service_gpus] = NaiveReactivePreempt(s);
      ExpectSameJobs(s, *plan, jobs, seed);
      for (size_t i = 0; i < s.services.size(); ++i) {
        EXPECT_EQ(plan->services[i].gpus, service_gpus[i])
            << "seed " << seed << ": reactive-preempt " << s.services[i].id;
      }
    } else {
      ExpectSameJobs(s, *plan, NaivePriorityPreempt(s), seed);
    }
    if (plan->metrics.preemptions > 0) ++counts.plans_with_preemption;
    for (const JobPlacement& p : plan->jobs) counts.resumed += p.resume.has_value() ? 1 : 0;
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(PreemptPeersProperty, EqualNaivePlannersOnCheckpointedScenarios) {
  RandomScenarioOptions options;
  options.contended = true;
  options.running_fraction = 0.4;
  options.checkpoint_fraction = 0.6;
  Counts counts;
  for (uint64_t seed = 1; seed <= kInstances; ++seed) {
    const Scenario s = RandomScenario(seed + 3'000'000, options);
    CheckInstance(s, seed + 3'000'000, counts);
    if (HasFatalFailure()) return;
  }
  std::printf("%d of %d plans preempt, %d resumed stays\n", counts.plans_with_preemption,
              2 * static_cast<int>(kInstances), counts.resumed);
  // The instances exercise preemption and resumption, so the equalities above are not vacuous.
  EXPECT_GT(counts.plans_with_preemption, static_cast<int>(kInstances) / 10);
  EXPECT_GT(counts.resumed, static_cast<int>(kInstances) / 10);
}

TEST(PreemptPeersProperty, EqualNaivePlannersOnVariedScenarios) {
  RandomScenarioOptions options;
  options.running_fraction = 0.3;
  options.checkpoint_fraction = 0.5;
  Counts counts;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Scenario s = RandomScenario(seed + 4'000'000, options);
    CheckInstance(s, seed + 4'000'000, counts);
    if (HasFatalFailure()) return;
  }
}

// Without checkpoints nothing may be preempted: each peer's plan is its base policy's.
TEST(PreemptPeersProperty, WithoutCheckpointsEqualTheirBasePolicies) {
  RandomScenarioOptions options;
  options.contended = true;
  options.running_fraction = 0.4;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Scenario s = RandomScenario(seed, options);
    const Result<Plan> pp = policy::MakePriorityPreemptPolicy()->Solve(s, PolicyOptions{});
    const Result<Plan> pb = policy::MakePriorityBackfillPolicy()->Solve(s, PolicyOptions{});
    const Result<Plan> rp = policy::MakeReactivePreemptPolicy()->Solve(s, PolicyOptions{});
    const Result<Plan> r = policy::MakeReactivePolicy()->Solve(s, PolicyOptions{});
    ASSERT_TRUE(pp && pb && rp && r) << "seed " << seed;
    EXPECT_TRUE(SamePlan(*pp, *pb)) << "seed " << seed;
    EXPECT_TRUE(SamePlan(*rp, *r)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace ordo::testing
