// Fast mode's anytime improvement loop: adaptive large neighbourhood search (ALNS, after Ropke and
// Pisinger) over the best outcome of a search: its batch placements and its services' counts.
//
// Each iteration takes some started jobs out (a destroy operator, neighbourhood_operators.h:
// a region of GPUs x steps, a losing job's competitors, the cheapest jobs, random jobs), keeps the
// services' counts or plans them again on what the other jobs leave (capped at what each holds
// now, free, or priced to give way to a job of the focus job's priority), and places the removed
// and every unstarted job again (a repair operator: greedy by priority, the same with noise, or
// regret-2 insertion). A solution that leaves more unmet real-time GPU-steps than the cap
// (reactive's, or what the outcome already leaves: fast mode's promise) is refused; otherwise
// simulated annealing decides whether it becomes the current one, and the best is kept. Each
// kind of operator is drawn by a weight that follows how often it found a new best, an
// improvement or an accepted solution.
//
// Deterministic for a seed: the budget is counted in work (jobs searched, jobs taken off or put on
// a grid, services planned), never in time; the deadline only cuts it short.
// Cost: an iteration copies the current solution's grid, takes the removed jobs off it
// (BlockGrid::Release) and searches every job to place, so its cost grows with the waiting jobs;
// the loop runs where the budget pays for enough iterations (NeighbourhoodBudget) — up to a few
// hundred waiting jobs.
#pragma once

#include "ordo/policy/fast/batch_passes.h"
#include "ordo/policy/fast/search.h"

namespace ordo::policy::fast {

/// The loop's work budget for `jobs` waiting jobs at `effort`; 0 where an iteration would cost
/// too large a share of it to pay.
long long NeighbourhoodBudget(size_t jobs, int effort);

/// Improves `outcome` with at most `budget` units of work: its objective only rises, and its unmet
/// real-time GPU-steps stay at most `unmet_limit` or what it already leaves, whichever is more.
void SearchNeighbourhoods(const SearchContext& ctx, const BatchPasses& batch, long long budget,
                          long long unmet_limit, Outcome& outcome);

}  // namespace ordo::policy::fast
