// An experiment: one world replayed through several policies, at one or several noise levels, each
// committed timeline checked against the spec's rules. What `ordo simulate` runs; the command only
// parses arguments and renders the result (report/sim_tables.h).
//
//   std::vector<RunSpec> runs = {*ParseRunSpec("ordo", 1), *ParseRunSpec("fifo@plan", 1)};
//   std::vector<NoiseLevel> levels = TrafficNoiseSweep(world, {0, 0.3}, {1, 2}, 0.5);
//   Result<Experiment> e = RunExperiment(levels, runs, MakeInTreeRegistry(), options);
//   e->reports[level][run]->metrics.total.net_value; e->problems;  // illegal steps, failed runs
//   std::vector<SweepRow> rows = SummariseSweep(*e, runs.size());
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/policy/registry.h"
#include "ordo/priority/planning_priority.h"
#include "ordo/sim/timeline.h"
#include "ordo/sim/world.h"

namespace ordo::sim {

/// One policy's run: re-planned every `replan_every` steps, or planned once per horizon with the
/// whole plan committed.
struct RunSpec {
  std::string policy;
  std::string label;  // as written: "ordo", "ordo@4", "fifo@plan"
  int replan_every = 1;
  bool whole_plan = false;
};

/// "NAME", "NAME@K" (re-plan every K steps) or "NAME@plan"; NAME is not checked here. Errors
/// (kInvalidInput, field "--policies") say what follows @.
[[nodiscard]] Result<RunSpec> ParseRunSpec(std::string_view item, int default_replan_every);

/// One world of an experiment: the given world, or one noise level of a sweep with one noise seed.
struct NoiseLevel {
  std::string name;         // "traffic noise 0.3"; empty outside a sweep
  size_t index = 0;         // of the sweep's value
  uint64_t seed = 1;        // noise seed
  bool label_seed = false;  // several seeds per level: run labels name the seed
  World world;
};

/// The world with actual durations drawn around the forecasts: forecast = actual x exp(sigma z);
/// the world's own forecast durations are dropped.
World WithDurationNoise(World world, double sigma, uint64_t seed);
/// The world with actual demand off the forecast curve (log-AR(1), correlation 0.8); the planner
/// is told the curve's `quantile`. The world's own forecast curves are dropped.
World WithTrafficNoise(World world, double sigma, uint64_t seed, double quantile);

enum class NoiseKind { kDuration, kTraffic };
/// One level per (sigma, seed), sigma-major: levels [i * seeds.size(), (i + 1) * seeds.size())
/// share sigmas[i].
std::vector<NoiseLevel> NoiseSweep(const World& base, NoiseKind kind,
                                   const std::vector<double>& sigmas,
                                   const std::vector<uint64_t>& seeds, double traffic_quantile);

/// Which runs plan with planning priorities (aging, fair share): none, ordo's, or all.
enum class PlanningFor { kOff, kOrdo, kAll };

struct ExperimentOptions {
  bool replan_on_arrival = true;  // never for ordo-full, a periodic review
  bool commit_whole_plan = false;
  bool arrivals_lookahead = false;
  PlanningFor planning_for = PlanningFor::kOrdo;
  priority::PlanningOptions planning = priority::DefaultPlanningOptions();
  double time_limit_s = 1.0;
  uint64_t seed = 1;
  bool lend_idle_gpus = true;    // SimOptions::lend_idle_gpus
  bool replan_on_surge = false;  // SimOptions::replan_on_surge, for every policy
  /// Called once per run with its label; returns the run's progress callback (may be empty).
  std::function<std::function<void(int, int)>(const std::string& label)> progress;
};

struct Experiment {
  /// reports[level][run], in RunSpec order; empty for a run that failed (named in `problems`).
  std::vector<std::vector<std::optional<SimReport>>> reports;
  /// "LABEL: message" for every failed run and every broken rule of a committed timeline.
  std::vector<std::string> problems;
};

/// Runs every RunSpec on every level. Errors: kInvalidInput when a world cannot be resolved or a
/// policy rejects it (the input is at fault), kNotFound for an unknown policy. A run that fails
/// otherwise, or commits an illegal step, is recorded in Experiment::problems.
[[nodiscard]] Result<Experiment> RunExperiment(const std::vector<NoiseLevel>& levels,
                                               const std::vector<RunSpec>& runs,
                                               const PolicyRegistry& registry,
                                               const ExperimentOptions& options);

/// {"world": name, "runs": [{"label", "policy", "level", "noise_seed", "total": metrics,
/// "days": [metrics...]}...]}: what `ordo simulate --format json` prints (docs/simulator.md).
std::string ExperimentJson(const World& world, const std::vector<NoiseLevel>& levels,
                           const Experiment& experiment);

/// A sweep's line for one run at one noise level, as means over the level's noise seeds; "kept"
/// is the ratio to the first level of the sweep with the same noise seed.
struct SweepRow {
  std::string run;
  std::string level;
  double value = 0;
  double kept = 0;
  double min_kept = 0;
  double net_value = 0;
  double kept_net = 0;
  double unmet_gpu_steps = 0;
  double preemptions = 0;
  double lost_gpu_steps = 0;
  double wait_mean_hours = 0;
  double wait_p95_hours = 0;
  double never_started = 0;
  double top_class_p95_hours = 0;  // jobs of priority 8-10
  double plan_ms_mean = 0;
};

/// Rows run-major, then by sweep value. `seeds_per_level` as given to NoiseSweep.
std::vector<SweepRow> SummariseSweep(const Experiment& experiment,
                                     const std::vector<NoiseLevel>& levels,
                                     const std::vector<RunSpec>& runs, size_t seeds_per_level);

/// Utilization (batch + served real-time) and unmet real-time GPU-steps by block of the day, over
/// the whole window: where in the day capacity is lost.
struct HourBlocks {
  std::vector<double> utilization;  // per block, 0..1
  std::vector<double> unmet_gpu_steps;
};
HourBlocks ByBlockOfDay(const World& world, const SimRun& run, int blocks);

}  // namespace ordo::sim
