// The engine in process: requests, planning, committing steps, restart, full-mode adoption and the
// fallback. The committed steps are checked against the rules by a checker written here from the
// spec, independent of the planners and of CheckPlan.
#include "ordo/service/engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "ordo/core/metrics.h"
#include "ordo/policy/registry.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;
using testing::JobBody;
using testing::kA;
using testing::kAdminPrincipal;
using testing::kB;
using testing::Manual;
using testing::OpenEngine;
using testing::ScratchDir;

// A policy that starts nothing (legal when there are no services): the worst plan.
class NothingPolicy final : public Policy {
 public:
  std::string_view name() const override { return "nothing"; }
  Result<Plan> Solve(const Scenario& scenario, const PolicyOptions&) override {
    Plan plan;
    plan.scenario = scenario.name;
    plan.policy = "nothing";
    for (const Job& job : scenario.jobs) {
      JobPlacement p;
      p.id = job.id;
      if (job.running) {
        p.start_step = job.running->start_step;
        p.first_gpu = job.running->first_gpu;
        p.gpus = job.shapes[0].gpus;
        p.duration_steps = job.shapes[0].duration_steps;
      }
      plan.jobs.push_back(p);
    }
    for (const Service& s : scenario.services) {
      plan.services.push_back({s.id, std::vector<std::vector<int>>(scenario.horizon_steps)});
    }
    plan.metrics = ComputeMetrics(scenario, plan);
    return plan;
  }
};

// A policy that puts every job at step 0 on GPU 0: illegal as soon as two jobs exist.
class PileUpPolicy final : public Policy {
 public:
  std::string_view name() const override { return "pile-up"; }
  Result<Plan> Solve(const Scenario& scenario, const PolicyOptions& options) override {
    auto plan = NothingPolicy().Solve(scenario, options);
    for (size_t j = 0; j < plan->jobs.size(); ++j) {
      plan->jobs[j].start_step = 0;
      plan->jobs[j].first_gpu = 0;
      plan->jobs[j].gpus = scenario.jobs[j].shapes[0].gpus;
      plan->jobs[j].duration_steps = scenario.jobs[j].shapes[0].duration_steps;
    }
    return plan;
  }
};

PolicyRegistry TestRegistry() {
  PolicyRegistry registry = MakeInTreeRegistry();
  registry.Register("nothing", [] { return std::make_unique<NothingPolicy>(); });
  registry.Register("pile-up", [] { return std::make_unique<PileUpPolicy>(); });
  return registry;
}

TEST(Engine, SubmitPlanGetCancel) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  auto id = testing::SubmitJob(*engine, kA, JobBody("a1", 8, 2));
  ASSERT_TRUE(id) << id.error().ToString();
  EXPECT_EQ((*id)["id"], "a1");
  auto view = engine->GetJob(kA, "a1");
  ASSERT_TRUE(view);
  EXPECT_EQ((*view)["state"], "pending");
  EXPECT_EQ((*view)["planned_start_step"], 0) << view->dump();
  EXPECT_EQ((*view)["reason"], "none");
  // Another tenant: not found, for reading and for cancelling.
  EXPECT_EQ(testing::Status(engine->GetJob(kB, "a1")), 404);
  EXPECT_EQ(testing::Status(engine->CancelJob(kB, "a1")), 404);
  // The admin sees it under its qualified id.
  EXPECT_EQ((*engine->GetJob(kAdminPrincipal, "a/a1"))["tenant"], "a");
  EXPECT_EQ((*engine->GetJob(kAdminPrincipal, "a/a1"))["id"], "a/a1");
  EXPECT_EQ(testing::Status(engine->GetJob(kAdminPrincipal, "a1")), 404);  // the admin's own: none
  ASSERT_TRUE(engine->CancelJob(kA, "a1"));
  EXPECT_EQ((*engine->GetJob(kA, "a1"))["state"], "cancelled");
  ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
  EXPECT_EQ(engine->CurrentPlan()->FindJob("a/a1"), nullptr);
}

