// Large-neighbourhood search for instances too big for CBC whole: keep most of the plan fixed,
// free the jobs of one neighbourhood — a range of nodes of one group (aligned, so any block that
// fits it can move inside) crossed with a window of start steps — plus some unstarted jobs that
// could run there, re-solve that sub-MILP with CBC warm-started from the incumbent, keep the result
// when it is better, repeat until the deadline. Services are re-decided in every neighbourhood
// (their counts are few variables), so batch and real-time work trade capacity everywhere.
//
// Guarantees: the result is never worse than the start (every sub-solve starts from the
// incumbent); each accepted step keeps the decisions legal. The sequence of neighbourhoods and the
// node-limited sub-solves depend only on the seed, so with `max_iterations` set (and no deadline
// reached) the result is the same on every run. Cost per iteration: one CBC solve of about
// `target_columns` columns.
//
//   LnsOptions o; o.deadline = now + 60s; o.seed = 1;
//   LnsStats stats;
//   Decisions better = ImproveByLns(scenario, greedy, *backend, o, &stats);
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "ordo/core/scenario.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/solver/milp_backend.h"

namespace ordo::policy::full {

struct LnsOptions {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>* stop = nullptr;
  uint64_t seed = 1;
  /// Stop after this many neighbourhoods (negative: only the deadline and the stop flag).
  int max_iterations = -1;
  /// Pattern columns a neighbourhood starts with; adapted as solves prove or time out.
  int target_columns = 1500;
  /// Branch-and-bound nodes per sub-solve (a deterministic limit).
  long long nodes_per_solve = 100;
  /// Wall-clock cap per sub-solve, so one hard neighbourhood cannot eat the budget.
  double seconds_per_solve = 5;
  /// Share of neighbourhoods built around a job that earns less than it could (the rest are
  /// placed at random).
  double focus_share = 0.9;
  /// Bytes one neighbourhood may take to build and solve (model_size.h); a neighbourhood over it
  /// is shrunk, and when even the part every neighbourhood holds (grids over all GPU-steps, the
  /// services over the horizon) is over it, no neighbourhood is tried.
  double memory_budget_bytes = 1e300;
};

struct LnsStats {
  int iterations = 0;
  int improvements = 0;
  int proven = 0;            // sub-solves CBC proved optimal
  long long columns = 0;     // pattern columns over all sub-MILPs
  double solve_seconds = 0;  // wall time inside CBC
  double start_objective = 0;
  double objective = 0;
  bool too_large = false;  // the fixed part of a neighbourhood is over the memory budget
};

/// Improves `start` (legal decisions for a validated scenario) and returns the best decisions
/// found. Never fails: a sub-solve that errs or finds nothing better is skipped.
Decisions ImproveByLns(const Scenario& scenario, Decisions start, solver::MilpBackend& backend,
                       const LnsOptions& options, LnsStats* stats = nullptr);

}  // namespace ordo::policy::full
