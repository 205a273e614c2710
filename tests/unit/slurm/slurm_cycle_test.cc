// Mapping, enforcement and whole cycles against the simulated Slurm (fake_slurm.h).
#include "ordo/adapters/slurm/slurm_cycle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>

#include "fake_slurm.h"
#include "ordo/adapters/slurm/process_slurm_client.h"
#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"

namespace ordo::slurm {
namespace {

using testing::FakeSlurm;

constexpr int64_t kNow = 100000;

struct Harness {
  std::vector<double> sleeps;
  std::vector<std::string> lines;
  Sleeper sleep = [this](double s) { sleeps.push_back(s); };
  Logger log = [this](std::string_view l) { lines.emplace_back(l); };
};

Result<Mapping> Map(FakeSlurm& fake, const SlurmConfig& config, int64_t now = kNow) {
  Harness h;
  auto snap = ReadSnapshot(fake, config, now, h.sleep, h.log);
  if (!snap) return Fail(snap.error());
  return BuildScenario(*snap, config);
}

Result<CycleReport> Cycle(FakeSlurm& fake, const SlurmConfig& config, Harness& h,
                          int64_t now = kNow, bool dry_run = false, std::ostream* out = nullptr) {
  CycleOptions options;
  options.now = now;
  options.dry_run = dry_run;
  options.dry_out = out;
  return RunCycle(fake, config, options, h.sleep, h.log);
}

// Kept waiting by ordo: released from its hold, with ordo's mark and a begin time `silence_s`
// after the fake's clock.
bool Deferred(const FakeSlurm& fake, const FakeSlurm::Job& j, int64_t silence_s = 600) {
  return j.state == "PENDING" && !j.held && j.admin_comment == kDeferredMark &&
         j.eligible_time == fake.now + silence_s;
}

// Every action only renews a begin time: what a cycle does when nothing else changed.
bool OnlyRenewals(const std::vector<Action>& actions) {
  return std::all_of(actions.begin(), actions.end(), [](const Action& a) {
    return a.kind == ActionKind::kDefer && a.commands.size() == 1 && a.commands[0].size() == 4 &&
           a.commands[0][3].rfind("StartTime=now+", 0) == 0;
  });
}

// Starts pin a job's nodes; deferrals release too, but never pin.
int CountStarts(const std::vector<std::string>& log) {
  return static_cast<int>(std::count_if(log.begin(), log.end(), [](const std::string& l) {
    return l.rfind("scontrol update", 0) == 0 && l.find(" NumNodes=") != std::string::npos;
  }));
}

TEST(SlurmMapping, NodesRunningJobsCandidatesAndServices) {
  FakeSlurm fake(3, 8);
  // Running 4 GPUs at 4-7 of n2 for 2 hours of its 3: pinned at start_step -2, duration 3.
  const int64_t running = fake.AddRunning("ordo:kind=training,priority=7,duration=3h", {"n2"},
                                          {4, 5, 6, 7}, kNow - 2 * 3600 - 60);
  // Running on 3 unaligned GPUs (1,2,3 of n3): pieces [1] and [2,3].
  fake.AddRunning("", {"n3"}, {1, 2, 3}, kNow - 10);
  const int64_t held =
      fake.SubmitHeld("ordo:kind=quantization,priority=2,shapes=1x4h|2x2h", 1, 1, kNow - 3 * 3600);
  fake.SubmitHeld("not ordo's", 1);
  fake.SubmitHeld("ordo:kind=training,priority=2,duration=1h", 3);  // 3 GPUs: not a power of two
  fake.SubmitHeld("ordo:kind=training,priority=2", 2);              // no duration
  SlurmConfig config;
  ServiceSpec chat;
  chat.service.id = "chat";
  chat.service.priority = 10;
  chat.service.max_gpus = -1;
  chat.service.demand = {1, 2, 3};
  config.services.push_back(chat);
  fake.AddRunning("", {"n1"}, {0}, kNow - 5, "ordo-svc-chat");

  auto m = Map(fake, config);
  ASSERT_TRUE(m) << m.error().ToString();
  const Scenario& sc = m->scenario;
  ASSERT_EQ(sc.cluster.groups.size(), 1u);
  EXPECT_EQ(sc.cluster.groups[0].nodes, 3);
  EXPECT_EQ(sc.cluster.total_gpus(), 24);
  ASSERT_EQ(sc.jobs.size(), 4u);  // 1 running + 2 pieces + 1 candidate
  EXPECT_EQ(sc.jobs[0].id, std::to_string(running));
  EXPECT_EQ(sc.jobs[0].running->first_gpu, 12);
  EXPECT_EQ(sc.jobs[0].running->start_step, -2);
  EXPECT_EQ(sc.jobs[0].shapes[0].duration_steps, 3);
  EXPECT_DOUBLE_EQ(sc.jobs[0].priority, 7);
  EXPECT_EQ(sc.jobs[1].running->first_gpu, 17);
  EXPECT_EQ(sc.jobs[1].shapes[0].gpus, 1);
  EXPECT_EQ(sc.jobs[2].running->first_gpu, 18);
  EXPECT_EQ(sc.jobs[2].shapes[0].gpus, 2);
  // Unlimited job with no metadata: pinned past the horizon.
  EXPECT_GE(sc.jobs[1].shapes[0].duration_steps, sc.horizon_steps);
  ASSERT_EQ(m->candidates.size(), 1u);
  EXPECT_EQ(m->candidates[0].slurm_id, held);
  const Job& q = sc.jobs[static_cast<size_t>(m->candidates[0].job)];
  EXPECT_EQ(q.kind, JobKind::kQuantization);
  EXPECT_EQ(q.arrival_step, -3);
  ASSERT_EQ(q.shapes.size(), 2u);
  EXPECT_EQ(q.shapes[0], (Shape{1, 4}));
  EXPECT_EQ(q.shapes[1], (Shape{2, 2}));
  // Two held ordo jobs with bad metadata are reported, not planned.
  EXPECT_EQ(
      std::count_if(m->notes.begin(), m->notes.end(),
                    [](const std::string& n) { return n.find("left out") != std::string::npos; }),
      2);
  ASSERT_EQ(sc.services.size(), 1u);
  EXPECT_EQ(sc.services[0].current_gpus, 1);
  EXPECT_EQ(sc.services[0].max_gpus, 24);
  EXPECT_EQ(static_cast<int>(sc.services[0].demand.size()), sc.horizon_steps);
  ASSERT_EQ(m->placeholders.size(), 1u);
  EXPECT_EQ(m->placeholders[0].gpu, 0);
  EXPECT_EQ(m->Locate(13), (std::pair<int, int>{1, 5}));
}

TEST(SlurmMapping, NoUsableNodeIsAnError) {
  FakeSlurm fake(0, 8);
  auto m = Map(fake, SlurmConfig{});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().field, "nodes");
}

TEST(SlurmMapping, DemandWindowFollowsTheProfile) {
  ServiceSpec s;
  s.service.demand = {1, 2, 3, 4};
  s.demand_start = 1000;
  EXPECT_EQ(DemandWindow(s, 60, 6, 1000), (std::vector<int>{1, 2, 3, 4, 1, 2}));
  EXPECT_EQ(DemandWindow(s, 60, 3, 1000 + 2 * 3600 + 59), (std::vector<int>{3, 4, 1}));
  EXPECT_EQ(DemandWindow(s, 60, 2, 1000 - 1), (std::vector<int>{4, 1}));
}

TEST(SlurmCycle, StartsPlannedJobsOnExactlyThePlannedGpusOnce) {
  FakeSlurm fake(2, 8);
  const int64_t a = fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 4);
  const int64_t b = fake.SubmitHeld("ordo:kind=training,priority=3,duration=1h", 8, 1);
  const int64_t c =
      fake.SubmitHeld("ordo:kind=training,priority=1,duration=1h", 8, 2);  // 16 GPUs: waits
  Harness h;
  auto report = Cycle(fake, SlurmConfig{}, h);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(CheckPlan(report->mapping.scenario, report->plan).empty());
  EXPECT_EQ(report->applied.actions_failed, 0);
  // Each job the plan starts at step 0 runs exactly on its planned block.
  int started = 0;
  for (const Candidate& cand : report->mapping.candidates) {
    const JobPlacement& p = report->plan.jobs[static_cast<size_t>(cand.job)];
    const FakeSlurm::Job& j = fake.jobs().at(cand.slurm_id);
    if (!p.started() || *p.start_step != 0) {
      EXPECT_TRUE(Deferred(fake, j)) << cand.slurm_id;
      continue;
    }
    ++started;
    ASSERT_EQ(j.state, "RUNNING") << cand.slurm_id;
    const auto [node, index] = report->mapping.Locate(p.first_gpu);
    EXPECT_EQ(j.nodes[0], "n" + std::to_string(node + 1));
    std::vector<int> expected;
    for (int i = index; i < index + std::min(p.gpus, 8); ++i) expected.push_back(i);
    EXPECT_EQ(j.indices, expected);
  }
  EXPECT_EQ(started, 2);
  EXPECT_EQ(fake.jobs().at(a).state, "RUNNING");
  EXPECT_EQ(fake.jobs().at(b).state, "RUNNING");
  EXPECT_TRUE(Deferred(fake, fake.jobs().at(c)));
  // The untyped request was cleared before the typed one (22.05 refuses it otherwise).
  const auto& log = fake.log();
  const auto clear = std::find(log.begin(), log.end(),
                               "scontrol update JobId=" + std::to_string(a) + " TresPerNode=");
  ASSERT_NE(clear, log.end());
  EXPECT_NE(std::next(clear)->find("Gres=gpu:g"), std::string::npos);

