#include "ordo/forecast/ramp_reserve.h"

#include <algorithm>

namespace ordo::forecast {

int RampReserve(std::span<const int> recent, int churn) {
  int rise = 0;
  for (size_t k = 1; k < recent.size(); ++k) rise = std::max(rise, recent[k] - recent[k - 1]);
  return std::max(0, rise - churn);
}

void AddRampReserve(std::vector<int>& demand, int reserve, int max_gpus) {
  if (reserve <= 0) return;
  for (int& d : demand) d = std::max(d, std::min(max_gpus, d + reserve));
}

}  // namespace ordo::forecast
