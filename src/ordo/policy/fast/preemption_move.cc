#include "ordo/policy/fast/preemption_move.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/policy/baselines/preemption.h"
#include "ordo/policy/fast/service_curves.h"

namespace ordo::policy {
namespace {

constexpr int kRounds = 4;
constexpr int kMaxWaiting = 16;
constexpr int kMaxCandidates = 256;  // evaluations per round
constexpr int kMaxRefill = 64;       // unstarted jobs a candidate tries to start
constexpr int kFree = -1;
constexpr int kService = -2;
constexpr int kMaxServiceVictims = 16;  // running jobs tried for a service's peak

// Who holds each GPU at each step inside the horizon: a job index, kService or kFree.
class Owners {
 public:
  Owners(const Scenario& s, const Plan& plan)
      : steps_(s.horizon_steps),
        owner_(static_cast<size_t>(s.cluster.total_gpus()) * steps_, kFree) {
    for (size_t j = 0; j < s.jobs.size(); ++j) {
      const JobPlacement& p = plan.jobs[j];
      if (!p.started()) continue;
      const JobStays stays = StaysOf(s.jobs[j], p);
      for (int k = 0; k < stays.count; ++k) {
        Set(stays.stays[k].first_gpu, p.gpus, stays.stays[k].from, stays.stays[k].to,
            static_cast<int>(j));
      }
    }
    for (const ServiceAllocation& a : plan.services) {
      for (int t = 0; t < steps_ && t < static_cast<int>(a.gpus.size()); ++t) {
        for (int gpu : a.gpus[t]) At(gpu, t) = kService;
      }
    }
  }
  int& At(int gpu, int t) { return owner_[static_cast<size_t>(gpu) * steps_ + t]; }
  void Set(int first, int gpus, long long from, long long to, int who) {
    const int lo = static_cast<int>(std::clamp<long long>(from, 0, steps_));
    const int hi = static_cast<int>(std::clamp<long long>(to, 0, steps_));
    for (int g = first; g < first + gpus; ++g) {
      std::fill_n(owner_.begin() + static_cast<long>(static_cast<size_t>(g) * steps_ + lo),
                  std::max(0, hi - lo), who);
    }
  }
  // Every cell of the block over [from, to) inside the horizon is free or held by `a` or `b`.
  bool FreeBut(int first, int gpus, int from, int to, int a, int b) {
    const int hi = std::min(steps_, to);
    for (int g = first; g < first + gpus; ++g) {
      for (int t = std::max(0, from); t < hi; ++t) {
        const int o = At(g, t);
        if (o != kFree && o != a && o != b) return false;
      }
    }
    return true;
  }

