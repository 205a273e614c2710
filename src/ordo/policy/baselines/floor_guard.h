// Keeping services' floors satisfiable while the baselines hand out GPUs greedily.
//
// The spec's baselines take GPUs in file order ("services in file order, matching groups in file
// order, highest id down"). Read literally, an early service's peak can take the GPUs a later
// service needs for its `min_gpus` (or for what `max_change_per_step` forces it to keep from
// `current_gpus`), which would make the plan illegal on a valid scenario. The guard lets a holder
// take, group by group, the most GPUs that still leave every remaining floor satisfiable (a max
// flow over requirement classes x GPU kinds). Whenever the literal rule leaves the floors
// satisfiable — every case where the literal plan is legal — the guard changes nothing.
//
//   std::vector<FloorNeed> later = {{&b.requirement, 2}};
//   std::vector<int> ids = TakeGuarded(cluster, a.requirement, /*want=*/8, /*own_floor=*/0,
//                                      candidates, available, later);  // leaves 2 for b
#pragma once

#include <vector>

#include "ordo/core/scenario.h"

namespace ordo::policy::baselines {

/// GPUs some holder still must get, from groups matching `requirement` (not owned).
struct FloorNeed {
  const GpuRequirement* requirement = nullptr;
  int need = 0;
};

/// True when all `needs` can be met at once from `available[g]` free GPUs of each group g.
/// Cost: a max flow over at most (distinct requirements + distinct GPU kinds) nodes.
[[nodiscard]] bool NeedsFit(const Cluster& cluster, const std::vector<int>& available,
                            const std::vector<FloorNeed>& needs);

/// Takes up to `want` ids for a holder with requirement `req`: from `candidates[g]` (each group's
/// ids in the order to take them), groups in file order, as many from each group as keep `others`
/// and the holder's own remaining floor (`own_floor` minus what it has taken) satisfiable from
/// `available` (free GPUs per group, the candidates included; decremented by what is taken).
/// Assumes that state is satisfiable on entry. Returns the ids taken, in the order taken.
std::vector<int> TakeGuarded(const Cluster& cluster, const GpuRequirement& req, int want,
                             int own_floor, const std::vector<std::vector<int>>& candidates,
                             std::vector<int>& available, const std::vector<FloorNeed>& others);

}  // namespace ordo::policy::baselines
