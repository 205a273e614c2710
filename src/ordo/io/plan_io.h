// Reading and writing plan files (spec/formats-v1.md, "Plan").
#pragma once

#include <string>
#include <string_view>

#include "ordo/core/error.h"
#include "ordo/core/plan.h"

namespace ordo::io {

/// Parses plan text (JSON or YAML), strictly: the structure and types only. Whether the plan fits
/// a scenario is CheckPlan's job, so a reader never rejects a plan for breaking a rule.
[[nodiscard]] Result<Plan> ParsePlan(std::string_view text, bool yaml);
[[nodiscard]] Result<Plan> ReadPlanFile(const std::string& path);

/// The plan as JSON text. Writes `x-explain` when explanations exist and the solver report fields
/// (`status`, `best_bound`, `gap`, `nodes`) inside `metrics` when present.
std::string WritePlan(const Plan& plan, int indent = 2);

}  // namespace ordo::io