  // Idempotent: the next cycle starts nothing and only renews the waiting job's begin time.
  fake.ClearLog();
  auto again = Cycle(fake, SlurmConfig{}, h);
  ASSERT_TRUE(again) << again.error().ToString();
  ASSERT_EQ(again->actions.size(), 1u);
  EXPECT_TRUE(OnlyRenewals(again->actions));
  EXPECT_EQ(again->actions[0].job, c);
  EXPECT_EQ(CountStarts(fake.log()), 0);
}

TEST(SlurmCycle, ReleasedJobWaitingForTheSchedulerIsNotStartedAgain) {
  FakeSlurm fake(1, 8);
  fake.start_on_release = false;
  const int64_t a = fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 4);
  const int64_t b = fake.SubmitHeld("ordo:kind=training,priority=4,duration=2h", 4);
  Harness h;
  ASSERT_TRUE(Cycle(fake, SlurmConfig{}, h));
  EXPECT_EQ(CountStarts(fake.log()), 2);
  EXPECT_FALSE(fake.jobs().at(a).held);
  EXPECT_EQ(fake.jobs().at(a).state, "PENDING");
  fake.ClearLog();
  // Not started yet: pinned where ordo put it, so nothing is released onto those GPUs again.
  auto again = Cycle(fake, SlurmConfig{}, h);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(CountStarts(fake.log()), 0);
  EXPECT_TRUE(again->actions.empty());
  EXPECT_EQ(again->mapping.candidates.size(), 0u);
  fake.Tick();
  EXPECT_EQ(fake.jobs().at(a).state, "RUNNING");
  EXPECT_EQ(fake.jobs().at(b).state, "RUNNING");
  std::vector<int> all = fake.jobs().at(a).indices;
  all.insert(all.end(), fake.jobs().at(b).indices.begin(), fake.jobs().at(b).indices.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(SlurmCycle, ReleasedJobWhoseGpusAreTakenIsDeferredAgain) {
  FakeSlurm fake(1, 8);
  fake.start_on_release = false;
  const int64_t a = fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 8);
  Harness h;
  ASSERT_TRUE(Cycle(fake, SlurmConfig{}, h));
  // Something outside ordo grabbed a GPU before the scheduler started the job.
  fake.AddRunning("", {"n1"}, {3}, kNow);
  fake.ClearLog();
  auto again = Cycle(fake, SlurmConfig{}, h);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(fake.log().at(2), "scontrol update JobId=" + std::to_string(a) +
                                  " StartTime=now+600 AdminComment=ordo:deferred");
  EXPECT_TRUE(Deferred(fake, fake.jobs().at(a)));
  // ordo's again: the next cycle plans it (and, its GPUs still taken, renews its begin time).
  auto third = Cycle(fake, SlurmConfig{}, h);
  ASSERT_TRUE(third);
  ASSERT_EQ(third->mapping.candidates.size(), 1u);
  EXPECT_EQ(third->mapping.candidates[0].waiting, Waiting::kDeferred);
}

