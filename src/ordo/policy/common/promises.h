// Fast mode's two promises to the operator (docs/fast-mode.md, "Do no harm"): a plan has at least
// fifo's value and at most reactive's unmet real-time GPU-steps. Fast mode keeps them among its
// candidates; full mode can be asked to keep them as model rows; the quality loop of
// docs/full-mode.md measures fast mode against the best plan that keeps them.
#pragma once

#include <limits>

#include "ordo/core/plan.h"

namespace ordo::policy {

struct Promises {
  double min_value = -std::numeric_limits<double>::infinity();            // fifo's value
  long long max_unmet_gpu_steps = std::numeric_limits<long long>::max();  // reactive's
};

/// Whether a plan with metrics `m` keeps the value promise, up to a relative 1e-6 (both values
/// are sums of products of doubles, added up in different orders).
bool KeepsValuePromise(const Metrics& m, const Promises& promises);

/// Whether it keeps both.
bool KeepsPromises(const Metrics& m, const Promises& promises);

}  // namespace ordo::policy
