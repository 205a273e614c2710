// The rolling-horizon simulator (see simulator.h for the algorithm and its guarantees).
#include "ordo/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <span>
#include <string_view>
#include <unordered_map>

#include "ordo/core/check_plan.h"
#include "ordo/core/validate.h"
#include "ordo/forecast/ramp_reserve.h"

namespace ordo::sim {

std::string_view TriggerName(Trigger trigger) {
  switch (trigger) {
    case Trigger::kStart:
      return "start";
    case Trigger::kCadence:
      return "cadence";
    case Trigger::kArrival:
      return "arrival";
    case Trigger::kConflict:
      return "conflict";
    case Trigger::kSurge:
      return "surge";
  }
  return "unknown";
}

namespace {

constexpr int kNoOwner = -1;

Error Internal(int step, const std::string& message) {
  return Error{ErrorCode::kInternal, "", "step " + std::to_string(step) + ": " + message};
}

// The mutable state of one run. Jobs are world indices; `owner` says which job holds each GPU now.
class Run {
 public:
  Run(const World& world, const ResolvedWorld& resolved, Policy& policy, const SimOptions& options)
      : w_(world), r_(resolved), policy_(policy), opt_(options) {}

  Result<SimRun> Go() {
    const int steps = w_.window_steps();
    const int services = static_cast<int>(w_.services.size());
    owner_.assign(w_.cluster.total_gpus(), kNoOwner);
    out_.policy = std::string(policy_.name());
    out_.options = opt_;
    out_.options.progress = nullptr;
    out_.steps = steps;
    out_.service_gpus.assign(services, std::vector<std::vector<int>>(steps));
    out_.service_demand.assign(services, std::vector<int>(steps));
    out_.service_forecast.assign(services, std::vector<int>(steps));
    for (int i = 0; i < services; ++i) {
      std::copy_n(r_.services[i].actual.begin(), steps, out_.service_demand[i].begin());
      std::copy_n(r_.services[i].forecast.begin(), steps, out_.service_forecast[i].begin());
    }
    // Jobs by arrival (ties: world order); only those arriving inside the window exist here.
    outcome_of_.assign(w_.jobs.size(), -1);
    for (int j = 0; j < static_cast<int>(w_.jobs.size()); ++j) {
      if (w_.jobs[j].arrival_step >= steps) continue;
      outcome_of_[j] = static_cast<int>(out_.jobs.size());
      JobOutcome o;
      o.world_index = j;
      out_.jobs.push_back(o);
      by_arrival_.push_back(j);
    }
    std::stable_sort(by_arrival_.begin(), by_arrival_.end(), [&](int a, int b) {
      return w_.jobs[a].arrival_step < w_.jobs[b].arrival_step;
    });
    if (opt_.planning) {
      SetUpTenants();
      ramp_window_steps_ = static_cast<int>(
          std::ceil(opt_.planning->ramp_reserve_hours * 60 / w_.step_minutes - 1e-9));
    }

    for (int s = 0; s < steps; ++s) {
      Retire(s);
      const bool arrived = Arrive(s);
      std::optional<Trigger> trigger = WhyReplan(s, arrived);
      if (trigger) {
        if (auto ok = Replan(s, *trigger); !ok) return Fail(ok.error());
      }
      if (opt_.replan_on_surge && Surges(s)) {
        if (auto ok = Replan(s, Trigger::kSurge); !ok) return Fail(ok.error());
      }
      if (auto ok = Commit(s); !ok) return Fail(ok.error());
      if (opt_.planning) RecordUsage();
      if (opt_.progress) opt_.progress(s + 1, steps);
    }
    return std::move(out_);
  }

 private:
  JobOutcome& Outcome(int j) { return out_.jobs[outcome_of_[j]]; }

  void SetUpTenants() {
    const int total = w_.cluster.total_gpus();
    std::unordered_map<std::string_view, int> index;
    for (size_t t = 0; t < w_.tenants.size(); ++t) {
      index.emplace(w_.tenants[t].id, static_cast<int>(t));
      share_.push_back(w_.tenants[t].ShareFraction(total));
    }
    tenant_of_.assign(w_.jobs.size(), -1);
    for (size_t j = 0; j < w_.jobs.size(); ++j) {
      if (auto it = index.find(w_.jobs[j].tenant); it != index.end()) tenant_of_[j] = it->second;
    }
    ledger_.emplace(static_cast<int>(w_.tenants.size()), opt_.planning->fair_share.half_life_hours);
  }

