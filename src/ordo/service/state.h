// The service's world as plain data: jobs with their life cycle, services with their demand, the
// clock, and the steps already committed. Pure functions turn it into a planning Scenario and
// commit one step of a plan into it; the Engine (engine.h) owns the threads, the store and the
// HTTP-facing API around it.
//
// Time: absolute steps count from the step the service first started (0). `next_step` is the step
// the next commit decides; the current step (the one being executed) is next_step - 1. A plan made
// at next_step N has its step 0 at N: the plan never changes the current step, whose allocation
// was committed when it began.
//
//   State s;                                  // next_step 0, nothing committed
//   Scenario sc = BuildScenario(s, frame);    // arrival_step <= 0, running jobs pinned
//   CommitStep(s, sc, plan, "ordo", changed);          // jobs starting at 0 run; next_step 1
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/forecast/demand_forecaster.h"
#include "ordo/priority/planning_priority.h"

namespace ordo::service {

/// A job's life cycle. Stored: values only grow at the end.
enum class JobState : int { kPending = 0, kRunning = 1, kDone = 2, kCancelled = 3 };
std::string_view JobStateName(JobState state);  // "pending", "running", "done", "cancelled"
std::optional<JobState> ParseJobState(std::string_view name);

/// Job ids are per tenant: two tenants may both submit `shared-1`. Inside the service (state,
/// store, scenarios, plans, committed steps) a job's id is qualified, `tenant/id`, so it is unique
/// and says whose it is; tenant names and ids cannot contain '/', so the split is unambiguous.
/// Service ids are never qualified (they hold no '/'). Only the redaction step (redact.h) turns a
/// qualified id back into what a reader sees.
inline constexpr char kTenantSeparator = '/';
std::string QualifiedJobId(std::string_view tenant, std::string_view id);
/// The tenant of a qualified job id; empty for an unqualified one (a service's).
std::string_view JobIdTenant(std::string_view qualified);
/// The id as its tenant submitted it; an unqualified id unchanged.
std::string_view LocalJobId(std::string_view qualified);

struct JobRecord {
  int64_t seq = 0;  // submission order (the store's row id)
  std::string tenant;
  /// As submitted, with the id qualified (`tenant/id`): id, kind, priority, shapes (durations
  /// resolved), requirement, features.
  /// `arrival_step` and `running` are unused here; BuildScenario fills them from the fields below.
  Job job;
  int64_t submitted_step = 0;  // absolute: the first step the job may start at
  double submitted_unix = 0;
  JobState state = JobState::kPending;
  // Running or done: where and how it runs (its current stay, when it has been preempted).
  int64_t start_step = 0;  // absolute: the start of its current stay
  int first_gpu = 0;
  Shape shape;  // the shape it runs in: its GPUs and all of its work
  /// Done: the end of its last stay. Cancelled: the first step it no longer held GPUs (the next
  /// step to commit when it was cancelled).
  int64_t finished_step = 0;
  // Preemption (jobs with a checkpoint; spec "Preemption: checkpoints and migration"): the work its
  // checkpoints kept at its last preemption, the restart steps its current stay spends first, how
  // often and when it was last preempted, and the GPU-steps of lost work and restarts so far.
  int saved_steps = 0;
  int stay_restart_steps = 0;
  int preemptions = 0;
  std::optional<int64_t> preempted_step;
  int64_t lost_gpu_steps = 0;

  [[nodiscard]] bool active() const {
    return state == JobState::kPending || state == JobState::kRunning;
  }
  /// Running: the step its current stay ends — its restart, then the work it has not saved.
  [[nodiscard]] int64_t stay_end_step() const {
    return start_step + stay_restart_steps + shape.duration_steps - saved_steps;
  }
  /// Running: the work steps it has done by the start of step `step`.
  [[nodiscard]] int ProgressAt(int64_t step) const {
    const int64_t worked = step - (start_step + stay_restart_steps);
    return saved_steps + static_cast<int>(worked > 0 ? worked : 0);
  }
};

/// A service whose demand comes from posted traffic through the demand forecaster.
struct TrafficDemand {
  double per_gpu_rate = 0;  // requests per second one GPU serves
  double headroom = 0.2;    // spare capacity kept (0.2 = 20%)
  /// The forecaster's method (`forecast.method`): level-shape, or the older weekly profile.
  forecast::DemandMethod method = forecast::DemandMethod::kLevelShape;

  [[nodiscard]] forecast::DemandOptions ForecastOptions() const {
    forecast::DemandOptions options;
    options.method = method;
    return options;
  }
};

struct ServiceRecord {
  int64_t seq = 0;  // registration order
  /// As registered or last updated. `demand` is a profile of horizon_steps values whose entry 0 is
  /// the absolute step `anchor_step`; it repeats (a daily curve keeps being a daily curve).
  Service service;
  int64_t anchor_step = 0;
  std::optional<TrafficDemand> traffic;
  /// GPUs held at the last committed step (the next plan's `current_gpus`).
  std::optional<int> committed_gpus;
  /// The forecaster fitted on this service's traffic; null until traffic arrives. Shared and
  /// immutable: a refit replaces it.
  std::shared_ptr<const forecast::DemandForecaster> forecaster;
  /// Forecast GPUs for steps [forecast_base, forecast_base + forecast_demand.size()).
  std::vector<int> forecast_demand;
  int64_t forecast_base = 0;
  int64_t traffic_points = 0;
  double last_traffic_s = 0;  // time of the latest traffic sample (Unix seconds)

