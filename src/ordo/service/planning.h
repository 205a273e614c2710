// Plans the service acts on: every plan is checked by the independent legality checker before
// anyone sees it, and a policy that fails or returns an illegal plan is replaced by the
// priority-backfill baseline (also checked), so the step the service commits never breaks a rule.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/common/explain.h"
#include "ordo/policy/policy.h"

namespace ordo::service {

/// Which planner a plan came from; the mode is shown in the API and the metrics.
inline constexpr std::string_view kModeFast = "fast";
inline constexpr std::string_view kModeFull = "full";
inline constexpr std::string_view kModeFallback = "fallback";

struct CheckedPlan {
  Plan plan;  // metrics measured on the reported (base-priority) scenario
  /// The objective on the scenario the planner was given (planning priorities): what planners
  /// of the same state are compared by.
  double planning_objective = 0;
  std::string mode;     // kModeFast / kModeFull / kModeFallback
  double solve_s = 0;   // wall time of the policy (and of the fallback, when used)
  std::string problem;  // why the fallback was used, empty otherwise
};

/// Solves `scenario` with `policy`, checks the plan (CheckPlan) and computes its metrics on
/// `report` (the same scenario in base priorities, when `scenario` has planning priorities; null:
/// `scenario` itself). When the policy fails or its plan breaks a rule, solves with `fallback`
/// instead (when given) and says why in `problem`. An error only when no legal plan came out.
[[nodiscard]] Result<CheckedPlan> SolveChecked(Policy& policy, Policy* fallback,
                                               std::string_view mode, const Scenario& scenario,
                                               const PolicyOptions& options,
                                               const Scenario* report = nullptr);

/// Fills `checked`'s metrics on `report` and its planning objective on `planned` (the scenario
/// the plan was made for), keeping the planner's own solve time and solver figures.
void MeasurePlan(CheckedPlan& checked, const Scenario& planned, const Scenario& report);

/// The explanations of `plan`, made for `planned` (planning priorities, which the planner acted
/// on), with every holder's priority its base one from `report`. Out of `budget` the jobs not yet
/// explained are left out (policy::ExplainPlan).
std::vector<JobExplanation> ExplainInBasePriorities(const Scenario& planned, const Scenario& report,
                                                    const Plan& plan,
                                                    const policy::ExplainBudget& budget = {});

/// Runs a policy; anything it throws becomes an Error (it should not throw, but the service must
/// survive if it does).
[[nodiscard]] Result<Plan> RunPolicy(Policy& policy, const Scenario& scenario,
                                     const PolicyOptions& options);

/// Seconds of the steady clock since `start`: how the service times plans, commits and requests.
double SecondsSince(std::chrono::steady_clock::time_point start);

/// Why a plan is the best its planner found before something cut its search short, when it is.
struct Cut {
  std::string reason;   // "stopping", "memory_budget", "time_limit" or "answer_size"
  std::string message;  // for people
};

/// Whether `checked` (made under `options`) was cut short: the service was stopping (`stopping`),
/// full mode's model did not fit the memory budget (solver status "model_too_large"), or the time
/// limit ended the search (full mode without a proof of optimality; another planner that used
/// its whole limit). Empty when the planner finished its own work.
std::optional<Cut> FindCut(const CheckedPlan& checked, const PolicyOptions& options, bool stopping);

/// Empty when `plan` is legal for `scenario`; else the first broken rule (and how many more).
std::string PlanProblem(const Scenario& scenario, const Plan& plan);

/// True when `candidate` is better than `incumbent` by more than rounding: a higher objective.
bool IsBetter(double candidate_objective, double incumbent_objective);

/// A plan the service adopted: what it was made from, and the explanations, computed once on first
/// use (they cost more than the plan itself on big queues). Immutable once shared.
class AdoptedPlan {
 public:
  /// `scenario`: the state's scenario in base priorities; `planned`: the one the planner was
  /// given (planning priorities), which the explanations are made for.
  AdoptedPlan(uint64_t version, int64_t base_step, std::shared_ptr<const Scenario> scenario,
              std::shared_ptr<const Scenario> planned, CheckedPlan checked, double created_unix);

  uint64_t version() const { return version_; }
  int64_t base_step() const { return base_step_; }
  const Scenario& scenario() const { return *scenario_; }
  const Plan& plan() const { return plan_; }
  const std::string& mode() const { return mode_; }
  double solve_s() const { return solve_s_; }
  double created_unix() const { return created_unix_; }
  double planning_objective() const { return planning_objective_; }

  /// The job's placement, or null when the plan does not know the job.
  const JobPlacement* FindJob(std::string_view id) const;
  /// The explanation of a job that does not start at step 0 (null otherwise). Thread-safe.
  const JobExplanation* Explain(std::string_view id) const;
  /// Every explanation, in scenario order. Thread-safe.
  const std::vector<JobExplanation>& Explanations() const;

 private:
  uint64_t version_;
  int64_t base_step_;
  std::shared_ptr<const Scenario> scenario_;
  std::shared_ptr<const Scenario> planned_;
  Plan plan_;
  double planning_objective_;
  std::string mode_;
  double solve_s_;
  double created_unix_;
  std::unordered_map<std::string, size_t> job_index_;
  mutable std::once_flag explained_;
  mutable std::vector<JobExplanation> explanations_;
  mutable std::unordered_map<std::string, size_t> explain_index_;
};

}  // namespace ordo::service
