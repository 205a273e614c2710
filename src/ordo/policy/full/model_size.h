// What full mode's models would cost, estimated from the scenario before anything is built, so that
// a call never allocates past its memory budget (PolicyOptions::memory_budget_bytes): a model over
// the budget is not built and full mode falls back to what fits (full_policy.cc).
//
// The estimates are upper bounds on the model's size (columns, rows, non-zeros) and a deliberately
// generous per-non-zero and per-column price for the solver's copies of it (OsiClp keeps column-
// and row-major matrices, CbcModel clones the solver, CBC's driver keeps a continuous and a
// reference copy). Cost: O(jobs x shapes x groups) for the pooled model and the service part;
// O(patterns) up to the cap for the pattern model.
//
//   const ModelSize pooled = PooledModelSize(scenario);
//   if (BuildAndSolveBytes(scenario, pooled) > options.memory_budget_bytes) { /* skip it */ }
#pragma once

#include <cstdint>

#include "ordo/core/scenario.h"
#include "ordo/policy/full/pattern_model.h"

namespace ordo::policy::full {

/// A model's size; doubles, since estimates of absurd inputs exceed every integer type's range
/// only in theory but products of them overflow int64 in practice.
struct ModelSize {
  double columns = 0;
  double rows = 0;
  double nonzeros = 0;

  ModelSize& operator+=(const ModelSize& other) {
    columns += other.columns;
    rows += other.rows;
    nonzeros += other.nonzeros;
    return *this;
  }
};

/// The services' part of every model (AddServicesAndCapacity): a count per (service, matching
/// group, step), an unmet slack per (service, step), rule 2 and 4 rows, a capacity row per
/// (group, step) that holds every count (batch terms are counted with the batch columns).
ModelSize ServicePartSize(const Scenario& scenario);

/// The pooled model (pooled_model.h), services included: a column per (job, shape, group with a
/// legal block, start), each in one assignment row and one capacity row per step it runs.
ModelSize PooledModelSize(const Scenario& scenario);

/// The pattern model of `window`, services included, counted pattern by pattern; non-zeros per
/// pattern bounded by one clique per GPU and step it covers plus its capacity rows. Counting
/// stops once the columns pass `stop_above` (the result then says "more than that").
ModelSize PatternModelSize(const Scenario& scenario, const Window& window,
                           const BlockedIndex& index, int64_t stop_above);

/// Bytes of the grids a model build over the whole horizon allocates beside the model: the
/// occupancy (a byte), its prefix index (4) and the (GPU atom, step) cover index (8) per GPU-step.
double BuildGridBytes(const Scenario& scenario);

/// Bytes the model takes while it is built and solved: ordo's MilpModel (grown by doubling), the
/// build's term lists and CBC's copies.
double ModelBytes(const ModelSize& size);

/// BuildGridBytes + ModelBytes: what building and solving the model may take at its peak.
double BuildAndSolveBytes(const Scenario& scenario, const ModelSize& size);

}  // namespace ordo::policy::full
