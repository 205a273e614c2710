#include "ordo/policy/full/pattern_model.h"

#include <algorithm>
#include <cmath>

#include "ordo/core/assert.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"

namespace ordo::policy::full {
namespace {

using solver::kInfinity;
using solver::Term;

using Pattern = PatternModel::Pattern;

/// The plan entry of a pattern, for StaysOf.
JobPlacement PatternPlacement(const Job& job, const Pattern& p) {
  JobPlacement out;
  out.id = job.id;
  out.start_step = p.start;
  out.first_gpu = p.first_gpu;
  out.gpus = job.shapes[p.shape].gpus;
  out.duration_steps = job.shapes[p.shape].duration_steps;
  if (p.preemption) {
    out.preempt_step = p.preemption->step;
    out.resume = p.preemption->resume;
  }
  return out;
}

/// Calls fn(first_gpu, gpus, from, to) for each block a pattern holds and the steps it holds it,
/// clipped to the horizon (from < to).
template <typename Fn>
void ForEachHeld(const Scenario& scenario, const Pattern& p, Fn&& fn) {
  const Job& job = scenario.jobs[p.job];
  const int steps = scenario.horizon_steps;
  const int gpus = job.shapes[p.shape].gpus;
  if (!p.preemption) {
    const int end =
        job.running ? job.running_end_step() : p.start + job.shapes[p.shape].duration_steps;
    const int from = std::max(0, p.start);
    const int to = std::min(steps, end);
    if (from < to) fn(p.first_gpu, gpus, from, to);
    return;
  }
  ForEachStayInHorizon(scenario, job, PatternPlacement(job, p),
                       [&](int first_gpu, int from, int to) { fn(first_gpu, gpus, from, to); });
}

/// Calls fn(pattern) for every legal pattern of job j inside the window; stops early when fn
/// returns false (and then returns false). A running job (decided only with preemption) has its
/// block kept, then its preemptions.
template <typename Fn>
bool ForEachJobPattern(const Scenario& scenario, const Window& window, const BlockedIndex& index,
                       int j, Fn&& fn) {
  const int steps = scenario.horizon_steps;
  const Job& job = scenario.jobs[j];
  const bool preempt = window.preemption && job.checkpoint.has_value();
  ORDO_ASSERT(!job.running || preempt);
  // Each preemption of a first stay on `first_gpu` from `start` (working until `end`): at every
  // step q inside the horizon after its start and before its end whose first stay is free, not
  // resumed, or resumed at any later step on any block of its size that is free for its stay.
  const auto preemptions = [&](const Pattern& base, int end) {
    const Shape& shape = job.shapes[base.shape];
    for (int q = std::max(0, base.start + 1); q < std::min(steps, end); ++q) {
      if (!job.running && !index.Free(base.first_gpu, shape.gpus, base.start, q)) break;
      Pattern p = base;
      p.preemption = Preemption{q, std::nullopt};
      if (!fn(p)) return false;
      bool go_on = true;
      for (int s2 = q; s2 < steps && go_on; ++s2) {
        scenario.cluster.ForEachBlock(shape.gpus, job.requirement, [&](int f2) {
          if (!go_on || f2 < window.first_gpu || f2 + shape.gpus > window.end_gpu) return;
          p.preemption->resume = ResumePlacement{s2, f2};
          const JobStays stays = StaysOf(job, PatternPlacement(job, p));
          const int to = static_cast<int>(std::min<long long>(steps, stays.stays[1].to));
          if (index.Free(f2, shape.gpus, s2, to)) go_on = fn(p);
        });
      }
      if (!go_on) return false;
    }
    return true;
  };
  if (job.running) {
    const Pattern keep{j, 0, job.running->start_step, job.running->first_gpu, std::nullopt};
    return fn(keep) && preemptions(keep, job.running_end_step());
  }
  const int first_start = std::max({job.arrival_step, 0, window.first_start});
  const int end_start = std::min(steps, window.end_start);
  const GroupPlacement* pin = nullptr;
  if (!window.pinned.empty()) {
    if (!window.pinned[j]) return true;
    pin = &*window.pinned[j];
  }
  bool go_on = true;
  for (int k = 0; k < static_cast<int>(job.shapes.size()) && go_on; ++k) {
    if (pin != nullptr && k != pin->shape) continue;
    const Shape& shape = job.shapes[k];
    scenario.cluster.ForEachBlock(shape.gpus, job.requirement, [&](int first_gpu) {
      if (!go_on || first_gpu < window.first_gpu || first_gpu + shape.gpus > window.end_gpu) {
        return;
      }
      if (pin != nullptr && scenario.cluster.group_of(first_gpu) != pin->group) return;
      for (int s = first_start; s < end_start && go_on; ++s) {
        if (pin != nullptr && s != pin->start) continue;
        const Pattern plain{j, k, s, first_gpu, std::nullopt};
        if (index.Free(first_gpu, shape.gpus, s, std::min(steps, s + shape.duration_steps))) {
          go_on = fn(plain);
        }
        if (go_on && preempt) go_on = preemptions(plain, s + shape.duration_steps);
      }
    });
  }
  return go_on;
}

}  // namespace

BlockedIndex::BlockedIndex(const Scenario& scenario, const std::vector<uint8_t>& blocked)
    : steps_(scenario.horizon_steps),
      prefix_(static_cast<size_t>(scenario.cluster.total_gpus()) * (steps_ + 1), 0) {
  for (int g = 0; g < scenario.cluster.total_gpus(); ++g) {
    int32_t* row = &prefix_[static_cast<size_t>(g) * (steps_ + 1)];
    const uint8_t* held = &blocked[static_cast<size_t>(g) * steps_];
    for (int t = 0; t < steps_; ++t) row[t + 1] = row[t] + (held[t] != 0 ? 1 : 0);
  }
}

bool BlockedIndex::Free(int first_gpu, int gpus, int from, int to) const {
  for (int g = first_gpu; g < first_gpu + gpus; ++g) {
    const int32_t* row = &prefix_[static_cast<size_t>(g) * (steps_ + 1)];
    if (row[to] != row[from]) return false;
  }
  return true;
}

std::vector<std::vector<int>> FreeGpus(const Scenario& scenario,
                                       const std::vector<uint8_t>& blocked) {
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  const int groups = static_cast<int>(cluster.groups.size());
  std::vector<std::vector<int>> free(groups, std::vector<int>(steps, 0));
  for (int g = 0; g < groups; ++g) {
    const int first = cluster.group_first_gpu(g);
    for (int gpu = first; gpu < first + cluster.group_gpus(g); ++gpu) {
      const uint8_t* row = &blocked[static_cast<size_t>(gpu) * steps];
      for (int t = 0; t < steps; ++t) free[g][t] += row[t] == 0 ? 1 : 0;
    }
  }
  return free;
}

ServiceColumns AddServicesAndCapacity(const Scenario& scenario,
                                      const std::vector<std::vector<int>>& free_gpus,
                                      std::vector<std::vector<std::vector<Term>>> batch_terms,
                                      bool capacity_everywhere, solver::MilpModel& milp,
                                      bool slack_everywhere) {
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  const int groups = static_cast<int>(cluster.groups.size());
  const int service_count = static_cast<int>(scenario.services.size());
  ServiceColumns columns;
  columns.gpus.assign(service_count,
                      std::vector<std::vector<int>>(groups, std::vector<int>(steps, -1)));
  columns.unmet.assign(service_count, std::vector<int>(steps, -1));
  std::vector<char> group_shared(groups, capacity_everywhere ? 1 : 0);
  std::vector<Term> terms;
  for (int s = 0; s < service_count; ++s) {
    const Service& service = scenario.services[s];
    const std::vector<int> floor = ServiceFloor(scenario, s);
    const std::vector<int> ceiling = ServiceCeiling(scenario, s);
    for (int g = 0; g < groups; ++g) {
      if (!service.requirement.Matches(cluster.groups[g]) || cluster.group_gpus(g) == 0) continue;
      group_shared[g] = 1;
      for (int t = 0; t < steps; ++t) {
        const int upper = std::min({service.max_gpus, ceiling[t], free_gpus[g][t]});
        columns.gpus[s][g][t] = milp.AddVariable(0, std::max(0, upper), 0, true);
      }
    }
    // Rule 2 (with the floor and ceiling the churn limit imposes from current_gpus) and the unmet
    // slack u >= demand - R. A penalty multiplier of 0 makes unmet demand free: no slack then.
    const double penalty = scenario.objective.unmet_penalty_multiplier * service.priority;
    for (int t = 0; t < steps; ++t) {
      terms.clear();
      for (int g = 0; g < groups; ++g) {
        if (columns.gpus[s][g][t] >= 0) terms.push_back({columns.gpus[s][g][t], 1.0});
      }
      const double low = std::max(service.min_gpus, floor[t]);
      const double high = std::min(service.max_gpus, ceiling[t]);
      if (!terms.empty()) milp.AddRow(low, high, terms);
      if (service.demand[t] > 0 && (penalty > 0 || slack_everywhere)) {
        const int u = milp.AddVariable(0, service.demand[t], -penalty, false);
        columns.unmet[s][t] = u;
        terms.push_back({u, 1.0});
        milp.AddRow(service.demand[t], solver::kInfinity, terms);
      }
    }
    // Rule 4 between consecutive steps (into step 0 it is in the floor and ceiling).
    if (service.max_change_per_step) {
      const double c = *service.max_change_per_step;
      for (int t = 1; t < steps; ++t) {
        terms.clear();
        for (int g = 0; g < groups; ++g) {
          if (columns.gpus[s][g][t] < 0) continue;
          terms.push_back({columns.gpus[s][g][t], 1.0});
          terms.push_back({columns.gpus[s][g][t - 1], -1.0});
        }
        if (!terms.empty()) milp.AddRow(-c, c, terms);
      }
    }
  }
  // Rule 1 in aggregate: batch GPUs + service GPUs <= GPUs of the group free of fixed jobs.
  for (int g = 0; g < groups; ++g) {
    if (!group_shared[g]) continue;
    for (int t = 0; t < steps; ++t) {
      std::vector<Term>& row = batch_terms[g][t];
      for (int s = 0; s < service_count; ++s) {
        if (columns.gpus[s][g][t] >= 0) row.push_back({columns.gpus[s][g][t], 1.0});
      }
      // A lone column is already bounded by its own upper bound.
      if (row.size() < 2 && !capacity_everywhere) continue;
      if (row.empty()) continue;
      milp.AddRow(-solver::kInfinity, free_gpus[g][t], row);
    }
  }
  return columns;
}

Window WholeProblem(const Scenario& scenario) {
  Window w;
  w.preemption = std::any_of(scenario.jobs.begin(), scenario.jobs.end(),
                             [](const Job& job) { return job.checkpoint.has_value(); });
  for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
    const Job& job = scenario.jobs[j];
    if (!job.running || (w.preemption && job.checkpoint)) w.jobs.push_back(j);
  }
  w.first_start = 0;
  w.end_start = scenario.horizon_steps;
  w.first_gpu = 0;
  w.end_gpu = scenario.cluster.total_gpus();
  return w;
}

