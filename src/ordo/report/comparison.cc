#include "ordo/report/comparison.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "ordo/core/metrics.h"

namespace ordo::report {
namespace {

constexpr std::string_view kFifo = "fifo";

PolicyRun RunOne(const Scenario& scenario, Policy& policy, const std::string& name,
                 double time_limit_s, int effort) {
  PolicyRun run;
  run.policy = name;
  PolicyOptions options;
  options.time_limit_s = time_limit_s;
  options.effort = effort;
  Result<Plan> plan = policy.Solve(scenario, options);
  if (!plan) {
    run.error = plan.error().ToString();
    return run;
  }
  run.violations = CheckPlan(scenario, *plan);
  run.metrics = ComputeMetrics(scenario, *plan);
  run.metrics.solve_ms = plan->metrics.solve_ms;
  run.metrics.solver = plan->metrics.solver;
  run.wait = ComputeWaitMetrics(scenario, *plan);
  run.waits = ComputeJobWaits(scenario, *plan);
  run.plan = std::move(*plan);
  return run;
}

}  // namespace

const PolicyRun* ScenarioResult::Find(std::string_view policy) const {
  for (const PolicyRun& run : runs) {
    if (run.policy == policy) return &run;
  }
  return nullptr;
}

int Comparison::problems() const {
  int count = 0;
  for (const ScenarioResult& s : scenarios) {
    for (const PolicyRun& run : s.runs) count += run.ok() ? 0 : 1;
  }
  return count;
}

std::vector<std::string> ProblemLines(const Comparison& comparison) {
  std::vector<std::string> lines;
  for (const ScenarioResult& s : comparison.scenarios) {
    for (const PolicyRun& run : s.runs) {
      const std::string where = s.scenario.name + "/" + run.policy + ": ";
      if (!run.plan) lines.push_back(where + "failed: " + run.error);
      for (const Violation& v : run.violations) lines.push_back(where + FormatViolation(v));
    }
  }
  return lines;
}

Result<Comparison> RunComparison(std::vector<ScenarioInput> inputs, const PolicyRegistry& registry,
                                 const CompareOptions& options) {
  Comparison comparison;
  for (const std::string& name : options.policies.empty() ? registry.names() : options.policies) {
    if (std::find(comparison.policies.begin(), comparison.policies.end(), name) ==
        comparison.policies.end()) {
      comparison.policies.push_back(name);
    }
  }
  // Every policy is created up front so an unknown name fails before any work is done.
  std::vector<std::string> to_run = comparison.policies;
  const bool fifo_known =
      std::find(registry.names().begin(), registry.names().end(), kFifo) != registry.names().end();
  const bool fifo_hidden =
      fifo_known && std::find(to_run.begin(), to_run.end(), kFifo) == to_run.end();
  if (fifo_hidden) to_run.emplace_back(kFifo);
  std::vector<std::unique_ptr<Policy>> policies;
  for (const std::string& name : to_run) {
    Result<std::unique_ptr<Policy>> policy = registry.Create(name);
    if (!policy) return Fail(policy.error());
    policies.push_back(std::move(*policy));
  }

  CompareProgress progress;
  progress.total = static_cast<int>(inputs.size() * (to_run.size() + (options.bound ? 1 : 0)));
  const auto step = [&](const Scenario& scenario, std::string_view what) {
    if (!options.on_progress) return;
    progress.scenario = scenario.name;
    progress.step = what;
    options.on_progress(progress);
    ++progress.done;
  };
  for (ScenarioInput& input : inputs) {
    ScenarioResult result;
    result.source = input.source;
    result.study = FindStudyFigures(input.scenario.name);
    for (size_t p = 0; p < to_run.size(); ++p) {
      step(input.scenario, to_run[p]);
      const double limit = options.time_limit_s.value_or(DefaultTimeLimitSeconds(to_run[p]));
      PolicyRun run = RunOne(input.scenario, *policies[p], to_run[p], limit, options.effort);
      run.shown = !(fifo_hidden && to_run[p] == kFifo);
      result.runs.push_back(std::move(run));
    }
    if (const PolicyRun* fifo = result.Find(kFifo); fifo != nullptr && fifo->ok()) {
      result.fifo_value = fifo->metrics.value;
    }
    for (PolicyRun& run : result.runs) {
      if (run.ok() && result.fifo_value && *result.fifo_value > 0) {
        run.value_gain = (run.metrics.value - *result.fifo_value) / *result.fifo_value;
      }
    }
    // The best bound known: every upper bound holds for every plan, so the lowest is the best.
    const auto offer = [&result](double bound, const char* source) {
      if (!std::isfinite(bound) || (result.best_bound && *result.best_bound <= bound)) return;
      result.best_bound = bound;
      result.bound_source = source;
    };
    if (options.bound) {
      step(input.scenario, "LP bound");
      if (Result<double> lp = options.bound(input.scenario)) offer(*lp, "LP relaxation");
    }
    for (const PolicyRun& run : result.runs) {
      if (run.ok() && run.metrics.solver) offer(run.metrics.solver->best_bound, "ordo-full");
    }
    for (PolicyRun& run : result.runs) {
      if (run.ok() && result.best_bound && *result.best_bound > 0) {
        run.of_bound = run.metrics.objective / *result.best_bound;
      }
    }
    result.scenario = std::move(input.scenario);
    comparison.scenarios.push_back(std::move(result));
  }
  return comparison;
}

}  // namespace ordo::report
