// Synthetic scenarios of a given size for benchmarks: nodes of 8 GPUs, a mix of job kinds and
// sizes, a few services with daily curves. Deterministic for a seed.
#pragma once

#include <cstdint>

#include "ordo/core/scenario.h"

namespace ordo::bench {

Scenario SyntheticScenario(int gpus, int jobs, int steps, uint64_t seed = 1);

}  // namespace ordo::bench