TEST(SlurmCycle, HigherPriorityJobGoesFirstWhereFifoWouldNot) {
  FakeSlurm fake(1, 8);
  const int64_t low =
      fake.SubmitHeld("ordo:kind=training,priority=1,duration=2h", 8, 1, kNow - 7200);
  const int64_t high =
      fake.SubmitHeld("ordo:kind=training,priority=10,duration=2h", 8, 1, kNow - 60);
  Harness h;
  std::ostringstream fifo_out;
  CycleOptions fifo;
  fifo.now = kNow;
  fifo.policy = "fifo";
  fifo.dry_run = true;
  fifo.dry_out = &fifo_out;
  ASSERT_TRUE(RunCycle(fake, SlurmConfig{}, fifo, h.sleep, h.log));
  EXPECT_NE(fifo_out.str().find("JobId=" + std::to_string(low) + " NumNodes="), std::string::npos)
      << fifo_out.str();
  EXPECT_EQ(fifo_out.str().find("JobId=" + std::to_string(high) + " NumNodes="), std::string::npos)
      << fifo_out.str();
  EXPECT_EQ(CountStarts(fake.log()), 0);  // dry run: nothing ran
  ASSERT_TRUE(Cycle(fake, SlurmConfig{}, h));
  EXPECT_EQ(fake.jobs().at(high).state, "RUNNING");
  EXPECT_TRUE(Deferred(fake, fake.jobs().at(low)));
}

