// The static peak reservation that fifo, fifo-backfill and priority-backfill give real-time
// services (spec/formats-v1.md, "Reference policies"):
//
// Each service, in file order, reserves its peak demand over the horizon clamped to
// [min_gpus, max_gpus], from GPUs no running job uses at any step of the horizon: matching groups
// in file order, inside a group from its highest id down, fewer if fewer exist. Reserved GPUs are
// closed to jobs at every step. The service is allocated all of them at every step, except where
// current_gpus and max_change_per_step forbid it at first: then its count moves from current_gpus
// towards the reservation by the limit each step, on the highest ids of its reservation.
//
// Where the literal rule would break the plan's legality on a valid scenario, two repairs apply
// (docs/baselines.md): a reservation stops short of taking GPUs that a later service needs for its
// floor (floor_guard.h), and at a step where a service's floor (min_gpus, or what the churn limit
// forces it to keep from current_gpus — a ramp down from above its reservation) exceeds its
// reservation, it holds extra GPUs free at that step, taken the same way; they are closed to jobs
// at that step only. Neither changes anything when the literal plan is legal.
//
// Cost: O(S x G) to reserve plus O(S x T x reservation) to list the allocations.
//
//   chat: peak 6, min 1, max 8, current 2, churn 2; one group of 8 GPUs
//   reserved = {7, 6, 5, 4, 3, 2}
//   allocated: step 0 {4,5,6,7}, step 1.. {2,...,7}
#pragma once

#include <vector>

#include "ordo/core/scenario.h"

namespace ordo::policy {

struct StaticReservation {
  /// Per service (scenario order): the reserved ids in the order taken.
  std::vector<std::vector<int>> reserved;
  /// Per service and step: the ids allocated, ascending (reserved ones, plus any extra ones).
  std::vector<std::vector<std::vector<int>>> allocated;
};

/// The reservation and allocations for a scenario that passed ValidateScenario.
StaticReservation ComputeStaticReservation(const Scenario& scenario);

}  // namespace ordo::policy
