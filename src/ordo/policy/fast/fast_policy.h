// Fast mode: the constraint-aware heuristic (policy "ordo"). See fast_policy.cc for the algorithm.
#pragma once

#include <memory>

#include "ordo/policy/policy.h"

namespace ordo::policy {

std::unique_ptr<Policy> MakeFastPolicy();

}  // namespace ordo::policy
