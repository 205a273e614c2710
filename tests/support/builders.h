// Builders for scenarios in tests, so a test states only what it is about:
//
//   Scenario s = ScenarioBuilder("two-jobs").Steps(24).Group("h100", 1, 8, "H100", 80)
//                    .Job(MakeJob("a").Gpus(4).Duration(6).Priority(5))
//                    .Service(MakeService("chat").Priority(10).Demand({...}).Max(8)).Build();
//
// Defaults follow the spec (gpu_type "gpu", 80 GB, max_gpus = cluster size, no churn limit); a job
// defaults to one GPU for one step, arriving at step 0. Build() returns an indexed scenario
// (Cluster::Index() called) but does not validate it: tests of invalid input use the same builders.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::testing {

class JobBuilder {
 public:
  explicit JobBuilder(std::string id);

  /// Gpus and Duration set the first (single) shape; Shapes replaces every shape.
  JobBuilder& Gpus(int gpus);
  JobBuilder& Duration(int duration_steps);
  JobBuilder& Shapes(std::vector<Shape> shapes);
  JobBuilder& Priority(double priority);
  JobBuilder& Arrival(int arrival_step);
  JobBuilder& Kind(JobKind kind);
  /// Already running on the block starting at first_gpu since start_step (<= 0). Lowers the
  /// arrival to start_step when it is later; call Arrival afterwards to build an invalid job.
  JobBuilder& Running(int start_step, int first_gpu);
  /// For a running job (call Running first): work done by step 0 and restart steps left.
  JobBuilder& Progress(int progress_steps, int restart_steps_left = 0);
  /// Preemptible: saves every `every_steps` work steps, resumes after `restart_steps`.
  JobBuilder& Checkpointed(int every_steps, int restart_steps);
  JobBuilder& GpuType(std::string gpu_type);
  JobBuilder& MinMemory(double min_gpu_memory_gb);
  JobBuilder& Features(std::string features_json);

  [[nodiscard]] Job Build() const { return job_; }
  operator Job() const { return job_; }  // NOLINT(google-explicit-constructor): builder sugar

 private:
  Job job_;
};

class ServiceBuilder {
 public:
  explicit ServiceBuilder(std::string id);

  ServiceBuilder& Priority(double priority);
  /// GPUs needed at each step; left empty, ScenarioBuilder::Build fills horizon_steps zeros.
  ServiceBuilder& Demand(std::vector<int> demand);
  ServiceBuilder& Min(int min_gpus);
  /// Left unset, ScenarioBuilder::Build fills the spec's default, the cluster size.
  ServiceBuilder& Max(int max_gpus);
  ServiceBuilder& Churn(int max_change_per_step);
  ServiceBuilder& Current(int current_gpus);
  ServiceBuilder& GpuType(std::string gpu_type);
  ServiceBuilder& MinMemory(double min_gpu_memory_gb);

  /// The service as given; max_gpus is 0 and demand empty when not set (see ScenarioBuilder).
  [[nodiscard]] Service Build() const { return service_; }
  [[nodiscard]] bool has_max() const { return has_max_; }

 private:
  Service service_;
  bool has_max_ = false;
};

inline JobBuilder MakeJob(std::string id) { return JobBuilder(std::move(id)); }
inline ServiceBuilder MakeService(std::string id) { return ServiceBuilder(std::move(id)); }

class ScenarioBuilder {
 public:
  explicit ScenarioBuilder(std::string name);

  ScenarioBuilder& Steps(int horizon_steps);
  ScenarioBuilder& StepMinutes(int step_minutes);
  ScenarioBuilder& Description(std::string description);
  ScenarioBuilder& Group(std::string name, int nodes, int gpus_per_node,
                         std::string gpu_type = "gpu", double gpu_memory_gb = 80);
  ScenarioBuilder& Objective(double time_decay, double unmet_penalty_multiplier);
  ScenarioBuilder& Job(const JobBuilder& job);
  ScenarioBuilder& Job(ordo::Job job);
  ScenarioBuilder& Service(const ServiceBuilder& service);

  /// The scenario with its cluster indexed, service defaults filled (max_gpus = cluster size,
  /// demand = zeros) — not validated.
  [[nodiscard]] Scenario Build() const;

 private:
  Scenario scenario_;
  std::vector<ServiceBuilder> services_;
};

/// Fails the current test (non-fatally) with every violation CheckPlan finds, one per line, headed
/// by the scenario's name (random scenarios carry their seed in it) and the policy.
void ExpectLegal(const Scenario& scenario, const Plan& plan);
/// The same, with the seed printed explicitly.
void ExpectLegal(const Scenario& scenario, const Plan& plan, uint64_t seed);

/// The placement of job `id` in `plan`, or nullptr.
const JobPlacement* FindJob(const Plan& plan, std::string_view id);
/// The allocation of service `id` in `plan`, or nullptr.
const ServiceAllocation* FindService(const Plan& plan, std::string_view id);

/// `count` consecutive ids starting at `first`, for writing expected service GPU lists.
std::vector<int> Ids(int first, int count);

}  // namespace ordo::testing