 private:
  int steps_;
  std::vector<int> owner_;
};

std::vector<int> Blocks(const Scenario& s, int gpus, const GpuRequirement& req) {
  std::vector<int> out;
  s.cluster.ForEachBlock(gpus, req, [&](int first) { out.push_back(first); });
  return out;
}

// The earliest start in [from, T) and the lowest block where `gpus` x `length` fits.
std::optional<std::pair<int, int>> Earliest(const Scenario& s, Owners& owners,
                                            const std::vector<int>& blocks, int gpus, int length,
                                            int from) {
  for (int t = std::max(0, from); t < s.horizon_steps; ++t) {
    for (int first : blocks) {
      if (owners.FreeBut(first, gpus, t, t + length, kFree, kFree)) return std::make_pair(t, first);
    }
  }
  return std::nullopt;
}

// Whether running job r, preempted at step q, loses no work: its progress then is a multiple of
// its checkpoint interval (restart steps still left count as no progress).
bool NoWorkLostAt(const Job& r, int q) {
  const int left = r.running->restart_steps_left.value_or(0);
  return (r.running_progress_steps() + std::max(0, q - left)) % r.checkpoint->every_steps == 0;
}

// The first step from `from` at which running job r loses no work (NoWorkLostAt), before its end
// and inside the horizon; `from` itself when none is found sooner.
int NextCheckpoint(const Scenario& s, const Job& r, int from, int end) {
  const int c = r.checkpoint->every_steps;
  const int left = r.running->restart_steps_left.value_or(0);
  for (int q = from; q < std::min({end, s.horizon_steps, from + c + left + 1}); ++q) {
    if (NoWorkLostAt(r, q)) return q;
  }
  return from;
}

struct Move {
  int waiting = 0;
  int shape = 0;
  int block = 0;
  int victim = 0;
  int step = 0;
};

// The plan after `move`, when its block is free but for the victim and the waiting job.
std::optional<Plan> Apply(const Scenario& s, const Plan& plan, const Owners& base,
                          const std::vector<int>& refill_order, const Move& move) {
  const Job& w = s.jobs[move.waiting];
  const Job& r = s.jobs[move.victim];
  const Shape& shape = w.shapes[move.shape];
  Owners owners = base;
  if (!owners.FreeBut(move.block, shape.gpus, move.step, move.step + shape.duration_steps,
                      move.victim, move.waiting)) {
    return std::nullopt;
  }
  Plan out = plan;
  JobPlacement& rp = out.jobs[move.victim];
  JobPlacement& wp = out.jobs[move.waiting];
  const int resume_steps = baselines::ResumeSteps(r, rp, move.step);
  owners.Set(rp.first_gpu, rp.gpus, move.step, baselines::FirstStayEnd(r, rp), kFree);
  if (wp.started()) owners.Set(wp.first_gpu, wp.gpus, *wp.start_step, wp.end_step(), kFree);
  rp.preempt_step = move.step;
  wp.start_step = move.step;
  wp.first_gpu = move.block;
  wp.gpus = shape.gpus;
  wp.duration_steps = shape.duration_steps;
  owners.Set(move.block, shape.gpus, move.step, move.step + shape.duration_steps, move.waiting);
  const std::vector<int> r_blocks = Blocks(s, rp.gpus, r.requirement);
  if (auto at = Earliest(s, owners, r_blocks, rp.gpus, resume_steps, move.step)) {
    rp.resume = ResumePlacement{at->first, at->second};
    owners.Set(at->second, rp.gpus, at->first, at->first + resume_steps, move.victim);
  }
  // What the moves freed (the waiting job's old run, the victim's unused block) goes to the jobs
  // still unstarted: only kept work is added, so the objective can only rise.
  for (int j : refill_order) {
    JobPlacement& p = out.jobs[j];
    if (p.started()) continue;
    const Job& job = s.jobs[j];
    std::optional<std::pair<int, int>> best;
    size_t best_shape = 0;
    for (size_t k = 0; k < job.shapes.size(); ++k) {
      const Shape& sh = job.shapes[k];
      const auto at = Earliest(s, owners, Blocks(s, sh.gpus, job.requirement), sh.gpus,
                               sh.duration_steps, job.arrival_step);
      if (at && (!best || at->first < best->first)) {
        best = at;
        best_shape = k;
      }
    }
    if (!best) continue;
    const Shape& sh = job.shapes[best_shape];
    p.start_step = best->first;
    p.first_gpu = best->second;
    p.gpus = sh.gpus;
    p.duration_steps = sh.duration_steps;
    owners.Set(best->second, sh.gpus, best->first, best->first + sh.duration_steps, j);
  }
  return out;
}

// The plan with running job `r` preempted at `q` to give its GPUs to the services: the services
// re-planned as curves (services first) on what the jobs leave, then r resumed on the earliest,
// lowest block of its size that the jobs and the services' counts leave free for its resumed
// stay (none inside the horizon: not resumed). Empty when the services' floors do not fit.
std::optional<Plan> ApplyForServices(const Scenario& s, const Plan& plan, int r, int q) {
  const int total = s.cluster.total_gpus();
  const int steps = s.horizon_steps;
  Plan out = plan;
  JobPlacement& rp = out.jobs[r];
  const int resume_steps = baselines::ResumeSteps(s.jobs[r], rp, q);
  rp.preempt_step = q;
  rp.resume.reset();
  std::vector<char> job_busy(static_cast<size_t>(total) * steps, 0);
  std::vector<std::vector<int>> free(s.cluster.groups.size());
  for (size_t g = 0; g < free.size(); ++g) {
    free[g].assign(steps, s.cluster.group_gpus(static_cast<int>(g)));
  }
  auto occupy = [&](int first, int gpus, long long from, long long to) {
    const int g = s.cluster.group_of(first);
    for (long long t = std::max(0LL, from); t < std::min<long long>(steps, to); ++t) {
      std::fill_n(job_busy.begin() + static_cast<long>(t * total + first), gpus, 1);
      free[g][t] -= gpus;
    }
  };
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    const JobPlacement& p = out.jobs[j];
    if (!p.started()) continue;
    const JobStays stays = StaysOf(s.jobs[j], p);
    for (int k = 0; k < stays.count; ++k) {
      occupy(stays.stays[k].first_gpu, p.gpus, stays.stays[k].from, stays.stays[k].to);
    }
  }
  bool complete = true;
  const ServiceCounts counts = PlanServiceCounts(s, free, {}, &complete);
  if (!complete) return std::nullopt;
  // What the services leave in each group at each step, for r's resumed stay.
  std::vector<std::vector<int>> slack = free;
  for (const auto& service : counts) {
    for (size_t g = 0; g < slack.size(); ++g) {
      for (int t = 0; t < steps; ++t) slack[g][t] -= service[g][t];
    }
  }
  const std::vector<int> blocks = Blocks(s, rp.gpus, s.jobs[r].requirement);
  for (int t = q + 1; t < steps && !rp.resume; ++t) {
    for (int first : blocks) {
      const int g = s.cluster.group_of(first);
      bool fits = true;
      for (int u = t; u < std::min(steps, t + resume_steps) && fits; ++u) {
        const auto at = job_busy.begin() + (static_cast<long>(u) * total + first);
        fits =
            slack[g][u] >= rp.gpus && std::none_of(at, at + rp.gpus, [](char b) { return b != 0; });
      }
      if (fits) {
        rp.resume = ResumePlacement{t, first};
        occupy(first, rp.gpus, t, t + resume_steps);
        break;
      }
    }
  }
  AssignServiceGpus(s, counts, job_busy, out);
  return out;
}

}  // namespace