  /// GPUs the service needs at absolute step `step`: the forecast where there is one, else the
  /// profile.
  [[nodiscard]] int DemandAt(int64_t step) const;
};

struct CommittedJob {
  std::string id;
  int first_gpu = 0;
  int gpus = 0;
};

struct CommittedService {
  std::string id;
  std::vector<int> gpus;  // the ids it holds
  int demand = 0;
};

/// What ran at one step: the allocation committed when the step began, and its figures.
struct CommittedStep {
  int64_t step = 0;
  std::string policy;  // which planner's plan the step came from ("ordo", "ordo-full", "hold")
  std::vector<CommittedJob> jobs;
  std::vector<CommittedService> services;
  double utilization = 0;            // (batch GPUs + sum of min(allocated, demand)) / G
  double allocated_utilization = 0;  // (batch GPUs + allocated service GPUs) / G
  double value = 0;                  // priority-weighted useful GPU work at this step
  int64_t unmet_gpus = 0;            // sum of max(0, demand - allocated)
};

/// The committed steps kept in memory (the store keeps them all).
inline constexpr size_t kRecentSteps = 512;

struct State {
  int64_t next_step = 0;
  double origin_unix = 0;  // wall time of step 0's start
  /// The next generated id (`job-N`) of each tenant; a tenant not listed starts at 1.
  std::map<std::string, int64_t> next_generated_id;
  std::map<int64_t, JobRecord> jobs;                 // by seq
  std::unordered_map<std::string, int64_t> job_seq;  // qualified id -> seq
  std::set<int64_t> active;                          // seqs of pending and running jobs
  std::vector<ServiceRecord> services;               // registration order
  std::deque<CommittedStep> recent;                  // the latest committed steps, oldest first
  double committed_value_total = 0;                  // sum of value over every committed step
  /// Each tenant's recent use of the cluster (RecordUsage), for the fair-share factor; rebuilt from
  /// the steps kept in memory on restart. Empty until the first step is recorded.
  std::optional<priority::UsageLedger> usage;
  /// Incremented by every change; a plan records the version it was made from.
  uint64_t version = 0;

  /// By qualified id (`tenant/id`).
  [[nodiscard]] const JobRecord* FindJob(std::string_view id) const;
  [[nodiscard]] JobRecord* FindJob(std::string_view id);
  [[nodiscard]] const ServiceRecord* FindService(std::string_view id) const;
  [[nodiscard]] ServiceRecord* FindService(std::string_view id);
  /// Adds or replaces a job record (keeping job_seq and active in step).
  void PutJob(JobRecord record);
};

/// What turns a waiting job's base priority into its planning priority (the config's tenants and
/// `planning`; priority/planning_priority.h).
struct Tenancy {
  priority::PlanningOptions options;
  std::vector<std::string> names;  // the usage ledger's index -> tenant name
  std::vector<double> shares;      // the usage ledger's index -> share, a fraction of the cluster

  /// The ledger index of `tenant`; -1 for a principal that is no tenant (the admin).
  [[nodiscard]] int Index(std::string_view tenant) const;
};

/// The fixed part of every planning scenario: cluster, time grid, objective (from the config), and
/// the tenancy planning priorities are made with.
struct Frame {
  const Scenario* base = nullptr;
  const Tenancy* tenancy = nullptr;
  double step_seconds() const { return base->step_minutes * 60.0; }
};

/// Unix time of the start of absolute step `step`.
double StepStartUnix(const State& state, const Frame& frame, int64_t step);

/// The scenario at `state.next_step`: active jobs in submission order (arrival_step =
/// submitted_step - next_step, clamped to the spec's range; running jobs pinned with their block),
/// services in registration order with their demand over the horizon and current_gpus from the
/// last committed step. With `new_starts` false, pending jobs are left out (the plan then only
/// holds what runs; used to catch up on steps the service was down for).
Scenario BuildScenario(const State& state, const Frame& frame, bool new_starts = true);

/// The scenario a planner is given: `scenario` (BuildScenario's, from `state`) with each pending
/// job's priority replaced by its planning priority — aged by the hours since its submission step
/// and multiplied by its tenant's fair-share factor from state.usage. Running jobs keep their base
/// priority; a job the state does not hold (a what-if's) counts as submitted now, in the tenant its
/// qualified id names. With the tenancy's `ramp_reserve_hours`, each service with posted traffic
/// and a churn limit is planned above its forecast by its ramp reserve (forecast/ramp_reserve.h)
/// from its observed hourly traffic. Values and metrics are reported on `scenario`, in base
/// priorities and against the forecast.
Scenario PlanningScenario(const Scenario& scenario, const State& state, const Frame& frame);

/// Adds what each tenant held at the committed `step` (its jobs' GPUs, one step long) to
/// state.usage, creating the ledger on first use.
void RecordUsage(State& state, const CommittedStep& step, const Frame& frame);

/// Commits step 0 of `plan` (legal for `scenario`, which BuildScenario made from `state`): jobs
/// planned to start at 0 become running, services keep the GPUs of step 0, the step is recorded
/// with its figures (value in the jobs' base priorities, whatever `scenario` planned with);
/// next_step advances and jobs that end there become done. Returns the step and fills
/// `changed_jobs` with the seqs of the jobs whose record changed.
CommittedStep CommitStep(State& state, const Scenario& scenario, const Plan& plan,
                         std::string_view policy, std::vector<int64_t>& changed_jobs);

}  // namespace ordo::service
