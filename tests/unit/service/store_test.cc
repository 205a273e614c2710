#include "ordo/service/store/store.h"

#include <gtest/gtest.h>

#include "tests/unit/service/service_test_util.h"

namespace ordo::service::store {
namespace {

using testing::ScratchDir;

JobRecord MakeRecord(const std::string& id, const std::string& tenant) {
  JobRecord r;
  r.job.id = id;
  r.tenant = tenant;
  r.submitted_step = 3;
  r.submitted_unix = 1.7e9;
  return r;
}

TEST(Store, UsesWalAndFullSynchronousCommits) {
  ScratchDir dir;
  auto store = Store::Open(dir.db());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_EQ(*(*store)->PragmaValue("journal_mode"), "wal");
  EXPECT_EQ(*(*store)->PragmaValue("synchronous"), "2");  // FULL
  EXPECT_EQ(*(*store)->SchemaVersion(), kSchemaVersion);
}

TEST(Store, RoundTripsJobsServicesStepsAndTheClock) {
  ScratchDir dir;
  {
    auto store = Store::Open(dir.db());
    ASSERT_TRUE(store);
    Store& s = **store;
    ASSERT_TRUE(s.Begin());
    ASSERT_TRUE(s.InitClock(1.5e9, "cluster-x"));
    JobRecord a = MakeRecord("a", "t1");
    auto seq = s.InsertJob(a, R"({"id":"a"})");
    ASSERT_TRUE(seq) << seq.error().ToString();
    a.seq = *seq;
    a.state = JobState::kRunning;
    a.start_step = 4;
    a.first_gpu = 8;
    a.shape = Shape{8, 3};
    ASSERT_TRUE(s.UpdateJob(a));
    ASSERT_TRUE(s.InsertJob(MakeRecord("b", "t2"), R"({"id":"b"})"));
    ServiceRecord svc;
    svc.seq = 1;
    svc.service.id = "chat";
    svc.anchor_step = 2;
    svc.committed_gpus = 5;
    ASSERT_TRUE(s.PutService(svc, R"({"id":"chat"})"));
    CommittedStep step;
    step.step = 4;
    step.policy = "ordo";
    step.jobs = {{"a", 8, 8}};
    step.services = {{"chat", {0, 1, 2, 3, 4}, 6}};
    step.utilization = 0.8;
    step.allocated_utilization = 0.81;
    step.value = 12.5;
    step.unmet_gpus = 1;
    ASSERT_TRUE(s.InsertStep(step));
    ASSERT_TRUE(s.SetClock(5, 12.5));
    ASSERT_TRUE(s.InsertTraffic("chat", {{100, 1.5}, {200, 2.5}}));
    ASSERT_TRUE(s.Commit());
  }
  auto store = Store::Open(dir.db());
  ASSERT_TRUE(store);
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_FALSE(snap->fresh);
  EXPECT_EQ(snap->next_step, 5);
  EXPECT_EQ(snap->origin_unix, 1.5e9);
  EXPECT_EQ(snap->committed_value_total, 12.5);
  EXPECT_EQ(snap->cluster_fingerprint, "cluster-x");
  ASSERT_EQ(snap->jobs.size(), 2u);
  const JobRecord& a = snap->jobs[0].record;
  EXPECT_EQ(a.job.id, "a");
  EXPECT_EQ(a.tenant, "t1");
  EXPECT_EQ(a.state, JobState::kRunning);
  EXPECT_EQ(a.start_step, 4);
  EXPECT_EQ(a.first_gpu, 8);
  EXPECT_EQ(a.shape, (Shape{8, 3}));
  EXPECT_EQ(snap->jobs[0].spec, R"({"id":"a"})");
  EXPECT_EQ(snap->jobs[1].record.state, JobState::kPending);
  ASSERT_EQ(snap->services.size(), 1u);
  EXPECT_EQ(snap->services[0].committed_gpus, 5);
  EXPECT_EQ(snap->services[0].anchor_step, 2);
  ASSERT_EQ(snap->recent.size(), 1u);
  EXPECT_EQ(StepToJson(snap->recent[0]),
            StepToJson(CommittedStep{
                4, "ordo", {{"a", 8, 8}}, {{"chat", {0, 1, 2, 3, 4}, 6}}, 0.8, 0.81, 12.5, 1}));
  auto traffic = (*store)->LoadTraffic("chat");
  ASSERT_TRUE(traffic);
  ASSERT_EQ(traffic->size(), 2u);
  EXPECT_EQ((*traffic)[1].rate, 2.5);
  auto steps = (*store)->ReadSteps(0, 10, 100);
  ASSERT_TRUE(steps) << steps.error().ToString();
  EXPECT_EQ(steps->size(), 1u);
}

TEST(Store, RollbackKeepsNothing) {
  ScratchDir dir;
  auto store = Store::Open(dir.db());
  ASSERT_TRUE(store);
  ASSERT_TRUE((*store)->Begin());
  ASSERT_TRUE((*store)->InsertJob(MakeRecord("x", "t"), "{}"));
  (*store)->Rollback();
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap);
  EXPECT_TRUE(snap->jobs.empty());
  EXPECT_TRUE(snap->fresh);
}

TEST(Store, DuplicateJobIdsAreRefusedByTheSchema) {
  ScratchDir dir;
  auto store = Store::Open(dir.db());
  ASSERT_TRUE(store);
  ASSERT_TRUE((*store)->Begin());
  ASSERT_TRUE((*store)->InsertJob(MakeRecord("x", "t"), "{}"));
  EXPECT_FALSE((*store)->InsertJob(MakeRecord("x", "u"), "{}"));
  (*store)->Rollback();
}

TEST(Store, MigratesAnOldFileForwardKeepingItsData) {
  ScratchDir dir;
  {
    auto v1 = Store::Open(dir.db(), 1);
    ASSERT_TRUE(v1);
    EXPECT_EQ(*(*v1)->SchemaVersion(), 1);
    ASSERT_TRUE((*v1)->Begin());
    ASSERT_TRUE((*v1)->InitClock(1e9, "c"));
    ASSERT_TRUE((*v1)->InsertJob(MakeRecord("old", "t"), "{}"));
    // Version 1 has no traffic table.
    EXPECT_FALSE((*v1)->InsertTraffic("s", {{1, 1}}));
    (*v1)->Rollback();
    ASSERT_TRUE((*v1)->Begin());
    ASSERT_TRUE((*v1)->InitClock(1e9, "c"));
    ASSERT_TRUE((*v1)->InsertJob(MakeRecord("old", "t"), "{}"));
    ASSERT_TRUE((*v1)->Commit());
  }
  auto latest = Store::Open(dir.db());
  ASSERT_TRUE(latest) << latest.error().ToString();
  EXPECT_EQ(*(*latest)->SchemaVersion(), kSchemaVersion);
  auto snap = (*latest)->Load();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->jobs.size(), 1u);
  // Version 3 qualifies job ids with their tenant.
  EXPECT_EQ(snap->jobs[0].record.job.id, "t/old");
  EXPECT_EQ(snap->jobs[0].record.tenant, "t");
  ASSERT_TRUE((*latest)->Begin());
  EXPECT_TRUE((*latest)->InsertTraffic("s", {{1, 1}}));
  ASSERT_TRUE((*latest)->Commit());
}

