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
/// shapes, some with a GPU type), at most one service. Validated (drawn again until valid). With
/// `checkpoint_chance`, that share of the jobs save every 1-2 steps and restart in 0-1 (a running
/// one then sometimes resumed: progress and restart steps left).
inline Scenario TinyScenario(uint64_t seed, double checkpoint_chance = 0) {
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
      if (checkpoint_chance > 0 && rng.Chance(checkpoint_chance)) {
        job.checkpoint = Checkpoint{rng.Uniform(1, 2), rng.Uniform(0, 1)};
        if (job.running && rng.Chance(0.4)) {
          job.running->progress_steps = rng.Uniform(0, job.shapes[0].duration_steps - 1);
          if (rng.Chance(0.5)) job.running->restart_steps_left = rng.Uniform(0, 1);
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
/// service. A job with a checkpoint may also be preempted once (spec "Preemption: checkpoints and
/// migration"): its first stay ends at any step q inside the horizon after its start and before its
/// end, keeping floor(progress / c) * c of its work, and it is resumed on any legal block of its
/// size at any step from q (restart steps first, then the work not saved), or not at all; a
/// running job keeps its block or is preempted so.
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

  // Every legal block of `size` GPUs the job may use.
  const auto blocks_of = [&](const Job& job, int size) {
    std::vector<int> out;
    for (int group = 0; group < static_cast<int>(s.cluster.groups.size()); ++group) {
      if (!job.requirement.Matches(s.cluster.groups[group])) continue;
      const int first_id = s.cluster.group_first_gpu(group);
      for (int first = first_id; first < first_id + s.cluster.group_gpus(group); ++first) {
        if (legal_block(group, first, size)) out.push_back(first);
      }
    }
    return out;
  };
  // The preemptions of a stay on `first` that holds it from `from` (clipped at 0), works from
  // `work_from` with `progress` done there and ends at `end`: at q, the work units below
  // floor(done / c) * c are kept; the rest of the job runs after a restart on any block from q.
  const auto add_preemptions = [&](const Job& job, int size, int duration, int first, int from,
                                   int work_from, int progress, int end, int earliest_q,
                                   std::vector<std::pair<uint64_t, double>>& options) {
    const Checkpoint c = *job.checkpoint;
    for (int q = std::max(0, earliest_q); q < std::min(steps, end); ++q) {
      const int done = std::min(duration, progress + std::max(0, q - work_from));
      const int saved = done / c.every_steps * c.every_steps;
      const uint64_t first_bits = run_bits(first, size, from, q - from);
      // Kept: work unit progress + (t - work_from) < saved.
      const int kept_to = std::min(q, work_from + saved - progress);
      const double first_reward =
          kept_to > work_from ? run_reward(job.priority, size, work_from, kept_to - work_from) : 0;
      options.emplace_back(first_bits, first_reward);
      const int rest = duration - saved;
      for (int again : blocks_of(job, size)) {
        for (int s2 = q; s2 < steps; ++s2) {
          const uint64_t second = run_bits(again, size, s2, c.restart_steps + rest);
          if ((second & first_bits) != 0) continue;
          options.emplace_back(
              first_bits | second,
              first_reward + run_reward(job.priority, size, s2 + c.restart_steps, rest));
        }
      }
    }
  };

  uint64_t running = 0;
  double running_reward = 0;
  std::vector<std::vector<std::pair<uint64_t, double>>> choices;  // one of each must be taken
  for (const Job& job : s.jobs) {
    if (!job.running) continue;
    const Shape& shape = job.shapes.front();
    const RunningPlacement& r = *job.running;
    const int progress = r.progress_steps.value_or(-r.start_step);
    const int restart = r.restart_steps_left.value_or(0);
    const int end = restart + shape.duration_steps - progress;
    const uint64_t bits = run_bits(r.first_gpu, shape.gpus, 0, end);
    const double reward = run_reward(job.priority, shape.gpus, restart, end - restart);
    if (!job.checkpoint) {
      running |= bits;
      running_reward += reward;
      continue;
    }
    std::vector<std::pair<uint64_t, double>> options{{bits, reward}};
    add_preemptions(job, shape.gpus, shape.duration_steps, r.first_gpu, 0, restart, progress, end,
                    r.start_step + 1, options);
    choices.push_back(std::move(options));
  }
  // Every state extended by every option that does not collide with it, the best reward per
  // GPU-steps held; `next` starts as the states kept without any option.
  using States = std::unordered_map<uint64_t, double>;
  const auto extend = [](const States& states,
                         const std::vector<std::pair<uint64_t, double>>& options, States next) {
    for (const auto& [mask, reward] : states) {
      for (const auto& [bits, gain] : options) {
        if ((mask & bits) != 0) continue;
        auto [it, inserted] = next.emplace(mask | bits, reward + gain);
        if (!inserted) it->second = std::max(it->second, reward + gain);
      }
    }
    return next;
  };
  States states{{running, running_reward}};
  for (const auto& options : choices) states = extend(states, options, {});
  for (const Job& job : s.jobs) {
    if (job.running) continue;
    std::vector<std::pair<uint64_t, double>> options;
    for (const Shape& shape : job.shapes) {
      for (int first : blocks_of(job, shape.gpus)) {
        for (int start = std::max(0, job.arrival_step); start < steps; ++start) {
          options.emplace_back(run_bits(first, shape.gpus, start, shape.duration_steps),
                               run_reward(job.priority, shape.gpus, start, shape.duration_steps));
          if (job.checkpoint) {
            add_preemptions(job, shape.gpus, shape.duration_steps, first, start, start, 0,
                            start + shape.duration_steps, start + 1, options);
          }
        }
      }
    }
    states = extend(states, options, states);  // or the job not started
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