// Aging from the submit time: a priority-2 job that has waited 12 hours plans at 2 x min(4, 1 +
// 0.25 x 12) = 8 and goes before a fresh priority-5 job; with aging off the fresh one goes first.
TEST(SlurmCycle, AJobThatWaitedLongGainsPriorityFromItsSubmitTime) {
  for (const bool aging : {true, false}) {
    FakeSlurm fake(1, 8);
    const int64_t old_job =
        fake.SubmitHeld("ordo:kind=training,priority=2,duration=2h", 8, 1, kNow - 12 * 3600);
    const int64_t fresh = fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 8, 1, kNow);
    SlurmConfig config;
    if (!aging) config.planning.aging.rate_per_hour = 0;
    Harness h;
    auto report = Cycle(fake, config, h);
    ASSERT_TRUE(report) << report.error().ToString();
    ASSERT_EQ(report->planning_priorities.size(), 2u);
    EXPECT_DOUBLE_EQ(report->planning_priorities[0], aging ? 8 : 2);  // oldest first
    EXPECT_DOUBLE_EQ(report->planning_priorities[1], 5);
    // The mapping and the plan's figures keep the base priorities.
    EXPECT_DOUBLE_EQ(report->mapping.scenario.jobs[report->mapping.candidates[0].job].priority, 2);
    EXPECT_DOUBLE_EQ(report->plan.metrics.value,
                     ComputeMetrics(report->mapping.scenario, report->plan).value);
    EXPECT_EQ(fake.jobs().at(aging ? old_job : fresh).state, "RUNNING") << "aging " << aging;
    EXPECT_EQ(fake.jobs().at(aging ? fresh : old_job).state, "PENDING") << "aging " << aging;
  }
}

// On 2 nodes of 8 GPUs, account `busy`'s running job holds n1 and accounts a and b each wait with
// an 8-GPU priority-5 job; returns a's and b's.
std::pair<int64_t, int64_t> TwoAccountsOneBusy(FakeSlurm& fake, const std::string& busy) {
  const int64_t running = fake.AddRunning("", {"n1"}, {0, 1, 2, 3, 4, 5, 6, 7}, kNow - 3600);
  fake.jobs().at(running).account = busy;
  const int64_t of_a = fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 8, 1, kNow);
  const int64_t of_b = fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 8, 1, kNow);
  fake.jobs().at(of_a).account = "a";
  fake.jobs().at(of_b).account = "b";
  return {of_a, of_b};
}

// Fair share by Slurm account: of two equal jobs competing for the last 8 free GPUs, the one of
// the account that holds none goes first (factor 2^(1 - 0) = 2) before the one whose account
// already holds its 50% share (2^(1 - 1) = 1), whichever account that is.
TEST(SlurmCycle, TheAccountBelowItsShareGoesFirst) {
  for (const std::string busy : {"a", "b"}) {
    FakeSlurm fake(2, 8);
    const auto [of_a, of_b] = TwoAccountsOneBusy(fake, busy);
    SlurmConfig config;
    config.tenants = {{"a", {50, true}}, {"b", {50, true}}};
    Harness h;
    auto report = Cycle(fake, config, h);
    ASSERT_TRUE(report) << report.error().ToString();
    const int64_t idle_account_job = busy == "a" ? of_b : of_a;
    EXPECT_EQ(fake.jobs().at(idle_account_job).state, "RUNNING") << "busy " << busy;
    EXPECT_EQ(fake.jobs().at(busy == "a" ? of_a : of_b).state, "PENDING") << "busy " << busy;
    std::vector<double> expected =
        busy == "a" ? std::vector<double>{5, 10} : std::vector<double>{10, 5};
    EXPECT_EQ(report->planning_priorities, expected);
  }
}

// The share guarantee by Slurm account: the account whose running job already holds its 50%
// share borrows with its waiting job (planned at 5 x fair share 1 x borrowing factor 0.5); the
// other account's job is within its share (5 x 2).
TEST(SlurmCycle, TheShareGuaranteeCountsAnAccountsRunningJobs) {
  for (const std::string busy : {"a", "b"}) {
    FakeSlurm fake(2, 8);
    const auto [of_a, of_b] = TwoAccountsOneBusy(fake, busy);
    SlurmConfig config;
    config.tenants = {{"a", {50, true}}, {"b", {50, true}}};
    config.planning.borrowing_factor = 0.5;
    Harness h;
    auto report = Cycle(fake, config, h);
    ASSERT_TRUE(report) << report.error().ToString();
    std::vector<double> expected =
        busy == "a" ? std::vector<double>{2.5, 10} : std::vector<double>{10, 2.5};
    EXPECT_EQ(report->planning_priorities, expected) << "busy " << busy;
    EXPECT_EQ(fake.jobs().at(busy == "a" ? of_b : of_a).state, "RUNNING") << "busy " << busy;
  }
}