TEST(Store, PerTenantGeneratedIdCountersRoundTrip) {
  ScratchDir dir;
  {
    auto store = Store::Open(dir.db());
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->Begin());
    ASSERT_TRUE((*store)->InitClock(1e9, "c"));
    ASSERT_TRUE((*store)->SetNextGeneratedId("a", 4));
    ASSERT_TRUE((*store)->SetNextGeneratedId("b:team", 2));
    ASSERT_TRUE((*store)->SetNextGeneratedId("a", 5));
    ASSERT_TRUE((*store)->Commit());
  }
  auto store = Store::Open(dir.db());
  ASSERT_TRUE(store);
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->next_generated_id, (std::map<std::string, int64_t>{{"a", 5}, {"b:team", 2}}));
}

TEST(Store, RefusesAFileFromANewerOrdo) {
  ScratchDir dir;
  {
    auto db = Db::Open(dir.db(), true);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->Exec("PRAGMA user_version = 99"));
  }
  auto store = Store::Open(dir.db());
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message.find("newer"), std::string::npos) << store.error().message;
}

TEST(Store, StepJsonRejectsGarbage) {
  EXPECT_FALSE(StepFromJson(1, "not json"));
  EXPECT_FALSE(StepFromJson(1, R"({"policy": "x"})"));
}

}  // namespace
}  // namespace ordo::service::store
