// PreemptForServices (preemption_move.h): a running checkpointed job gives its GPUs back for a
// service's peak.
#include <algorithm>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/policy/baselines/preemption.h"
#include "ordo/policy/fast/preemption_common.h"
#include "ordo/policy/fast/preemption_move.h"
#include "ordo/policy/fast/service_curves.h"
#include "ordo/policy/fast/service_gpu_ids.h"

namespace ordo::policy {
namespace {

using fast::Blocks;
using fast::LostWorkSteps;
using fast::NoWorkLostAt;

constexpr int kMaxServiceVictims = 16;  // running jobs tried for a service's peak

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

std::optional<Plan> PreemptForServices(const Scenario& s, const Plan& plan,
                                       const Promises& promises,
                                       const std::function<bool()>& out_of_time) {
  if (!AnyPreemptibleRunningJob(s) || s.services.empty()) return std::nullopt;
  // Judged on the forecast: a ramp reserve is headroom the service may not need, and a job is not
  // preempted for it (it keeps the reserve's GPUs where the plan already gives them). The first
  // step a service's forecast demand goes unmet:
  int peak = -1;
  for (int t = 0; t < s.horizon_steps && peak < 0; ++t) {
    for (size_t i = 0; i < s.services.size(); ++i) {
      if (static_cast<int>(plan.services[i].gpus[t].size()) < s.services[i].forecast_demand(t)) {
        peak = t;
      }
    }
  }
  if (peak < 0) return std::nullopt;
  // The objective is judged on the forecast too, and a service's unmet GPU is weighed against
  // jobs at their unscaled priorities: the share guarantee orders batch work among tenants, it
  // does not make borrowed work cheaper than a service's demand.
  const bool any_borrowing =
      std::any_of(s.jobs.begin(), s.jobs.end(), [](const Job& job) { return job.borrowing(); });
  const bool any_reserve = std::any_of(s.services.begin(), s.services.end(),
                                       [](const Service& svc) { return !svc.reserve.empty(); });
  const bool rejudged = any_borrowing || any_reserve;
  Scenario forecast_only;
  if (rejudged) {
    forecast_only = s;
    for (Job& job : forecast_only.jobs) {
      job.priority = job.unscaled_priority();
      job.borrowing_factor = 1;
    }
    for (Service& svc : forecast_only.services) {
      for (int t = 0; t < s.horizon_steps; ++t) svc.demand[t] = svc.forecast_demand(t);
      svc.reserve.clear();
    }
  }
  const Scenario& judged = rejudged ? forecast_only : s;
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
                   [&](int a, int b) { return judged.jobs[a].priority < judged.jobs[b].priority; });
  if (victims.size() > static_cast<size_t>(kMaxServiceVictims)) victims.resize(kMaxServiceVictims);
  // A candidate's score is the judged objective less the work its preemption throws away, at the
  // victim's priority x GPUs x steps lost: the objective sees that work only as the resumed
  // stay's extra steps, which for a long job fall past the horizon and cost nothing there, while
  // the shortfall it serves is a forecast the traffic may not bear out. Measured in
  // docs/simulator.md ("Preemption").
  std::optional<Plan> best;
  double best_score = ComputeObjective(judged, plan);
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
      const double objective = rejudged ? ComputeObjective(judged, *candidate) : m.objective;
      const double score = objective - judged.jobs[r].priority * rp.gpus * LostWorkSteps(rj, q);
      if (score > best_score + 1e-9 && KeepsPromises(m, promises) &&
          CheckPlan(s, *candidate).empty()) {
        best_score = score;
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
