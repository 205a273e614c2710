#include "ordo/policy/full/bound.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/pattern_model.h"

namespace ordo::policy::full {
namespace {

double RunningReward(const Scenario& scenario) {
  double reward = 0;
  for (const Job& job : scenario.jobs) {
    if (job.running) {
      reward += PlacementReward(scenario, job, job.shapes.front(), job.running->start_step);
    }
  }
  return reward;
}

/// The aggregated relaxation: block positions dropped, each group's GPUs pooled per step.
solver::MilpModel AggregatedModel(const Scenario& scenario, const std::vector<uint8_t>& blocked) {
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  const int groups = static_cast<int>(cluster.groups.size());
  const std::vector<std::vector<int>> free = FreeGpus(scenario, blocked);
  solver::MilpModel milp(solver::Sense::kMaximize);
  milp.set_objective_offset(RunningReward(scenario));
  std::vector<std::vector<std::vector<solver::Term>>> batch(
      groups, std::vector<std::vector<solver::Term>>(steps));
  std::vector<solver::Term> one_per_job;
  for (const Job& job : scenario.jobs) {
    if (job.running) continue;
    one_per_job.clear();
    for (const Shape& shape : job.shapes) {
      for (int g = 0; g < groups; ++g) {
        bool has_block = false;
        cluster.ForEachBlock(shape.gpus, job.requirement, [&](int first) {
          has_block = has_block || cluster.group_of(first) == g;
        });
        if (!has_block) continue;
        for (int s = std::max(0, job.arrival_step); s < steps; ++s) {
          const int c = milp.AddVariable(0, 1, PlacementReward(scenario, job, shape, s), false);
          one_per_job.push_back({c, 1.0});
          for (int t = s; t < std::min(steps, s + shape.duration_steps); ++t) {
            batch[g][t].push_back({c, static_cast<double>(shape.gpus)});
          }
        }
      }
    }
    if (one_per_job.size() > 1) milp.AddRow(-solver::kInfinity, 1, one_per_job);
  }
  AddServicesAndCapacity(scenario, free, std::move(batch), /*capacity_everywhere=*/true, milp);
  return milp;
}

}  // namespace

double TrivialBound(const Scenario& scenario) {
  double bound = RunningReward(scenario);
  for (const Job& job : scenario.jobs) {
    if (job.running) continue;
    double best = 0;
    for (const Shape& shape : job.shapes) {
      bool has_block = false;
      scenario.cluster.ForEachBlock(shape.gpus, job.requirement, [&](int) { has_block = true; });
      if (has_block) best = std::max(best, PlacementReward(scenario, job, shape, std::max(0, job.arrival_step)));
    }
    bound += best;
  }
  return bound;
}

Result<double> LpBound(const Scenario& scenario, solver::MilpBackend& backend, double time_limit_s,
                       const std::atomic<bool>* stop, const solver::MilpModel* pattern_model) {
  const auto started = std::chrono::steady_clock::now();
  const auto seconds_left = [&] {
    return std::max(0.0, time_limit_s - std::chrono::duration<double>(
                                            std::chrono::steady_clock::now() - started).count());
  };
  const std::vector<uint8_t> blocked = BatchOccupancy(scenario, nullptr);
  solver::SolveParams params;
  params.stop = stop;
  // The aggregated LP first: sparse, it solves in seconds even at thousands of GPUs, so there is
  // always a bound. Then the tighter pattern LP, when small enough, in what time is left.
  params.time_limit_s = seconds_left();
  auto aggregated = backend.SolveLpRelaxation(AggregatedModel(scenario, blocked), params);
  if (!aggregated) return Fail(aggregated.error());
  std::optional<double> bound;
  if (aggregated->status == solver::ModelStatus::kOptimal) bound = aggregated->objective;
  std::string tried = "the aggregated LP: " +
                      std::string(solver::ModelStatusName(aggregated->status));

  std::optional<PatternModel> built;
  if (pattern_model == nullptr && seconds_left() > 0 &&
      CountPatterns(scenario, WholeProblem(scenario), blocked, kMaxPatternLpColumns) <=
          kMaxPatternLpColumns) {
    built.emplace(scenario, WholeProblem(scenario), blocked, RunningReward(scenario));
    pattern_model = &built->milp();
  }
  if (pattern_model != nullptr && pattern_model->num_nonzeros() <= kMaxPatternLpNonzeros &&
      seconds_left() > 0) {
    params.time_limit_s = seconds_left();
    auto result = backend.SolveLpRelaxation(*pattern_model, params);
    if (!result) return Fail(result.error());
    if (result->status == solver::ModelStatus::kOptimal) {
      bound = bound ? std::min(*bound, result->objective) : result->objective;
    }
    tried += "; the pattern LP: " + std::string(solver::ModelStatusName(result->status));
  }
  if (!bound) {
    return Fail(Error{ErrorCode::kUnavailable, "time_limit_s",
                      "no LP relaxation was solved within " + std::to_string(time_limit_s) +
                          " s (" + tried + ")"});
  }
  return *bound;
}

}  // namespace ordo::policy::full
