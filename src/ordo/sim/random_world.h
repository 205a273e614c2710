// Synthetic worlds: a cluster, batch jobs of the three kinds arriving over days, and services with
// a daily demand curve — for property tests and the studies, where the trace worlds
// (trace_world.h) are too large or absent.
//
// Jobs arrive at a constant mean rate sized so that the offered batch work is `load` times the
// capacity the services' mean demand leaves; kinds, sizes and durations follow the study's words
// (training: 2-16 GPUs for 3-16 h; batch inference: 1-4 GPUs for 2-8 h; quantization: 1-2 GPUs for
// 1-4 h), a quarter of them with a second shape (twice the GPUs for a bit over half the time).
// Services follow a smooth daily curve (trough at `peak_hour` + 12) between 25% and 100% of their
// peak. The same options give the same world (own generator).
//
//   World w = RandomWorld({.seed = 7, .nodes = 2, .days = 2});
#pragma once

#include <cstdint>
#include <string>

#include "ordo/sim/world.h"

namespace ordo::sim {

struct RandomWorldOptions {
  uint64_t seed = 1;
  int nodes = 2;
  int gpus_per_node = 8;
  int groups = 1;  // node groups of different GPU types ("a", "b", ...); nodes split
  int days = 2;
  int step_minutes = 60;
  int horizon_steps = 24;
  double load = 1.2;  // offered batch GPU-hours / capacity left by the services' mean
  int services = 1;
  double service_share = 0.3;       // the services' summed peak, as a share of the cluster
  double duration_noise = 0;        // sigma of the world's duration_noise (0: exact forecasts)
  double traffic_noise = 0;         // sigma of the world's traffic_noise (0: exact demand)
  double requirement_fraction = 0;  // share of jobs that ask for group "a"'s GPU type
  /// Share of training and batch-inference jobs with a checkpoint (a save every 1-4 steps, 0-2
  /// steps to restart); quantization jobs never have one.
  double checkpoint_fraction = 0;
};

World RandomWorld(const RandomWorldOptions& options);

}  // namespace ordo::sim
