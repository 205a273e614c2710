#include "ordo/priority/planning_priority.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace ordo::priority {
namespace {

PlanningOptions Aging(double rate, double cap) {
  PlanningOptions o;
  o.aging = {rate, cap};
  return o;
}

TEST(AgeFactorTest, GrowsByTheRateAndStopsAtTheCap) {
  const AgingOptions a{0.5, 4};
  EXPECT_DOUBLE_EQ(AgeFactor(0, a), 1);
  EXPECT_DOUBLE_EQ(AgeFactor(-3, a), 1);
  EXPECT_DOUBLE_EQ(AgeFactor(1, a), 1.5);
  EXPECT_DOUBLE_EQ(AgeFactor(3, a), 2.5);
  EXPECT_DOUBLE_EQ(AgeFactor(6, a), 4);                     // 1 + 3 = 4: exactly the cap
  EXPECT_DOUBLE_EQ(AgeFactor(100, a), 4);                   // capped
  EXPECT_DOUBLE_EQ(AgeFactor(100, AgingOptions{0, 4}), 1);  // rate 0: off
  EXPECT_DOUBLE_EQ(AgeFactor(100, AgingOptions{2, 1}), 1);  // cap 1: off
}

TEST(FairShareFactorTest, IsTwoIdleOneAtTheShareAndFloorsFarAbove) {
  const FairShareOptions f{24, 4};
  EXPECT_DOUBLE_EQ(FairShareFactor(0, 0.5, f), 2);                  // 2^(1 - 0)
  EXPECT_DOUBLE_EQ(FairShareFactor(0.5, 0.5, f), 1);                // at its share: 2^0
  EXPECT_DOUBLE_EQ(FairShareFactor(0.25, 0.5, f), std::sqrt(2.0));  // 2^0.5
  EXPECT_DOUBLE_EQ(FairShareFactor(1.0, 0.5, f), 0.5);              // twice its share: 2^-1
  EXPECT_DOUBLE_EQ(FairShareFactor(1.0, 0.1, f), 1.0 / 16);         // 2^(1 - 10) floored at 2^-4
  EXPECT_DOUBLE_EQ(FairShareFactor(0.9, 0, f), 1);                  // no share: neutral
}

TEST(FairShareFactorTest, TheWeightScalesTheExponent) {
  const FairShareOptions f{24, 4, 2};
  EXPECT_DOUBLE_EQ(FairShareFactor(0, 0.5, f), 4);           // 2^(2 x 1)
  EXPECT_DOUBLE_EQ(FairShareFactor(0.25, 0.5, f), 2);        // 2^(2 x 0.5)
  EXPECT_DOUBLE_EQ(FairShareFactor(1.0, 0.5, f), 0.25);      // 2^(2 x -1)
  EXPECT_DOUBLE_EQ(FairShareFactor(2.0, 0.5, f), 1.0 / 16);  // 2^-6 floored at 2^-4
}

TEST(PlanningPriorityTest, MultipliesBaseAgeAndFairShare) {
  PlanningOptions o = Aging(0.5, 4);
  // The header's example: base 2, 3 h waited, a tenant at half its share.
  const double fs = FairShareFactor(0.25, 0.5, o.fair_share);
  EXPECT_NEAR(PlanningPriority(2, 3, fs, o), 2 * 2.5 * std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(PlanningPriority(7, 0, 1, o), 7);
  // Everything off: the base priority, whatever the wait.
  EXPECT_DOUBLE_EQ(PlanningPriority(3, 1000, 1, PlanningOptions{}), 3);
}

TEST(PlanningPriorityTest, AWaitBoundDominatesEveryJobWithinIt) {
  PlanningOptions o = Aging(0.5, 4);
  o.wait_bound_hours = 12;
  o.bound_priority = 1000;
  EXPECT_DOUBLE_EQ(PlanningPriority(1, 11.5, 1, o), 4);         // capped age, within the bound
  EXPECT_DOUBLE_EQ(PlanningPriority(1, 12, 1, o), 1001);        // at the bound
  EXPECT_DOUBLE_EQ(PlanningPriority(10, 12, 0.0625, o), 1010);  // fair share no longer applies
  EXPECT_GT(PlanningPriority(1, 12, 1, o), PlanningPriority(10, 11.9, 2, o));
}

TEST(PlanningPriorityTest, DividesBySizeToTheExponent) {
  PlanningOptions o = Aging(0.5, 4);
  o.size_exponent = 1;
  EXPECT_DOUBLE_EQ(PlanningPriority(2, 0, 1, o, 8), 0.25);  // 2 / 8
  EXPECT_DOUBLE_EQ(PlanningPriority(2, 0, 1, o, 0.5), 2);   // below 1 GPU-hour: no change
  EXPECT_DOUBLE_EQ(PlanningPriority(2, 2, 1, o, 4), 1);     // 2 x 2 / 4
  o.size_exponent = 0.5;
  EXPECT_DOUBLE_EQ(PlanningPriority(3, 0, 1, o, 16), 0.75);  // 3 / sqrt(16)
  o.size_exponent = 0;
  EXPECT_DOUBLE_EQ(PlanningPriority(3, 0, 1, o, 16), 3);  // off
}

TEST(JobPlanningPriorityTest, UsesTheSmallestShapeAsTheJobsSize) {
  Job job;
  job.priority = 3;
  job.shapes = {Shape{8, 4}, Shape{2, 6}, Shape{4, 2}};  // 16, 6 and 4 GPU-hours at 30 minutes
  EXPECT_DOUBLE_EQ(SmallestGpuHours(job, 0.5), 4);
  EXPECT_DOUBLE_EQ(SmallestGpuHours(Job{}, 0.5), 0);
  PlanningOptions o = Aging(0.25, 4);
  o.size_exponent = 1;
  // 3 x (1 + 0.25 x 2) x 2 / 4 = 2.25
  EXPECT_DOUBLE_EQ(JobPlanningPriority(job, 2, 2, o, 0.5), 2.25);
  // The online defaults: aging and fair share, no size preference.
  EXPECT_DOUBLE_EQ(JobPlanningPriority(job, 2, 1, OnlinePlanningOptions(), 0.5), 3 * 1.5);
}

TEST(UsageLedgerTest, DecaysWithTheHalfLife) {
  UsageLedger ledger(2, 10);
  EXPECT_DOUBLE_EQ(ledger.UsageFraction(0), 0);
  // 10 h: tenant 0 holds 8 of 16 GPUs, tenant 1 none.
  ledger.Add(10, std::vector<double>{8, 0}, 16);
  EXPECT_DOUBLE_EQ(ledger.UsageFraction(0), 0.5);  // 80 / 160
  EXPECT_DOUBLE_EQ(ledger.UsageFraction(1), 0);
  // Another 10 h (one half-life): the first period counts half. Tenant 0 idle, tenant 1 holds 16.
  // used0 = 80/2 = 40, used1 = 160, capacity = 160/2 + 160 = 240.
  ledger.Add(10, std::vector<double>{0, 16}, 16);
  EXPECT_DOUBLE_EQ(ledger.UsageFraction(0), 40.0 / 240);
  EXPECT_DOUBLE_EQ(ledger.UsageFraction(1), 160.0 / 240);
}

TEST(UsageLedgerTest, ATenantAtItsShareForeverHasFactorOne) {
  UsageLedger ledger(1, 6);
  for (int step = 0; step < 200; ++step) ledger.Add(0.5, std::vector<double>{32}, 128);
  EXPECT_NEAR(ledger.UsageFraction(0), 0.25, 1e-12);
  EXPECT_NEAR(FairShareFactor(ledger.UsageFraction(0), 0.25, FairShareOptions{6, 4}), 1, 1e-12);
}

TEST(ValidatePlanningOptionsTest, NamesTheField) {
  EXPECT_TRUE(ValidatePlanningOptions(DefaultPlanningOptions()));
  auto field = [](PlanningOptions o) {
    auto r = ValidatePlanningOptions(o);
    return r ? std::string("ok") : r.error().field;
  };
  PlanningOptions o = DefaultPlanningOptions();
  o.aging.cap = 0.9;
  EXPECT_EQ(field(o), "aging.cap");
  o = DefaultPlanningOptions();
  o.aging.rate_per_hour = -1;
  EXPECT_EQ(field(o), "aging.rate_per_hour");
  o = DefaultPlanningOptions();
  o.fair_share.half_life_hours = 0;
  EXPECT_EQ(field(o), "fair_share.half_life_hours");
  o = DefaultPlanningOptions();
  o.wait_bound_hours = -2;
  EXPECT_EQ(field(o), "wait_bound_hours");
  o = DefaultPlanningOptions();
  o.bound_priority = std::nan("");
  EXPECT_EQ(field(o), "bound_priority");
  o = DefaultPlanningOptions();
  o.size_exponent = -0.5;
  EXPECT_EQ(field(o), "size_exponent");
  o = DefaultPlanningOptions();
  o.fair_share.weight = -1;
  EXPECT_EQ(field(o), "fair_share.weight");
  for (double hours : {-1.0, std::nan(""), 9000.0}) {
    o = DefaultPlanningOptions();
    o.ramp_reserve_hours = hours;
    EXPECT_EQ(field(o), "ramp_reserve_hours") << hours;
  }
  o = DefaultPlanningOptions();
  o.ramp_reserve_hours = 24;
  EXPECT_TRUE(ValidatePlanningOptions(o).has_value());
  for (double factor : {0.0, -0.5, 1.5, std::nan("")}) {
    o = DefaultPlanningOptions();
    o.borrowing_factor = factor;
    EXPECT_EQ(field(o), "borrowing_factor") << factor;
  }
  o.borrowing_factor = 1.0 / 1024;
  EXPECT_TRUE(ValidatePlanningOptions(o).has_value());
}

TEST(BorrowersTest, RunningJobsClaimTheShareFirstThenWaitingOnesByRank) {
  // Tenant 0, share 8: running 4 claims first although its rank is the largest; then the waiting
  // 8 (rank 1) no longer fits, the waiting 2 (rank 2) does, the waiting 4 (rank 3) does not.
  // Tenant 1 has no share; a job without a tenant never borrows.
  const std::vector<ShareClaim> jobs = {
      {.tenant = 0, .gpus = 4, .running = true, .rank = 9},
      {.tenant = 0, .gpus = 8, .running = false, .rank = 1},
      {.tenant = 0, .gpus = 2, .running = false, .rank = 2},
      {.tenant = 0, .gpus = 4, .running = false, .rank = 3},
      {.tenant = 1, .gpus = 64, .running = true, .rank = 0},
      {.tenant = -1, .gpus = 64, .running = false, .rank = 0},
  };
  const std::vector<double> shares = {8, 0};
  EXPECT_EQ(Borrowers(jobs, shares), (std::vector<bool>{false, true, false, true, false, false}));
}

TEST(BorrowersTest, TheEarliestStartedRunningJobsKeepTheShare) {
  // Share 8, three running 4-GPU jobs started at -10, -2 and -6: the one started last borrows.
  const std::vector<ShareClaim> jobs = {
      {.tenant = 0, .gpus = 4, .running = true, .rank = -10},
      {.tenant = 0, .gpus = 4, .running = true, .rank = -2},
      {.tenant = 0, .gpus = 4, .running = true, .rank = -6},
  };
  const std::vector<double> shares = {8};
  EXPECT_EQ(Borrowers(jobs, shares), (std::vector<bool>{false, true, false}));
}

Scenario TwoTenantScenario() {
  // Tenant 0 runs a 4-GPU job and waits with an 8 (priority 6) and a 2 (priority 3); tenant 1
  // waits with a 4. 16 GPUs.
  Scenario s;
  s.horizon_steps = 8;
  s.cluster.groups = {NodeGroup{.name = "g", .nodes = 2, .gpus_per_node = 8}};
  s.cluster.Index();
  auto job = [](std::string id, int gpus, double priority, bool running) {
    Job j;
    j.id = std::move(id);
    j.priority = priority;
    j.shapes.push_back(Shape{gpus, 4});
    if (running) j.running = RunningPlacement{-3, 0};
    return j;
  };
  s.jobs = {job("r", 4, 2, true), job("big", 8, 6, false), job("small", 2, 3, false),
            job("other", 4, 5, false)};
  return s;
}

TEST(ApplyShareGuaranteeTest, ScalesTheBorrowersAndRecordsTheFactor) {
  Scenario s = TwoTenantScenario();
  const std::vector<int> tenant_of = {0, 0, 0, 1};
  const std::vector<double> shares = {0.5, 0.5};  // 8 GPUs each
  ApplyShareGuarantee(s, tenant_of, shares, 0.25);
  // r (4) claims first; big (8, the highest priority) no longer fits: it borrows; small fits.
  EXPECT_DOUBLE_EQ(s.jobs[1].priority, 6 * 0.25);
  EXPECT_TRUE(s.jobs[1].borrowing());
  EXPECT_DOUBLE_EQ(s.jobs[1].unscaled_priority(), 6);
  for (size_t j : {0U, 2U, 3U}) {
    EXPECT_FALSE(s.jobs[j].borrowing()) << j;
    EXPECT_DOUBLE_EQ(s.jobs[j].priority, TwoTenantScenario().jobs[j].priority) << j;
  }
}

TEST(ApplyShareGuaranteeTest, WaitingJobsClaimTheShareInArrivalOrder) {
  // Share 8, r holds 4: of two waiting 4-GPU jobs the earlier arrival (priority 2, arrived at -5)
  // claims the rest, the later one (priority 6, arrived at -1) borrows; at the same arrival the
  // higher priority claims it.
  for (const int late_arrival : {-1, -5}) {
    Scenario s = TwoTenantScenario();
    s.jobs.resize(3);
    s.jobs[1].shapes = {Shape{4, 4}};
    s.jobs[1].priority = 2;
    s.jobs[1].arrival_step = -5;
    s.jobs[2].shapes = {Shape{4, 4}};
    s.jobs[2].priority = 6;
    s.jobs[2].arrival_step = late_arrival;
    const std::vector<int> tenant_of = {0, 0, 0};
    const std::vector<double> shares = {0.5};  // 8 GPUs
    ApplyShareGuarantee(s, tenant_of, shares, 0.5);
    const bool same_arrival = late_arrival == -5;
    EXPECT_EQ(s.jobs[1].borrowing(), same_arrival) << late_arrival;
    EXPECT_EQ(s.jobs[2].borrowing(), !same_arrival) << late_arrival;
  }
}

TEST(ApplyShareGuaranteeTest, AFactorOfOneChangesNothing) {
  Scenario s = TwoTenantScenario();
  const std::vector<int> tenant_of = {0, 0, 0, 1};
  const std::vector<double> shares = {1.0 / 16, 1.0 / 16};  // 1 GPU each
  ApplyShareGuarantee(s, tenant_of, shares, 1);
  for (size_t j = 0; j < s.jobs.size(); ++j) {
    EXPECT_FALSE(s.jobs[j].borrowing());
    EXPECT_DOUBLE_EQ(s.jobs[j].priority, TwoTenantScenario().jobs[j].priority);
  }
}

}  // namespace
}  // namespace ordo::priority
