// Job ids are per tenant: two tenants may hold the same id, each reads and changes only its own,
// generated ids are counted per tenant, and a database written when ids were global opens with
// each old job in its recorded tenant's namespace.
#include <gtest/gtest.h>

#include <string>

#include "ordo/service/engine.h"
#include "ordo/service/store/sqlite.h"
#include "ordo/service/store/store.h"
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

// The entries of `list` whose `id` is `id`.
std::vector<json> WithId(const json& list, const std::string& id) {
  std::vector<json> out;
  for (const json& item : list) {
    if (item.value("id", json()) == id) out.push_back(item);
  }
  return out;
}

TEST(TenantIds, TwoTenantsHoldTheSameIdAndEachSeesOnlyItsOwn) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("shared-1", 8, 3, 2)));
  auto second = testing::SubmitJob(*engine, kB, JobBody("shared-1", 4, 2, 5));
  ASSERT_TRUE(second) << second.error().ToString();
  EXPECT_EQ((*second)["id"], "shared-1");

  // A retry concerns the caller's own job, and says nothing of another tenant's.
  auto retry = testing::SubmitJob(*engine, kB, JobBody("shared-1", 4, 2, 5));
  ASSERT_FALSE(retry);
  EXPECT_EQ(testing::Status(retry), 409);
  EXPECT_EQ(retry.error().field, "id");
  EXPECT_EQ(retry.error().message.find("a/"), std::string::npos);

  ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
  auto a_view = engine->GetJob(kA, "shared-1");
  auto b_view = engine->GetJob(kB, "shared-1");
  ASSERT_TRUE(a_view && b_view);
  EXPECT_EQ((*a_view)["gpus"], 8);
  EXPECT_EQ((*a_view)["tenant"], "a");
  EXPECT_EQ((*a_view)["id"], "shared-1");
  EXPECT_EQ((*b_view)["gpus"], 4);
  EXPECT_EQ((*b_view)["tenant"], "b");
  EXPECT_EQ((*b_view)["id"], "shared-1");

  for (const Principal& who : {kA, kB}) {
    const int gpus = who.name == "a" ? 8 : 4;
    auto list = engine->ListJobs(who, JobFilter{});
    ASSERT_TRUE(list);
    ASSERT_EQ((*list)["jobs"].size(), 1u) << list->dump();
    EXPECT_EQ((*list)["jobs"][0]["gpus"], gpus);
    auto plan = engine->PlanJson(who);
    ASSERT_TRUE(plan);
    const std::vector<json> placed = WithId((*plan)["jobs"], "shared-1");
    ASSERT_EQ(placed.size(), 1u) << plan->dump();
    EXPECT_EQ(placed[0]["gpus"], gpus);
    EXPECT_EQ(plan->dump().find("/shared-1"), std::string::npos) << plan->dump();
  }

  // The admin sees both, qualified, and addresses each by its qualified id.
  auto all = engine->ListJobs(kAdminPrincipal, JobFilter{});
  ASSERT_TRUE(all);
  ASSERT_EQ((*all)["jobs"].size(), 2u);
  EXPECT_EQ((*all)["jobs"][0]["id"], "a/shared-1");
  EXPECT_EQ((*all)["jobs"][1]["id"], "b/shared-1");
  EXPECT_EQ((*engine->GetJob(kAdminPrincipal, "b/shared-1"))["gpus"], 4);
  auto admin_plan = engine->PlanJson(kAdminPrincipal);
  ASSERT_TRUE(admin_plan);
  EXPECT_EQ(WithId((*admin_plan)["jobs"], "a/shared-1").size(), 1u);
  EXPECT_EQ(WithId((*admin_plan)["jobs"], "b/shared-1").size(), 1u);

  // A tenant cannot reach another's job by its qualified id.
  EXPECT_EQ(testing::Status(engine->GetJob(kA, "b/shared-1")), 404);
  EXPECT_EQ(testing::Status(engine->CancelJob(kA, "b/shared-1")), 404);

  // Cancelling a's leaves b's.
  ASSERT_TRUE(engine->CancelJob(kA, "shared-1"));
  EXPECT_EQ((*engine->GetJob(kA, "shared-1"))["state"], "cancelled");
  EXPECT_EQ((*engine->GetJob(kB, "shared-1"))["state"], "pending");
  ASSERT_TRUE(engine->CancelJob(kAdminPrincipal, "b/shared-1"));
  EXPECT_EQ((*engine->GetJob(kB, "shared-1"))["state"], "cancelled");
}