// GPU shares are checked against the cluster Slurm reports; the cycle fails naming the field.
TEST(SlurmCycle, SharesAboveTheClusterAreAnErrorNamingTheTenant) {
  FakeSlurm fake(1, 8);
  fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 8, 1, kNow);
  SlurmConfig config;
  config.tenants = {{"a", {6, false}}, {"b", {4, false}}};
  Harness h;
  auto report = Cycle(fake, config, h);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().field, "tenants[1].share") << report.error().ToString();
  EXPECT_EQ(CountStarts(fake.log()), 0);
}

// `ordo slurm --every` keeps each account's use from cycle to cycle: fed with what its jobs held
// over the time between cycles, decayed with the half-life.
TEST(SlurmCycle, CycleMemoryAccumulatesTheAccountsUse) {
  FakeSlurm fake(1, 8);
  const int64_t running = fake.AddRunning("", {"n1"}, {0, 1, 2, 3}, kNow - 3600);
  fake.jobs().at(running).account = "a";
  SlurmConfig config;
  config.tenants = {{"a", {50, true}}};
  CycleMemory memory;
  Harness h;
  CycleOptions options;
  options.now = kNow;
  ASSERT_TRUE(RunCycle(fake, config, options, h.sleep, h.log, &memory));
  ASSERT_TRUE(memory.usage.has_value());
  EXPECT_EQ(memory.last_now, kNow);
  EXPECT_DOUBLE_EQ(memory.usage->UsageFraction(0), 0.5);  // 4 of 8 GPUs over one step
  fake.jobs().erase(running);
  options.now = kNow + 24 * 3600;  // a day idle: one half-life
  ASSERT_TRUE(RunCycle(fake, config, options, h.sleep, h.log, &memory));
  // 4 GPU-hours decayed to 2, over 8 decayed to 4 plus a day of 8 GPUs: 2 / 196.
  EXPECT_NEAR(memory.usage->UsageFraction(0), 2.0 / (4 + 8 * 24), 1e-12);
}

TEST(SlurmCycle, WaitingJobsGoBackToSlurmAfterTheSilenceAndBackToOrdoAfterARestart) {
  FakeSlurm fake(1, 8);
  const int64_t big = fake.SubmitHeld("ordo:kind=training,priority=9,duration=2h", 8);
  const int64_t small1 = fake.SubmitHeld("ordo:kind=training,priority=2,duration=1h", 4);
  const int64_t small2 = fake.SubmitHeld("ordo:kind=training,priority=1,duration=1h", 4);
  SlurmConfig config;
  config.silence_s = 300;
  Harness h;
  ASSERT_TRUE(Cycle(fake, config, h));
  ASSERT_EQ(fake.jobs().at(big).state, "RUNNING");
  // The held jobs that wait: their hold becomes a marked begin time, set before the release.
  for (int64_t id : {small1, small2}) {
    EXPECT_TRUE(Deferred(fake, fake.jobs().at(id), 300)) << id;
    const auto update = std::find(fake.log().begin(), fake.log().end(),
                                  "scontrol update JobId=" + std::to_string(id) +
                                      " StartTime=now+300 AdminComment=ordo:deferred");
    ASSERT_NE(update, fake.log().end());
    EXPECT_EQ(*std::next(update), "scontrol release " + std::to_string(id));
  }
  // Each cycle renews it: the silence counts from ordo's last cycle.
  fake.now += 200;
  auto renewed = Cycle(fake, config, h, kNow + 200);
  ASSERT_TRUE(renewed);
  EXPECT_TRUE(OnlyRenewals(renewed->actions));
  EXPECT_TRUE(Deferred(fake, fake.jobs().at(small1), 300));

  // ordo stops; the big job ends. Slurm's scheduler leaves the jobs alone until the begin time...
  fake.jobs().erase(big);
  fake.now += 299;
  fake.Tick();
  EXPECT_EQ(fake.jobs().at(small1).state, "PENDING");
  // ...and then starts them itself.
  fake.now += 1;
  fake.Tick();
  EXPECT_EQ(fake.jobs().at(small1).state, "RUNNING");
  EXPECT_EQ(fake.jobs().at(small2).state, "RUNNING");
  const std::vector<int> first = fake.jobs().at(small1).indices;

  // ordo comes back: both run where Slurm put them; nothing is started, moved or renewed.
  fake.ClearLog();
  auto back = Cycle(fake, config, h, fake.now);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_TRUE(back->mapping.candidates.empty());
  EXPECT_TRUE(back->actions.empty());
  EXPECT_EQ(fake.log().size(), 2u);  // sinfo and squeue only
  EXPECT_EQ(fake.jobs().at(small1).indices, first);
}

