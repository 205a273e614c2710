// Helpers for the baseline tests: run a policy, check the plan's legality, read placements.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string_view>
#include <vector>

#include "ordo/core/validate.h"
#include "ordo/policy/policy.h"
#include "tests/support/builders.h"

namespace ordo::testing {

/// Validates the scenario, solves it, and checks the plan with CheckPlan (non-fatally).
inline Plan SolveLegal(Policy& policy, const Scenario& scenario) {
  const auto valid = ValidateScenario(scenario);
  EXPECT_TRUE(valid.has_value()) << (valid ? "" : valid.error().ToString());
  Result<Plan> plan = policy.Solve(scenario, PolicyOptions{});
  EXPECT_TRUE(plan.has_value()) << (plan ? "" : plan.error().ToString());
  if (!plan) return Plan{};
  ExpectLegal(scenario, *plan);
  return *plan;
}

/// start_step of job `id` (nullopt when unstarted); fails the test when the job is missing.
inline std::optional<int> StartOf(const Plan& plan, std::string_view id) {
  const JobPlacement* job = FindJob(plan, id);
  EXPECT_NE(job, nullptr) << id;
  return job ? job->start_step : std::nullopt;
}

/// {start_step, first_gpu} of a started job, or {-100, -100} when unstarted or missing.
inline std::pair<int, int> SlotOf(const Plan& plan, std::string_view id) {
  const JobPlacement* job = FindJob(plan, id);
  EXPECT_NE(job, nullptr) << id;
  if (!job || !job->started()) return {-100, -100};
  return {*job->start_step, job->first_gpu};
}

/// The service's GPU lists, step by step.
inline std::vector<std::vector<int>> GpusOf(const Plan& plan, std::string_view id) {
  const ServiceAllocation* service = FindService(plan, id);
  EXPECT_NE(service, nullptr) << id;
  return service ? service->gpus : std::vector<std::vector<int>>{};
}

/// `steps` copies of `ids`.
inline std::vector<std::vector<int>> Repeat(const std::vector<int>& ids, int steps) {
  return std::vector<std::vector<int>>(static_cast<size_t>(steps), ids);
}

using Slot = std::pair<int, int>;

}  // namespace ordo::testing
