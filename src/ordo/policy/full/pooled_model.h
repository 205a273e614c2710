// The pooled model: the allocation MILP with block positions dropped — one column per (job,
// shape, node group, start), each group's GPUs pooled per step in one capacity row shared with
// the services. It relaxes the pattern model (every plan maps onto it with the same objective), so
// its optimum bounds the real one; it has a fifth of the columns and none of the symmetry of
// interchangeable blocks, so CBC solves it to optimality in seconds where the pattern model
// would take minutes (docs/full-mode.md). Its solution is a plan up to the blocks: when the
// pattern model can pack it (Window::pinned), that plan is optimal.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "ordo/core/scenario.h"
#include "ordo/policy/common/promises.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/pattern_model.h"
#include "ordo/solver/milp_model.h"

namespace ordo::policy::full {

class PooledModel {
 public:
  /// `blocked` holds the running jobs' GPU-steps. Binary columns when `integer`, else the LP
  /// relaxation's [0, 1] ones. With `promises`, fast mode's two promises are rows, as in the
  /// pattern model.
  PooledModel(const Scenario& scenario, const std::vector<uint8_t>& blocked, bool integer,
              const Promises* promises = nullptr);

  [[nodiscard]] const solver::MilpModel& milp() const { return milp_; }

  /// The column vector of `decisions` (a MIP start).
  [[nodiscard]] std::vector<double> ToColumns(const Decisions& decisions) const;

  /// Each job's placement in a solution, indexed like Scenario::jobs (none: not started).
  [[nodiscard]] std::vector<std::optional<GroupPlacement>> Placements(
      std::span<const double> solution) const;

 private:
  struct Column {
    int job;
    GroupPlacement placement;
  };

  const Scenario& scenario_;
  solver::MilpModel milp_{solver::Sense::kMaximize};
  std::vector<Column> columns_;  // column i < columns_.size() is columns_[i]
  ServiceColumns services_;
};

}  // namespace ordo::policy::full
