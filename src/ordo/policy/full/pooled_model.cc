#include "ordo/policy/full/pooled_model.h"

#include <algorithm>

#include "ordo/core/assert.h"

namespace ordo::policy::full {

PooledModel::PooledModel(const Scenario& scenario, const std::vector<uint8_t>& blocked,
                         bool integer, const Promises* promises)
    : scenario_(scenario) {
  const int steps = scenario.horizon_steps;
  const Cluster& cluster = scenario.cluster;
  const int groups = static_cast<int>(cluster.groups.size());
  milp_.set_objective_offset(RunningReward(scenario));
  std::vector<std::vector<std::vector<solver::Term>>> batch(
      groups, std::vector<std::vector<solver::Term>>(steps));
  std::vector<solver::Term> one_per_job;
  for (int j = 0; j < static_cast<int>(scenario.jobs.size()); ++j) {
    const Job& job = scenario.jobs[j];
    if (job.running) continue;
    one_per_job.clear();
    for (int k = 0; k < static_cast<int>(job.shapes.size()); ++k) {
      const Shape& shape = job.shapes[k];
      std::vector<char> has_block(groups, 0);
      cluster.ForEachBlock(shape.gpus, job.requirement,
                           [&](int first) { has_block[cluster.group_of(first)] = 1; });
      for (int g = 0; g < groups; ++g) {
        if (!has_block[g]) continue;
        for (int s = std::max(0, job.arrival_step); s < steps; ++s) {
          const int c = milp_.AddVariable(0, 1, PlacementReward(scenario, job, shape, s), integer);
          ORDO_ASSERT(c == static_cast<int>(columns_.size()));
          columns_.push_back(Column{j, GroupPlacement{k, s, g}});
          one_per_job.push_back({c, 1.0});
          for (int t = s; t < std::min(steps, s + shape.duration_steps); ++t) {
            batch[g][t].push_back({c, static_cast<double>(shape.gpus)});
          }
        }
      }
    }
    if (one_per_job.size() > 1) milp_.AddRow(-solver::kInfinity, 1, one_per_job);
  }
  services_ = AddServicesAndCapacity(scenario, FreeGpus(scenario, blocked), std::move(batch),
                                     /*capacity_everywhere=*/true, milp_,
                                     /*slack_everywhere=*/promises != nullptr);
  if (promises != nullptr) {
    std::vector<solver::Term> value;
    for (size_t c = 0; c < columns_.size(); ++c) {
      const Job& job = scenario.jobs[columns_[c].job];
      const GroupPlacement& p = columns_[c].placement;
      value.push_back(
          {static_cast<int>(c), PlacementValue(scenario, job, job.shapes[p.shape], p.start)});
    }
    AddPromiseRows(scenario, *promises, value, services_, milp_);
  }
}

std::vector<double> PooledModel::ToColumns(const Decisions& decisions) const {
  std::vector<double> x(static_cast<size_t>(milp_.num_variables()), 0.0);
  for (size_t c = 0; c < columns_.size(); ++c) {
    const auto& placement = decisions.jobs[columns_[c].job];
    const GroupPlacement& p = columns_[c].placement;
    if (placement && placement->shape == p.shape && placement->start == p.start &&
        scenario_.cluster.group_of(placement->first_gpu) == p.group) {
      x[c] = 1;
    }
  }
  ServiceStart(scenario_, services_, decisions, x);
  return x;
}

std::vector<std::optional<GroupPlacement>> PooledModel::Placements(
    std::span<const double> solution) const {
  ORDO_ASSERT(static_cast<int>(solution.size()) == milp_.num_variables());
  std::vector<std::optional<GroupPlacement>> out(scenario_.jobs.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (solution[c] > 0.5) out[columns_[c].job] = columns_[c].placement;
  }
  return out;
}

}  // namespace ordo::policy::full