  // What each tenant held during step s (its running jobs), for the fair-share factor.
  void RecordUsage() {
    std::vector<double> used(w_.tenants.size(), 0);
    for (int j : running_) {
      if (tenant_of_[j] >= 0) used[tenant_of_[j]] += Outcome(j).gpus;
    }
    ledger_->Add(w_.step_minutes / 60.0, used, w_.cluster.total_gpus());
  }

  // `job`: world job j as the planner sees it at step s (base priority, forecast shapes).
  double PlanningPriority(int j, int s, const Job& job) const {
    if (!opt_.planning) return job.priority;
    const double step_hours = w_.step_minutes / 60.0;
    const double waited_hours = std::max(0, s - w_.jobs[j].arrival_step) * step_hours;
    const int t = tenant_of_[j];
    const double fair_share = t < 0
                                  ? 1
                                  : priority::FairShareFactor(ledger_->UsageFraction(t), share_[t],
                                                              opt_.planning->fair_share);
    return priority::JobPlanningPriority(job, waited_hours, fair_share, *opt_.planning, step_hours);
  }

  void Retire(int s) {
    auto ended = [&](int j) { return *Outcome(j).end_step() <= s; };
    for (int j : running_) {
      if (ended(j)) Release(j);
    }
    std::erase_if(running_, ended);
  }

  // Frees the block of running job j's current stay.
  void Release(int j) {
    const JobOutcome& o = Outcome(j);
    const int first = o.stays.back().first_gpu;
    for (int g = first; g < first + o.gpus; ++g) owner_[g] = kNoOwner;
  }

  bool IsRunning(int j) const {
    return std::find(running_.begin(), running_.end(), j) != running_.end();
  }
  bool IsQueued(int j) const {
    return std::find(queued_.begin(), queued_.end(), j) != queued_.end();
  }

  // Running job j gives its block back at step s (a plan's preempt_step): the work since its last
  // save is lost, and it waits again with the saved work.
  void Preempt(int j, int s) {
    JobOutcome& o = Outcome(j);
    Stay& stay = o.stays.back();
    const Checkpoint& checkpoint = *w_.jobs[j].checkpoint;
    stay.work_from = std::min<long long>(stay.work_from, s);  // preempted while restarting
    const int progress = o.saved_steps + static_cast<int>(s - stay.work_from);
    const int saved = checkpoint.SavedProgress(progress);
    stay.to = s;
    stay.kept_to = s - (progress - saved);
    o.saved_steps = saved;
    o.preempted_now = true;
    Release(j);
    std::erase(running_, j);
    queued_.push_back(j);
  }

  bool Arrive(int s) {
    bool any = false;
    while (next_arrival_ < by_arrival_.size() &&
           w_.jobs[by_arrival_[next_arrival_]].arrival_step <= s) {
      queued_.push_back(by_arrival_[next_arrival_++]);
      any = true;
    }
    return any;
  }

  std::optional<Trigger> WhyReplan(int s, bool arrived) {
    if (!plan_) return Trigger::kStart;
    const int j = s - plan_step_;
    if (j >= opt_.replan_every || j >= horizon()) {
      return Trigger::kCadence;
    }
    if (arrived && opt_.replan_on_arrival) return Trigger::kArrival;
    if (Conflicts(j)) return Trigger::kConflict;
    return std::nullopt;
  }

  int horizon() const { return w_.horizon_steps; }

  // True when some service's actual demand at step s exceeds what the current plan gives it there
  // and it may hold more (a service at its max_gpus cannot be helped by a re-plan).
  bool Surges(int s) const {
    const int j = s - plan_step_;
    for (size_t i = 0; i < w_.services.size(); ++i) {
      const int want = std::min(r_.services[i].actual[s], w_.services[i].max_gpus);
      if (static_cast<int>(plan_->services[i].gpus[j].size()) < want) return true;
    }
    return false;
  }

  // The block plan job p starts a stay on at offset j, if any: its first start (unless it was
  // running when the plan was made) or its resume.
  std::optional<int> StayStartingAt(size_t p, int j) const {
    const JobPlacement& jp = plan_->jobs[p];
    if (jp.started() && *jp.start_step == j && !view_running_[p]) return jp.first_gpu;
    if (jp.resume && jp.resume->start_step == j) return jp.resume->first_gpu;
    return std::nullopt;
  }