TEST(TenantIds, GeneratedIdsAreCountedPerTenant) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  for (int k = 1; k <= 3; ++k) {
    auto id = testing::SubmitJob(*engine, kA, JobBody("", 1, 1));
    ASSERT_TRUE(id);
    EXPECT_EQ((*id)["id"], "job-" + std::to_string(k));
  }
  // b's first generated id says nothing of how many a has.
  auto b_first = testing::SubmitJob(*engine, kB, JobBody("", 1, 1));
  ASSERT_TRUE(b_first);
  EXPECT_EQ((*b_first)["id"], "job-1");
  // A generated id that the tenant itself took is skipped.
  ASSERT_TRUE(testing::SubmitJob(*engine, kB, JobBody("job-2", 1, 1)));
  auto b_next = testing::SubmitJob(*engine, kB, JobBody("", 1, 1));
  ASSERT_TRUE(b_next);
  EXPECT_EQ((*b_next)["id"], "job-3");
}

TEST(TenantIds, WhatIfIdsAreTheCallersOwn) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("x", 8, 2)));
  ASSERT_TRUE(engine->WaitForPlan(engine->StateVersion(), 10));
  // b may add a hypothetical "x": a's "x" is no concern of b's.
  auto b_whatif = testing::WhatIf(*engine, kB, json{{"jobs", {JobBody("x", 4, 1)}}});
  ASSERT_TRUE(b_whatif) << b_whatif.error().ToString();
  ASSERT_EQ((*b_whatif)["jobs"].size(), 1u);
  EXPECT_EQ((*b_whatif)["jobs"][0]["id"], "x");
  const std::vector<json> placed = WithId((*b_whatif)["plan"]["jobs"], "x");
  ASSERT_EQ(placed.size(), 1u) << b_whatif->dump();
  EXPECT_EQ(placed[0]["gpus"], 4);
  // a's own "x" exists: a cannot add another.
  auto a_whatif = testing::WhatIf(*engine, kA, json{{"jobs", {JobBody("x", 4, 1)}}});
  ASSERT_FALSE(a_whatif);
  EXPECT_EQ(testing::Status(a_whatif), 400);
  EXPECT_EQ(a_whatif.error().field, "jobs[0].id");
  // Cancelling "x" in a what-if is a's own job for a, and nothing for b.
  EXPECT_TRUE(testing::WhatIf(*engine, kA, json{{"cancel", {"x"}}}));
  auto b_cancel = testing::WhatIf(*engine, kB, json{{"cancel", {"x"}}});
  ASSERT_FALSE(b_cancel);
  EXPECT_EQ(b_cancel.error().field, "cancel[0]");
  EXPECT_FALSE(testing::WhatIf(*engine, kB, json{{"cancel", {"a/x"}}}));
}

TEST(TenantIds, ServiceIdsAreApartFromJobIds) {
  ScratchDir dir;
  auto engine = OpenEngine(testing::Config(), Manual(dir));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("chat", 1, 1)));
  json service = {{"id", "chat"},
                  {"priority", 5},
                  {"min_gpus", 0},
                  {"max_gpus", 4},
                  {"demand", json(std::vector<int>(12, 1))}};
  ASSERT_TRUE(testing::PutService(*engine, kAdminPrincipal, service, std::nullopt, true));
  EXPECT_EQ(
      testing::Status(testing::PutService(*engine, kAdminPrincipal, service, std::nullopt, true)),
      409);
  EXPECT_EQ((*engine->GetJob(kA, "chat"))["kind"], "training");
}

