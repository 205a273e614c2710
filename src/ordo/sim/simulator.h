// The rolling-horizon simulator: a policy runs a cluster through a world, step by step, seeing only
// what an operating cluster would see.
//
// What it does. Time advances one step at a time over the world's window. At each step the jobs
// whose actual run has ended leave, the jobs arriving at that step join the queue, and the
// simulator decides whether to re-plan: at the first step, every `replan_every` steps, at a step
// with an arrival (`replan_on_arrival`), and whenever reality has made the current plan
// impossible to follow (a job ran past its forecast and holds GPUs the plan gives to a starting
// job or a service at this step). A re-plan builds a scenario of the planner's view —
//   * running jobs pinned on their blocks with their actual start and their forecast duration,
//     extended to cover at least the current step when they have outlived it;
//   * the queued jobs with their forecast durations (arrival steps relative, so <= 0) and, when
//     `planning` is set, their planning priority (priority/planning_priority.h: aging with the
//     time waited, the tenant's fair share from a UsageLedger fed every committed step) in place
//     of their base priority — the run's outcomes and every metric keep the base priority;
//   * optionally (`arrivals_lookahead`) the jobs that will arrive inside the horizon;
//   * each service's forecast demand over the horizon, `current_gpus` = what it held at the step
//     before —
// checks it (ValidateScenario), asks the policy, and checks the plan (CheckPlan). Then only the
// current step of the current plan is committed: the jobs it starts now begin on their blocks and
// run for their actual duration, and each service holds the plan's GPUs for this step; demand
// above them is unmet. Between re-plans the plan is followed step by step.
// Surges (`replan_on_surge`, every policy alike): when a service's actual demand at a step exceeds
// what the plan gives it there (and its max_gpus), the simulator re-plans once more at that step,
// before committing it, telling the planner the observed demand at step 0 (the rest of the curve
// stays the forecast) — an autoscaler's alert reaching the planner within the step, as `ordo serve`
// re-plans on posted traffic. What that plan commits replaces the first plan's step.
// Preemption (jobs with a checkpoint): at the step a plan's preempt_step falls on, the job gives
// its block back keeping its saved work (floor(progress / c) * c) and waits again; the step a plan
// starts it again (a resume, or a start in a later plan) it spends its restart steps there, then
// does its actual unsaved work. Preemptions are committed before starts, so a job may move to a
// block another leaves at that step. The planner sees a resumed job pinned with its progress and
// restart steps left, and a job waiting to resume as a waiting job of its unsaved forecast work
// plus its restart steps, on a block of its size.
// Guarantees: every committed step comes from a legal plan of a scenario that agrees with reality
// at that step, so the whole committed timeline passes CheckPlan (BuildCommittedTimeline). The
// same world, options and policy give the same run when the policy is deterministic.
// Cost: one scenario, one ValidateScenario, one Solve and one CheckPlan per decision; O(G + jobs
// in view) bookkeeping per step.
// Example: a 2-GPU job forecast at 3 steps that really takes 5, on an 8-GPU node with K = 4: it
// starts at 0; the plan of step 0 puts another job on its block at step 3; at step 3 the first
// job still runs, so the simulator re-plans (trigger "conflict") and the other job waits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/metrics.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/policy.h"
#include "ordo/priority/planning_priority.h"
#include "ordo/sim/world.h"