TEST(Engine, QueueLimitIs429AndDuplicatesAre409) {
  ScratchDir dir;
  EngineOptions options = Manual(dir);
  options.max_active_jobs = 2;
  auto engine = OpenEngine(testing::Config(), options);
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("x", 1, 1)));
  EXPECT_EQ(testing::Status(testing::SubmitJob(*engine, kA, JobBody("x", 1, 1))), 409);
  // Ids are per tenant: b's "x" is b's own.
  ASSERT_TRUE(testing::SubmitJob(*engine, kB, JobBody("x", 1, 1)));
  EXPECT_EQ(testing::Status(testing::SubmitJob(*engine, kA, JobBody("z", 1, 1))), 429);
}

TEST(Engine, DurationsFromFeaturesUseTheForecaster) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  json job = {{"id", "lora"},
              {"kind", "training"},
              {"priority", 1},
              {"gpus", 8},
              {"features",
               {{"method", "lora"},
                {"params_b", 70},
                {"tokens", 2.5e8},
                {"gpu_type", "H100"},
                {"gpu_count", 8}}}};
  auto id = testing::SubmitJob(*engine, kA, job);
  ASSERT_TRUE(id) << id.error().ToString();
  auto view = engine->GetJob(kA, "lora");
  ASSERT_TRUE(view);
  EXPECT_GE((*view)["duration_steps"].get<int>(), 1);
  // Without features there is nothing to forecast from: the field is named.
  json bare = JobBody("bare", 8, 1);
  bare.erase("duration_steps");
  auto refused = testing::SubmitJob(*engine, kA, bare);
  ASSERT_FALSE(refused);
  EXPECT_EQ(testing::Status(refused), 400);
  EXPECT_EQ(refused.error().field, "duration_steps");
}

// What the committed history must satisfy, checked from the steps alone.
void ExpectLegalHistory(const Scenario& base, const std::vector<CommittedStep>& steps,
                        const State& state,
                        const std::map<std::string, std::pair<int, int>>& bounds,
                        const std::map<std::string, int>& churn) {
  const Cluster& cluster = base.cluster;
  struct Seen {
    int first_gpu;
    int gpus;
    int64_t first_step;
    int64_t last_step;
  };
  std::map<std::string, Seen> jobs;
  std::map<std::string, int> previous_count;
  for (const CommittedStep& step : steps) {
    std::vector<std::string> holder(static_cast<size_t>(cluster.total_gpus()));
    auto hold = [&](int gpu, const std::string& who) {
      ASSERT_GE(gpu, 0);
      ASSERT_LT(gpu, cluster.total_gpus());
      EXPECT_TRUE(holder[gpu].empty()) << "rule 1: GPU " << gpu << " held by " << holder[gpu]
                                       << " and " << who << " at step " << step.step;
      holder[gpu] = who;
    };
    for (const CommittedJob& job : step.jobs) {
      EXPECT_TRUE(cluster.IsAlignedBlock(job.first_gpu, job.gpus))
          << "rule 3: " << job.id << " at step " << step.step;
      for (int g = job.first_gpu; g < job.first_gpu + job.gpus; ++g) hold(g, job.id);
      auto [it, fresh] = jobs.emplace(job.id, Seen{job.first_gpu, job.gpus, step.step, step.step});
      if (!fresh) {
        EXPECT_EQ(it->second.last_step + 1, step.step) << "rule 5: " << job.id << " paused";
        EXPECT_EQ(it->second.first_gpu, job.first_gpu) << "rule 5: " << job.id << " moved";
        EXPECT_EQ(it->second.gpus, job.gpus);
        it->second.last_step = step.step;
      }
    }
    for (const CommittedService& svc : step.services) {
      for (int g : svc.gpus) hold(g, svc.id);
      const int count = static_cast<int>(svc.gpus.size());
      const auto [lo, hi] = bounds.at(svc.id);
      EXPECT_GE(count, lo) << "rule 2: " << svc.id << " at step " << step.step;
      EXPECT_LE(count, hi) << "rule 2: " << svc.id << " at step " << step.step;
      if (auto it = previous_count.find(svc.id);
          it != previous_count.end() && churn.count(svc.id)) {
        EXPECT_LE(std::abs(count - it->second), churn.at(svc.id))
            << "rule 4: " << svc.id << " at step " << step.step;
      }
      previous_count[svc.id] = count;
    }
  }
  // Each job ran once, for its whole duration unless cancelled, never before it was submitted.
  for (const auto& [id, seen] : jobs) {
    const JobRecord* record = state.FindJob(id);
    ASSERT_NE(record, nullptr) << id;
    EXPECT_EQ(seen.first_step, record->start_step) << id;
    EXPECT_GE(seen.first_step, record->submitted_step) << id;
    const int64_t ran = seen.last_step - seen.first_step + 1;
    if (record->state == JobState::kDone) {
      EXPECT_EQ(ran, record->shape.duration_steps) << id;
    } else if (record->state == JobState::kCancelled) {
      EXPECT_LE(ran, record->shape.duration_steps) << id;
      EXPECT_EQ(seen.last_step + 1, record->finished_step) << id;
    } else {
      EXPECT_EQ(record->state, JobState::kRunning) << id;
      EXPECT_EQ(seen.last_step, steps.back().step) << id;
    }
  }
}

