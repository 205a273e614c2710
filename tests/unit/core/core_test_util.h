// One small legal plan that touches every rule of spec/formats-v1.md ("Legal plan"), shared by the
// checker's and the metrics' tests. Each checker case breaks exactly one rule of it; the metrics
// tests compute every figure of it by hand.
//
//   GPUs 0-7   group "a100": 2 nodes x 4, A100, 40 GB
//   GPUs 8-15  group "h100": 1 node x 8, H100, 80 GB
//   horizon 6 steps; objective time_decay 0.5, unmet_penalty_multiplier 2
//
//   step        0      1      2      3      4      5    | past the horizon
//   run  (2)    0-1    0-1                               running since step -2, 4 steps
//   train(4)           4-7    4-7    4-7                 arrives at step 1, needs >= 40 GB
//   quant(2)    8-9    8-9                               H100 only; shape {2, 2} of {1,4},{2,2}
//   big  (8)                                0-7    0-7   arrives at step 2; shape {8,2} of
//   {8,2},{16,1} late (1)                                       11    | 11, 11 idle (2)    not
//   started chat        12-13  12-14  12-15  12-14  12-13  12-13  H100, min 2, max 4, churn 1,
//   current 2 embed       10     10     10     10     10     10     max 1
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string_view>
#include <vector>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "tests/support/builders.h"

namespace ordo::testing {

inline Scenario LegalScenario() {
  return ScenarioBuilder("legal")
      .Steps(6)
      .Group("a100", 2, 4, "A100", 40)
      .Group("h100", 1, 8, "H100", 80)
      .Objective(0.5, 2)
      .Job(MakeJob("run").Gpus(2).Duration(4).Priority(3).Running(-2, 0))
      .Job(MakeJob("train").Gpus(4).Duration(3).Priority(5).Arrival(1).MinMemory(40))
      .Job(MakeJob("quant").Shapes({{1, 4}, {2, 2}}).Priority(2).GpuType("H100"))
      .Job(MakeJob("big").Shapes({{8, 2}, {16, 1}}).Priority(1).Arrival(2))
      .Job(MakeJob("late").Gpus(1).Duration(3).Priority(4))
      .Job(MakeJob("idle").Gpus(2).Duration(1).Priority(1))
      .Service(
          MakeService("chat").Priority(10).Min(2).Max(4).Churn(1).Current(2).GpuType("H100").Demand(
              {2, 3, 5, 3, 2, 2}))
      .Service(MakeService("embed").Priority(1).Max(1).Demand({1, 1, 1, 0, 0, 2}))
      .Build();
}

inline Plan LegalPlan() {
  Plan plan;
  plan.scenario = "legal";
  plan.policy = "hand";
  plan.jobs = {
      JobPlacement{"run", -2, 0, 2, 4},  JobPlacement{"train", 1, 4, 4, 3},
      JobPlacement{"quant", 0, 8, 2, 2}, JobPlacement{"big", 4, 0, 8, 2},
      JobPlacement{"late", 5, 11, 1, 3}, JobPlacement{"idle", std::nullopt, 0, 0, 0},
  };
  plan.services = {
      ServiceAllocation{
          "chat", {{12, 13}, {12, 13, 14}, {12, 13, 14, 15}, {12, 13, 14}, {12, 13}, {12, 13}}},
      ServiceAllocation{"embed", {{10}, {10}, {10}, {10}, {10}, {10}}},
  };
  return plan;
}

// A legal plan with preemptions and resumed stays, for the checker's and the metrics' preemption
// tests:
//
//   GPUs 0-3 group "a" (type A), 4-7 group "b" (type B), 8-9 group "c" (type C); 1 node each
//   horizon 10 steps; objective time_decay 0.5, unmet_penalty_multiplier 2
//
//   step       0    1    2    3    4    5    6    7    8    9   | past the horizon
//   ckpt  (2)  0-1  0-1  0-1L           2-3R 2-3  2-3  2-3  2-3  type A, checkpoint every 2,
//              restart 1; preempted at 3 (progress 3, saved 2), resumed at 5 on 2-3: migration
//   urgent(2)                 0-1  0-1                           arrives at 3, the freed block
//   held  (2)  4-5R 4-5R 4-5  4-5  4-5  4-5                      running since -3, progress 1,
//              2 restart steps left, duration 5: ends at 2 + 5 - 1 = 6
//   runpre(2)  6-7L                          6-7R 6-7  6-7  | 6-7 (10-12)  running since -4,
//              duration 8, progress 4 (the default), checkpoint every 3, restart 1; preempted
//              at 1 (progress 5, saved 3), resumed at 7: 1 + 8 - 3 = 6 steps, ends at 13
//   idle  (2)  not started                                       checkpoint every 1
//
//   L: lost work, R: restart steps. Kept work: ckpt 0, 1, 6-9; urgent 3, 4; held 2-5; runpre 8, 9.
inline Scenario PreemptScenario() {
  return ScenarioBuilder("preempt")
      .Steps(10)
      .Group("a", 1, 4, "A", 80)
      .Group("b", 1, 4, "B", 80)
      .Group("c", 1, 2, "C", 80)
      .Objective(0.5, 2)
      .Job(MakeJob("ckpt").Gpus(2).Duration(6).Priority(2).GpuType("A").Checkpointed(2, 1))
      .Job(MakeJob("urgent").Gpus(2).Duration(2).Priority(9).Arrival(3))
      .Job(MakeJob("held")
               .Gpus(2)
               .Duration(5)
               .Priority(3)
               .Running(-3, 4)
               .Progress(1, 2)
               .Checkpointed(1, 2))
      .Job(MakeJob("runpre").Gpus(2).Duration(8).Priority(1).Running(-4, 6).Checkpointed(3, 1))
      .Job(MakeJob("idle").Gpus(2).Duration(1).Checkpointed(1, 0))
      .Build();
}

inline JobPlacement Preempted(JobPlacement placement, int preempt_step,
                              std::optional<ResumePlacement> resume) {
  placement.preempt_step = preempt_step;
  placement.resume = resume;
  return placement;
}

inline Plan PreemptPlan() {
  Plan plan;
  plan.scenario = "preempt";
  plan.policy = "hand";
  plan.jobs = {
      Preempted(JobPlacement{"ckpt", 0, 0, 2, 6}, 3, ResumePlacement{5, 2}),
      JobPlacement{"urgent", 3, 0, 2, 2},
      JobPlacement{"held", -3, 4, 2, 5},
      Preempted(JobPlacement{"runpre", -4, 6, 2, 8}, 1, ResumePlacement{7, 6}),
      JobPlacement{"idle", std::nullopt, 0, 0, 0},
  };
  return plan;
}

/// The placement of job `id` in `plan`, for tests that edit it; the id must be there.
inline JobPlacement& JobIn(Plan& plan, std::string_view id) {
  for (JobPlacement& job : plan.jobs) {
    if (job.id == id) return job;
  }
  ADD_FAILURE() << "no job " << id << " in the plan";
  return plan.jobs.front();
}

/// The allocation of service `id` in `plan`; the id must be there.
inline ServiceAllocation& ServiceIn(Plan& plan, std::string_view id) {
  for (ServiceAllocation& service : plan.services) {
    if (service.id == id) return service;
  }
  ADD_FAILURE() << "no service " << id << " in the plan";
  return plan.services.front();
}

}  // namespace ordo::testing