namespace {
std::vector<char> DecidedMask(const Scenario& scenario, const Window& window) {
  std::vector<char> decided(scenario.jobs.size(), 0);
  for (int j : window.jobs) decided[j] = 1;
  return decided;
}
}  // namespace

std::vector<uint8_t> FixedOccupancy(const Scenario& scenario, const Window& window) {
  const std::vector<char> decided = DecidedMask(scenario, window);
  return BatchOccupancy(scenario, nullptr, &decided);
}

double FixedReward(const Scenario& scenario, const Window& window) {
  const std::vector<char> decided = DecidedMask(scenario, window);
  double reward = 0;
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    if (scenario.jobs[j].running && !decided[j]) {
      reward += RunningJobReward(scenario, scenario.jobs[j]);
    }
  }
  return reward;
}

int64_t CountPatterns(const Scenario& scenario, const Window& window,
                      const std::vector<uint8_t>& blocked, int64_t stop_above) {
  return CountPatterns(scenario, window, BlockedIndex(scenario, blocked), stop_above);
}

int64_t CountPatterns(const Scenario& scenario, const Window& window, const BlockedIndex& index,
                      int64_t stop_above) {
  int64_t count = 0;
  for (int j : window.jobs) {
    if (!ForEachJobPattern(scenario, window, index, j,
                           [&](const Pattern&) { return ++count <= stop_above; })) {
      break;
    }
  }
  return count;
}

