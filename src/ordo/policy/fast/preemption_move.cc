#include "ordo/policy/fast/preemption_move.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/policy/baselines/preemption.h"
#include "ordo/policy/fast/preemption_common.h"
#include "ordo/policy/fast/service_curves.h"
#include "ordo/policy/fast/service_gpu_ids.h"

namespace ordo::policy {
namespace {

using fast::Blocks;
using fast::NoWorkLostAt;

constexpr int kRounds = 4;
constexpr int kMaxWaiting = 16;
constexpr int kMaxCandidates = 256;  // evaluations per round
constexpr int kMaxRefill = 64;       // unstarted jobs a candidate tries to start
constexpr int kFree = -1;
constexpr int kService = -2;

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

}  // namespace

namespace {

// The jobs one round of PreemptWherePays works for, highest priority first: the waiting jobs that
// start later than they arrive (or not at all), and the unstarted ones a move tries to start in
// what the victim leaves.
struct RoundJobs {
  std::vector<int> waiting, refill_order;
};

RoundJobs JobsOfRound(const Scenario& s, const Plan& best, const std::vector<int>& by_priority) {
  RoundJobs out;
  for (int j : by_priority) {
    const Job& job = s.jobs[j];
    const JobPlacement& p = best.jobs[j];
    if (job.running || job.arrival_step >= s.horizon_steps || p.preempt_step) continue;
    if (!p.started()) {
      if (static_cast<int>(out.refill_order.size()) < kMaxRefill) out.refill_order.push_back(j);
    }
    if ((!p.started() || *p.start_step > std::max(0, job.arrival_step)) &&
        static_cast<int>(out.waiting.size()) < kMaxWaiting) {
      out.waiting.push_back(j);
    }
  }
  return out;
}

// One round's search: the best move from `best` that raises the objective and keeps the promises,
// among at most kMaxCandidates evaluated.
class PreemptionRound {
 public:
  PreemptionRound(const Scenario& s, const Plan& best, const RoundJobs& jobs,
                  const Promises& promises, const std::function<bool()>& out_of_time,
                  double objective)
      : s_(s),
        best_(best),
        owners_(s, best),
        jobs_(jobs),
        promises_(promises),
        out_of_time_(out_of_time),
        objective_(objective) {}

  [[nodiscard]] bool Exhausted() const { return evaluated_ >= kMaxCandidates; }

  // Running job r preempted for waiting job w, on every block of w's shapes that overlaps r's, at
  // the first step it may and at r's next checkpoint. A victim must be of a lower priority class
  // than w; with `migrations`, r is any other checkpointed job and the move is kept only when r
  // resumes at once on another block.
  void TryVictim(int w, int r, bool migrations) {
    const Job& wj = s_.jobs[w];
    const JobPlacement& wp = best_.jobs[w];
    const Job& rj = s_.jobs[r];
    const JobPlacement& rp = best_.jobs[r];
    // A preemption only across priority classes (core/scenario.h): within one, the objective's
    // preference for the higher priority's earlier start is smaller than what the rolling future
    // loses to the work thrown away and the reshuffled queue (docs/fast-mode.md, step 8).
    // A job that borrows beyond its tenant's share is also a victim of one that does not (Kueue's
    // reclaim of lent capacity), but only for a shape at least as wide as its block: a narrower
    // one would leave the rest of the block to fragments while the victim waits for a whole one.
    const bool outranked =
        PriorityClass(rj.unscaled_priority()) < PriorityClass(wj.unscaled_priority());
    const bool reclaimed = !outranked && rj.borrowing() && !wj.borrowing();
    const bool victim = outranked || reclaimed;
    if (!rj.running || !rj.checkpoint || rp.preempt_step || victim == migrations) return;
    const int end = baselines::FirstStayEnd(rj, rp);
    const int q0 = std::max({0, wj.arrival_step, *rp.start_step + 1});
    if (q0 >= std::min(end, s_.horizon_steps)) return;
    const int q1 = NextCheckpoint(s_, rj, q0, end);
    for (size_t k = 0; k < wj.shapes.size(); ++k) {
      const int gpus = wj.shapes[k].gpus;
      if (reclaimed && !migrations && gpus < rp.gpus) continue;
      for (int block : Blocks(s_, gpus, wj.requirement)) {
        // Aligned blocks nest: B overlaps R's block when one contains the other.
        if (block + gpus <= rp.first_gpu || rp.first_gpu + rp.gpus <= block) continue;
        const int steps_to_try[2] = {q0, q1};
        for (int qi = 0; qi < (q1 == q0 ? 1 : 2); ++qi) {
          const int q = steps_to_try[qi];
          if (wp.started() && *wp.start_step <= q) continue;  // no earlier start
          if (out_of_time_() || Exhausted()) break;
          Evaluate(Move{w, static_cast<int>(k), block, r, q}, migrations);
        }
      }
    }
  }

  // The best move's plan so far, and its objective (the plan's own while there is none).
  [[nodiscard]] std::optional<Plan>& round_best() { return round_best_; }
  [[nodiscard]] double objective() const { return objective_; }

 private:
  void Evaluate(const Move& move, bool migrations) {
    std::optional<Plan> candidate = Apply(s_, best_, owners_, jobs_.refill_order, move);
    if (!candidate) return;
    ++evaluated_;
    const std::optional<ResumePlacement>& resumed = candidate->jobs[move.victim].resume;
    if (migrations && !(resumed && resumed->start_step == move.step)) return;
    const Metrics m = ComputeMetrics(s_, *candidate);
    if (m.objective > objective_ + 1e-9 && KeepsPromises(m, promises_)) {
      objective_ = m.objective;
      round_best_ = std::move(*candidate);
    }
  }

  const Scenario& s_;
  const Plan& best_;
  const Owners owners_;
  const RoundJobs& jobs_;
  const Promises& promises_;
  const std::function<bool()>& out_of_time_;
  double objective_;  // the best objective so far: the plan's, then the round's best move's
  std::optional<Plan> round_best_;
  int evaluated_ = 0;
};

}  // namespace

bool AnyPreemptibleRunningJob(const Scenario& s) {
  return std::any_of(s.jobs.begin(), s.jobs.end(),
                     [](const Job& job) { return job.running && job.checkpoint; });
}

std::optional<Plan> PreemptWherePays(const Scenario& s, const Plan& plan, const Promises& promises,
                                     const std::function<bool()>& out_of_time) {
  if (!AnyPreemptibleRunningJob(s)) return std::nullopt;
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
    const RoundJobs round_jobs = JobsOfRound(s, best, by_priority);
    PreemptionRound search(s, best, round_jobs, promises, out_of_time, best_objective);
    // First the victims, of a lower priority class than the waiting job; then, as migrations,
    // the other checkpointed jobs, kept only when they resume at once on another block.
    for (int pass = 0; pass < 2; ++pass) {
      for (int w : round_jobs.waiting) {
        for (int r = 0; r < jobs && !search.Exhausted(); ++r) search.TryVictim(w, r, pass == 1);
      }
    }
    if (!search.round_best() || !CheckPlan(s, *search.round_best()).empty()) break;
    best = std::move(*search.round_best());
    best_objective = search.objective();
    improved = true;
  }
  if (!improved) return std::nullopt;
  const double solve_ms = best.metrics.solve_ms;
  best.metrics = ComputeMetrics(s, best);
  best.metrics.solve_ms = solve_ms;
  return best;
}

}  // namespace ordo::policy
