#include "bench/synthetic.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace ordo::bench {

Scenario SyntheticScenario(int gpus, int jobs, int steps, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Scenario s;
  s.name = "synthetic-" + std::to_string(gpus) + "x" + std::to_string(jobs) + "x" +
           std::to_string(steps);
  s.horizon_steps = steps;
  const int gpus_per_node = std::min(8, gpus);
  s.cluster.groups.push_back(NodeGroup{"pool", gpus / gpus_per_node, gpus_per_node, "H100", 80});
  s.cluster.Index();
  // Enough work to contend: about 1.5x the GPU-steps of the cluster over the horizon.
  for (int j = 0; j < jobs; ++j) {
    Job job;
    job.id = "job-" + std::to_string(j);
    job.kind = static_cast<JobKind>(j % 3);
    job.priority = uniform(1, 10);
    job.arrival_step = uniform(-4, steps / 2);
    const int size_draw = uniform(0, 99);
    const int gpus_wanted = size_draw < 35   ? 1
                            : size_draw < 60 ? 2
                            : size_draw < 80 ? 4
                            : size_draw < 95 ? 8
                                             : 16;
    job.shapes.push_back(Shape{std::min(gpus_wanted, gpus), uniform(1, std::max(1, steps / 3))});
    if (j % 5 == 0 && job.shapes[0].gpus > 1) {
      job.shapes.push_back(Shape{job.shapes[0].gpus / 2, job.shapes[0].duration_steps * 2});
    }
    s.jobs.push_back(std::move(job));
  }
  const int services = std::max(1, gpus / 64);
  for (int i = 0; i < std::min(services, 8); ++i) {
    Service service;
    service.id = "svc-" + std::to_string(i);
    service.priority = uniform(5, 10);
    const int peak = std::max(1, gpus / (4 * std::min(services, 8)));
    service.max_gpus = gpus;
    service.max_change_per_step = std::max(1, peak / 4);
    for (int t = 0; t < steps; ++t) {
      const double phase = 2 * M_PI * (t + i * 3) / 24.0;
      service.demand.push_back(static_cast<int>(peak * (0.55 + 0.45 * std::sin(phase))));
    }
    service.current_gpus = service.demand[0];
    s.services.push_back(std::move(service));
  }
  return s;
}

}  // namespace ordo::bench
