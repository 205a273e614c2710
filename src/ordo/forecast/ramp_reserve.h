// A ramp reserve: GPUs a real-time service keeps above its forecast because its churn limit would
// not let it follow a sudden rise of its traffic. A plan at the forecast serves a surge only as
// fast as max_change_per_step allows from where the service stood; a service that has recently
// risen by R GPUs in one step, with a churn limit of c < R, is planned R - c GPUs above its
// forecast, so the next rise as large is served at once. Services without a churn limit, or whose
// rises stay within it, keep none.
//
//   // max(0, the largest one-step rise of the recent actual demand - the churn limit):
//   const int reserve = RampReserve(recent_actual, churn);
//   AddRampReserve(service, reserve);
#pragma once

#include <span>
#include <vector>

#include "ordo/core/scenario.h"

namespace ordo::forecast {

/// max(0, R - churn), R the largest one-step rise in `recent` (a service's actual GPUs per step,
/// oldest first). 0 with fewer than two values; falls never count.
int RampReserve(std::span<const int> recent, int churn);

/// Raises every step of the service's demand by `reserve` GPUs, none above its `max_gpus` (a step
/// already above it stays where it was), and records what each step gained in `service.reserve`.
void AddRampReserve(Service& service, int reserve);

}  // namespace ordo::forecast