  // The running world jobs the plan preempts at offset j.
  std::vector<int> PreemptedAt(int j) const {
    std::vector<int> jobs;
    for (size_t p = 0; p < plan_->jobs.size(); ++p) {
      const JobPlacement& jp = plan_->jobs[p];
      if (jp.preempt_step == j && IsRunning(view_jobs_[p])) jobs.push_back(view_jobs_[p]);
    }
    return jobs;
  }

  // True when following the plan at offset j would put a starting stay or a service on a GPU
  // that a job still holds (it outlived its forecast) and the plan does not preempt at j.
  bool Conflicts(int j) const {
    const std::vector<int> leaving = PreemptedAt(j);
    auto busy = [&](int g) {
      return owner_[g] != kNoOwner &&
             std::find(leaving.begin(), leaving.end(), owner_[g]) == leaving.end();
    };
    for (size_t p = 0; p < plan_->jobs.size(); ++p) {
      const std::optional<int> first = StayStartingAt(p, j);
      const int job = view_jobs_[p];
      const bool leaves = std::find(leaving.begin(), leaving.end(), job) != leaving.end();
      if (!first || !(IsQueued(job) || leaves)) continue;
      for (int g = *first; g < *first + plan_->jobs[p].gpus; ++g) {
        if (busy(g)) return true;
      }
    }
    for (const ServiceAllocation& a : plan_->services) {
      for (int g : a.gpus[j]) {
        if (busy(g)) return true;
      }
    }
    return false;
  }

