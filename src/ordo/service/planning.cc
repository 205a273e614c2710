#include "ordo/service/planning.h"

#include <chrono>
#include <cmath>
#include <exception>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/policy/common/explain.h"

namespace ordo::service {
Result<Plan> RunPolicy(Policy& policy, const Scenario& scenario, const PolicyOptions& options) {
  try {
    return policy.Solve(scenario, options);
  } catch (const std::exception& ex) {
    return Fail(
        Error{ErrorCode::kInternal, "", std::string(policy.name()) + " threw: " + ex.what()});
  } catch (...) {
    return Fail(Error{ErrorCode::kInternal, "", std::string(policy.name()) + " threw"});
  }
}

std::string PlanProblem(const Scenario& scenario, const Plan& plan) {
  const std::vector<Violation> violations = CheckPlan(scenario, plan);
  if (violations.empty()) return {};
  return FormatViolation(violations.front()) +
         (violations.size() > 1 ? " (and " + std::to_string(violations.size() - 1) + " more)" : "");
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void MeasurePlan(CheckedPlan& checked, const Scenario& planned, const Scenario& report) {
  // ComputeMetrics keeps the planner's solve time and solver figures.
  checked.plan.metrics = ComputeMetrics(report, checked.plan);
  checked.planning_objective = &planned == &report ? checked.plan.metrics.objective
                                                   : ComputeObjective(planned, checked.plan);
}

std::vector<JobExplanation> ExplainInBasePriorities(const Scenario& planned, const Scenario& report,
                                                    const Plan& plan,
                                                    const policy::ExplainBudget& budget) {
  std::vector<JobExplanation> out = policy::ExplainPlan(planned, plan, budget);
  if (&planned == &report) return out;
  std::unordered_map<std::string_view, double> base;
  for (const Job& job : report.jobs) base.emplace(job.id, job.priority);
  for (JobExplanation& e : out) {
    for (WaitSpan& span : e.spans) {
      for (WaitHolder& holder : span.holders) {
        if (holder.service) continue;
        if (auto it = base.find(holder.id); it != base.end()) holder.priority = it->second;
      }
    }
    if (!e.spans.empty()) {
      e.message = policy::ExplanationMessage(e, plan.policy, policy::NameEveryHolder);
    }
  }
  return out;
}

Result<CheckedPlan> SolveChecked(Policy& policy, Policy* fallback, std::string_view mode,
                                 const Scenario& scenario, const PolicyOptions& options,
                                 const Scenario* report) {
  const Scenario& reported = report != nullptr ? *report : scenario;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return SecondsSince(start); };
  CheckedPlan out;
  auto plan = RunPolicy(policy, scenario, options);
  if (plan) {
    out.problem = PlanProblem(scenario, *plan);
    if (out.problem.empty()) {
      out.plan = std::move(*plan);
      out.mode = std::string(mode);
      MeasurePlan(out, scenario, reported);
      out.solve_s = elapsed();
      return out;
    }
    out.problem = std::string(policy.name()) + " returned an illegal plan: " + out.problem;
  } else {
    out.problem = std::string(policy.name()) + " failed: " + plan.error().ToString();
  }
  if (fallback == nullptr) {
    return Fail(Error{ErrorCode::kInternal, "", out.problem});
  }
  auto safe = RunPolicy(*fallback, scenario, options);
  if (!safe) {
    return Fail(Error{ErrorCode::kInternal, "",
                      out.problem + "; the fallback failed too: " + safe.error().ToString()});
  }
  if (std::string problem = PlanProblem(scenario, *safe); !problem.empty()) {
    return Fail(Error{ErrorCode::kInternal, "",
                      out.problem + "; the fallback's plan is illegal too: " + problem});
  }
  out.plan = std::move(*safe);
  MeasurePlan(out, scenario, reported);
  out.mode = std::string(kModeFallback);
  out.solve_s = elapsed();
  out.plan.metrics.solve_ms = out.solve_s * 1000;
  return out;
}

std::optional<Cut> FindCut(const CheckedPlan& checked, const PolicyOptions& options,
                           bool stopping) {
  if (stopping) {
    return Cut{"stopping", "the service is shutting down: the plan is the best found so far"};
  }
  if (const auto& solver = checked.plan.metrics.solver) {
    if (solver->status == "model_too_large") {
      return Cut{"memory_budget",
                 "the full model is too large for the memory budget: the plan is the warm start, "
                 "improved where a smaller model fitted"};
    }
    if (solver->status != "optimal") {
      return Cut{"time_limit",
                 "time_limit_s ended the search before the plan was proven "
                 "optimal (relative gap " +
                     std::to_string(solver->gap) + ")"};
    }
    return std::nullopt;
  }
  if (checked.plan.metrics.solve_ms >= 1000 * options.time_limit_s) {
    return Cut{"time_limit", "time_limit_s ended the planner's search: the plan is the best found"};
  }
  return std::nullopt;
}

bool IsBetter(double candidate_objective, double incumbent_objective) {
  const double a = candidate_objective;
  const double b = incumbent_objective;
  return a > b + 1e-9 * std::max(1.0, std::abs(b));
}

AdoptedPlan::AdoptedPlan(uint64_t version, int64_t base_step,
                         std::shared_ptr<const Scenario> scenario,
                         std::shared_ptr<const Scenario> planned, CheckedPlan checked,
                         double created_unix)
    : version_(version),
      base_step_(base_step),
      scenario_(std::move(scenario)),
      planned_(planned != nullptr ? std::move(planned) : scenario_),
      plan_(std::move(checked.plan)),
      planning_objective_(checked.planning_objective),
      mode_(std::move(checked.mode)),
      solve_s_(checked.solve_s),
      created_unix_(created_unix) {
  job_index_.reserve(plan_.jobs.size());
  for (size_t j = 0; j < plan_.jobs.size(); ++j) job_index_.emplace(plan_.jobs[j].id, j);
}

const JobPlacement* AdoptedPlan::FindJob(std::string_view id) const {
  auto it = job_index_.find(std::string(id));
  return it == job_index_.end() ? nullptr : &plan_.jobs[it->second];
}

const std::vector<JobExplanation>& AdoptedPlan::Explanations() const {
  std::call_once(explained_, [this] {
    explanations_ = ExplainInBasePriorities(*planned_, *scenario_, plan_);
    for (size_t k = 0; k < explanations_.size(); ++k) {
      explain_index_.emplace(explanations_[k].id, k);
    }
  });
  return explanations_;
}

const JobExplanation* AdoptedPlan::Explain(std::string_view id) const {
  const auto& all = Explanations();
  auto it = explain_index_.find(std::string(id));
  return it == explain_index_.end() ? nullptr : &all[it->second];
}

}  // namespace ordo::service