int64_t CountPatterns(const Scenario& scenario, const Window& window, const BlockedIndex& index,
                      int64_t stop_above, double* nonzeros) {
  int64_t count = 0;
  for (int j : window.jobs) {
    if (!ForEachJobPattern(scenario, window, index, j, [&](const Pattern& p) {
          *nonzeros += 1;
          ForEachHeld(scenario, p, [&](int, int gpus, int from, int to) {
            *nonzeros += static_cast<double>(gpus + 1) * (to - from);
          });
          return ++count <= stop_above;
        })) {
      break;
    }
  }
  return count;
}

PatternModel::PatternModel(const Scenario& scenario, const Window& window,
                           const std::vector<uint8_t>& blocked, double fixed_reward,
                           const Promises* promises)
    : scenario_(scenario), window_(window) {
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  const int groups = static_cast<int>(cluster.groups.size());
  milp_.set_objective_offset(fixed_reward);

  // Patterns, job by job (so each job's columns are one range).
  {
    const BlockedIndex index(scenario, blocked);
    job_first_.assign(window.jobs.size(), 0);
    job_end_.assign(window.jobs.size(), 0);
    for (size_t i = 0; i < window.jobs.size(); ++i) {
      const int j = window.jobs[i];
      job_first_[i] = num_patterns();
      ForEachJobPattern(scenario, window, index, j, [&](const Pattern& p) {
        patterns_.push_back(p);
        return true;
      });
      job_end_[i] = num_patterns();
    }
  }
  for (const Pattern& p : patterns_) {
    const Job& job = scenario.jobs[p.job];
    milp_.AddBinary(p.preemption || job.running
                        ? KeptReward(scenario, job, PatternPlacement(job, p))
                        : PlacementReward(scenario, job, job.shapes[p.shape], p.start));
  }

  // One pattern per job; exactly one for a running job (it keeps its block or is preempted).
  std::vector<Term> terms;
  for (size_t i = 0; i < window.jobs.size(); ++i) {
    const bool running = scenario.jobs[window.jobs[i]].running.has_value();
    if (job_end_[i] - job_first_[i] < 2 && !running) continue;
    terms.clear();
    for (int c = job_first_[i]; c < job_end_[i]; ++c) terms.push_back({c, 1.0});
    milp_.AddRow(running ? 1 : -kInfinity, 1, terms);
  }

  // Rule 1 for batch work: GPUs in a group are grouped into atoms of the smallest block any
  // pattern there uses; aligned blocks of that size or larger contain an atom whole or not at all,
  // so one clique per (atom, step) is exact and the per-GPU rows would only repeat it.
  std::vector<int> atom_size(groups, 0), atom_base(groups + 1, 0);
  for (const Pattern& p : patterns_) {
    // Every block the pattern holds: a resumed stay may lie in another group.
    ForEachHeld(scenario, p, [&](int first_gpu, int gpus, int, int) {
      const int g = cluster.group_of(first_gpu);
      atom_size[g] = atom_size[g] == 0 ? gpus : std::min(atom_size[g], gpus);
    });
  }
  for (int g = 0; g < groups; ++g) {
    atom_base[g + 1] =
        atom_base[g] + (atom_size[g] == 0 ? 0 : cluster.group_gpus(g) / atom_size[g]);
  }
  const int atoms = atom_base[groups];
  {
    // Compressed lists of the patterns covering each (atom, step): count, then fill.
    std::vector<int64_t> start(static_cast<size_t>(atoms) * steps + 1, 0);
    const auto for_each_cell = [&](const Pattern& p, auto&& fn) {
      ForEachHeld(scenario, p, [&](int first_gpu, int gpus, int from, int to) {
        const int g = cluster.group_of(first_gpu);
        const int a0 = atom_base[g] + (first_gpu - cluster.group_first_gpu(g)) / atom_size[g];
        const int a1 = a0 + gpus / atom_size[g];
        for (int a = a0; a < a1; ++a) {
          for (int t = from; t < to; ++t) fn(static_cast<size_t>(a) * steps + t);
        }
      });
    };
    for (const Pattern& p : patterns_) for_each_cell(p, [&](size_t cell) { ++start[cell + 1]; });
    for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    std::vector<int> cover(static_cast<size_t>(start.back()));
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (int c = 0; c < num_patterns(); ++c) {
      for_each_cell(patterns_[c], [&](size_t cell) { cover[fill[cell]++] = c; });
    }
    for (size_t cell = 0; cell + 1 < start.size(); ++cell) {
      if (start[cell + 1] - start[cell] < 2) continue;
      terms.clear();
      for (int64_t i = start[cell]; i < start[cell + 1]; ++i) terms.push_back({cover[i], 1.0});
      milp_.AddRow(-kInfinity, 1, terms);
    }
  }

  // Services, and the capacity rows they share with batch work.
  std::vector<std::vector<std::vector<Term>>> batch_terms(groups,
                                                          std::vector<std::vector<Term>>(steps));
  for (int c = 0; c < num_patterns(); ++c) {
    ForEachHeld(scenario, patterns_[c], [&](int first_gpu, int gpus, int from, int to) {
      const int g = cluster.group_of(first_gpu);
      for (int t = from; t < to; ++t) batch_terms[g][t].push_back({c, static_cast<double>(gpus)});
    });
  }
  services_ = AddServicesAndCapacity(scenario, FreeGpus(scenario, blocked), std::move(batch_terms),
                                     /*capacity_everywhere=*/false, milp_,
                                     /*slack_everywhere=*/promises != nullptr);
  if (promises != nullptr) {
    std::vector<Term> value;
    for (int c = 0; c < num_patterns(); ++c) {
      const Pattern& p = patterns_[c];
      const Job& job = scenario.jobs[p.job];
      value.push_back({c, p.preemption || job.running
                              ? KeptValue(scenario, job, PatternPlacement(job, p))
                              : PlacementValue(scenario, job, job.shapes[p.shape], p.start)});
    }
    const std::vector<char> decided = DecidedMask(scenario, window);
    AddPromiseRows(scenario, *promises, value, services_, milp_, &decided);
  }
}