  Result<void> Replan(int s, Trigger trigger) {
    const int horizon_steps = horizon();
    Scenario sc;
    sc.name = w_.name + "@" + std::to_string(s);
    sc.step_minutes = w_.step_minutes;
    sc.horizon_steps = horizon_steps;
    sc.cluster = w_.cluster;
    sc.objective = w_.objective;

    // The jobs in view, in world order (the baselines break ties by file order).
    std::vector<int> view;
    view.insert(view.end(), running_.begin(), running_.end());
    view.insert(view.end(), queued_.begin(), queued_.end());
    if (opt_.arrivals_lookahead) {
      for (size_t k = next_arrival_; k < by_arrival_.size(); ++k) {
        const int j = by_arrival_[k];
        if (w_.jobs[j].arrival_step >= s + horizon_steps) break;
        view.push_back(j);
      }
    }
    std::sort(view.begin(), view.end());
    view_jobs_ = view;
    view_running_.assign(view.size(), false);
    sc.jobs.reserve(view.size());
    for (size_t p = 0; p < view.size(); ++p) {
      const int j = view[p];
      const WorldJob& wj = w_.jobs[j];
      const ResolvedJob& rj = r_.jobs[j];
      Job job;
      job.id = wj.id;
      job.kind = wj.kind;
      job.priority = wj.priority;
      job.arrival_step = wj.arrival_step - s;
      job.requirement = wj.requirement;
      job.checkpoint = wj.checkpoint;
      const JobOutcome& o = Outcome(j);
      if (!o.stays.empty() && !o.preempted_now) {
        // Pinned where it runs. A job that has outlived its forecast is told to end after this
        // step: it keeps its block, and the planner learns more at each re-plan. A resumed job
        // says its progress and the restart steps it has still to spend.
        const Stay& stay = o.stays.back();
        const int progress = o.saved_steps + std::max(0, s - static_cast<int>(stay.work_from));
        job.shapes.push_back(Shape{o.gpus, std::max(o.forecast_steps, progress + 1)});
        job.running = RunningPlacement{static_cast<int>(stay.from) - s, stay.first_gpu};
        if (o.stays.size() > 1) {
          job.running->progress_steps = progress;
          const int restart_left = std::max(0, static_cast<int>(stay.work_from) - s);
          if (restart_left > 0) job.running->restart_steps_left = restart_left;
        }
        view_running_[p] = true;
      } else if (o.preempted_now) {
        // Waiting to resume, on a block of the size it had: its forecast work not yet saved, plus
        // the restart (a waiting job has no field for either, so its duration carries both).
        const int work = std::max(o.forecast_steps, o.saved_steps + 1);
        job.shapes.push_back(Shape{o.gpus, wj.checkpoint->ResumedStaySteps(work, o.saved_steps)});
        job.priority = PlanningPriority(j, s, job);
      } else {
        for (const ResolvedShape& rs : rj.shapes) {
          job.shapes.push_back(Shape{rs.gpus, rs.forecast_steps});
        }
        job.priority = PlanningPriority(j, s, job);
      }
      sc.jobs.push_back(std::move(job));
    }
    if (opt_.planning && !w_.tenants.empty()) {
      std::vector<int> tenant_of(view.size());
      for (size_t p = 0; p < view.size(); ++p) tenant_of[p] = tenant_of_[view[p]];
      priority::ApplyShareGuarantee(sc, tenant_of, share_, opt_.planning->borrowing_factor);
    }
    for (size_t i = 0; i < w_.services.size(); ++i) {
      const WorldService& ws = w_.services[i];
      Service svc = ws.ToService(std::vector<int>(horizon_steps, 0));
      if (s > 0) svc.current_gpus = static_cast<int>(out_.service_gpus[i][s - 1].size());
      for (int t = 0; t < horizon_steps; ++t)
        svc.demand[t] = r_.services[i].PlannerForecast(s, s + t);
      if (trigger == Trigger::kSurge) svc.demand[0] = r_.services[i].actual[s];
      if (ramp_window_steps_ > 0 && svc.max_change_per_step) {
        // The rises observed up to the step before this one (this step's, on a surge, is in
        // demand[0] already).
        const int from = std::max(0, s - ramp_window_steps_ - 1);
        const auto seen = std::span<const int>(r_.services[i].actual)
                              .subspan(static_cast<size_t>(from), static_cast<size_t>(s - from));
        forecast::AddRampReserve(svc, forecast::RampReserve(seen, *svc.max_change_per_step));
      }
      sc.services.push_back(std::move(svc));
    }
    if (auto ok = ValidateScenario(sc); !ok) {
      return Fail(
          Internal(s, "the planner's view is not a valid scenario: " + ok.error().ToString()));
    }

    PolicyOptions po;
    po.time_limit_s = opt_.time_limit_s;
    po.seed = opt_.seed;
    po.lend_idle_gpus = opt_.lend_idle_gpus;
    const auto started = std::chrono::steady_clock::now();
    Result<Plan> plan = policy_.Solve(sc, po);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    if (!plan) {
      Error e = plan.error();
      e.message = "step " + std::to_string(s) + ": policy " + std::string(policy_.name()) +
                  " failed: " + e.message;
      return Fail(std::move(e));
    }
    if (opt_.check_plans) {
      const std::vector<Violation> violations = CheckPlan(sc, *plan);
      if (!violations.empty()) {
        return Fail(Internal(s, "policy " + std::string(policy_.name()) +
                                    " made an illegal plan: " + FormatViolation(violations[0])));
      }
    }
    // Plans list jobs and services in scenario order (Policy's contract); check it, as the
    // commit below relies on it.
    if (plan->jobs.size() != sc.jobs.size() || plan->services.size() != sc.services.size()) {
      return Fail(Internal(s, "the plan does not list the scenario's jobs and services"));
    }
    for (size_t p = 0; p < sc.jobs.size(); ++p) {
      if (plan->jobs[p].id != sc.jobs[p].id) {
        return Fail(Internal(s, "the plan's jobs are not in scenario order"));
      }
    }
    for (size_t i = 0; i < sc.services.size(); ++i) {
      if (plan->services[i].id != sc.services[i].id ||
          plan->services[i].gpus.size() != static_cast<size_t>(horizon_steps)) {
        return Fail(Internal(s, "the plan's services are not in scenario order"));
      }
    }
    plan_ = std::move(*plan);
    plan_step_ = s;
    Decision d;
    d.step = s;
    d.trigger = trigger;
    d.plan_ms = ms;
    d.jobs_queued = static_cast<int>(queued_.size());
    d.jobs_running = static_cast<int>(running_.size());
    out_.decisions.push_back(d);
    return {};
  }

