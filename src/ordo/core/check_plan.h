// The independent legality checker: the five rules and the shape rules of spec/formats-v1.md,
// written from the spec and from no planner. Every test runs plans through it.
#pragma once

#include <string>
#include <vector>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo {

/// Which rule a violation breaks. 0 is the plan's structure (a job missing or twice, an unknown id,
/// the wrong number of steps); 1..5 are the spec's rules.
struct Violation {
  int rule = 0;
  std::vector<std::string> ids;  // the jobs / services involved
  std::string message;           // one line, names the ids and the step or GPU
};

/// Every violation of `plan` against `scenario` (empty when the plan is legal). Conflicts on rule 1
/// are reported once per pair of holders, at the first GPU-step where they collide. The scenario
/// must have passed ValidateScenario. Cost O(G*T + size of the plan).
std::vector<Violation> CheckPlan(const Scenario& scenario, const Plan& plan);

/// "rule 1: jobs a and b both hold GPU 3 at step 5" — the line `ordo validate` prints.
std::string FormatViolation(const Violation& violation);

}  // namespace ordo
