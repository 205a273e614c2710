// Fast mode's moves around the jobs a search's best outcome makes lose most reward (started later
// than their arrival allows, or not at all), each kept only when the objective rises without more
// unmet real-time GPU-steps than `unmet_limit` (reactive's, where known) or than the outcome
// already leaves, so that no move breaks the do-no-harm promise. At most `tries` moves each.
#pragma once

#include "ordo/policy/fast/batch_passes.h"
#include "ordo/policy/fast/search.h"

namespace ordo::policy::fast {

/// Displacement: the job is put at its earliest start beside the other jobs alone, as if no
/// service held GPUs, and the services are re-planned as curves on what the jobs leave. It lets a
/// valuable rigid job take capacity a service's curve held (its ramp ahead of a peak, or demand
/// worth less than the job), which no order of the passes can.
void Displace(const SearchContext& ctx, const BatchPasses& batch, int tries, long long unmet_limit,
              Outcome& outcome);

/// Ruin and recreate: the job is committed first, in its most rewarding shape at its earliest
/// start beside the running jobs alone; the services are planned as curves on what it leaves; then
/// every other job is placed again by one greedy pass, in the order the outcome started them.
/// Where Displace keeps the other jobs and can only use the gaps they leave, this lets a wide,
/// long, valuable job take the capacity a service's demand held and the smaller jobs that were in
/// the way move around it (the optimum's trade on contended instances: docs/full-mode.md, "The
/// exceptions", class a).
void Recreate(const SearchContext& ctx, const BatchPasses& batch, int tries, long long unmet_limit,
              Outcome& outcome);

}  // namespace ordo::policy::fast