  // World job wj (waiting) starts a stay at step s on the block at `first_gpu`: its first, in the
  // plan's shape, or a resume, which first spends the checkpoint's restart steps.
  Result<void> StartStay(int wj, const JobPlacement& jp, int first_gpu, int s) {
    JobOutcome& o = Outcome(wj);
    if (o.stays.empty()) {
      const ResolvedJob& rj = r_.jobs[wj];
      int shape = -1;
      for (size_t k = 0; k < rj.shapes.size() && shape < 0; ++k) {
        if (rj.shapes[k].gpus == jp.gpus && rj.shapes[k].forecast_steps == jp.duration_steps) {
          shape = static_cast<int>(k);
        }
      }
      if (shape < 0) return Fail(Internal(s, "job " + jp.id + " starts with an unknown shape"));
      o.shape = shape;
      o.gpus = jp.gpus;
      o.actual_steps = rj.shapes[shape].actual_steps;
      o.forecast_steps = rj.shapes[shape].forecast_steps;
    } else if (jp.gpus != o.gpus) {
      return Fail(Internal(s, "job " + jp.id + " resumes on " + std::to_string(jp.gpus) +
                                  " GPUs, not its " + std::to_string(o.gpus)));
    }
    for (int g = first_gpu; g < first_gpu + o.gpus; ++g) {
      if (owner_[g] != kNoOwner) {
        return Fail(Internal(s, "job " + jp.id + " starts on GPU " + std::to_string(g) +
                                    ", which a running job holds"));
      }
      owner_[g] = wj;
    }
    const int restart = o.stays.empty() ? 0 : w_.jobs[wj].checkpoint->restart_steps;
    Stay stay;
    stay.first_gpu = first_gpu;
    stay.from = s;
    stay.work_from = s + restart;
    stay.to = stay.kept_to = stay.work_from + o.actual_steps - o.saved_steps;
    o.stays.push_back(stay);
    o.preempted_now = false;
    running_.push_back(wj);
    std::erase(queued_, wj);
    return {};
  }

  Result<void> Commit(int s) {
    const int j = s - plan_step_;
    // Preemptions first: a job may move to a block another leaves at the same step (migration).
    for (int wj : PreemptedAt(j)) {
      if (!w_.jobs[wj].checkpoint) {
        return Fail(
            Internal(s, "the plan preempts job " + w_.jobs[wj].id + ", which has no checkpoint"));
      }
      Preempt(wj, s);
    }
    int started = 0;
    for (size_t p = 0; p < plan_->jobs.size(); ++p) {
      const std::optional<int> first = StayStartingAt(p, j);
      if (!first) continue;
      const JobPlacement& jp = plan_->jobs[p];
      const int wj = view_jobs_[p];
      if (!IsQueued(wj)) {
        // The job ran shorter than its forecast and ended before the plan's preemption: there is
        // nothing left to resume.
        if (jp.resume && jp.resume->start_step == j && Outcome(wj).end_step()) continue;
        return Fail(Internal(s, "the plan starts job " + jp.id + " twice or before it arrives"));
      }
      if (auto ok = StartStay(wj, jp, *first, s); !ok) return Fail(ok.error());
      ++started;
    }
    for (size_t i = 0; i < plan_->services.size(); ++i) {
      const std::vector<int>& ids = plan_->services[i].gpus[j];
      for (int g : ids) {
        if (owner_[g] != kNoOwner) {
          return Fail(Internal(s, "service " + plan_->services[i].id + " is given GPU " +
                                      std::to_string(g) + ", which a running job holds"));
        }
      }
      out_.service_gpus[i][s] = ids;
    }
    if (plan_step_ == s) out_.decisions.back().jobs_started = started;
    return {};
  }

