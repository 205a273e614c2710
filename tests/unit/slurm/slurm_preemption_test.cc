// Preemption on Slurm (spec "Slurm": `checkpoint=` / `restart=`, `scontrol requeue`): what ordo
// reads of a preemptible job, the commands it sends, and whole cycles on the simulated Slurm.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_slurm.h"
#include "ordo/adapters/slurm/slurm_cycle.h"
#include "ordo/core/check_plan.h"

namespace ordo::slurm {
namespace {

using testing::FakeSlurm;

constexpr int64_t kNow = 100000;
constexpr int64_t kHour = 3600;
constexpr const char* kLow = "ordo:kind=training,priority=1,duration=10h,checkpoint=1h,restart=10m";

struct Harness {
  std::vector<std::string> lines;
  Sleeper sleep = [](double) {};
  Logger log = [this](std::string_view l) { lines.emplace_back(l); };
};

Result<Mapping> Map(FakeSlurm& fake, const SlurmConfig& config, int64_t now) {
  Harness h;
  auto snap = ReadSnapshot(fake, config, now, h.sleep, h.log);
  if (!snap) return Fail(snap.error());
  return BuildScenario(*snap, config);
}

Result<CycleReport> Cycle(FakeSlurm& fake, const SlurmConfig& config, int64_t now,
                          const std::string& policy = "ordo") {
  Harness h;
  CycleOptions options;
  options.now = now;
  options.policy = policy;
  fake.now = now;
  return RunCycle(fake, config, options, h.sleep, h.log);
}

const Job* FindJob(const Scenario& sc, int64_t slurm_id) {
  for (const Job& j : sc.jobs) {
    if (j.id == std::to_string(slurm_id)) return &j;
  }
  return nullptr;
}

bool Logged(const FakeSlurm& fake, const std::string& line) {
  return std::find(fake.log().begin(), fake.log().end(), line) != fake.log().end();
}

TEST(SlurmPreemptionMetadata, CheckpointAndRestartKeys) {
  auto meta = ParseOrdoComment(kLow);
  ASSERT_TRUE(meta && *meta) << meta.error().ToString();
  EXPECT_EQ((*meta)->checkpoint_minutes, 60);
  EXPECT_EQ((*meta)->restart_minutes, 10);
  auto free_restart = ParseOrdoComment(
      "ordo:kind=training,priority=1,duration=1h,"
      "checkpoint=30m,restart=0");
  ASSERT_TRUE(free_restart) << free_restart.error().ToString();
  EXPECT_EQ((*free_restart)->restart_minutes, 0);

  auto no_checkpoint = ParseOrdoComment("ordo:kind=training,priority=1,duration=1h,restart=5m");
  ASSERT_FALSE(no_checkpoint);
  EXPECT_EQ(no_checkpoint.error().field, "comment.restart");
  auto zero = ParseOrdoComment("ordo:kind=training,priority=1,duration=1h,checkpoint=0m");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().field, "comment.checkpoint");
  auto bad = ParseOrdoComment("ordo:kind=training,priority=1,duration=1h,checkpoint=1h,restart=x");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().field, "comment.restart");
}

TEST(SlurmPreemptionMetadata, OrdoMarkRoundTrips) {
  EXPECT_EQ(FormatOrdoMark({true, std::nullopt}), kDeferredMark);
  EXPECT_EQ(FormatOrdoMark({true, 180}), "ordo:deferred,saved=180m");
  EXPECT_EQ(FormatOrdoMark({false, 0}), "ordo:saved=0m");
  EXPECT_EQ(FormatOrdoMark({false, std::nullopt}), "");
  for (const OrdoMark& mark : {OrdoMark{true, std::nullopt}, OrdoMark{true, 180},
                               OrdoMark{false, 0}, OrdoMark{false, 45}}) {
    const auto back = ParseOrdoMark(FormatOrdoMark(mark));
    ASSERT_TRUE(back) << FormatOrdoMark(mark);
    EXPECT_EQ(back->deferred, mark.deferred);
    EXPECT_EQ(back->saved_minutes, mark.saved_minutes);
  }
  EXPECT_FALSE(ParseOrdoMark(""));
  EXPECT_FALSE(ParseOrdoMark("checked by alice"));
  EXPECT_FALSE(ParseOrdoMark("ordo:deferred,color=blue"));
  EXPECT_FALSE(ParseOrdoMark("ordo:saved=lots"));
}

