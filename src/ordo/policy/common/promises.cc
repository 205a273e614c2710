#include "ordo/policy/common/promises.h"

#include <algorithm>
#include <cmath>

namespace ordo::policy {

bool KeepsValuePromise(const Metrics& m, const Promises& promises) {
  return m.value >= promises.min_value - 1e-6 * std::max(1.0, std::abs(promises.min_value));
}

bool KeepsPromises(const Metrics& m, const Promises& promises) {
  return KeepsValuePromise(m, promises) &&
         m.realtime_unmet_gpu_steps <= promises.max_unmet_gpu_steps;
}

}  // namespace ordo::policy
