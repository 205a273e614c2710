#include "tests/support/random_scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "ordo/core/validate.h"

namespace ordo::testing {

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

int Rng::Uniform(int lo, int hi) {
  const auto span = static_cast<uint64_t>(static_cast<int64_t>(hi) - lo + 1);
  return static_cast<int>(lo + static_cast<int64_t>(Next() % span));
}

double Rng::Real() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

bool Rng::Chance(double p) { return Real() < p; }

namespace {

struct GpuModel {
  const char* type;
  double memory_gb;
};
// Same type with different memory on purpose: min_gpu_memory_gb then splits a type.
constexpr GpuModel kModels[] = {{"H100", 80}, {"H100", 94}, {"A100", 40},
                                {"A100", 80}, {"L4", 24},   {"gpu", 80}};
constexpr int kGpusPerNode[] = {1, 2, 4, 8, 16};
constexpr JobKind kKinds[] = {JobKind::kTraining, JobKind::kBatchInference, JobKind::kQuantization};

int PowerOfTwoUpTo(Rng& rng, int max_value) {
  int exponent_max = 0;
  while ((2 << exponent_max) <= max_value) ++exponent_max;
  // Small blocks are more common, as in real queues.
  const int exponent = std::min(rng.Uniform(0, exponent_max), rng.Uniform(0, exponent_max));
  return 1 << exponent;
}

std::vector<NodeGroup> RandomGroups(Rng& rng, const RandomScenarioOptions& options) {
  std::vector<NodeGroup> groups;
  if (options.contended) {
    // 8-32 GPUs: draw small groups until the total lands in range.
    for (;;) {
      groups.clear();
      int total = 0;
      const int group_count = rng.Uniform(1, 3);
      for (int g = 0; g < group_count; ++g) {
        const int gpn = kGpusPerNode[rng.Uniform(0, 3)];  // 1..8
        const int nodes = rng.Uniform(1, std::max(1, 16 / gpn));
        const GpuModel& model = kModels[rng.Uniform(0, 5)];
        groups.push_back(
            NodeGroup{"g" + std::to_string(g), nodes, gpn, model.type, model.memory_gb});
        total += nodes * gpn;
      }
      if (total >= 8 && total <= 32) return groups;
    }
  }
  // Skewed towards small clusters so that a thousand instances stay quick, with some large ones.
  const double r = rng.Real();
  int lo = options.min_nodes;
  int hi = options.max_nodes;
  if (r < 0.5) {
    hi = std::min(hi, std::max(lo, 8));
  } else if (r < 0.85) {
    hi = std::min(hi, std::max(lo, 24));
  }
  const int total_nodes = rng.Uniform(lo, hi);
  const int group_count = rng.Uniform(1, std::min(options.max_groups, total_nodes));
  std::vector<int> nodes(static_cast<size_t>(group_count), 1);
  for (int n = group_count; n < total_nodes; ++n) ++nodes[rng.Uniform(0, group_count - 1)];
  for (int g = 0; g < group_count; ++g) {
    const GpuModel& model = kModels[rng.Uniform(0, 5)];
    const int gpn = kGpusPerNode[rng.Uniform(0, 4)];
    groups.push_back(
        NodeGroup{"g" + std::to_string(g), nodes[g], gpn, model.type, model.memory_gb});
  }
  return groups;
}

GpuRequirement RandomRequirement(Rng& rng, const Cluster& cluster, double fraction) {
  GpuRequirement req;
  if (!rng.Chance(fraction)) return req;
  const NodeGroup& group =
      cluster.groups[rng.Uniform(0, static_cast<int>(cluster.groups.size()) - 1)];
  const int kind = rng.Uniform(0, 9);
  if (kind <= 4) {
    req.gpu_type = group.gpu_type;
  } else if (kind <= 6) {
    req.min_gpu_memory_gb = group.gpu_memory_gb;
  } else if (kind == 7) {
    req.gpu_type = group.gpu_type;
    req.min_gpu_memory_gb = group.gpu_memory_gb;
  } else if (kind == 8) {
    req.gpu_type = "TPU";  // matches no group
  } else {
    req.min_gpu_memory_gb = 1000;  // matches no group
  }
  return req;
}

Job RandomJob(Rng& rng, int index, const Scenario& scenario, const RandomScenarioOptions& options,
              std::vector<char>& used_at_zero) {
  const int steps = scenario.horizon_steps;
  const int total_gpus = scenario.cluster.total_gpus();
  Job job;
  job.id = "j" + std::to_string(index);
  job.kind = kKinds[rng.Uniform(0, 2)];
  job.priority = rng.Chance(0.8) ? rng.Uniform(1, 10) : 0.5 + rng.Uniform(0, 40) * 0.25;
  const double r = rng.Real();
  if (r < 0.35) {
    job.arrival_step = -rng.Uniform(0, 12);
  } else if (r < 0.93) {
    job.arrival_step = rng.Uniform(0, steps - 1);
  } else {
    job.arrival_step = steps + rng.Uniform(0, 5);  // arrives after the horizon
  }
  // Mostly blocks that fit somewhere, sometimes larger than any group.
  const int max_block = rng.Chance(0.05) ? 2 * total_gpus : std::min(total_gpus, 32);
  const int shape_count = rng.Chance(options.shapes_fraction) ? rng.Uniform(2, 3) : 1;
  for (int k = 0; k < shape_count; ++k) {
    Shape shape;
    shape.gpus = PowerOfTwoUpTo(rng, std::max(1, max_block));
    const double d = rng.Real();
    if (d < 0.6) {
      shape.duration_steps = rng.Uniform(1, std::max(1, steps / 4));
    } else if (d < 0.93) {
      shape.duration_steps = rng.Uniform(1, steps);
    } else {
      shape.duration_steps = rng.Uniform(steps, 2 * steps);  // runs past the horizon
    }
    job.shapes.push_back(shape);
  }
  job.requirement = RandomRequirement(rng, scenario.cluster, options.requirement_fraction);

  if (rng.Chance(options.running_fraction)) {
    // Running: one shape, on a block no other running job uses (all of them hold their blocks at
    // step 0, since start <= 0 < end), in a group the job matches.
    job.shapes.resize(1);
    const Shape& shape = job.shapes.front();
    std::vector<int> free_blocks;
    scenario.cluster.ForEachBlock(shape.gpus, job.requirement, [&](int first) {
      for (int gpu = first; gpu < first + shape.gpus; ++gpu) {
        if (used_at_zero[static_cast<size_t>(gpu)]) return;
      }
      free_blocks.push_back(first);
    });
    if (!free_blocks.empty()) {
      const int first = free_blocks[rng.Uniform(0, static_cast<int>(free_blocks.size()) - 1)];
      const int start = -rng.Uniform(0, shape.duration_steps - 1);
      job.running = RunningPlacement{start, first};
      job.arrival_step = start - rng.Uniform(0, 3);
      for (int gpu = first; gpu < first + shape.gpus; ++gpu)
        used_at_zero[static_cast<size_t>(gpu)] = 1;
    }
  }
  if (options.checkpoint_fraction > 0 && rng.Chance(options.checkpoint_fraction)) {
    const int duration = job.shapes.front().duration_steps;
    job.checkpoint = Checkpoint{rng.Uniform(1, duration), rng.Uniform(0, 3)};
    if (job.running && rng.Chance(0.5)) {
      job.running->progress_steps = rng.Uniform(0, duration - 1);
      job.running->restart_steps_left = rng.Uniform(0, 3);
    }
  }
  return job;
}

std::vector<int> RandomDemand(Rng& rng, int steps, int peak) {
  std::vector<int> demand(static_cast<size_t>(steps), 0);
  if (peak <= 0) return demand;
  const int pattern = rng.Uniform(0, 3);
  const double period = rng.Uniform(6, std::max(6, steps));
  const double phase = rng.Uniform(0, 23);
  const int flat = rng.Uniform(0, peak);
  for (int t = 0; t < steps; ++t) {
    double value = 0;
    switch (pattern) {
      case 0:  // diurnal wave
        value = peak * (0.5 + 0.5 * std::sin(2 * std::numbers::pi * (t + phase) / period));
        break;
      case 1:  // flat
        value = flat;
        break;
      case 2:  // noise
        value = rng.Uniform(0, peak);
        break;
      default:  // one burst
        value = (t >= phase && t < phase + period / 2) ? peak : flat / 2;
        break;
    }
    demand[static_cast<size_t>(t)] = std::max(0, static_cast<int>(std::lround(value)));
  }
  return demand;
}

Scenario Draw(uint64_t seed, const RandomScenarioOptions& options) {
  Rng rng(seed);
  Scenario scenario;
  scenario.name = "random-" + std::to_string(seed);
  scenario.step_minutes = 60;
  scenario.horizon_steps =
      options.contended ? rng.Uniform(24, 48) : rng.Uniform(options.min_steps, options.max_steps);
  constexpr double kDecays[] = {0, 0.25, 0.5, 0.9, 1};
  constexpr double kPenalties[] = {0, 1, 4, 8, 16};
  scenario.objective.time_decay = kDecays[rng.Uniform(0, 4)];
  scenario.objective.unmet_penalty_multiplier = kPenalties[rng.Uniform(0, 4)];
  scenario.cluster.groups = RandomGroups(rng, options);
  scenario.cluster.Index();
  const Cluster& cluster = scenario.cluster;
  const int total_gpus = cluster.total_gpus();
  const int steps = scenario.horizon_steps;

  std::vector<char> used_at_zero(static_cast<size_t>(total_gpus), 0);
  if (options.contended) {
    // Batch work well beyond the cluster's GPU-steps.
    const double target = rng.Uniform(12, 25) / 10.0 * total_gpus * steps;
    double work = 0;
    for (int j = 0; work < target && j < 200; ++j) {
      scenario.jobs.push_back(RandomJob(rng, j, scenario, options, used_at_zero));
      const Shape& shape = scenario.jobs.back().shapes.front();
      work += static_cast<double>(shape.gpus) * shape.duration_steps;
    }
  } else {
    const int job_count = rng.Uniform(0, std::min(options.max_jobs, 4 + total_gpus / 2));
    for (int j = 0; j < job_count; ++j) {
      scenario.jobs.push_back(RandomJob(rng, j, scenario, options, used_at_zero));
    }
  }

  // Services after the running jobs, so their floors can be kept inside what is free at step 0
  // (the busiest step for floors: running jobs only end, and floors only fall, later on).
  std::vector<int> free_in_group(cluster.groups.size(), 0);
  for (int gpu = 0; gpu < total_gpus; ++gpu) {
    if (!used_at_zero[static_cast<size_t>(gpu)]) ++free_in_group[cluster.group_of(gpu)];
  }
  const int service_count =
      options.contended ? rng.Uniform(1, 3) : rng.Uniform(0, options.max_services);
  for (int s = 0; s < service_count; ++s) {
    Service service;
    service.id = "s" + std::to_string(s);
    service.priority = rng.Uniform(1, 20);
    service.requirement = RandomRequirement(rng, cluster, options.requirement_fraction);
    int pool = 0;
    for (size_t g = 0; g < cluster.groups.size(); ++g) {
      if (service.requirement.Matches(cluster.groups[g])) pool += free_in_group[g];
    }
    service.min_gpus = rng.Chance(0.5) ? 0 : rng.Uniform(0, std::min(pool, 3));
    service.max_gpus =
        rng.Chance(0.3) ? total_gpus : rng.Uniform(std::max(1, service.min_gpus), total_gpus);
    service.max_gpus = std::max(service.max_gpus, service.min_gpus);
    if (rng.Chance(0.5)) service.max_change_per_step = rng.Uniform(1, 4);
    if (rng.Chance(0.5)) {
      int current = rng.Uniform(service.min_gpus, std::min(service.max_gpus, service.min_gpus + 8));
      // The floor at step 0 is current - churn (or min without a churn limit); keep it in the pool.
      if (service.max_change_per_step) {
        current = std::min(current, pool + *service.max_change_per_step);
      }
      service.current_gpus = std::max(current, service.min_gpus);
    }
    int floor = service.min_gpus;
    if (service.current_gpus && service.max_change_per_step) {
      floor = std::max(floor, *service.current_gpus - *service.max_change_per_step);
    }
    // Claim the floor from the matching groups so the next service cannot count it too.
    for (size_t g = 0; g < cluster.groups.size() && floor > 0; ++g) {
      if (!service.requirement.Matches(cluster.groups[g])) continue;
      const int take = std::min(floor, free_in_group[g]);
      free_in_group[g] -= take;
      floor -= take;
    }
    const int share = options.contended ? total_gpus * rng.Uniform(5, 15) / 10 / service_count
                                        : std::max(1, total_gpus / 3 / std::max(1, service_count));
    const int peak = rng.Chance(0.1) ? 0 : rng.Uniform(1, std::max(1, share));
    service.demand = RandomDemand(rng, steps, peak);
    scenario.services.push_back(std::move(service));
  }
  return scenario;
}

}  // namespace

Scenario RandomScenario(uint64_t seed, const RandomScenarioOptions& options) {
  uint64_t draw_seed = seed;
  Scenario scenario;
  constexpr int kAttempts = 100;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    scenario = Draw(draw_seed, options);
    scenario.name = "random-" + std::to_string(seed);
    if (attempt > 0) scenario.description = "redrawn " + std::to_string(attempt) + " time(s)";
    const Result<void> valid = ValidateScenario(scenario);
    if (valid) return scenario;
    // A derived seed keeps the result a pure function of `seed`.
    draw_seed = draw_seed * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  ADD_FAILURE() << "RandomScenario(" << seed << "): no valid draw in " << kAttempts << " attempts";
  return scenario;
}

}  // namespace ordo::testing