  const World& w_;
  const ResolvedWorld& r_;
  Policy& policy_;
  const SimOptions& opt_;
  SimRun out_;
  std::vector<int> outcome_of_;  // world job -> index in out_.jobs, -1 outside the window
  std::vector<int> by_arrival_;
  size_t next_arrival_ = 0;
  std::vector<int> queued_;   // arrived, not started (arrival order)
  std::vector<int> running_;  // started, not ended
  std::vector<int> owner_;    // GPU -> world job holding it now, or kNoOwner
  std::optional<Plan> plan_;
  int plan_step_ = 0;
  std::vector<int> view_jobs_;      // plan job index -> world job
  std::vector<bool> view_running_;  // plan job index -> pinned (running) in that plan
  // Planning priorities (only with opt_.planning).
  std::vector<int> tenant_of_;  // world job -> tenant index, -1 without a tenant
  std::vector<double> share_;   // tenant -> share as a fraction of the cluster
  std::optional<priority::UsageLedger> ledger_;
  int ramp_window_steps_ = 0;  // the planning options' ramp reserve in steps; 0: none
};

}  // namespace

Result<SimRun> Simulate(const ResolvedWorld& resolved, Policy& policy, const SimOptions& options) {
  if (options.replan_every < 1) {
    return FailInput("replan_every",
                     "must be at least 1 step (got " + std::to_string(options.replan_every) + ")");
  }
  if (!(options.time_limit_s >= 0)) return FailInput("time_limit_s", "must be >= 0");
  if (options.planning) {
    if (auto ok = priority::ValidatePlanningOptions(*options.planning); !ok) {
      return Fail(ok.error());
    }
  }
  Run run(*resolved.world, resolved, policy, options);
  return run.Go();
}

Result<SimRun> Simulate(const World& world, Policy& policy, const SimOptions& options) {
  auto resolved = ResolveWorld(world);
  if (!resolved) return Fail(resolved.error());
  return Simulate(*resolved, policy, options);
}

CommittedTimeline BuildCommittedTimeline(const World& world, const SimRun& run) {
  CommittedTimeline t;
  Scenario& sc = t.scenario;
  sc.name = world.name + " (committed, " + run.policy + ")";
  sc.step_minutes = world.step_minutes;
  sc.horizon_steps = run.steps;
  sc.cluster = world.cluster;
  sc.objective = world.objective;
  Plan& plan = t.plan;
  plan.scenario = sc.name;
  plan.policy = run.policy;
  std::vector<std::pair<Job, JobPlacement>> later_stays;
  for (const JobOutcome& o : run.jobs) {
    const WorldJob& wj = world.jobs[o.world_index];
    Job job;
    job.id = wj.id;
    job.kind = wj.kind;
    job.priority = wj.priority;
    job.arrival_step = wj.arrival_step;
    job.requirement = wj.requirement;
    job.checkpoint = wj.checkpoint;
    for (const WorldShape& ws : wj.shapes) job.shapes.push_back(Shape{ws.gpus, ws.duration_steps});
    JobPlacement jp;
    jp.id = wj.id;
    if (!o.stays.empty()) {
      const Stay& first = o.stays.front();
      jp.start_step = static_cast<int>(first.from);
      jp.first_gpu = first.first_gpu;
      jp.gpus = o.gpus;
      jp.duration_steps = o.actual_steps;
      if (o.preemptions() > 0) jp.preempt_step = static_cast<int>(first.to);
      // One preemption and a resume that finishes is the spec's own preempt/resume, so CheckPlan
      // re-derives the resumed stay's length from the checkpoint. A plan holds no more than that:
      // each later stay of a job preempted again is written as a job of its own, its block held
      // from its start for its length, which CheckPlan checks against every other holder.
      if (o.stays.size() == 2 && !o.preempted_now) {
        jp.resume = ResumePlacement{static_cast<int>(o.stays[1].from), o.stays[1].first_gpu};
      } else {
        for (size_t k = 1; k < o.stays.size(); ++k) {
          const Stay& stay = o.stays[k];
          Job piece;
          piece.id = wj.id + " (stay " + std::to_string(k + 1) + ")";
          piece.kind = wj.kind;
          piece.priority = wj.priority;
          piece.arrival_step = static_cast<int>(stay.from);
          piece.requirement = wj.requirement;
          const int steps = static_cast<int>(stay.to - stay.from);
          piece.shapes.push_back(Shape{o.gpus, steps});
          JobPlacement held;
          held.id = piece.id;
          held.start_step = piece.arrival_step;
          held.first_gpu = stay.first_gpu;
          held.gpus = o.gpus;
          held.duration_steps = steps;
          later_stays.emplace_back(std::move(piece), std::move(held));
        }
      }
    }
    sc.jobs.push_back(std::move(job));
    plan.jobs.push_back(std::move(jp));
  }
  for (auto& [job, placement] : later_stays) {
    sc.jobs.push_back(std::move(job));
    plan.jobs.push_back(std::move(placement));
  }
  for (size_t i = 0; i < world.services.size(); ++i) {
    const WorldService& ws = world.services[i];
    sc.services.push_back(ws.ToService(run.service_demand[i]));
    plan.services.push_back(ServiceAllocation{ws.id, run.service_gpus[i]});
  }
  return t;
}

}  // namespace ordo::sim