TEST(SlurmPreemptionMapping, ProgressSavedWorkAndRestartInSteps) {
  FakeSlurm fake(4, 8);
  // First stay, 3 h 20 min of work: may be preempted, keeping its 3 saved hours.
  const int64_t first =
      fake.AddRunning(kLow, {"n1"}, {0, 1, 2, 3, 4, 5, 6, 7}, kNow - 3 * kHour - 20 * 60);
  fake.jobs().at(first).requeue = true;
  // Resumed from 2 h saved, 70 min ago: 10 min of restart, then 1 h of work (progress 3 h).
  const int64_t resumed = fake.AddRunning(kLow, {"n2"}, {0, 1, 2, 3, 4, 5, 6, 7}, kNow - 70 * 60);
  fake.jobs().at(resumed).requeue = true;
  fake.jobs().at(resumed).admin_comment = "ordo:saved=120m";
  // Resumed 5 min ago: still restarting for 5 min (a whole step), progress 2 h.
  const int64_t restarting = fake.AddRunning(kLow, {"n3"}, {0, 1, 2, 3}, kNow - 5 * 60);
  fake.jobs().at(restarting).requeue = true;
  fake.jobs().at(restarting).admin_comment = "ordo:saved=120m";
  // Checkpointed but not requeue-able: never preempted, and the operator is told why.
  const int64_t unrequeueable = fake.AddRunning(kLow, {"n3"}, {4, 5, 6, 7}, kNow - kHour);
  // Preempted by ordo with 3 h saved, waiting to resume: 7 h of work left plus its restart.
  const int64_t waiting = fake.SubmitHeld(kLow, 8, 1, kNow - 5 * kHour);
  fake.jobs().at(waiting).held = false;
  fake.jobs().at(waiting).requeue = true;
  fake.jobs().at(waiting).admin_comment = "ordo:deferred,saved=180m";
  fake.jobs().at(waiting).eligible_time = kNow + 600;

  auto m = Map(fake, SlurmConfig{}, kNow);
  ASSERT_TRUE(m) << m.error().ToString();
  const Scenario& sc = m->scenario;

  const Job* f = FindJob(sc, first);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->checkpoint);
  EXPECT_EQ(*f->checkpoint, (Checkpoint{1, 1}));  // 1 h saves, a 10-min restart takes a step
  EXPECT_EQ(f->running->start_step, -3);
  EXPECT_FALSE(f->running->progress_steps);  // never interrupted: progress is its elapsed time
  EXPECT_EQ(f->shapes[0].duration_steps, 10);

  const Job* r = FindJob(sc, resumed);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->running->start_step, -1);
  EXPECT_EQ(r->running->progress_steps, 3);
  EXPECT_FALSE(r->running->restart_steps_left);
  const Job* rs = FindJob(sc, restarting);
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(rs->running->progress_steps, 2);
  EXPECT_EQ(rs->running->restart_steps_left, 1);

  const Job* u = FindJob(sc, unrequeueable);
  ASSERT_NE(u, nullptr);
  EXPECT_FALSE(u->checkpoint);
  EXPECT_TRUE(std::any_of(m->notes.begin(), m->notes.end(), [&](const std::string& n) {
    return n.find("job " + std::to_string(unrequeueable)) != std::string::npos &&
           n.find("--requeue") != std::string::npos;
  }));

  ASSERT_EQ(m->preemptible.size(), 3u);
  const auto pr = std::find_if(m->preemptible.begin(), m->preemptible.end(),
                               [&](const Preemptible& p) { return p.slurm_id == first; });
  ASSERT_NE(pr, m->preemptible.end());
  EXPECT_EQ(pr->progress_minutes, 200);
  EXPECT_EQ(pr->saved_minutes, 180);
  const auto prr = std::find_if(m->preemptible.begin(), m->preemptible.end(),
                                [&](const Preemptible& p) { return p.slurm_id == resumed; });
  ASSERT_NE(prr, m->preemptible.end());
  EXPECT_EQ(prr->progress_minutes, 180);

  ASSERT_EQ(m->candidates.size(), 1u);
  const Candidate& c = m->candidates[0];
  EXPECT_EQ(c.slurm_id, waiting);
  EXPECT_EQ(c.waiting, Waiting::kDeferred);
  EXPECT_EQ(c.saved_minutes, 180);
  const Job& w = sc.jobs[static_cast<size_t>(c.job)];
  ASSERT_EQ(w.shapes.size(), 1u);
  EXPECT_EQ(w.shapes[0], (Shape{8, 1 + 10 - 3}));  // restart, then the 7 h not saved
  EXPECT_TRUE(w.checkpoint);
}

