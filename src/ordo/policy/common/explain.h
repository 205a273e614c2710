// Why a job does not start now: for every pending job of any plan, its planned start and the
// reason that binds at the earliest step it could have started.
#pragma once

#include <vector>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::policy {

/// One explanation per job that is not running and does not start at step 0, in scenario order.
/// Reasons, checked in this order: it has not arrived; no group matches its GPU type or memory; no
/// block of its size exists; at its earliest step some block is held only by services (a service
/// peak, the service named); enough GPUs are free but no aligned block is (fragmented); otherwise
/// the job holding the least-blocked block, the highest priority one there, is named. A plan that
/// left a free block unused gets kLowValue. `plan` must be legal. Cost O(jobs x blocks x duration x
/// block size) in the worst case: call it on demand, not on every plan.
std::vector<JobExplanation> ExplainPlan(const Scenario& scenario, const Plan& plan);

/// "blocked_by_job", "service_peak", ... — the wire name of a reason.
std::string_view WaitReasonName(WaitReason reason);

}  // namespace ordo::policy
