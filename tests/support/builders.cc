#include "tests/support/builders.h"

#include <gtest/gtest.h>

#include <sstream>
#include <utility>

namespace ordo::testing {

JobBuilder::JobBuilder(std::string id) {
  job_.id = std::move(id);
  job_.shapes = {Shape{1, 1}};
}

JobBuilder& JobBuilder::Gpus(int gpus) {
  job_.shapes.resize(1);
  job_.shapes.front().gpus = gpus;
  return *this;
}

JobBuilder& JobBuilder::Duration(int duration_steps) {
  job_.shapes.resize(1);
  job_.shapes.front().duration_steps = duration_steps;
  return *this;
}

JobBuilder& JobBuilder::Shapes(std::vector<Shape> shapes) {
  job_.shapes = std::move(shapes);
  return *this;
}

JobBuilder& JobBuilder::Priority(double priority) {
  job_.priority = priority;
  return *this;
}

JobBuilder& JobBuilder::Arrival(int arrival_step) {
  job_.arrival_step = arrival_step;
  return *this;
}

JobBuilder& JobBuilder::Kind(JobKind kind) {
  job_.kind = kind;
  return *this;
}

JobBuilder& JobBuilder::Progress(int progress_steps, int restart_steps_left) {
  job_.running->progress_steps = progress_steps;
  job_.running->restart_steps_left = restart_steps_left;
  return *this;
}

JobBuilder& JobBuilder::Checkpointed(int every_steps, int restart_steps) {
  job_.checkpoint = Checkpoint{every_steps, restart_steps};
  return *this;
}

JobBuilder& JobBuilder::Running(int start_step, int first_gpu) {
  job_.running = RunningPlacement{start_step, first_gpu};
  // A running job has been waiting at least since it started.
  if (job_.arrival_step > start_step) job_.arrival_step = start_step;
  return *this;
}

JobBuilder& JobBuilder::GpuType(std::string gpu_type) {
  job_.requirement.gpu_type = std::move(gpu_type);
  return *this;
}

JobBuilder& JobBuilder::MinMemory(double min_gpu_memory_gb) {
  job_.requirement.min_gpu_memory_gb = min_gpu_memory_gb;
  return *this;
}

JobBuilder& JobBuilder::Features(std::string features_json) {
  job_.features_json = std::move(features_json);
  return *this;
}

ServiceBuilder::ServiceBuilder(std::string id) { service_.id = std::move(id); }

ServiceBuilder& ServiceBuilder::Priority(double priority) {
  service_.priority = priority;
  return *this;
}

ServiceBuilder& ServiceBuilder::Demand(std::vector<int> demand) {
  service_.demand = std::move(demand);
  return *this;
}

ServiceBuilder& ServiceBuilder::Min(int min_gpus) {
  service_.min_gpus = min_gpus;
  return *this;
}

ServiceBuilder& ServiceBuilder::Max(int max_gpus) {
  service_.max_gpus = max_gpus;
  has_max_ = true;
  return *this;
}

ServiceBuilder& ServiceBuilder::Churn(int max_change_per_step) {
  service_.max_change_per_step = max_change_per_step;
  return *this;
}

ServiceBuilder& ServiceBuilder::Current(int current_gpus) {
  service_.current_gpus = current_gpus;
  return *this;
}

ServiceBuilder& ServiceBuilder::GpuType(std::string gpu_type) {
  service_.requirement.gpu_type = std::move(gpu_type);
  return *this;
}

ServiceBuilder& ServiceBuilder::MinMemory(double min_gpu_memory_gb) {
  service_.requirement.min_gpu_memory_gb = min_gpu_memory_gb;
  return *this;
}

ScenarioBuilder::ScenarioBuilder(std::string name) { scenario_.name = std::move(name); }

ScenarioBuilder& ScenarioBuilder::Steps(int horizon_steps) {
  scenario_.horizon_steps = horizon_steps;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::StepMinutes(int step_minutes) {
  scenario_.step_minutes = step_minutes;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Description(std::string description) {
  scenario_.description = std::move(description);
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Group(std::string name, int nodes, int gpus_per_node,
                                        std::string gpu_type, double gpu_memory_gb) {
  scenario_.cluster.groups.push_back(
      NodeGroup{std::move(name), nodes, gpus_per_node, std::move(gpu_type), gpu_memory_gb});
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Objective(double time_decay, double unmet_penalty_multiplier) {
  scenario_.objective.time_decay = time_decay;
  scenario_.objective.unmet_penalty_multiplier = unmet_penalty_multiplier;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Job(const JobBuilder& job) { return Job(job.Build()); }

ScenarioBuilder& ScenarioBuilder::Job(ordo::Job job) {
  scenario_.jobs.push_back(std::move(job));
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Service(const ServiceBuilder& service) {
  services_.push_back(service);
  return *this;
}

Scenario ScenarioBuilder::Build() const {
  Scenario scenario = scenario_;
  scenario.cluster.Index();
  for (const ServiceBuilder& builder : services_) {
    ordo::Service service = builder.Build();
    if (!builder.has_max()) service.max_gpus = scenario.cluster.total_gpus();
    if (service.demand.empty()) service.demand.assign(scenario.horizon_steps, 0);
    scenario.services.push_back(std::move(service));
  }
  return scenario;
}

namespace {

void ReportViolations(const Scenario& scenario, const Plan& plan, const std::string& seed_note) {
  const std::vector<Violation> violations = CheckPlan(scenario, plan);
  if (violations.empty()) return;
  std::ostringstream out;
  out << violations.size() << " violation(s) in the plan of policy '" << plan.policy
      << "' for scenario '" << scenario.name << "'" << seed_note << ":\n";
  for (const Violation& violation : violations) out << "  " << FormatViolation(violation) << "\n";
  ADD_FAILURE() << out.str();
}

}  // namespace

void ExpectLegal(const Scenario& scenario, const Plan& plan) {
  ReportViolations(scenario, plan, "");
}

void ExpectLegal(const Scenario& scenario, const Plan& plan, uint64_t seed) {
  ReportViolations(scenario, plan, " (seed " + std::to_string(seed) + ")");
}

const JobPlacement* FindJob(const Plan& plan, std::string_view id) {
  for (const JobPlacement& job : plan.jobs) {
    if (job.id == id) return &job;
  }
  return nullptr;
}

const ServiceAllocation* FindService(const Plan& plan, std::string_view id) {
  for (const ServiceAllocation& service : plan.services) {
    if (service.id == id) return &service;
  }
  return nullptr;
}

std::vector<int> Ids(int first, int count) {
  std::vector<int> ids;
  ids.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) ids.push_back(first + i);
  return ids;
}

}  // namespace ordo::testing