bool AnyPreemptibleRunningJob(const Scenario& s) {
  return std::any_of(s.jobs.begin(), s.jobs.end(),
                     [](const Job& job) { return job.running && job.checkpoint; });
}

std::optional<Plan> PreemptWherePays(const Scenario& s, const Plan& plan, const Promises& promises,
                                     const std::function<bool()>& out_of_time) {
  if (!AnyPreemptibleRunningJob(s)) return std::nullopt;
  const int steps = s.horizon_steps;
  const int jobs = static_cast<int>(s.jobs.size());
  std::vector<int> by_priority(static_cast<size_t>(jobs));
  std::iota(by_priority.begin(), by_priority.end(), 0);
  std::stable_sort(by_priority.begin(), by_priority.end(), [&](int a, int b) {
    if (s.jobs[a].priority != s.jobs[b].priority) return s.jobs[a].priority > s.jobs[b].priority;
    return s.jobs[a].arrival_step < s.jobs[b].arrival_step;
  });

  Plan best = plan;
  double best_objective = ComputeObjective(s, plan);
  bool improved = false;
  for (int round = 0; round < kRounds && !out_of_time(); ++round) {
    const Owners owners(s, best);
    std::vector<int> waiting, refill_order;
    for (int j : by_priority) {
      const Job& job = s.jobs[j];
      const JobPlacement& p = best.jobs[j];
      if (job.running || job.arrival_step >= steps || p.preempt_step) continue;
      if (!p.started()) {
        if (static_cast<int>(refill_order.size()) < kMaxRefill) refill_order.push_back(j);
      }
      if ((!p.started() || *p.start_step > std::max(0, job.arrival_step)) &&
          static_cast<int>(waiting.size()) < kMaxWaiting) {
        waiting.push_back(j);
      }
    }
    std::optional<Plan> round_best;
    double round_objective = best_objective;
    int evaluated = 0;
    // First the victims, of a lower priority class than the waiting job; then, as migrations,
    // the other checkpointed jobs, kept only when they resume at once on another block.
    for (int pass = 0; pass < 2; ++pass) {
      const bool migrations = pass == 1;
      for (int w : waiting) {
        const Job& wj = s.jobs[w];
        const JobPlacement& wp = best.jobs[w];
        for (int r = 0; r < jobs && evaluated < kMaxCandidates; ++r) {
          const Job& rj = s.jobs[r];
          const JobPlacement& rp = best.jobs[r];
          // A preemption only across priority classes (core/scenario.h): within one, the
          // objective's preference for the higher priority's earlier start is smaller than what
          // the rolling future loses to the work thrown away and the reshuffled queue
          // (docs/fast-mode.md, step 8).
          const bool victim = PriorityClass(rj.priority) < PriorityClass(wj.priority);
          if (!rj.running || !rj.checkpoint || rp.preempt_step || victim == migrations) {
            continue;
          }
          const int end = baselines::FirstStayEnd(rj, rp);
          const int q0 = std::max({0, wj.arrival_step, *rp.start_step + 1});
          if (q0 >= std::min(end, steps)) continue;
          const int q1 = NextCheckpoint(s, rj, q0, end);
          for (size_t k = 0; k < wj.shapes.size(); ++k) {
            const int gpus = wj.shapes[k].gpus;
            for (int block : Blocks(s, gpus, wj.requirement)) {
              // Aligned blocks nest: B overlaps R's block when one contains the other.
              if (block + gpus <= rp.first_gpu || rp.first_gpu + rp.gpus <= block) continue;
              const int steps_to_try[2] = {q0, q1};
              for (int qi = 0; qi < (q1 == q0 ? 1 : 2); ++qi) {
                const int q = steps_to_try[qi];
                if (wp.started() && *wp.start_step <= q) continue;  // no earlier start
                if (out_of_time() || evaluated >= kMaxCandidates) break;
                std::optional<Plan> candidate =
                    Apply(s, best, owners, refill_order, Move{w, static_cast<int>(k), block, r, q});
                if (!candidate) continue;
                ++evaluated;
                const std::optional<ResumePlacement>& resumed = candidate->jobs[r].resume;
                if (migrations && !(resumed && resumed->start_step == q)) continue;
                const Metrics m = ComputeMetrics(s, *candidate);
                if (m.objective > round_objective + 1e-9 && KeepsPromises(m, promises)) {
                  round_objective = m.objective;
                  round_best = std::move(*candidate);
                }
              }
            }
          }
        }
      }
    }
    if (!round_best || !CheckPlan(s, *round_best).empty()) break;
    best = std::move(*round_best);
    best_objective = round_objective;
    improved = true;
  }
  if (!improved) return std::nullopt;
  const double solve_ms = best.metrics.solve_ms;
  best.metrics = ComputeMetrics(s, best);
  best.metrics.solve_ms = solve_ms;
  return best;
}