TEST(Engine, CommittedStepsNeverBreakARuleUnderRandomTraffic) {
  ScratchDir dir;
  const ServiceConfig config = testing::Config(4, 10);  // 32 GPUs
  auto engine = OpenEngine(config, Manual(dir));
  ASSERT_TRUE(engine);
  const json chat = {{"id", "chat"},
                     {"priority", 8},
                     {"min_gpus", 2},
                     {"max_gpus", 12},
                     {"max_change_per_step", 2},
                     {"demand", {2, 4, 6, 8, 10, 12, 10, 8, 6, 4}}};
  const json batch = {{"id", "embed"},
                      {"priority", 2},
                      {"min_gpus", 0},
                      {"max_gpus", 6},
                      {"max_change_per_step", 1},
                      {"demand", {0, 1, 2, 3, 4, 5, 6, 5, 4, 3}}};
  ASSERT_TRUE(testing::PutService(*engine, kAdminPrincipal, chat, std::nullopt, true));
  ASSERT_TRUE(testing::PutService(*engine, kAdminPrincipal, batch, std::nullopt, true));
  std::mt19937 rng(7);
  std::vector<std::string> submitted;
  for (int step = 0; step < 30; ++step) {
    const int arrivals = std::uniform_int_distribution<int>(0, 4)(rng);
    for (int k = 0; k < arrivals; ++k) {
      const std::string id = "j" + std::to_string(submitted.size());
      const int gpus = 1 << std::uniform_int_distribution<int>(0, 4)(rng);
      const int duration = std::uniform_int_distribution<int>(1, 6)(rng);
      const double priority = std::uniform_int_distribution<int>(1, 9)(rng);
      ASSERT_TRUE(
          testing::SubmitJob(*engine, k % 2 ? kA : kB, JobBody(id, gpus, duration, priority)));
      submitted.push_back((k % 2 ? "a/" : "b/") + id);  // qualified: the admin cancels by it
    }
    if (!submitted.empty() && std::uniform_int_distribution<int>(0, 5)(rng) == 0) {
      const std::string& victim = submitted[rng() % submitted.size()];
      (void)engine->CancelJob(kAdminPrincipal, victim);  // may be done already: a 409 then
    }
    if (step == 12) {
      json surge = chat;
      surge["demand"] = {12, 12, 12, 12, 12, 12, 12, 12, 12, 12};
      ASSERT_TRUE(
          testing::PutService(*engine, kAdminPrincipal, surge, std::string_view("chat"), false));
    }
    auto advanced = engine->Advance(kAdminPrincipal, 1 + step % 2);
    ASSERT_TRUE(advanced) << advanced.error().ToString();
  }
  const State state = engine->StateCopy();
  EXPECT_GT(state.next_step, 40);
  std::vector<CommittedStep> steps(state.recent.begin(), state.recent.end());
  ASSERT_EQ(steps.size(), static_cast<size_t>(state.next_step));
  int started = 0;
  for (const auto& [seq, r] : state.jobs)
    started += r.state == JobState::kRunning || r.state == JobState::kDone;
  EXPECT_GT(started, 20);
  ExpectLegalHistory(config.base, steps, state, {{"chat", {2, 12}}, {"embed", {0, 6}}},
                     {{"chat", 2}, {"embed", 1}});
}