// A held priority-10 job takes the node of a running priority-1 checkpointed one, which is
// requeued with its saved work, waits under ordo's mark, and comes back when the node is free,
// its progress counted from what it had saved.
TEST(SlurmPreemptionCycle, HighPriorityArrivalTakesTheNodeAndTheJobComesBack) {
  FakeSlurm fake(1, 8);
  const int64_t low =
      fake.AddRunning(kLow, {"n1"}, {0, 1, 2, 3, 4, 5, 6, 7}, kNow - 3 * kHour - 20 * 60);
  fake.jobs().at(low).requeue = true;
  const int64_t high = fake.SubmitHeld("ordo:kind=training,priority=10,duration=2h", 8, 1, kNow);

  auto first = Cycle(fake, SlurmConfig{}, kNow);
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_TRUE(CheckPlan(first->mapping.scenario, first->plan).empty());
  EXPECT_EQ(first->applied.actions_failed, 0) << first->applied.failures[0];
  EXPECT_EQ(first->plan.metrics.preemptions, 1);
  ASSERT_EQ(first->actions.front().kind, ActionKind::kPreempt);  // before any start
  EXPECT_TRUE(Logged(fake, "scontrol requeue " + std::to_string(low)));
  const FakeSlurm::Job& l = fake.jobs().at(low);
  EXPECT_EQ(l.state, "PENDING");
  EXPECT_EQ(l.admin_comment, "ordo:deferred,saved=180m");
  EXPECT_EQ(l.eligible_time, kNow + 600);  // ordo's silence, not Slurm's 121 s
  EXPECT_EQ(fake.jobs().at(high).state, "RUNNING");
  EXPECT_EQ(fake.jobs().at(high).nodes, std::vector<std::string>{"n1"});

  // Two hours later the high job has ended: the low one resumes, its mark keeps its saved work.
  fake.jobs().erase(high);
  auto second = Cycle(fake, SlurmConfig{}, kNow + 2 * kHour);
  ASSERT_TRUE(second) << second.error().ToString();
  ASSERT_EQ(second->mapping.candidates.size(), 1u);
  EXPECT_EQ(second->mapping.candidates[0].saved_minutes, 180);
  fake.Tick();
  EXPECT_EQ(l.state, "PENDING") << "due a second later";
  fake.now += 1;
  fake.Tick();
  EXPECT_EQ(l.state, "RUNNING");
  EXPECT_EQ(l.admin_comment, "ordo:saved=180m");
  EXPECT_EQ(l.restarts, 1);

  // An hour after its resume (it started a second later, when due): 10 min of restart, then 49
  // whole minutes of work on top of the 3 h saved.
  auto third = Cycle(fake, SlurmConfig{}, kNow + 3 * kHour);
  ASSERT_TRUE(third) << third.error().ToString();
  const Job* j = FindJob(third->mapping.scenario, low);
  ASSERT_NE(j, nullptr);
  ASSERT_TRUE(j->running);
  EXPECT_EQ(j->running->progress_steps, 3);
  EXPECT_EQ(third->mapping.preemptible.at(0).progress_minutes, 229);
  EXPECT_EQ(l.admin_comment, "ordo:saved=180m");
  EXPECT_EQ(l.state, "RUNNING");
}

