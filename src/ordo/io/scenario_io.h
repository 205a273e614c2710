// Reading and writing scenario files (spec/formats-v1.md, "Scenario"): JSON or YAML, strict.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"

namespace ordo::io {

/// Supplies a duration for a job given `features` and no `duration_steps` (a forecaster, wired in
/// by the caller). Returns the duration in steps, or an error naming the feature at fault.
/// Called once per shape lacking a duration, with `job.shapes` holding just that shape
/// (`duration_steps` 0) so the GPU count is known. An error's `field` is taken relative to the
/// job's `features` (`tokens` is reported as `jobs[3].features.tokens`); exceptions are caught.
using DurationResolver =
    std::function<Result<int>(const Job& job, std::string_view features_json, int step_minutes)>;

struct ReadOptions {
  /// Without a resolver, a shape without `duration_steps` is an error.
  DurationResolver resolve_duration;
};

/// Parses scenario text (JSON, or YAML when `yaml` is true) and validates it (ValidateScenario).
/// Errors name the field path and the reason; unknown fields are errors unless they start with
/// `x-`. Never throws.
[[nodiscard]] Result<Scenario> ParseScenario(std::string_view text, bool yaml,
                                             const ReadOptions& options = {});

/// Reads a file: YAML for `.yaml`/`.yml`, or for any file not starting with `{`; else JSON.
/// The error's message does not repeat the path; callers add it.
[[nodiscard]] Result<Scenario> ReadScenarioFile(const std::string& path,
                                                const ReadOptions& options = {});

/// The spec's `cluster` object, which scenarios and worlds share: node groups with their checks
/// (gpus_per_node a power of two, at most Limits::kMaxGpus in all). `value` is the object itself;
/// errors name `cluster.node_groups[k]....`.
[[nodiscard]] Result<Cluster> ReadClusterJson(const nlohmann::json& value);

/// The GPU requirement of a job or service object at `path` (`gpu_type`, `min_gpu_memory_gb`),
/// which scenarios and worlds share; the object's other fields are the caller's to check.
[[nodiscard]] Result<GpuRequirement> ReadRequirementJson(const nlohmann::json& value,
                                                         const std::string& path);

/// A job's `checkpoint` object at `path` (`every_steps` >= 1, `restart_steps` >= 0), which
/// scenarios and worlds share.
[[nodiscard]] Result<Checkpoint> ReadCheckpointJson(const nlohmann::json& value,
                                                    const std::string& path);

/// The scenario as JSON text (pretty when indent >= 0), in the spec's format.
std::string WriteScenario(const Scenario& scenario, int indent = 2);

}  // namespace ordo::io