std::optional<Plan> PreemptForServices(const Scenario& s, const Plan& plan,
                                       const Promises& promises,
                                       const std::function<bool()>& out_of_time) {
  if (!AnyPreemptibleRunningJob(s) || s.services.empty()) return std::nullopt;
  // The first step a service's demand goes unmet.
  int peak = -1;
  for (int t = 0; t < s.horizon_steps && peak < 0; ++t) {
    for (size_t i = 0; i < s.services.size(); ++i) {
      if (static_cast<int>(plan.services[i].gpus[t].size()) < s.services[i].demand[t]) peak = t;
    }
  }
  if (peak < 0) return std::nullopt;
  // Victims: running checkpointed jobs that hold their block at the peak, lowest priority first.
  std::vector<int> victims;
  for (size_t r = 0; r < s.jobs.size(); ++r) {
    const Job& job = s.jobs[r];
    const JobPlacement& p = plan.jobs[r];
    if (job.running && job.checkpoint && !p.preempt_step && p.started() &&
        baselines::FirstStayEnd(job, p) > peak) {
      victims.push_back(static_cast<int>(r));
    }
  }
  std::stable_sort(victims.begin(), victims.end(),
                   [&](int a, int b) { return s.jobs[a].priority < s.jobs[b].priority; });
  if (victims.size() > static_cast<size_t>(kMaxServiceVictims)) victims.resize(kMaxServiceVictims);
  std::optional<Plan> best;
  double best_objective = ComputeObjective(s, plan);
  for (int r : victims) {
    if (out_of_time()) break;
    const Job& rj = s.jobs[r];
    const JobPlacement& rp = plan.jobs[r];
    // At the peak itself, and at the last step before it where no work is lost.
    int saved = peak;
    const int back = rj.checkpoint->every_steps + rj.running->restart_steps_left.value_or(0);
    for (int q = peak; q >= std::max({0, *rp.start_step + 1, peak - back}); --q) {
      if (NoWorkLostAt(rj, q)) {
        saved = q;
        break;
      }
    }
    for (int q : {peak, saved}) {
      if (q > peak || !baselines::CanPreemptAt(rj, rp, q)) continue;
      std::optional<Plan> candidate = ApplyForServices(s, plan, r, q);
      if (!candidate) continue;
      const Metrics m = ComputeMetrics(s, *candidate);
      if (m.objective > best_objective + 1e-9 && KeepsPromises(m, promises) &&
          CheckPlan(s, *candidate).empty()) {
        best_objective = m.objective;
        best = std::move(*candidate);
      }
    }
  }
  if (!best) return std::nullopt;
  const double solve_ms = best->metrics.solve_ms;
  best->metrics = ComputeMetrics(s, *best);
  best->metrics.solve_ms = solve_ms;
  return best;
}

}  // namespace ordo::policy
