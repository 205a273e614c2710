// An independent check of the explanations of a plan (policy/common/explain.h), written from the
// definitions in docs/formats.md ("Explanations") and sharing no code with the explainer: its own
// block enumeration, its own occupancy grid, a brute-force floor check (Hall's condition over every
// subset of services) where the explainer runs a max flow.
//
//   std::vector<std::string> problems = CheckExplanations(scenario, plan, plan.explanations);
//   EXPECT_TRUE(problems.empty()) << problems.front();
#pragma once

#include <string>
#include <vector>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"

namespace ordo::testing {

/// Problems with one explanation of `plan` (legal for `scenario`; `plan.policy` names the policy);
/// empty when every claim in it holds:
/// - not_arrived: the job arrives after step 0 and starts on arrival (or arrives past the horizon);
/// - gpu_type / no_block_of_size / service_floor: it is not planned, and no group matches it / no
///   aligned block of a shape it could use exists / for every such block some set of services has
///   floors larger than the GPUs they may use outside the block;
/// - otherwise the spans cover every step from max(0, arrival) to the planned start (or the
///   horizon) in order, `reason` and `blocking_id` are those of the longest span, and at each step
///   t of a span, with "free" meaning free of everyone but the job over [t, t + duration) inside
///   the horizon: not_chosen - some block is free; head_of_line - fifo, some block is free, the one
///   holder is a job ahead in fifo's queue not started by t and every job ahead of it has started
///   by t; service_reservation - a baseline with static reservations, every free block has a GPU
///   the named services hold at some step; blocked_by_job, low_value, blocked_by_service,
///   service_peak - no block is free and every block has a GPU held during the run by a named
///   holder (low_value: ordo or ordo-full, all holders planned jobs of at least its priority;
///   blocked_by_service: services only; service_peak: services only, each block's GPU held at a
///   step where that service's demand is >= 90% of its peak). Holders' facts (runs, demands, peaks)
///   match the plan, and the message names each visible holder and the planned start.
std::vector<std::string> CheckExplanation(const Scenario& scenario, const Plan& plan,
                                          const JobExplanation& explanation);

/// Every job that is not running and does not start at step 0 has exactly one explanation, and
/// every explanation passes CheckExplanation. Problems name the job.
std::vector<std::string> CheckExplanations(const Scenario& scenario, const Plan& plan,
                                           const std::vector<JobExplanation>& explanations);

}  // namespace ordo::testing
