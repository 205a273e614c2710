// The rolling-horizon simulator (see simulator.h for the algorithm and its guarantees).
#include "ordo/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "ordo/core/check_plan.h"
#include "ordo/core/validate.h"

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
    if (opt_.planning) SetUpTenants();

    for (int s = 0; s < steps; ++s) {
      Retire(s);
      const bool arrived = Arrive(s);
      std::optional<Trigger> trigger = WhyReplan(s, arrived);
      if (trigger) {
        if (auto ok = Replan(s, *trigger); !ok) return Fail(ok.error());
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
    auto ended = [&](int j) {
      const JobOutcome& o = Outcome(j);
      return *o.start_step + o.actual_steps <= s;
    };
    for (int j : running_) {
      if (!ended(j)) continue;
      const JobOutcome& o = Outcome(j);
      for (int g = o.first_gpu; g < o.first_gpu + o.gpus; ++g) owner_[g] = kNoOwner;
    }
    std::erase_if(running_, ended);
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

  // True when following the plan at offset j would put a starting job or a service on a GPU that
  // a job still holds (it outlived its forecast).
  bool Conflicts(int j) const {
    for (size_t p = 0; p < plan_->jobs.size(); ++p) {
      const JobPlacement& jp = plan_->jobs[p];
      if (!jp.started() || *jp.start_step != j || view_running_[p]) continue;
      for (int g = jp.first_gpu; g < jp.first_gpu + jp.gpus; ++g) {
        if (owner_[g] != kNoOwner) return true;
      }
    }
    for (const ServiceAllocation& a : plan_->services) {
      for (int g : a.gpus[j]) {
        if (owner_[g] != kNoOwner) return true;
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
      const JobOutcome& o = Outcome(j);
      if (o.start_step) {
        // Pinned where it runs. A job that has outlived its forecast is told to end after this
        // step: it keeps its block, and the planner learns more at each re-plan.
        const int elapsed = s - *o.start_step;
        job.shapes.push_back(Shape{o.gpus, std::max(o.forecast_steps, elapsed + 1)});
        job.running = RunningPlacement{*o.start_step - s, o.first_gpu};
        view_running_[p] = true;
      } else {
        for (const ResolvedShape& rs : rj.shapes) {
          job.shapes.push_back(Shape{rs.gpus, rs.forecast_steps});
        }
        job.priority = PlanningPriority(j, s, job);
      }
      sc.jobs.push_back(std::move(job));
    }
    for (size_t i = 0; i < w_.services.size(); ++i) {
      const WorldService& ws = w_.services[i];
      Service svc = ws.ToService(std::vector<int>(horizon_steps, 0));
      if (s > 0) svc.current_gpus = static_cast<int>(out_.service_gpus[i][s - 1].size());
      for (int t = 0; t < horizon_steps; ++t)
        svc.demand[t] = r_.services[i].PlannerForecast(s, s + t);
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

  Result<void> Commit(int s) {
    const int j = s - plan_step_;
    int started = 0;
    for (size_t p = 0; p < plan_->jobs.size(); ++p) {
      const JobPlacement& jp = plan_->jobs[p];
      if (!jp.started() || *jp.start_step != j || view_running_[p]) continue;
      const int wj = view_jobs_[p];
      JobOutcome& o = Outcome(wj);
      if (o.start_step || w_.jobs[wj].arrival_step > s) {
        return Fail(Internal(s, "the plan starts job " + jp.id + " twice or before it arrives"));
      }
      const ResolvedJob& rj = r_.jobs[wj];
      int shape = -1;
      for (size_t k = 0; k < rj.shapes.size() && shape < 0; ++k) {
        if (rj.shapes[k].gpus == jp.gpus && rj.shapes[k].forecast_steps == jp.duration_steps) {
          shape = static_cast<int>(k);
        }
      }
      if (shape < 0) return Fail(Internal(s, "job " + jp.id + " starts with an unknown shape"));
      for (int g = jp.first_gpu; g < jp.first_gpu + jp.gpus; ++g) {
        if (owner_[g] != kNoOwner) {
          return Fail(Internal(s, "job " + jp.id + " starts on GPU " + std::to_string(g) +
                                      ", which a running job holds"));
        }
        owner_[g] = wj;
      }
      o.start_step = s;
      o.first_gpu = jp.first_gpu;
      o.shape = shape;
      o.gpus = jp.gpus;
      o.actual_steps = rj.shapes[shape].actual_steps;
      o.forecast_steps = rj.shapes[shape].forecast_steps;
      running_.push_back(wj);
      std::erase(queued_, wj);
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
  for (const JobOutcome& o : run.jobs) {
    const WorldJob& wj = world.jobs[o.world_index];
    Job job;
    job.id = wj.id;
    job.kind = wj.kind;
    job.priority = wj.priority;
    job.arrival_step = wj.arrival_step;
    job.requirement = wj.requirement;
    for (const WorldShape& ws : wj.shapes) job.shapes.push_back(Shape{ws.gpus, ws.duration_steps});
    sc.jobs.push_back(std::move(job));
    JobPlacement jp;
    jp.id = wj.id;
    if (o.start_step) {
      jp.start_step = o.start_step;
      jp.first_gpu = o.first_gpu;
      jp.gpus = o.gpus;
      jp.duration_steps = o.actual_steps;
    }
    plan.jobs.push_back(std::move(jp));
  }
  for (size_t i = 0; i < world.services.size(); ++i) {
    const WorldService& ws = world.services[i];
    sc.services.push_back(ws.ToService(run.service_demand[i]));
    plan.services.push_back(ServiceAllocation{ws.id, run.service_gpus[i]});
  }
  return t;
}

}  // namespace ordo::sim
