// The four reference policies of spec/formats-v1.md ("Reference policies"): the denominators of
// every comparison ordo reports, implemented to the letter (docs/baselines.md lists the few places
// where the spec was silent and what was decided).
//
//   fifo               arrival order, static peak reservations, head-of-line blocking
//   fifo-backfill      arrival order, conservative backfill
//   priority-backfill  priority order, conservative backfill
//   reactive           step by step: services follow demand, jobs by priority on what is free now
//
//   std::unique_ptr<Policy> fifo = MakeFifoPolicy();
//   Result<Plan> plan = fifo->Solve(scenario, PolicyOptions{});
//   // plan->jobs / plan->services in scenario order, metrics filled
#pragma once

#include <memory>

#include "ordo/policy/policy.h"

namespace ordo::policy {

std::unique_ptr<Policy> MakeFifoPolicy();
std::unique_ptr<Policy> MakeFifoBackfillPolicy();
std::unique_ptr<Policy> MakePriorityBackfillPolicy();
std::unique_ptr<Policy> MakeReactivePolicy();

}  // namespace ordo::policy