TEST(Engine, RestartRestoresTheStateExactly) {
  ScratchDir dir;
  const ServiceConfig config = testing::Config();
  State before;
  {
    auto engine = OpenEngine(config, Manual(dir));
    ASSERT_TRUE(engine);
    ASSERT_TRUE(testing::PutService(*engine, kAdminPrincipal,
                                    json{{"id", "chat"},
                                         {"priority", 5},
                                         {"max_gpus", 8},
                                         {"max_change_per_step", 2},
                                         {"demand", json(std::vector<int>(12, 3))}},
                                    std::nullopt, true));
    for (int k = 0; k < 6; ++k)
      ASSERT_TRUE(testing::SubmitJob(*engine, k % 2 ? kA : kB, JobBody("", 4, 2 + k)));
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 3));
    ASSERT_TRUE(engine->CancelJob(kAdminPrincipal, "a/job-3"));
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("late", 2, 1)));
    before = engine->StateCopy();
    engine->Stop();
  }
  auto engine = OpenEngine(config, Manual(dir));
  ASSERT_TRUE(engine);
  const State after = engine->StateCopy();
  EXPECT_EQ(after.next_step, before.next_step);
  EXPECT_EQ(after.origin_unix, before.origin_unix);
  EXPECT_EQ(after.next_generated_id, before.next_generated_id);
  EXPECT_DOUBLE_EQ(after.committed_value_total, before.committed_value_total);
  EXPECT_EQ(after.active, before.active);
  ASSERT_EQ(after.jobs.size(), before.jobs.size());
  for (const auto& [seq, b] : before.jobs) {
    const JobRecord& a = after.jobs.at(seq);
    EXPECT_EQ(a.job.id, b.job.id);
    EXPECT_EQ(a.tenant, b.tenant);
    EXPECT_EQ(a.state, b.state) << a.job.id;
    EXPECT_EQ(a.submitted_step, b.submitted_step);
    EXPECT_EQ(a.job.shapes, b.job.shapes);
    if (b.state != JobState::kPending) {
      EXPECT_EQ(a.start_step, b.start_step) << a.job.id;
      EXPECT_EQ(a.first_gpu, b.first_gpu) << a.job.id;
    }
    EXPECT_EQ(a.finished_step, b.finished_step) << a.job.id;
  }
  ASSERT_EQ(after.services.size(), 1u);
  EXPECT_EQ(after.services[0].committed_gpus, before.services[0].committed_gpus);
  EXPECT_EQ(after.services[0].anchor_step, before.services[0].anchor_step);
  ASSERT_EQ(after.recent.size(), before.recent.size());
  for (size_t k = 0; k < after.recent.size(); ++k) {
    EXPECT_EQ(store::StepToJson(after.recent[k]), store::StepToJson(before.recent[k]));
  }
  // Generated ids go on from where they were.
  auto next = testing::SubmitJob(*engine, kA, JobBody("", 1, 1));
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)["id"], "job-" + std::to_string(before.next_generated_id.at("a")));
  EXPECT_EQ((*next)["id"], "job-4");
}

TEST(Engine, FullModeIsAdoptedOnlyWhenLegalAndBetter) {
  ScratchDir dir;
  const PolicyRegistry registry = TestRegistry();
  auto options = [&](const std::string& fast, const std::string& full) {
    EngineOptions o = Manual(dir);
    o.db_path = (dir.path() / (fast + "-" + full + ".db")).string();  // a fresh store each
    o.registry = &registry;
    o.fast_policy = fast;
    o.full_policy = full;
    o.full_time_limit_s = 2;
    return o;
  };
  {
    // Full mode returns an illegal plan: the fast plan stays.
    auto engine = OpenEngine(testing::Config(), options("nothing", "pile-up"));
    ASSERT_TRUE(engine);
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("p", 8, 2, 3)));
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("q", 8, 2, 3)));
    ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
    EXPECT_EQ(engine->RunFullModeOnce(), "illegal");
    EXPECT_EQ(engine->CurrentPlan()->mode(), "fast");
    engine->Stop();
  }
  {
    // Full mode ("ordo") finds a better plan than starting nothing: adopted; again: unchanged.
    auto engine = OpenEngine(testing::Config(), options("nothing", "ordo"));
    ASSERT_TRUE(engine);
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("p", 8, 2, 3)));
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("q", 16, 2, 1)));
    ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
    EXPECT_EQ(engine->CurrentPlan()->plan().metrics.objective, 0);
    EXPECT_EQ(engine->RunFullModeOnce(), "adopted");
    auto plan = engine->CurrentPlan();
    EXPECT_EQ(plan->mode(), "full");
    EXPECT_GT(plan->plan().metrics.objective, 0);
    EXPECT_EQ(engine->RunFullModeOnce(), "unchanged");
    // The adopted full plan is the one committed.
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 1));
    EXPECT_EQ(engine->StateCopy().recent.back().policy, "full");
    engine->Stop();
  }
  {
    // Full mode is worse than fast mode: not adopted.
    auto engine = OpenEngine(testing::Config(), options("ordo", "nothing"));
    ASSERT_TRUE(engine);
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("r", 8, 2, 3)));
    ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
    EXPECT_EQ(engine->RunFullModeOnce(), "worse");
    EXPECT_EQ(engine->CurrentPlan()->mode(), "fast");
  }
}