namespace ordo::sim {

/// Why a decision was taken. Written in timelines: values only grow at the end.
enum class Trigger : int { kStart = 0, kCadence = 1, kArrival = 2, kConflict = 3, kSurge = 4 };
/// "start", "cadence", "arrival", "conflict", "surge"
std::string_view TriggerName(Trigger trigger);

struct SimOptions {
  /// Re-plan every K steps (K >= 1). K = horizon_steps with replan_on_arrival off is "plan once
  /// per horizon and commit all of it".
  int replan_every = 1;
  /// Re-plan at a step where a job arrives (fast mode and cluster managers do; full mode, a
  /// periodic review, does not by default).
  bool replan_on_arrival = true;
  /// The planner also sees jobs that will arrive inside its horizon (perfect knowledge of
  /// arrivals; the end-of-the-world study uses it).
  bool arrivals_lookahead = false;
  /// Re-plan at a step where a service's observed demand exceeds the GPUs the plan gives it
  /// there, telling the planner the observed demand at that step (the rest of the curve stays the
  /// forecast): an autoscaler's alert that reaches the planner within the step.
  bool replan_on_surge = false;
  /// Passed to the policy at every decision.
  double time_limit_s = 0.05;
  uint64_t seed = 1;
  /// Passed to the policy: ordo's policies lend step 0's idle GPUs to the services.
  bool lend_idle_gpus = true;
  /// Planning priorities for waiting jobs (aging, tenant fair share, wait bound) and the
  /// services' ramp reserve; empty: the planner is told base priorities and the forecast.
  /// Checked by ValidatePlanningOptions (kInvalidInput).
  std::optional<priority::PlanningOptions> planning;
  /// Runs CheckPlan on every plan; an illegal plan is an error (kInternal) naming the step.
  bool check_plans = true;
  /// Called after every step with (steps done, steps in all); for progress bars. May be empty.
  std::function<void(int, int)> progress;
};

/// What happened to one job of the world.
struct JobOutcome {
  int world_index = 0;
  int shape = 0;  // index into the world job's shapes
  int gpus = 0;
  int actual_steps = 0;    // the work it really needs (steps), restarts not included
  int forecast_steps = 0;  // what the planner was told for that shape
  /// Each stretch on a block, in time order (core/metrics.h: restart, kept and lost steps, in
  /// absolute steps): one for a job never preempted, one more per resume. The last may end past
  /// the window.
  std::vector<Stay> stays;
  /// The last stay was cut by a preemption: the job waits to resume with `saved_steps` of work.
  bool preempted_now = false;
  int saved_steps = 0;  // work kept by its checkpoints at its last preemption

  /// Its first start, absolute; empty: never started inside the window.
  [[nodiscard]] std::optional<int> start_step() const {
    if (stays.empty()) return std::nullopt;
    return static_cast<int>(stays.front().from);
  }
  /// Stays cut by a preemption.
  [[nodiscard]] int preemptions() const {
    return stays.empty() ? 0 : static_cast<int>(stays.size()) - (preempted_now ? 0 : 1);
  }
  /// The step its work ends (exclusive, may be past the window); empty while it waits to start or
  /// to resume.
  [[nodiscard]] std::optional<long long> end_step() const {
    if (stays.empty() || preempted_now) return std::nullopt;
    return stays.back().to;
  }
};

/// One re-plan.
struct Decision {
  int step = 0;
  Trigger trigger = Trigger::kStart;
  double plan_ms = 0;   // wall time of Policy::Solve
  int jobs_queued = 0;  // arrived, not started
  int jobs_running = 0;
  int jobs_started = 0;  // started at this step by this plan
};

/// A committed timeline: what the cluster really did.
struct SimRun {
  std::string policy;
  SimOptions options;            // progress cleared
  int steps = 0;                 // the window
  std::vector<JobOutcome> jobs;  // world order, only jobs arriving inside the window
  /// service_gpus[i][t]: the GPU ids service i held at step t.
  std::vector<std::vector<std::vector<int>>> service_gpus;
  std::vector<std::vector<int>> service_demand;    // actual, [service][step]
  std::vector<std::vector<int>> service_forecast;  // the planner's curve, [service][step]
  std::vector<Decision> decisions;
};

/// Runs `policy` through `world` (which passed ValidateWorld). Errors: an invalid option
/// (kInvalidInput, field `replan_every`), a scenario the simulator built that fails validation or
/// a plan that breaks a rule (kInternal: a bug, reported with the step), or the policy's own error.
[[nodiscard]] Result<SimRun> Simulate(const World& world, Policy& policy,
                                      const SimOptions& options);

/// The same on a world already resolved (ResolveWorld): several runs of one world share the noise
/// draws and the forecaster's fits, which are the costly part of resolving.
[[nodiscard]] Result<SimRun> Simulate(const ResolvedWorld& world, Policy& policy,
                                      const SimOptions& options);

/// The committed timeline as one scenario over the whole window (jobs with their actual shapes and
/// absolute arrivals, services with their actual demand) and one plan (committed starts, blocks and
/// service GPUs), so CheckPlan judges every committed step and ComputeMetrics gives the spec's
/// metrics over the window.
struct CommittedTimeline {
  Scenario scenario;
  Plan plan;
};
CommittedTimeline BuildCommittedTimeline(const World& world, const SimRun& run);

}  // namespace ordo::sim
