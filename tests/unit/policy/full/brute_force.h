// An exhaustive search for tiny scenarios (<= 64 GPU-steps, at most one service), written from the
// spec and sharing no code with full mode: every combination of job patterns (or not started),
// deduplicated by the GPU-steps they hold, then the best service curve for what is left by dynamic
// programming over steps. Plus a generator of tiny random scenarios.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "ordo/core/scenario.h"
#include "ordo/core/validate.h"
#include "tests/support/random_scenario.h"

namespace ordo::testing {

/// Tiny: one or two groups, 2-8 GPUs in all, 3-6 steps, 1-5 jobs (some running, some with two
/// shapes, some with a GPU type), at most one service. Validated (drawn again until valid).
inline Scenario TinyScenario(uint64_t seed) {
  for (uint64_t attempt = 0;; ++attempt) {
    Rng rng(seed * 7919 + attempt);
    Scenario s;
    s.name = "tiny-" + std::to_string(seed);
    s.horizon_steps = rng.Uniform(3, 6);
    constexpr double kDecay[] = {0, 0.5, 1};
    s.objective.time_decay = kDecay[rng.Uniform(0, 2)];
    s.objective.unmet_penalty_multiplier = rng.Uniform(0, 3) * 4;
    const int group_count = rng.Uniform(1, 2);
    int total = 0;
    for (int g = 0; g < group_count; ++g) {
      const int gpn = 1 << rng.Uniform(0, 2);  // 1, 2, 4
      const int nodes = rng.Uniform(1, std::max(1, (8 - total) / gpn / (group_count - g)));
      s.cluster.groups.push_back(NodeGroup{"g" + std::to_string(g), nodes, gpn,
                                           g == 0 ? "A" : (rng.Chance(0.5) ? "B" : "A"), 80});
      total += nodes * gpn;
    }
    if (total > 8) continue;
    s.cluster.Index();
    const int steps = s.horizon_steps;
    const int jobs = rng.Uniform(1, 5);
    std::vector<char> used(static_cast<size_t>(total), 0);
    for (int j = 0; j < jobs; ++j) {
      Job job;
      job.id = "j" + std::to_string(j);
      job.priority = rng.Uniform(1, 9);
      job.arrival_step = rng.Uniform(-2, steps);
      const int shapes = rng.Chance(0.3) ? 2 : 1;
      for (int k = 0; k < shapes; ++k) {
        job.shapes.push_back(Shape{1 << rng.Uniform(0, 3), rng.Uniform(1, steps)});
      }
      if (rng.Chance(0.2)) job.requirement.gpu_type = rng.Chance(0.5) ? "A" : "B";
      if (rng.Chance(0.15)) {
        job.shapes.resize(1);
        const int gpus = job.shapes[0].gpus;
        std::vector<int> blocks;
        s.cluster.ForEachBlock(gpus, job.requirement, [&](int f) {
          for (int g = f; g < f + gpus; ++g) {
            if (used[g]) return;
          }
          blocks.push_back(f);
        });
        if (!blocks.empty()) {
          const int f = blocks[rng.Uniform(0, static_cast<int>(blocks.size()) - 1)];
          const int start = -rng.Uniform(0, job.shapes[0].duration_steps - 1);
          job.running = RunningPlacement{start, f};
          job.arrival_step = start;
          for (int g = f; g < f + gpus; ++g) used[g] = 1;
        }
      }
      s.jobs.push_back(job);
    }
    if (rng.Chance(0.7)) {
      Service svc;
      svc.id = "svc";
      svc.priority = rng.Uniform(1, 9);
      svc.min_gpus = rng.Uniform(0, 1);
      svc.max_gpus = rng.Uniform(1, total);
      if (rng.Chance(0.6)) svc.max_change_per_step = rng.Uniform(1, 2);
      if (rng.Chance(0.5)) svc.current_gpus = rng.Uniform(0, 3);
      if (rng.Chance(0.2)) svc.requirement.gpu_type = "A";
      for (int t = 0; t < steps; ++t) svc.demand.push_back(rng.Uniform(0, 4));
      s.services.push_back(svc);
    }
    if (ValidateScenario(s).has_value()) return s;
  }
}

/// The optimum of the planning objective by exhaustive search. Needs G * T <= 64 and at most one
/// service.
inline double BruteForceOptimum(const Scenario& s) {
  const int steps = s.horizon_steps;
  const int gpus = s.cluster.total_gpus();
  const auto bit = [&](int gpu, int t) { return uint64_t{1} << (gpu * steps + t); };
  const auto weight = [&](int t) { return 1.0 - s.objective.time_decay * t / steps; };
  const auto run_bits = [&](int first, int size, int start, int duration) {
    uint64_t bits = 0;
    for (int g = first; g < first + size; ++g) {
      for (int t = std::max(0, start); t < std::min(steps, start + duration); ++t)
        bits |= bit(g, t);
    }
    return bits;
  };
  const auto run_reward = [&](double priority, int size, int start, int duration) {
    double r = 0;
    for (int t = std::max(0, start); t < std::min(steps, start + duration); ++t) {
      r += priority * size * weight(t);
    }
    return r;
  };
  // Rule 3 written out: aligned from the group's first id, within a node or whole nodes.
  const auto legal_block = [&](int group, int first, int size) {
    const NodeGroup& g = s.cluster.groups[group];
    const int offset = first - s.cluster.group_first_gpu(group);
    if (offset < 0 || offset % size != 0 || offset + size > g.nodes * g.gpus_per_node) return false;
    return size <= g.gpus_per_node || size % g.gpus_per_node == 0;
  };

  uint64_t running = 0;
  double running_reward = 0;
  for (const Job& job : s.jobs) {
    if (!job.running) continue;
    const Shape& shape = job.shapes.front();
    running |=
        run_bits(job.running->first_gpu, shape.gpus, job.running->start_step, shape.duration_steps);
    running_reward +=
        run_reward(job.priority, shape.gpus, job.running->start_step, shape.duration_steps);
  }
  std::unordered_map<uint64_t, double> states{{running, running_reward}};
  for (const Job& job : s.jobs) {
    if (job.running) continue;
    std::vector<std::pair<uint64_t, double>> options;
    for (const Shape& shape : job.shapes) {
      for (int group = 0; group < static_cast<int>(s.cluster.groups.size()); ++group) {
        if (!job.requirement.Matches(s.cluster.groups[group])) continue;
        const int first_id = s.cluster.group_first_gpu(group);
        for (int first = first_id; first < first_id + s.cluster.group_gpus(group); ++first) {
          if (!legal_block(group, first, shape.gpus)) continue;
          for (int start = std::max(0, job.arrival_step); start < steps; ++start) {
            options.emplace_back(run_bits(first, shape.gpus, start, shape.duration_steps),
                                 run_reward(job.priority, shape.gpus, start, shape.duration_steps));
          }
        }
      }
    }
    std::unordered_map<uint64_t, double> next = states;  // the job not started
    for (const auto& [mask, reward] : states) {
      for (const auto& [bits, gain] : options) {
        if ((mask & bits) != 0) continue;
        auto [it, inserted] = next.emplace(mask | bits, reward + gain);
        if (!inserted) it->second = std::max(it->second, reward + gain);
      }
    }
    states = std::move(next);
  }

  constexpr double kNone = -std::numeric_limits<double>::infinity();
  double best = kNone;
  for (const auto& [mask, reward] : states) {
    double service_value = 0;
    if (!s.services.empty()) {
      const Service& svc = s.services.front();
      // value[r] = best penalty so far with r GPUs held at the previous step.
      std::vector<double> value(static_cast<size_t>(gpus) + 1, kNone);
      for (int t = 0; t < steps; ++t) {
        int available = 0;
        for (int g = 0; g < gpus; ++g) {
          if ((mask & bit(g, t)) == 0 &&
              svc.requirement.Matches(s.cluster.groups[s.cluster.group_of(g)])) {
            ++available;
          }
        }
        std::vector<double> next(value.size(), kNone);
        for (int r = svc.min_gpus; r <= std::min(svc.max_gpus, available); ++r) {
          const double cost =
              s.objective.unmet_penalty_multiplier * svc.priority * std::max(0, svc.demand[t] - r);
          if (t == 0) {
            if (svc.current_gpus && svc.max_change_per_step &&
                std::abs(r - *svc.current_gpus) > *svc.max_change_per_step) {
              continue;
            }
            next[r] = -cost;
            continue;
          }
          for (int before = 0; before <= gpus; ++before) {
            if (value[before] == kNone) continue;
            if (svc.max_change_per_step && std::abs(r - before) > *svc.max_change_per_step)
              continue;
            next[r] = std::max(next[r], value[before] - cost);
          }
        }
        value = std::move(next);
      }
      service_value = *std::max_element(value.begin(), value.end());
      if (service_value == kNone) continue;  // the service cannot be served beside this batch work
    }
    best = std::max(best, reward + service_value);
  }
  return best;
}

}  // namespace ordo::testing