void AddPromiseRows(const Scenario& scenario, const Promises& promises,
                    const std::vector<Term>& batch_value, const ServiceColumns& services,
                    solver::MilpModel& milp, const std::vector<char>* decided) {
  const int steps = scenario.horizon_steps;
  // value = running jobs' (a constant) + batch columns' + sum over services and steps of
  // priority x min(allocated, demand) = demand - unmet slack (the slack is at least the true
  // shortfall, so a solution keeping the rows keeps the promise).
  double constant = 0;
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    const Job& job = scenario.jobs[j];
    if (job.running && (decided == nullptr || !(*decided)[j])) {
      constant += RunningJobValue(scenario, job);
    }
  }
  std::vector<Term> value = batch_value;
  std::vector<Term> unmet;
  for (size_t s = 0; s < scenario.services.size(); ++s) {
    const Service& service = scenario.services[s];
    for (int t = 0; t < steps; ++t) {
      constant += service.priority * service.demand[t];
      const int u = services.unmet[s][t];
      if (u < 0) continue;
      value.push_back({u, -service.priority});
      unmet.push_back({u, 1.0});
    }
  }
  milp.AddRow(promises.min_value - constant, kInfinity, value);
  if (!unmet.empty()) {
    milp.AddRow(-kInfinity, static_cast<double>(promises.max_unmet_gpu_steps), unmet);
  }
}

