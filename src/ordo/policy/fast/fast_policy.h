// Fast mode: the constraint-aware heuristic (policy "ordo"). See fast_policy.cc for the algorithm.
#pragma once

#include <memory>

#include "ordo/policy/fast/baseline_plans.h"
#include "ordo/policy/policy.h"

namespace ordo::policy {

std::unique_ptr<Policy> MakeFastPolicy();
/// Fast mode keeping its promises against these baselines (tests: a baseline that fails).
std::unique_ptr<Policy> MakeFastPolicyWithBaselines(BaselineFactories baselines);

}  // namespace ordo::policy