TEST(SlurmPreemptionCycle, NeverPreemptsAJobThatIsNotRequeueable) {
  for (const char* policy : {"ordo", "priority-preempt"}) {
    FakeSlurm fake(1, 8);
    const int64_t low =
        fake.AddRunning(kLow, {"n1"}, {0, 1, 2, 3, 4, 5, 6, 7}, kNow - 3 * kHour - 20 * 60);
    const int64_t high = fake.SubmitHeld("ordo:kind=training,priority=10,duration=2h", 8, 1, kNow);
    auto report = Cycle(fake, SlurmConfig{}, kNow, policy);
    ASSERT_TRUE(report) << report.error().ToString();
    EXPECT_EQ(report->plan.metrics.preemptions, 0) << policy;
    EXPECT_FALSE(Logged(fake, "scontrol requeue " + std::to_string(low))) << policy;
    EXPECT_EQ(fake.jobs().at(low).state, "RUNNING") << policy;
    EXPECT_EQ(fake.jobs().at(high).state, "PENDING") << policy;
  }
}

// A plan that moves a running job to another block at step 0: requeued, pinned to the new block
// and made due in the same cycle, its saved work in its mark.
TEST(SlurmPreemptionEnforce, MigrationRequeuesAndPinsTheNewBlockInOneAction) {
  FakeSlurm fake(2, 8);
  const int64_t low = fake.AddRunning(kLow, {"n1"}, {0, 1, 2, 3}, kNow - 3 * kHour - 20 * 60);
  fake.jobs().at(low).requeue = true;
  fake.now = kNow;
  const SlurmConfig config;
  auto m = Map(fake, config, kNow);
  ASSERT_TRUE(m) << m.error().ToString();
  const Scenario& sc = m->scenario;
  ASSERT_EQ(sc.jobs.size(), 1u);
  Plan plan;
  JobPlacement p;
  p.id = sc.jobs[0].id;
  p.start_step = sc.jobs[0].running->start_step;
  p.first_gpu = 0;
  p.gpus = 4;
  p.duration_steps = 10;
  p.preempt_step = 0;
  p.resume = ResumePlacement{0, 8};  // n2 GPUs 0-3
  plan.jobs.push_back(p);
  const auto violations = CheckPlan(sc, plan);
  ASSERT_TRUE(violations.empty()) << FormatViolation(violations.front());

  const std::vector<Action> actions = DecideActions(*m, plan, config);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].kind, ActionKind::kPreempt);
  EXPECT_EQ(actions[0].node, "n2");
  const std::string id = std::to_string(low);
  ASSERT_GE(actions[0].commands.size(), 4u);
  EXPECT_EQ(actions[0].commands[0], (std::vector<std::string>{"scontrol", "requeue", id}));
  // Due a second after the requeue: slurmd refuses a requeued job's launch in that second.
  EXPECT_EQ(actions[0].commands.back(),
            (std::vector<std::string>{"scontrol", "update", "JobId=" + id, "StartTime=now+1",
                                      "AdminComment=ordo:saved=180m"}));
  Harness h;
  const ApplyReport applied = ApplyActions(fake, actions, config, false, nullptr, h.sleep, h.log);
  EXPECT_EQ(applied.actions_failed, 0);
  fake.Tick();
  EXPECT_EQ(fake.jobs().at(low).state, "PENDING");
  fake.now += 1;
  fake.Tick();
  const FakeSlurm::Job& j = fake.jobs().at(low);
  EXPECT_EQ(j.state, "RUNNING");
  EXPECT_EQ(j.nodes, std::vector<std::string>{"n2"});
  EXPECT_EQ(j.indices, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(j.admin_comment, "ordo:saved=180m");
}

}  // namespace
}  // namespace ordo::slurm