bool ServiceStart(const Scenario& scenario, const ServiceColumns& columns,
                  const Decisions& decisions, std::vector<double>& x) {
  bool all = true;
  for (size_t s = 0; s < scenario.services.size(); ++s) {
    for (int t = 0; t < scenario.horizon_steps; ++t) {
      int held = 0;
      for (size_t g = 0; g < scenario.cluster.groups.size(); ++g) {
        const int count = decisions.service_gpus[s][g][t];
        held += count;
        if (columns.gpus[s][g][t] >= 0) {
          x[columns.gpus[s][g][t]] = count;
        } else if (count != 0) {
          all = false;
        }
      }
      if (columns.unmet[s][t] >= 0) {
        x[columns.unmet[s][t]] = std::max(0, scenario.services[s].demand[t] - held);
      }
    }
  }
  return all;
}

std::vector<double> PatternModel::ToColumns(const Decisions& decisions, bool* complete) const {
  std::vector<double> x(static_cast<size_t>(milp_.num_variables()), 0.0);
  bool all = true;
  for (size_t i = 0; i < window_.jobs.size(); ++i) {
    const int j = window_.jobs[i];
    const bool running = scenario_.jobs[j].running.has_value();
    const auto& placement = decisions.jobs[j];
    if (!placement && !running) continue;
    const auto& preemption = decisions.preemptions[j];
    bool found = false;
    for (int c = job_first_[i]; c < job_end_[i]; ++c) {
      const Pattern& p = patterns_[c];
      if ((running || (p.shape == placement->shape && p.start == placement->start &&
                       p.first_gpu == placement->first_gpu)) &&
          p.preemption == preemption) {
        x[c] = 1;
        found = true;
        break;
      }
    }
    all = all && found;
  }
  all = ServiceStart(scenario_, services_, decisions, x) && all;
  if (complete != nullptr) *complete = all;
  return x;
}

void PatternModel::Apply(std::span<const double> solution, Decisions& decisions) const {
  ORDO_ASSERT(static_cast<int>(solution.size()) == milp_.num_variables());
  for (int j : window_.jobs) {
    decisions.jobs[j].reset();
    decisions.preemptions[j].reset();
  }
  for (int c = 0; c < num_patterns(); ++c) {
    if (solution[c] > 0.5) {
      const Pattern& p = patterns_[c];
      if (!scenario_.jobs[p.job].running) {
        decisions.jobs[p.job] = Placement{p.shape, p.start, p.first_gpu};
      }
      decisions.preemptions[p.job] = p.preemption;
    }
  }
  for (size_t s = 0; s < scenario_.services.size(); ++s) {
    for (size_t g = 0; g < scenario_.cluster.groups.size(); ++g) {
      for (int t = 0; t < scenario_.horizon_steps; ++t) {
        const int c = services_.gpus[s][g][t];
        decisions.service_gpus[s][g][t] = c < 0 ? 0 : static_cast<int>(std::lround(solution[c]));
      }
    }
  }
}

}  // namespace ordo::policy::full