TEST(SlurmCycle, ExpiredDeferralThatDidNotStartIsOrdosAgainAndStartsOnce) {
  FakeSlurm fake(1, 8);
  const int64_t filler = fake.AddRunning("", {"n1"}, {0, 1, 2, 3, 4, 5, 6, 7}, kNow);
  const int64_t a = fake.SubmitHeld("ordo:kind=training,priority=5,duration=1h", 4);
  Harness h;
  ASSERT_TRUE(Cycle(fake, SlurmConfig{}, h));
  ASSERT_TRUE(Deferred(fake, fake.jobs().at(a)));
  // ordo was silent past the begin time; the GPUs stayed busy, so Slurm could not start it.
  fake.now += 3600;
  fake.Tick();
  ASSERT_EQ(fake.jobs().at(a).state, "PENDING");
  // Back, still busy: it is a candidate again and its begin time is pushed out.
  auto busy = Cycle(fake, SlurmConfig{}, h, fake.now);
  ASSERT_TRUE(busy);
  ASSERT_EQ(busy->mapping.candidates.size(), 1u);
  EXPECT_EQ(busy->mapping.candidates[0].waiting, Waiting::kDeferred);
  EXPECT_TRUE(Deferred(fake, fake.jobs().at(a)));
  // The filler ends: ordo starts it, pushing its begin time out before changing its request, and
  // clearing its mark as it makes it due.
  fake.jobs().erase(filler);
  fake.ClearLog();
  auto report = Cycle(fake, SlurmConfig{}, h, fake.now);
  ASSERT_TRUE(report);
  const std::string id = "JobId=" + std::to_string(a);
  const std::vector<std::string> expected = {
      "sinfo --json",
      "squeue --all --json",
      "scontrol update " + id + " StartTime=now+600",
      "scontrol update " + id + " TresPerNode=",
      "scontrol update " + id + " NumNodes=1 NodeList=n1 Gres=gpu:g0:1,gpu:g1:1,gpu:g2:1,gpu:g3:1",
      "scontrol update " + id + " StartTime=now AdminComment="};
  EXPECT_EQ(fake.log(), expected);
  fake.Tick();
  EXPECT_EQ(fake.jobs().at(a).state, "RUNNING");
  EXPECT_EQ(fake.jobs().at(a).indices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(fake.jobs().at(a).admin_comment.empty());
  auto again = Cycle(fake, SlurmConfig{}, h, fake.now);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->actions.empty());
}

TEST(SlurmCycle, AdminHoldsAndOtherAdminCommentsAreLeftAlone) {
  FakeSlurm fake(1, 8);
  fake.AddRunning("", {"n1"}, {0, 1, 2, 3, 4, 5, 6, 7}, kNow);
  const int64_t admin = fake.SubmitHeld("ordo:kind=training,priority=9,duration=1h", 4);
  fake.jobs().at(admin).hold_reason = "JobHeldAdmin";
  const int64_t noted = fake.SubmitHeld("ordo:kind=training,priority=5,duration=1h", 4);
  fake.jobs().at(noted).admin_comment = "ticket 4711";
  Harness h;
  auto report = Cycle(fake, SlurmConfig{}, h);
  ASSERT_TRUE(report) << report.error().ToString();
  // The admin hold is not ordo's to release; the job with someone's admin comment is planned but
  // keeps its hold while it waits (ordo does not overwrite the comment with its mark).
  ASSERT_EQ(report->mapping.candidates.size(), 1u);
  EXPECT_EQ(report->mapping.candidates[0].slurm_id, noted);
  EXPECT_TRUE(report->mapping.candidates[0].foreign_admin_comment);
  EXPECT_TRUE(std::any_of(report->mapping.notes.begin(), report->mapping.notes.end(),
                          [](const std::string& n) {
                            return n.find("held by an administrator") != std::string::npos;
                          }));
  EXPECT_TRUE(report->actions.empty());
  EXPECT_TRUE(fake.jobs().at(admin).held);
  EXPECT_TRUE(fake.jobs().at(noted).held);
  EXPECT_EQ(fake.jobs().at(noted).admin_comment, "ticket 4711");
}

