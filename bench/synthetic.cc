#include "bench/synthetic.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <string>

namespace ordo::bench {
namespace {

// The largest power of two <= n (n >= 1): the widest block a group of n GPUs holds, since every
// block wider than a node covers whole nodes and the nodes' size is a power of two.
int WidestBlock(int n) { return static_cast<int>(std::bit_floor(static_cast<unsigned>(n))); }

// GPU-steps of `job`'s first shape inside a horizon of `steps`.
double FirstShapeWork(const Job& job, int steps) {
  const Shape& shape = job.shapes.front();
  const int inside = std::min(shape.duration_steps, steps - std::max(0, job.arrival_step));
  return static_cast<double>(shape.gpus) * std::max(0, inside);
}

}  // namespace

Scenario SyntheticScenario(int gpus, int jobs, int steps, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Scenario s;
  s.name = "synthetic-" + std::to_string(gpus) + "x" + std::to_string(jobs) + "x" +
           std::to_string(steps);
  s.horizon_steps = steps;
  // Nodes of 8 GPUs (of half the cluster below 16 GPUs, so there are two nodes and two types).
  const int gpus_per_node = gpus >= 16 ? 8 : std::max(1, gpus / 2);
  const int nodes = std::max(1, gpus / gpus_per_node);
  const int small_nodes = nodes >= 2 ? std::max(1, nodes / 4) : 0;
  s.cluster.groups.push_back(NodeGroup{"h100", nodes - small_nodes, gpus_per_node, "H100", 80});
  if (small_nodes > 0) {
    s.cluster.groups.push_back(NodeGroup{"a100", small_nodes, gpus_per_node, "A100", 40});
  }
  s.cluster.Index();
  const int total = s.cluster.total_gpus();
  const int widest_h100 = WidestBlock(s.cluster.group_gpus(0));
  const int widest_a100 = small_nodes > 0 ? WidestBlock(s.cluster.group_gpus(1)) : widest_h100;

  // Services first: their demand is part of the offered load.
  const int services = std::min(8, std::max(1, total / 64));
  double service_work = 0;
  for (int i = 0; i < services; ++i) {
    Service service;
    service.id = "svc-" + std::to_string(i);
    service.priority = uniform(5, 10);
    const int peak = std::max(1, total / (4 * services));
    service.max_gpus = total;
    service.max_change_per_step = std::max(1, peak / 4);
    for (int t = 0; t < steps; ++t) {
      const double phase = 2 * M_PI * (t + i * 3) / 24.0;
      service.demand.push_back(static_cast<int>(peak * (0.55 + 0.45 * std::sin(phase))));
      service_work += service.demand.back();
    }
    service.current_gpus = service.demand[0];
    s.services.push_back(std::move(service));
  }

  // Job sizes around the width that lets the batch work fill its share at a mean duration of a
  // quarter of the horizon: 2^k GPUs, k uniform in [0, 2 log2(mean width)].
  const double batch_work = std::max(0.0, kOfferedLoad * total * steps - service_work);
  const double mean_width = jobs > 0 ? batch_work / jobs / std::max(1.0, steps / 4.0) : 1;
  const int max_k = mean_width > 1 ? static_cast<int>(std::lround(2 * std::log2(mean_width))) : 0;
  std::vector<int> widest_of(static_cast<size_t>(std::max(0, jobs)));  // per job, for molding
  for (int j = 0; j < jobs; ++j) {
    Job job;
    job.id = "job-" + std::to_string(j);
    job.kind = static_cast<JobKind>(j % 3);
    job.priority = uniform(1, 10);
    job.arrival_step = uniform(-4, steps / 2);
    const int type_draw = uniform(0, 99);
    int widest = std::max(widest_h100, widest_a100);
    if (type_draw < 15) {
      job.requirement.gpu_type = "H100";
      widest = widest_h100;
    } else if (type_draw < 25 && small_nodes > 0) {
      job.requirement.gpu_type = "A100";
      widest = widest_a100;
    }
    widest_of[static_cast<size_t>(j)] = widest;
    const int width = std::min(1 << uniform(0, max_k), widest);
    job.shapes.push_back(Shape{width, uniform(1, std::max(1, steps / 2))});
    s.jobs.push_back(std::move(job));
  }
  // Durations scaled so the offered work is the target (each at least 1 step, at most two
  // horizons), then a third of the multi-GPU jobs made moldable: half the GPUs for 1.8x the
  // time, and twice the GPUs for 0.6x where a block that wide exists.
  double offered = 0;
  for (const Job& job : s.jobs) offered += FirstShapeWork(job, steps);
  const double scale = offered > 0 ? batch_work / offered : 1;
  for (Job& job : s.jobs) {
    Shape& shape = job.shapes.front();
    shape.duration_steps =
        std::clamp(static_cast<int>(std::lround(shape.duration_steps * scale)), 1, 2 * steps);
  }
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    Job& job = s.jobs[j];
    const Shape base = job.shapes.front();
    if (j % 3 != 0 || base.gpus < 2) continue;
    job.shapes.push_back(
        Shape{base.gpus / 2, static_cast<int>(std::ceil(1.8 * base.duration_steps))});
    if (base.gpus * 2 <= widest_of[j] && base.duration_steps >= 2) {
      job.shapes.push_back(
          Shape{base.gpus * 2, static_cast<int>(std::ceil(0.6 * base.duration_steps))});
    }
  }
  return s;
}

double OfferedLoad(const Scenario& scenario) {
  double work = 0;
  for (const Job& job : scenario.jobs) work += FirstShapeWork(job, scenario.horizon_steps);
  for (const Service& service : scenario.services) {
    for (int d : service.demand) work += d;
  }
  const double capacity =
      static_cast<double>(scenario.cluster.total_gpus()) * scenario.horizon_steps;
  return capacity > 0 ? work / capacity : 0;
}

}  // namespace ordo::bench
