// `ordo compare` as a library: every chosen policy on every scenario, each plan checked with
// CheckPlan and measured from the scenario and the plan alone (never from the policy's own figures,
// except its planning time). Renderers (render.h) turn the result into tables and the report.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/error.h"
#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/policy/registry.h"
#include "ordo/report/study.h"
#include "ordo/report/wait_metrics.h"

namespace ordo::report {

/// A scenario and where it came from (a file path, for messages).
struct ScenarioInput {
  std::string source;
  Scenario scenario;  // passed ValidateScenario
};

/// One policy on one scenario.
struct PolicyRun {
  std::string policy;
  /// Empty when the policy returned an error (then `error` says what).
  std::optional<Plan> plan;
  std::string error;
  /// ComputeMetrics over the plan; solve_ms is the policy's own measurement.
  Metrics metrics;
  WaitMetrics wait;
  JobWaits waits;
  /// CheckPlan's findings. Not empty means the policy has a bug.
  std::vector<Violation> violations;
  /// (value - fifo's value) / fifo's value; empty without fifo or when fifo's value is not > 0.
  std::optional<double> value_gain;
  /// objective / the scenario's best known bound; empty without a positive bound.
  std::optional<double> of_bound;
  /// False for a fifo run made only as the denominator of the gains (not asked for by the user).
  bool shown = true;

  [[nodiscard]] bool ok() const { return plan.has_value() && violations.empty(); }
};

struct ScenarioResult {
  std::string source;
  Scenario scenario;
  std::vector<PolicyRun> runs;  // the policies in the order asked, then a hidden fifo if needed
  std::optional<double> fifo_value;
  std::optional<StudyFigures> study;
  /// The lowest upper bound on the planning objective known: the LP relaxation's (when
  /// CompareOptions::bound is set) or one a solver proved (ordo-full's best_bound), and where
  /// it came from ("LP relaxation", "ordo-full").
  std::optional<double> best_bound;
  std::string bound_source;

  /// The run of `policy`, or nullptr.
  [[nodiscard]] const PolicyRun* Find(std::string_view policy) const;
};

struct Comparison {
  std::vector<std::string> policies;  // shown, in order
  std::vector<ScenarioResult> scenarios;

  /// Runs that failed or produced an illegal plan: each is a bug to report.
  [[nodiscard]] int problems() const;
};

/// Where a comparison stands, given before each step: each policy run and each bound is a step.
struct CompareProgress {
  int done = 0;   // steps finished
  int total = 0;  // scenarios x (policies run, a hidden fifo included, + 1 when a bound is asked)
  std::string_view scenario;  // the scenario's name
  std::string_view step;      // the policy's name, or "LP bound"
};

struct CompareOptions {
  /// Registry names, in the order to show; empty means every registered policy.
  std::vector<std::string> policies;
  /// Applies to every policy; empty means DefaultTimeLimitSeconds(name) for each.
  std::optional<double> time_limit_s;
  /// PolicyOptions::effort for every policy (fast mode's search effort; the others ignore it).
  int effort = 1;
  /// An upper bound on a scenario's planning objective (the CLI passes the LP relaxation); may be
  /// empty. A bound that fails is left out (the solver's own bound, if any, is used).
  std::function<Result<double>(const Scenario&)> bound;
  /// Called before each step (for a progress bar at the edge), on the calling thread; may be empty.
  std::function<void(const CompareProgress&)> on_progress;
};

/// One line per problem: "scenario/policy: failed: ..." or "scenario/policy: rule 1: ...".
std::vector<std::string> ProblemLines(const Comparison& comparison);

/// Runs the comparison. Errors only for a policy name the registry does not know (kNotFound,
/// listing the known ones); a policy that fails or breaks a rule is recorded in its PolicyRun.
/// Duplicated names are shown once.
[[nodiscard]] Result<Comparison> RunComparison(std::vector<ScenarioInput> inputs,
                                               const PolicyRegistry& registry,
                                               const CompareOptions& options);

}  // namespace ordo::report