TEST(SlurmCycle, ServiceCapacityFollowsItsCurveWithFewMoves) {
  FakeSlurm fake(2, 8);
  SlurmConfig config;
  config.horizon_steps = 6;
  ServiceSpec chat;
  chat.service.id = "chat";
  chat.service.priority = 10;
  chat.service.max_gpus = -1;
  chat.service.demand = {2, 5, 3, 0, 9, 1};
  chat.demand_start = kNow;
  config.services.push_back(chat);
  fake.SubmitHeld("ordo:kind=training,priority=1,duration=30h", 4);
  Harness h;
  std::vector<int64_t> previous;
  for (int step = 0; step < 6; ++step) {
    auto report = Cycle(fake, config, h, kNow + step * 3600);
    ASSERT_TRUE(report) << report.error().ToString();
    std::vector<int64_t> held;
    for (const auto& [id, j] : fake.jobs()) {
      if (j.name == "ordo-svc-chat") held.push_back(id);
    }
    EXPECT_EQ(static_cast<int>(held.size()), chat.service.demand[static_cast<size_t>(step)])
        << "step " << step;
    // Growing keeps every placeholder it had; shrinking keeps only old ones.
    const size_t kept = std::count_if(previous.begin(), previous.end(), [&](int64_t id) {
      return std::find(held.begin(), held.end(), id) != held.end();
    });
    EXPECT_EQ(kept, std::min(previous.size(), held.size())) << "step " << step;
    previous = held;
    // A second cycle at the same time changes nothing.
    fake.ClearLog();
    auto again = Cycle(fake, config, h, kNow + step * 3600);
    ASSERT_TRUE(again);
    EXPECT_TRUE(OnlyRenewals(again->actions)) << "step " << step;
  }
}

TEST(SlurmCycle, PlaceholdersOfUnknownServicesAreCancelled) {
  FakeSlurm fake(1, 8);
  const int64_t stray = fake.AddRunning("", {"n1"}, {2}, kNow, "ordo-svc-gone");
  Harness h;
  ASSERT_TRUE(Cycle(fake, SlurmConfig{}, h));
  EXPECT_EQ(fake.jobs().count(stray), 0u);
}

TEST(SlurmCycle, TransientFailuresAreRetriedWithBackoff) {
  FakeSlurm fake(1, 8);
  fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 4);
  fake.FailNext(3);  // the controller is restarting
  Harness h;
  SlurmConfig config;
  config.retry = RetryPolicy{5, 0.5, 1.5};
  auto report = Cycle(fake, config, h);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(h.sleeps, (std::vector<double>{0.5, 1.0, 1.5}));
  EXPECT_EQ(CountStarts(fake.log()), 1);
  EXPECT_TRUE(std::any_of(h.lines.begin(), h.lines.end(), [](const std::string& l) {
    return l.find("retry 1/4") != std::string::npos &&
           l.find("Unable to contact") != std::string::npos;
  }));
}

TEST(SlurmCycle, ErrorsInsideJsonAndUnknownNodesAreWaitedOut) {
  // 22.05 with slurmctld down: exit 0, the failure inside "errors"; just after it restarts, nodes
  // are "unknown" until their slurmd registers.
  FakeSlurm fake(1, 8);
  fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 4);
  struct Restarting final : SlurmClient {
    FakeSlurm& inner;
    int calls = 0;
    explicit Restarting(FakeSlurm& f) : inner(f) {}
    Result<CommandResult> Run(const std::vector<std::string>& argv, double t) override {
      if (argv[0] == "sinfo" && ++calls <= 3) {
        if (calls == 1)
          return CommandResult{0, R"({"errors":[{"error":"Unspecified error"}],"nodes":[]})", ""};
        return CommandResult{
            0,
            R"({"errors":[],"nodes":[{"name":"n1","state":"unknown","gres":"gpu:g0:1,gpu:g1:1"}]})",
            ""};
      }
      return inner.Run(argv, t);
    }
  } client(fake);
  Harness h;
  CycleOptions options;
  options.now = kNow;
  auto report = RunCycle(client, SlurmConfig{}, options, h.sleep, h.log);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(h.sleeps, (std::vector<double>{0.5, 1.0, 2.0}));
  EXPECT_TRUE(std::any_of(h.lines.begin(), h.lines.end(), [](const std::string& l) {
    return l.find("Unspecified error") != std::string::npos;
  }));
  EXPECT_TRUE(std::any_of(h.lines.begin(), h.lines.end(), [](const std::string& l) {
    return l.find("node n1 is still unknown") != std::string::npos;
  }));
  EXPECT_EQ(CountStarts(fake.log()), 1);
}

