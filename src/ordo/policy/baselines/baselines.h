// The four reference policies of spec/formats-v1.md ("Reference policies") and the two preempting
// peers of its section "Preemption: checkpoints and migration": the denominators of every
// comparison ordo reports, implemented to the letter (docs/baselines.md lists the few places where
// the spec was silent and what was decided).
//
//   fifo               arrival order, static peak reservations, head-of-line blocking
//   fifo-backfill      arrival order, conservative backfill
//   priority-backfill  priority order, conservative backfill
//   reactive           step by step: services follow demand, jobs by priority on what is free now
//   priority-preempt   priority-backfill; a job that cannot start at its arrival takes a block
//                      from running checkpointed jobs of lower priority, which are requeued
//   reactive-preempt   reactive; a service short of GPUs preempts checkpointed jobs (lowest
//                      priority first, then latest started), which wait in the queue again
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
std::unique_ptr<Policy> MakePriorityPreemptPolicy();
std::unique_ptr<Policy> MakeReactivePreemptPolicy();

}  // namespace ordo::policy
