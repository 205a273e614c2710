#include "ordo/forecast/ramp_reserve.h"

#include <algorithm>

namespace ordo::forecast {

int RampReserve(std::span<const int> recent, int churn) {
  int rise = 0;
  for (size_t k = 1; k < recent.size(); ++k) rise = std::max(rise, recent[k] - recent[k - 1]);
  return std::max(0, rise - churn);
}

void AddRampReserve(Service& service, int reserve) {
  if (reserve <= 0) return;
  service.reserve.resize(service.demand.size(), 0);
  for (size_t t = 0; t < service.demand.size(); ++t) {
    int& d = service.demand[t];
    const int raised = std::max(d, std::min(service.max_gpus, d + reserve));
    service.reserve[t] += raised - d;
    d = raised;
  }
}

}  // namespace ordo::forecast
