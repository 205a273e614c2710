#include "ordo/core/chart_axes.h"

#include <algorithm>

namespace ordo {

std::vector<NodeSpan> NodeSpans(const Cluster& cluster) {
  std::vector<NodeSpan> out;
  int first = 0;
  for (size_t g = 0; g < cluster.groups.size(); ++g) {
    const NodeGroup& group = cluster.groups[g];
    const std::string& base = group.name.empty() ? group.gpu_type : group.name;
    for (int n = 0; n < group.nodes; ++n) {
      out.push_back(
          {base + "-" + std::to_string(n), static_cast<int>(g), n, first, group.gpus_per_node});
      first += group.gpus_per_node;
    }
  }
  return out;
}

int TickEvery(int64_t span_steps, int step_minutes, int max_ticks) {
  const int64_t ticks = std::max(1, max_ticks);
  const int64_t minutes = std::max(1, step_minutes);
  static constexpr int64_t kRound[] = {1,   2,   5,   10,  15,   30,   60,    120,   180,
                                       240, 360, 480, 720, 1440, 2880, 10080, 20160, 40320};
  for (const int64_t every : kRound) {
    if (every % minutes != 0) continue;
    const int64_t steps = every / minutes;
    if (steps > std::max<int64_t>(1, span_steps)) break;  // no tick inside the span: not round
    if (span_steps / steps <= ticks) return static_cast<int>(steps);
  }
  return static_cast<int>(std::max<int64_t>(1, (span_steps + ticks - 1) / ticks));
}

std::string DurationLabel(int64_t minutes) {
  const int64_t days = minutes / 1440, hours = minutes % 1440 / 60, rest = minutes % 60;
  std::string out;
  auto part = [&](int64_t value, const char* unit) {
    if (value == 0) return;
    if (!out.empty()) out += ' ';
    out += std::to_string(value) + unit;
  };
  part(days, "d");
  part(hours, "h");
  part(rest, "m");
  return out.empty() ? "0h" : out;
}

}  // namespace ordo