// A database written when job ids were global (schema version 2): its jobs, committed steps and
// counter are read into their recorded tenants' namespaces.
TEST(TenantIds, OpensADatabaseWrittenWithGlobalIds) {
  ScratchDir dir;
  const ServiceConfig config = testing::Config();
  {
    auto old = store::Store::Open(dir.db(), 2);
    ASSERT_TRUE(old) << old.error().ToString();
    store::Store& s = **old;
    ASSERT_TRUE(s.Begin());
    ASSERT_TRUE(s.InitClock(1.7e9, config.cluster_json.dump()));
    JobRecord running;
    running.job.id = "shared-1";
    running.tenant = "a";
    running.submitted_unix = 1.7e9;
    auto seq = s.InsertJob(
        running, R"({"id":"shared-1","kind":"training","priority":3,"gpus":8,"duration_steps":4})");
    ASSERT_TRUE(seq);
    running.seq = *seq;
    running.state = JobState::kRunning;
    running.start_step = 0;
    running.first_gpu = 0;
    running.shape = Shape{8, 4};
    ASSERT_TRUE(s.UpdateJob(running));
    JobRecord waiting;
    waiting.job.id = "job-1";
    waiting.tenant = "b";
    waiting.submitted_step = 1;
    waiting.submitted_unix = 1.7e9 + 3600;
    ASSERT_TRUE(s.InsertJob(
        waiting, R"({"id":"job-1","kind":"training","priority":1,"gpus":16,"duration_steps":1})"));
    CommittedStep step;
    step.step = 0;
    step.policy = "ordo";
    step.jobs = {{"shared-1", 0, 8}};
    step.value = 24;
    ASSERT_TRUE(s.InsertStep(step));
    ASSERT_TRUE(s.SetClock(1, 24));
    ASSERT_TRUE(s.Commit());
  }
  {
    // The old build kept one counter for every tenant.
    auto db = store::Db::Open(dir.db(), false);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->Exec("INSERT INTO meta (key, value) VALUES ('next_generated_id', '2')"));
  }
  auto engine = OpenEngine(config, Manual(dir));
  ASSERT_TRUE(engine);
  const State state = engine->StateCopy();
  ASSERT_NE(state.FindJob("a/shared-1"), nullptr);
  EXPECT_EQ(state.FindJob("a/shared-1")->state, JobState::kRunning);
  EXPECT_EQ(state.FindJob("a/shared-1")->job.id, "a/shared-1");
  ASSERT_NE(state.FindJob("b/job-1"), nullptr);
  EXPECT_EQ(state.FindJob("shared-1"), nullptr);
  ASSERT_EQ(state.recent.size(), 1u);
  ASSERT_EQ(state.recent[0].jobs.size(), 1u);
  EXPECT_EQ(state.recent[0].jobs[0].id, "a/shared-1");

  // Each tenant reads its own job under the id it submitted; the other's is not found.
  EXPECT_EQ((*engine->GetJob(kA, "shared-1"))["state"], "running");
  EXPECT_EQ(testing::Status(engine->GetJob(kB, "shared-1")), 404);
  EXPECT_EQ((*engine->GetJob(kB, "job-1"))["state"], "pending");
  auto history = engine->HistoryJson(kA, 0, 1);
  ASSERT_TRUE(history);
  EXPECT_EQ((*history)["steps"][0]["jobs"][0]["id"], "shared-1");
  auto b_history = engine->HistoryJson(kB, 0, 1);
  ASSERT_TRUE(b_history);
  EXPECT_TRUE((*b_history)["steps"][0]["jobs"].empty()) << b_history->dump();
  auto admin_history = engine->HistoryJson(kAdminPrincipal, 0, 1);
  ASSERT_TRUE(admin_history);
  EXPECT_EQ((*admin_history)["steps"][0]["jobs"][0]["id"], "a/shared-1");

  // The namespaces work on the migrated file: b takes "shared-1", a's retry is its own 409, and
  // b's next generated id skips the job-1 it already has.
  EXPECT_TRUE(testing::SubmitJob(*engine, kB, JobBody("shared-1", 1, 1)));
  EXPECT_EQ(testing::Status(testing::SubmitJob(*engine, kA, JobBody("shared-1", 1, 1))), 409);
  auto generated = testing::SubmitJob(*engine, kB, JobBody("", 1, 1));
  ASSERT_TRUE(generated);
  EXPECT_EQ((*generated)["id"], "job-2");
  auto a_generated = testing::SubmitJob(*engine, kA, JobBody("", 1, 1));
  ASSERT_TRUE(a_generated);
  EXPECT_EQ((*a_generated)["id"], "job-1");
  // The running job keeps its block through the commits that follow.
  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 3));
  const State after = engine->StateCopy();
  EXPECT_EQ(after.FindJob("a/shared-1")->state, JobState::kDone);
  EXPECT_EQ(after.FindJob("a/shared-1")->finished_step, 4);
  EXPECT_EQ(after.FindJob("a/shared-1")->first_gpu, 0);
}

}  // namespace
}  // namespace ordo::service