TEST(SlurmCycle, ControllerDownIsAClearErrorAfterTheRetries) {
  FakeSlurm fake(1, 8);
  fake.FailNext(100);
  Harness h;
  SlurmConfig config;
  config.retry = RetryPolicy{3, 0.1, 1};
  auto report = Cycle(fake, config, h);
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message.find("after 3 attempts: sinfo --json failed (exit 1): "
                                        "slurm_load_jobs error: Unable to contact"),
            std::string::npos)
      << report.error().message;
  EXPECT_EQ(h.sleeps.size(), 2u);
}

TEST(SlurmCycle, DryRunPrintsTheCommandsAndRunsNone) {
  FakeSlurm fake(1, 8);
  const int64_t a = fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 2);
  Harness h;
  std::ostringstream out;
  auto report = Cycle(fake, SlurmConfig{}, h, kNow, true, &out);
  ASSERT_TRUE(report);
  const std::string id = std::to_string(a);
  EXPECT_EQ(out.str(), "scontrol update JobId=" + id +
                           " TresPerNode=\n"
                           "scontrol update JobId=" +
                           id +
                           " NumNodes=1 NodeList=n1 Gres=gpu:g0:1,gpu:g1:1\n"
                           "scontrol release " +
                           id + "\n");
  EXPECT_TRUE(fake.jobs().at(a).held);
  for (const std::string& l : fake.log())
    EXPECT_TRUE(l.rfind("sinfo", 0) == 0 || l.rfind("squeue", 0) == 0) << l;
}

TEST(SlurmCycle, UntypedClusterPinsNodesAndCounts) {
  FakeSlurm fake(2, 8, /*typed=*/false);
  const int64_t a = fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 8, 2);
  Harness h;
  auto report = Cycle(fake, SlurmConfig{}, h);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_NE(std::find(fake.log().begin(), fake.log().end(),
                      "scontrol update JobId=" + std::to_string(a) +
                          " NumNodes=2 NodeList=n1,n2 Gres=gpu:8"),
            fake.log().end());
  EXPECT_EQ(fake.jobs().at(a).state, "RUNNING");
}

TEST(SlurmCycle, FailedCommandIsReportedAndOthersStillRun) {
  FakeSlurm fake(2, 8);
  fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 8);
  fake.SubmitHeld("ordo:kind=training,priority=5,duration=2h", 8);
  // The first job vanished between the read and the update (scancel by its owner).
  struct Vanishing final : SlurmClient {
    FakeSlurm& inner;
    explicit Vanishing(FakeSlurm& f) : inner(f) {}
    Result<CommandResult> Run(const std::vector<std::string>& argv, double t) override {
      if (argv[0] == "scontrol" && argv.size() > 2 && argv[2] == "JobId=1") {
        return CommandResult{1, "", "scontrol: error: Invalid job id specified\n"};
      }
      return inner.Run(argv, t);
    }
  } client(fake);
  Harness h;
  CycleOptions options;
  options.now = kNow;
  auto report = RunCycle(client, SlurmConfig{}, options, h.sleep, h.log);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->applied.actions_failed, 1);
  EXPECT_EQ(report->applied.actions_ok, 1);
  EXPECT_TRUE(h.sleeps.empty());  // not transient: no retry
  ASSERT_EQ(report->applied.failures.size(), 1u);
  EXPECT_NE(report->applied.failures[0].find("Invalid job id"), std::string::npos);
  EXPECT_EQ(fake.jobs().at(2).state, "RUNNING");
}

TEST(ProcessSlurmClient, RunsWithoutAShellAndCapturesOutput) {
  ProcessSlurmClient client;
  auto r = client.Run({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  // Arguments reach the program verbatim: no shell expands them.
  auto literal = client.Run({"echo", "$HOME", "a b", "*"}, 10);
  ASSERT_TRUE(literal);
  EXPECT_EQ(literal->out, "$HOME a b *\n");
  auto missing = client.Run({"ordo-no-such-program"}, 10);
  EXPECT_FALSE(missing);
}

TEST(ProcessSlurmClient, KillsACommandPastItsTimeout) {
  ProcessSlurmClient client;
  auto r = client.Run({"sleep", "30"}, 0.2);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->ok());
  EXPECT_TRUE(IsTransient(*r));
}

TEST(SlurmClient, FormatCommandQuotesForAShell) {
  EXPECT_EQ(FormatCommand({"scontrol", "update", "JobId=4", "TresPerNode="}),
            "scontrol update JobId=4 TresPerNode=");
  EXPECT_EQ(FormatCommand({"echo", "a b", "it's"}), "echo 'a b' 'it'\\''s'");
}

}  // namespace
}  // namespace ordo::slurm
