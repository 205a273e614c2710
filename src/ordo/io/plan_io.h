// Reading and writing plan files (spec/formats-v1.md, "Plan").
#pragma once

#include <optional>
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

/// The wire name of a wait reason in `x-explain` (and the service's `reason`): "none",
/// "not_arrived", "blocked_by_job", "service_peak", "no_block_of_size", "gpu_type", "fragmented",
/// "low_value".
std::string_view WaitReasonName(WaitReason reason);
std::optional<WaitReason> ParseWaitReason(std::string_view name);

}  // namespace ordo::io
