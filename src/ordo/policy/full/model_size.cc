#include "ordo/policy/full/model_size.h"

#include <algorithm>

namespace ordo::policy::full {
namespace {

/// Sum over k = 1..n of min(d, k): the capacity-row terms of a job of duration d over the n
/// starts left before the horizon's end (a start k steps before the end runs min(d, k) of them).
double CappedTriangle(double n, double d) {
  if (n <= d) return n * (n + 1) / 2;
  return d * (d + 1) / 2 + (n - d) * d;
}

/// Whether a group has a legal block of `gpus` for a job with `req` (as Cluster::ForEachBlock).
bool GroupHasBlock(const Cluster& cluster, int g, int gpus, const GpuRequirement& req) {
  if (!req.Matches(cluster.groups[g])) return false;
  const int size = cluster.group_gpus(g);
  const int gpn = cluster.groups[g].gpus_per_node;
  return gpus <= size && (gpus <= gpn || gpus % gpn == 0);
}

}  // namespace

ModelSize ServicePartSize(const Scenario& scenario) {
  const double steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  ModelSize size;
  for (const Service& service : scenario.services) {
    double matching = 0;
    for (int g = 0; g < static_cast<int>(cluster.groups.size()); ++g) {
      if (service.requirement.Matches(cluster.groups[g]) && cluster.group_gpus(g) > 0) ++matching;
    }
    // Counts and unmet slacks; rule 2, unmet and rule 4 rows; the counts again in capacity rows.
    size.columns += (matching + 1) * steps;
    size.rows += 3 * steps;
    size.nonzeros += (5 * matching + 1) * steps;
  }
  size.rows += static_cast<double>(cluster.groups.size()) * steps;
  return size;
}

ModelSize PooledModelSize(const Scenario& scenario) {
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  ModelSize size = ServicePartSize(scenario);
  for (const Job& job : scenario.jobs) {
    if (job.running || job.arrival_step >= steps) continue;
    const double starts = steps - std::max(0, job.arrival_step);
    size.rows += 1;
    for (const Shape& shape : job.shapes) {
      for (int g = 0; g < static_cast<int>(cluster.groups.size()); ++g) {
        if (!GroupHasBlock(cluster, g, shape.gpus, job.requirement)) continue;
        size.columns += starts;
        size.nonzeros += starts + CappedTriangle(starts, shape.duration_steps);
      }
    }
  }
  return size;
}

ModelSize PatternModelSize(const Scenario& scenario, const Window& window,
                           const BlockedIndex& index, int64_t stop_above) {
  double nonzeros = 0;
  const int64_t columns = CountPatterns(scenario, window, index, stop_above, &nonzeros);
  ModelSize size = ServicePartSize(scenario);
  size.columns += static_cast<double>(columns);
  // One assignment row per job and at most one clique row per non-zero.
  size.rows += static_cast<double>(window.jobs.size()) +
               std::min(nonzeros, static_cast<double>(scenario.cluster.total_gpus()) *
                                      scenario.horizon_steps);
  size.nonzeros += nonzeros;
  return size;
}

double BuildGridBytes(const Scenario& scenario) {
  return 13.0 * scenario.cluster.total_gpus() * scenario.horizon_steps;
}

double ModelBytes(const ModelSize& size) {
  // MilpModel: a non-zero is an int and a double, a column three doubles and a flag, a row two
  // doubles and an offset; vectors grown by doubling hold up to twice that. The build's term lists
  // take 16 bytes a non-zero. CBC: about a dozen bytes a non-zero per matrix copy, several copies,
  // and some twenty doubles of work arrays per column and row.
  const double milp = 12 * size.nonzeros + 25 * size.columns + 24 * size.rows;
  const double solver = 100 * size.nonzeros + 200 * (size.columns + size.rows);
  return 2 * milp + 16 * size.nonzeros + solver;
}

double BuildAndSolveBytes(const Scenario& scenario, const ModelSize& size) {
  return BuildGridBytes(scenario) + ModelBytes(size);
}

}  // namespace ordo::policy::full
