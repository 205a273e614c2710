// Synthetic scenarios of a given size for benchmarks, contended at every size: the batch jobs and
// the services' demand offer about kOfferedLoad times the cluster's GPU-steps over the horizon.
// Two GPU types (three quarters of the nodes 80 GB H100, a quarter 40 GB A100), a quarter of the
// jobs bound to one type, a third of the multi-GPU jobs moldable (2-3 shapes), a mix of kinds and
// sizes around the size that makes the work fit the horizon, a few services with daily curves.
// Deterministic for a seed.
#pragma once

#include <cstdint>

#include "ordo/core/scenario.h"

namespace ordo::bench {

/// The work offered over the cluster's GPU-steps: inside the 1.3-2x band at which a planner's
/// choices matter (below 1 every policy starts everything; far above, most work waits anyway).
inline constexpr double kOfferedLoad = 1.6;

Scenario SyntheticScenario(int gpus, int jobs, int steps, uint64_t seed = 1);

/// The GPU-steps offered inside the horizon (each job's longest stay cut at the horizon, plus the
/// services' demand) over the cluster's GPU-steps.
double OfferedLoad(const Scenario& scenario);

}  // namespace ordo::bench
