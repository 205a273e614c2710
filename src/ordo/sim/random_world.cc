#include "ordo/sim/random_world.h"

#include <algorithm>
#include <cmath>

#include "ordo/sim/random.h"

namespace ordo::sim {
namespace {

constexpr double kPi = 3.14159265358979323846;

int Pow2Between(Rng& rng, int lo, int hi) {  // lo, hi powers of two
  int n = 0;
  for (int g = lo; g <= hi; g *= 2) ++n;
  return lo << rng.Uniform(0, n - 1);
}

}  // namespace

World RandomWorld(const RandomWorldOptions& o) {
  Rng rng(o.seed * 0x2545f4914f6cdd1dULL + 17);
  World w;
  w.name = "random-" + std::to_string(o.seed);
  w.description = "synthetic world (sim/random_world.h)";
  w.step_minutes = o.step_minutes;
  w.horizon_steps = o.horizon_steps;
  w.days = o.days;
  const int groups = std::max(1, std::min(o.groups, o.nodes));
  for (int g = 0; g < groups; ++g) {
    NodeGroup group;
    group.name = std::string(1, static_cast<char>('a' + g));
    group.nodes = o.nodes / groups + (g < o.nodes % groups ? 1 : 0);
    group.gpus_per_node = o.gpus_per_node;
    group.gpu_type = g == 0 ? "H100" : "A100";
    group.gpu_memory_gb = g == 0 ? 80 : 40;
    w.cluster.groups.push_back(group);
  }
  w.cluster.Index();
  const int cluster_gpus = w.cluster.total_gpus();
  const int steps = w.window_steps();
  const double step_h = o.step_minutes / 60.0;
  if (o.duration_noise > 0) w.duration_noise = DurationNoise{o.duration_noise, o.seed};
  if (o.traffic_noise > 0) w.traffic_noise = TrafficNoise{o.traffic_noise, 0.8, o.seed};

  // Services: a smooth daily curve between 25% and 100% of the peak.
  double service_mean = 0;
  for (int i = 0; i < o.services; ++i) {
    WorldService s;
    s.id = "svc-" + std::to_string(i);
    s.priority = 8 + 2 * (i % 2);
    const int peak =
        std::max(1, static_cast<int>(std::lround(o.service_share * cluster_gpus / o.services)));
    s.min_gpus = 1;
    s.max_gpus = std::min(cluster_gpus, peak + 2);
    s.max_change_per_step = std::max(1, peak / 3);
    const double peak_hour = 12 + 8 * i;
    for (int t = 0; t < steps; ++t) {
      const double hour = std::fmod(t * step_h, 24.0);
      const double shape = 0.5 + 0.5 * std::cos(2 * kPi * (hour - peak_hour) / 24.0);
      const int d = static_cast<int>(std::ceil(peak * (0.25 + 0.75 * shape) - 1e-9));
      s.demand.push_back(std::max(0, d));
      service_mean += d;
    }
    w.services.push_back(std::move(s));
  }
  service_mean /= std::max(1, steps);

  // Jobs: draw until the offered GPU-steps reach load x the capacity the services leave.
  const double target = o.load * std::max(1.0, cluster_gpus - service_mean) * steps;
  double offered = 0;
  int next_id = 0;
  const int largest_node = o.gpus_per_node;
  while (offered < target) {
    WorldJob job;
    job.id = "j" + std::to_string(next_id++);
    job.arrival_step = rng.Uniform(0, steps - 1);
    job.priority = rng.Uniform(1, 10);
    const double r = rng.Real();
    int gpus = 1;
    double hours = 1;
    if (r < 0.5) {
      job.kind = JobKind::kTraining;
      gpus = Pow2Between(rng, 2, std::min(16, std::max(2, 2 * largest_node)));
      hours = 3 + 13 * rng.Real();
    } else if (r < 0.8) {
      job.kind = JobKind::kBatchInference;
      gpus = Pow2Between(rng, 1, std::min(4, largest_node));
      hours = 2 + 6 * rng.Real();
    } else {
      job.kind = JobKind::kQuantization;
      gpus = Pow2Between(rng, 1, std::min(2, largest_node));
      hours = 1 + 3 * rng.Real();
    }
    gpus = std::min(gpus, w.cluster.group_gpus(0));  // every job fits somewhere
    const int d = std::max(1, static_cast<int>(std::lround(hours / step_h)));
    job.shapes.push_back(WorldShape{gpus, d, std::nullopt});
    if (rng.Chance(0.25) && 2 * gpus <= cluster_gpus) {
      job.shapes.push_back(WorldShape{2 * gpus, std::max(1, d * 3 / 5), std::nullopt});
    }
    if (groups > 1 && rng.Chance(o.requirement_fraction)) {
      job.requirement.gpu_type = "H100";
    }
    offered += static_cast<double>(gpus) * d;
    w.jobs.push_back(std::move(job));
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(), [](const WorldJob& a, const WorldJob& b) {
    return a.arrival_step < b.arrival_step;
  });
  // Checkpoints from a stream of their own, so the jobs above are the same with or without them.
  Rng saves(HashSeed(o.seed, "checkpoints"));
  for (WorldJob& job : w.jobs) {
    if (job.kind == JobKind::kQuantization || !saves.Chance(o.checkpoint_fraction)) continue;
    job.checkpoint = Checkpoint{saves.Uniform(1, 4), saves.Uniform(0, 2)};
  }
  return w;
}

}  // namespace ordo::sim
