#include "ordo/policy/full/lns.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "ordo/policy/full/model_size.h"
#include "ordo/policy/full/pattern_model.h"

namespace ordo::policy::full {
namespace {

using Clock = std::chrono::steady_clock;

/// splitmix64: the same sequence on every platform and standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  int Uniform(int lo, int hi) {  // inclusive
    return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Real() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

bool JobFitsGroup(const Scenario& scenario, const Job& job, int group, int region_gpus) {
  const NodeGroup& g = scenario.cluster.groups[group];
  if (!job.requirement.Matches(g)) return false;
  for (const Shape& shape : job.shapes) {
    if (shape.gpus <= region_gpus && shape.gpus <= scenario.cluster.group_gpus(group) &&
        (shape.gpus <= g.gpus_per_node || shape.gpus % g.gpus_per_node == 0)) {
      return true;
    }
  }
  return false;
}

}  // namespace

Decisions ImproveByLns(const Scenario& scenario, Decisions best, solver::MilpBackend& backend,
                       const LnsOptions& options, LnsStats* stats) {
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  const int groups = static_cast<int>(cluster.groups.size());
  double best_objective = DecisionsObjective(scenario, best);
  LnsStats local;
  local.start_objective = best_objective;

  // Groups where some job could run, weighted by size.
  std::vector<int> candidates;
  std::vector<double> weight;
  for (int g = 0; g < groups; ++g) {
    for (const Job& job : scenario.jobs) {
      if (!job.running && JobFitsGroup(scenario, job, g, cluster.group_gpus(g))) {
        candidates.push_back(g);
        weight.push_back(cluster.group_gpus(g));
        break;
      }
    }
  }
  Rng rng(options.seed);
  // The neighbourhood's area (GPUs x start steps) and column budget adapt: grow after a proof,
  // shrink after a sub-solve stopped by its limits.
  double area = 512;
  double target = std::max(100, options.target_columns);
  const auto stopped = [&] {
    return Clock::now() >= options.deadline ||
           (options.stop != nullptr && options.stop->load(std::memory_order_relaxed));
  };
  // Every neighbourhood holds grids over all GPU-steps (two occupancies, two prefix indexes, the
  // cover index) and the services over the whole horizon, whatever its size.
  const double fixed_bytes = BuildGridBytes(scenario) +
                             5.0 * scenario.cluster.total_gpus() * steps +
                             ModelBytes(ServicePartSize(scenario));
  if (fixed_bytes > options.memory_budget_bytes) {
    local.too_large = true;
    candidates.clear();
  }
  // Building a neighbourhood is not interruptible: one is begun only while the time left covers
  // the longest build so far.
  double longest_build_s = 0;
  for (int iteration = 0; !candidates.empty(); ++iteration) {
    if (options.max_iterations >= 0 && iteration >= options.max_iterations) break;
    if (stopped()) break;
    if (std::chrono::duration<double>(options.deadline - Clock::now()).count() < longest_build_s) {
      break;
    }
    const Clock::time_point iteration_started = Clock::now();
    ++local.iterations;

    // 1. Where: a group, an aligned range of it, a window of start steps. Half the time around a
    // job that earns less than it could (not started, or started late), weighted by what it
    // loses, so that what blocks it is in the neighbourhood; otherwise anywhere.
    int focus = -1;
    if (rng.Real() < options.focus_share) {
      double total = 0;
      std::vector<std::pair<double, int>> losing;
      for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
        const Job& job = scenario.jobs[j];
        if (job.running || job.arrival_step >= steps) continue;
        double could = 0;
        for (const Shape& shape : job.shapes) {
          could =
              std::max(could, PlacementReward(scenario, job, shape, std::max(0, job.arrival_step)));
        }
        const double does = JobReward(scenario, best, j);
        if (could - does > 1e-9) {
          losing.emplace_back(could - does, j);
          total += could - does;
        }
      }
      double pick_loss = rng.Real() * total;
      for (const auto& [loss, j] : losing) {
        pick_loss -= loss;
        if (pick_loss < 0) {
          focus = j;
          break;
        }
      }
    }
    int g = -1;
    int min_region = 1;
    if (focus >= 0) {
      const Job& job = scenario.jobs[focus];
      if (best.jobs[focus]) {
        g = cluster.group_of(best.jobs[focus]->first_gpu);
        min_region = job.shapes[best.jobs[focus]->shape].gpus;
      } else {
        std::vector<int> fits;
        for (int c : candidates) {
          if (JobFitsGroup(scenario, job, c, cluster.group_gpus(c))) fits.push_back(c);
        }
        if (fits.empty()) {
          focus = -1;
        } else {
          g = fits[rng.Uniform(0, static_cast<int>(fits.size()) - 1)];
          min_region = Limits::kMaxGpus;
          for (const Shape& shape : job.shapes) {
            if (JobFitsGroup(scenario, Job{.shapes = {shape}, .requirement = job.requirement}, g,
                             cluster.group_gpus(g))) {
              min_region = std::min(min_region, shape.gpus);
            }
          }
        }
      }
    }
    if (g < 0) {
      double pick = rng.Real() * std::accumulate(weight.begin(), weight.end(), 0.0);
      g = candidates.back();
      for (size_t i = 0; i < candidates.size(); ++i) {
        pick -= weight[i];
        if (pick < 0) {
          g = candidates[i];
          break;
        }
      }
    }
    const int size = cluster.group_gpus(g);
    // Regions of at most kMaxRegion GPUs (or the focus job's block): a job has a pattern per block
    // of the region and start, so in a wide region a few small jobs would fill the budget and the
    // jobs in the way would stay fixed.
    constexpr int kMaxRegion = 128;
    std::vector<int> region_sizes;
    for (int r = 1; r < size && r <= std::max(kMaxRegion, min_region); r *= 2) {
      if (r >= min_region && area / r >= 1 && area / r <= 4.0 * steps) region_sizes.push_back(r);
    }
    if (region_sizes.empty() || (size <= kMaxRegion && area / size <= 4.0 * steps)) {
      region_sizes.push_back(std::min(size, std::max(kMaxRegion, min_region)));
    }
    const int region = region_sizes[rng.Uniform(0, static_cast<int>(region_sizes.size()) - 1)];
    const int slots = (size + region - 1) / region;
    const int offset =
        focus >= 0 && best.jobs[focus]
            ? (best.jobs[focus]->first_gpu - cluster.group_first_gpu(g)) / region * region
            : rng.Uniform(0, slots - 1) * region;
    Window window;
    window.first_gpu = cluster.group_first_gpu(g) + offset;
    window.end_gpu = cluster.group_first_gpu(g) + std::min(size, offset + region);
    int length = std::clamp(static_cast<int>(std::lround(area / region)), 1, steps);
    if (focus >= 0) {
      // From the focus job's earliest start, far enough to hold its current start.
      window.first_start = std::max(0, scenario.jobs[focus].arrival_step);
      if (best.jobs[focus])
        length = std::max(length, best.jobs[focus]->start - window.first_start + 1);
      window.end_start = std::min(steps, window.first_start + length);
    } else {
      window.first_start = rng.Uniform(0, steps - length);
      window.end_start = window.first_start + length;
    }

    // 2. Who: the jobs placed there, then unstarted jobs that could run there, in a random order
    // that favours priority, while the pattern count stays within the budget.
    std::vector<int> movers, waiting;
    for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
      const Job& job = scenario.jobs[j];
      if (job.running) continue;
      if (best.jobs[j]) {
        const Placement& p = *best.jobs[j];
        const int gpus = job.shapes[p.shape].gpus;
        if (p.first_gpu >= window.first_gpu && p.first_gpu + gpus <= window.end_gpu &&
            p.start >= window.first_start && p.start < window.end_start) {
          movers.push_back(j);
        }
      } else if (job.arrival_step < window.end_start &&
                 JobFitsGroup(scenario, job, g, window.end_gpu - window.first_gpu)) {
        waiting.push_back(j);
      }
    }
    std::vector<std::pair<double, int>> keyed;
    keyed.reserve(waiting.size());
    for (int j : waiting) {
      keyed.emplace_back(-std::log(std::max(1e-300, rng.Real())) / scenario.jobs[j].priority, j);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<char> freed(scenario.jobs.size(), 0);
    for (int j : movers) freed[j] = 1;
    const BlockedIndex loose(scenario, BatchOccupancy(scenario, &best, &freed));
    window.jobs.clear();
    int64_t columns = 0;
    double nonzeros = 0;
    const double model_budget = options.memory_budget_bytes - fixed_bytes;
    Window one = window;
    const auto try_add = [&](int j) {
      one.jobs = {j};
      double job_nonzeros = 0;
      const int64_t n =
          CountPatterns(scenario, one, loose, static_cast<int64_t>(target), &job_nonzeros);
      if (n == 0 || static_cast<double>(columns + n) > target) return false;
      const ModelSize batch{static_cast<double>(columns + n), 0, nonzeros + job_nonzeros};
      if (ModelBytes(batch) > model_budget) return false;
      columns += n;
      nonzeros += job_nonzeros;
      window.jobs.push_back(j);
      return true;
    };
    if (focus >= 0 && std::count(movers.begin(), movers.end(), focus) +
                              std::count(waiting.begin(), waiting.end(), focus) >
                          0) {
      try_add(focus);
    }
    bool all_movers = true;
    for (int j : movers) {
      if (j != focus && !try_add(j)) all_movers = false;
    }
    for (const auto& [key, j] : keyed) {
      if (j == focus) continue;
      if (static_cast<double>(columns) >= 0.95 * target) break;
      try_add(j);
    }
    if (window.jobs.empty() || columns == 0) {
      area = std::max(16.0, area / 2);
      continue;
    }

    // 3. The sub-MILP: movers left out stay fixed.
    std::fill(freed.begin(), freed.end(), 0);
    for (int j : window.jobs) freed[j] = 1;
    const std::vector<uint8_t> blocked = BatchOccupancy(scenario, &best, &freed);
    double fixed_reward = 0;
    for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
      if (!freed[j]) fixed_reward += JobReward(scenario, best, j);
    }
    const PatternModel model(scenario, window, blocked, fixed_reward);
    solver::SolveParams params;
    params.mip_start = model.ToColumns(best);
    params.max_nodes = options.nodes_per_solve;
    params.relative_gap = 1e-6;
    params.seed = static_cast<int>(options.seed % 1000003) + iteration;
    params.stop = options.stop;
    params.time_limit_s =
        std::min(options.seconds_per_solve,
                 std::chrono::duration<double>(options.deadline - Clock::now()).count());
    if (params.time_limit_s <= 0) break;
    const Clock::time_point solve_started = Clock::now();
    longest_build_s = std::max(
        longest_build_s, std::chrono::duration<double>(solve_started - iteration_started).count());
    auto result = backend.Solve(model.milp(), params);
    local.solve_seconds += std::chrono::duration<double>(Clock::now() - solve_started).count();
    local.columns += model.num_patterns();
    if (!result) continue;
    if (result->status == solver::ModelStatus::kOptimal) {
      ++local.proven;
      // Grow only while the jobs in the way all fit; a proof over a neighbourhood that left some
      // of them fixed says little.
      area = all_movers ? std::min(area * 1.25, 1e6) : std::max(16.0, area * 0.8);
      target = std::min(target * 1.1, 4.0 * options.target_columns);
    } else {
      area = std::max(16.0, area * 0.7);
      target = std::max(200.0, target * 0.8);
    }
    if (!solver::HasSolution(result->status)) continue;
    Decisions candidate = best;
    model.Apply(result->solution, candidate);
    const double objective = DecisionsObjective(scenario, candidate);
    if (objective > best_objective + 1e-9 * std::max(1.0, std::abs(best_objective))) {
      best = std::move(candidate);
      best_objective = objective;
      ++local.improvements;
    }
  }
  local.objective = best_objective;
  if (stats != nullptr) *stats = local;
  return best;
}

}  // namespace ordo::policy::full