TEST(Engine, IllegalFastPlansAreReplacedByTheFallback) {
  ScratchDir dir;
  const PolicyRegistry registry = TestRegistry();
  EngineOptions options = Manual(dir);
  options.registry = &registry;
  options.fast_policy = "pile-up";
  auto engine = OpenEngine(testing::Config(), options);
  ASSERT_TRUE(engine);
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("", 8, 2)));
  ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
  EXPECT_EQ(engine->CurrentPlan()->mode(), "fallback");
  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 3));
  const State state = engine->StateCopy();
  std::vector<CommittedStep> steps(state.recent.begin(), state.recent.end());
  ExpectLegalHistory(engine->config().base, steps, state, {}, {});
  EXPECT_NE(engine->MetricsText().find("ordo_plans_total{mode=\"fast\",outcome=\"illegal\"}"),
            std::string::npos);
}

TEST(Engine, WallClockCommitsEachStepAndCatchesUpWithoutNewStarts) {
  ScratchDir dir;
  std::atomic<double> now{1'700'000'000.0};
  EngineOptions options;
  options.db_path = dir.db();
  options.full_interval_s = 0;
  options.debounce_s = 0.001;
  options.wall_clock = [&now] { return now.load(); };
  auto engine = OpenEngine(testing::Config(), options);
  ASSERT_TRUE(engine);
  auto wait_for_step = [&](int64_t next) {
    for (int k = 0; k < 1000 && engine->NextStep() < next; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return engine->NextStep();
  };
  // Step 0 began when the service started: it is committed at once.
  EXPECT_EQ(wait_for_step(1), 1);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("waits", 8, 2)));
  // The clock jumps 3.5 steps (the service was, say, suspended): steps 1 and 2 are caught up
  // without new starts (nothing could have started the job), step 3 starts it.
  now = now + 3.5 * 3600;
  EXPECT_EQ(wait_for_step(4), 4);
  const State state = engine->StateCopy();
  EXPECT_EQ(state.FindJob("a/waits")->state, JobState::kRunning);
  EXPECT_EQ(state.FindJob("a/waits")->start_step, 3);
  ASSERT_GE(state.recent.size(), 4u);
  EXPECT_EQ(state.recent[1].policy, "hold");
  EXPECT_EQ(state.recent[2].policy, "hold");
  EXPECT_NE(state.recent[3].policy, "hold");
}

TEST(Engine, WhatIfChangesNothing) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("base", 16, 3)));
  ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
  const uint64_t version = engine->StateVersion();
  auto what = testing::WhatIf(*engine, kB, json{{"jobs", {JobBody("", 8, 1, 50)}}});
  ASSERT_TRUE(what) << what.error().ToString();
  EXPECT_EQ((*what)["jobs"][0]["id"], "what-if-1");
  EXPECT_FALSE((*what)["jobs"][0]["planned_start_step"].is_null());
  // Tenant b does not see a's job in the hypothetical plan either.
  for (const json& j : (*what)["plan"]["jobs"]) EXPECT_NE(j["id"], "base");
  EXPECT_EQ(engine->StateVersion(), version);
  EXPECT_EQ(testing::Status(engine->GetJob(kB, "what-if-1")), 404);
  // Services are the admin's.
  EXPECT_EQ(testing::Status(testing::WhatIf(*engine, kB, json{{"services", {{{"id", "s"}}}}})),
            403);
}

}  // namespace
}  // namespace ordo::service
