#include "ordo/policy/common/plan_builder.h"

#include "ordo/core/metrics.h"

namespace ordo::policy {

JobPlacement RunningJobEntry(const Job& job) {
  JobPlacement entry;
  entry.id = job.id;
  entry.start_step = job.running->start_step;
  entry.first_gpu = job.running->first_gpu;
  entry.gpus = job.shapes.front().gpus;
  entry.duration_steps = job.shapes.front().duration_steps;
  return entry;
}

Plan MakeEmptyPlan(const Scenario& scenario, std::string_view policy_name) {
  Plan plan;
  plan.scenario = scenario.name;
  plan.policy = std::string(policy_name);
  plan.jobs.reserve(scenario.jobs.size());
  for (const Job& job : scenario.jobs) {
    if (job.running) {
      plan.jobs.push_back(RunningJobEntry(job));
    } else {
      JobPlacement placement;
      placement.id = job.id;
      plan.jobs.push_back(std::move(placement));
    }
  }
  plan.services.reserve(scenario.services.size());
  for (const Service& service : scenario.services) {
    plan.services.push_back(
        ServiceAllocation{service.id, std::vector<std::vector<int>>(scenario.horizon_steps)});
  }
  return plan;
}

void FinishPlan(const Scenario& scenario, std::chrono::steady_clock::time_point started,
                Plan& plan) {
  const auto solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  auto solver = plan.metrics.solver;
  plan.metrics = ComputeMetrics(scenario, plan);
  plan.metrics.solve_ms = solve_ms;
  plan.metrics.solver = std::move(solver);
}

}  // namespace ordo::policy
