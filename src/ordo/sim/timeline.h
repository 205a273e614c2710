// What a simulation leaves behind for people and tools: the committed timeline of each run as JSON
// (docs/simulator.md, "Timeline JSON") and a self-contained HTML page with inline SVG charts (GPU x
// time, demand against allocation, per-day tables; no scripts, no network). Both are returned as
// text; the caller writes them.
//
//   std::vector<SimReport> runs = ...;           // one per policy
//   std::string json = TimelineJson(world, runs);
//   std::string html = TimelineHtml(world, runs);
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ordo/sim/sim_metrics.h"
#include "ordo/sim/simulator.h"
#include "ordo/sim/world.h"

namespace ordo::sim {

/// A run with its metrics.
struct SimReport {
  SimRun run;
  SimMetrics metrics;
  std::string label;  // shown instead of the policy name when not empty ("ordo, K=4")
};

/// The metrics of a period as a JSON object (shared by the timeline and ExperimentJson).
nlohmann::ordered_json PeriodMetricsObject(const PeriodMetrics& m);

std::string TimelineJson(const World& world, const std::vector<SimReport>& runs);
std::string TimelineHtml(const World& world, const std::vector<SimReport>& runs);

}  // namespace ordo::sim
