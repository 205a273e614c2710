#include "ordo/policy/full/bound.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/model_size.h"
#include "ordo/policy/full/pattern_model.h"
#include "ordo/policy/full/pooled_model.h"

namespace ordo::policy::full {
double TrivialBound(const Scenario& scenario) {
  double bound = RunningReward(scenario);
  for (const Job& job : scenario.jobs) {
    if (job.running) continue;
    double best = 0;
    for (const Shape& shape : job.shapes) {
      bool has_block = false;
      scenario.cluster.ForEachBlock(shape.gpus, job.requirement, [&](int) { has_block = true; });
      if (has_block)
        best = std::max(best, PlacementReward(scenario, job, shape, std::max(0, job.arrival_step)));
    }
    bound += best;
  }
  return bound;
}

Result<double> LpBound(const Scenario& scenario, solver::MilpBackend& backend, double time_limit_s,
                       const std::atomic<bool>* stop, const solver::MilpModel* pattern_model,
                       double memory_budget_bytes) {
  const auto started = std::chrono::steady_clock::now();
  const auto seconds_left = [&] {
    return std::max(
        0.0, time_limit_s -
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  };
  if (BuildGridBytes(scenario) > memory_budget_bytes) {
    return Fail(Error{ErrorCode::kUnavailable, "memory_budget_bytes",
                      "the LP relaxations are too large for the memory budget"});
  }
  const Window whole = WholeProblem(scenario);
  const std::vector<uint8_t> blocked = FixedOccupancy(scenario, whole);
  solver::SolveParams params;
  params.stop = stop;
  // The pooled LP first: sparse, it solves in seconds even at thousands of GPUs, so there is
  // a bound whenever it fits the memory budget. Then the tighter pattern LP, when small enough,
  // in what time is left.
  std::optional<double> bound;
  std::string tried = "the pooled LP: ";
  if (whole.preemption) {
    tried += "none with preemption";  // it has no preemption, so it bounds nothing then
  } else if (BuildAndSolveBytes(scenario, PooledModelSize(scenario)) <= memory_budget_bytes) {
    params.time_limit_s = seconds_left();
    auto pooled =
        backend.SolveLpRelaxation(PooledModel(scenario, blocked, /*integer=*/false).milp(), params);
    if (!pooled) return Fail(pooled.error());
    if (pooled->status == solver::ModelStatus::kOptimal) bound = pooled->objective;
    tried += solver::ModelStatusName(pooled->status);
  } else {
    tried += "too large for the memory budget";
  }

  std::optional<PatternModel> built;
  if (pattern_model == nullptr && seconds_left() > 0) {
    const BlockedIndex index(scenario, blocked);
    const ModelSize size = PatternModelSize(scenario, whole, index, kMaxPatternLpColumns);
    if (size.columns - ServicePartSize(scenario).columns <= kMaxPatternLpColumns &&
        size.nonzeros <= 4.0 * kMaxPatternLpNonzeros &&
        BuildAndSolveBytes(scenario, size) <= memory_budget_bytes) {
      built.emplace(scenario, whole, blocked, FixedReward(scenario, whole));
      pattern_model = &built->milp();
    }
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
