// Random valid scenarios for property tests: varied clusters (several node groups of different GPU
// types, memory and node sizes), mixed job kinds and shapes, GPU requirements (some matching
// nothing), jobs already running on legal blocks, arrivals in the past and the future, services
// with floors, ceilings, churn limits and a step -1 allocation.
//
//   for (uint64_t seed = 1; seed <= 1000; ++seed) {
//     Scenario s = RandomScenario(seed, {});            // passes ordo::ValidateScenario
//     ... plan it, ExpectLegal(s, plan, seed) ...
//
// The same seed and options always give the same scenario (own generator, no std distributions).
#pragma once

#include <cstdint>

#include "ordo/core/scenario.h"

namespace ordo::testing {

struct RandomScenarioOptions {
  /// A small, over-subscribed instance: 8-32 GPUs, 24-48 steps, batch work and service demand
  /// beyond capacity. Overrides the size fields below.
  bool contended = false;
  int min_nodes = 1;  // total over all groups
  int max_nodes = 64;
  int min_steps = 12;
  int max_steps = 96;
  int max_groups = 4;
  int max_jobs = 60;
  int max_services = 4;
  /// Chance that a job which can be placed at all is already running.
  double running_fraction = 0.2;
  /// Chance that a job lists 2-3 alternative shapes.
  double shapes_fraction = 0.25;
  /// Chance that a job or service carries a gpu_type / min_gpu_memory_gb requirement.
  double requirement_fraction = 0.25;
  /// Chance that a job has a `checkpoint` (every 1..duration steps, 0-3 restart steps); a running
  /// one then also gets progress_steps and restart_steps_left half the time. 0 draws nothing, so
  /// the instances of the other options stay as they were.
  double checkpoint_fraction = 0;
};

/// A scenario that passes ordo::ValidateScenario, named "random-<seed>" (so failures name the
/// seed). When a draw fails validation, draws again from a seed derived from `seed`.
Scenario RandomScenario(uint64_t seed, const RandomScenarioOptions& options = {});

/// A small deterministic generator (splitmix64), for tests that need their own random choices.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  /// Uniform in [lo, hi] (inclusive); lo <= hi.
  int Uniform(int lo, int hi);
  /// True with probability p.
  bool Chance(double p);
  /// Uniform in [0, 1).
  double Real();

 private:
  uint64_t state_;
};

}  // namespace ordo::testing
