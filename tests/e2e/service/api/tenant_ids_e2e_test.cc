// `ordo serve` over real HTTP: job ids are per tenant (issue 15's example). Tenant A takes
// `shared-1`, then tenant B submits `shared-1` too: both get 201, each reads only its own job in
// every view, a retry's 409 concerns the caller's own job, cancelling A's leaves B's, and
// generated ids neither collide nor reveal another tenant's count. The admin sees qualified ids.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/service/support/server_process.h"

namespace ordo::testing::e2e {
namespace {

using nlohmann::json;

class TenantIdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = ArtifactDir(std::string("tenant-ids-") + info->name());
    server_ = ServerProcess::Start(TestConfig(), {"--manual-clock", "--full-every", "0"}, dir_);
    ASSERT_TRUE(server_.running());
  }
  void TearDown() override {
    if (HasFailure() && server_.running()) {
      std::cerr << "server log:\n" << server_.Log().substr(0, 20000) << "\n";
    }
  }
  json Get(const std::string& path, const char* token) {
    Response r = server_.Get(path, token);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return r.json();
  }

  std::filesystem::path dir_;
  ServerProcess server_;
};

json Job(const std::string& id, int gpus, int duration, int priority) {
  json job = {
      {"kind", "training"}, {"priority", priority}, {"gpus", gpus}, {"duration_steps", duration}};
  if (!id.empty()) job["id"] = id;
  return job;
}

// The entries of `list` whose `id` is `id`.
std::vector<json> WithId(const json& list, const std::string& id) {
  std::vector<json> out;
  for (const json& item : list) {
    if (item.value("id", json()) == id) out.push_back(item);
  }
  return out;
}

TEST_F(TenantIdsTest, TwoTenantsBothSubmitShared1) {
  // A's shared-1 takes the whole cluster (16 GPUs) for 4 steps, B's waits with 4 GPUs: the two
  // are told apart by their GPUs in every view.
  Response a = server_.Post("/v1/jobs", kTokenA, Job("shared-1", 16, 4, 3).dump());
  ASSERT_EQ(a.status, 201) << a.body;
  EXPECT_EQ(a.json()["id"], "shared-1");
  Response b = server_.Post("/v1/jobs", kTokenB, Job("shared-1", 4, 2, 2).dump());
  ASSERT_EQ(b.status, 201) << b.body;
  EXPECT_EQ(b.json()["id"], "shared-1");

  // B's retry is a 409 about B's own job, not a word about A's.
  Response retry = server_.Post("/v1/jobs", kTokenB, Job("shared-1", 4, 2, 2).dump());
  EXPECT_EQ(retry.status, 409) << retry.body;
  EXPECT_EQ(retry.json()["error"]["field"], "id");
  EXPECT_EQ(retry.body.find("a/"), std::string::npos) << retry.body;

  ASSERT_EQ(server_.Post("/v1/clock/advance", kAdminToken, R"({"steps": 1})").status, 200);

  struct Tenant {
    const char* token;
    int gpus;
    const char* state;
  };
  for (const Tenant& t : {Tenant{kTokenA, 16, "running"}, Tenant{kTokenB, 4, "pending"}}) {
    SCOPED_TRACE(t.token);
    json job = Get("/v1/jobs/shared-1", t.token);
    EXPECT_EQ(job["gpus"], t.gpus);
    EXPECT_EQ(job["state"], t.state);
    EXPECT_EQ(job["id"], "shared-1");
    // B's job waits behind A's; B learns that it waits for another tenant's job, not whose.
    if (t.token == kTokenB) {
      EXPECT_TRUE(job["blocking_id"].is_null()) << job.dump();
      EXPECT_EQ(job.dump().find("priority 3"), std::string::npos) << job.dump();
    }

    json list = Get("/v1/jobs", t.token);
    ASSERT_EQ(list["jobs"].size(), 1u) << list.dump();
    EXPECT_EQ(list["jobs"][0]["gpus"], t.gpus);

    json plan = Get("/v1/plan", t.token);
    const std::vector<json> placed = WithId(plan["jobs"], "shared-1");
    ASSERT_EQ(placed.size(), 1u) << plan.dump();
    EXPECT_EQ(placed[0]["gpus"], t.gpus);

    json dashboard = Get("/v1/dashboard", t.token);
    ASSERT_EQ(dashboard["jobs"].size(), 1u) << dashboard.dump();
    EXPECT_EQ(dashboard["jobs"][0]["gpus"], t.gpus);
    for (const json& block : WithId(dashboard["blocks"], "shared-1")) {
      EXPECT_EQ(block["gpus"], t.gpus) << block.dump();
    }

    // A what-if adding a second shared-1 is refused for each, naming its own; one with a new id
    // plans beside the tenant's own shared-1 only.
    Response dup =
        server_.Post("/v1/whatif", t.token, json{{"jobs", {Job("shared-1", 1, 1, 1)}}}.dump());
    EXPECT_EQ(dup.status, 400) << dup.body;
    EXPECT_EQ(dup.json()["error"]["field"], "jobs[0].id");
    Response whatif =
        server_.Post("/v1/whatif", t.token, json{{"jobs", {Job("probe", 1, 1, 1)}}}.dump());
    ASSERT_EQ(whatif.status, 200) << whatif.body;
    const std::vector<json> hypothetical = WithId(whatif.json()["plan"]["jobs"], "shared-1");
    ASSERT_EQ(hypothetical.size(), 1u) << whatif.body;
    EXPECT_EQ(hypothetical[0]["gpus"], t.gpus);

    // No view names a qualified id or the other tenant.
    for (const char* path :
         {"/v1/jobs", "/v1/plan", "/v1/dashboard", "/v1/plan/history", "/v1/plan/committed"}) {
      const std::string body = server_.Get(path, t.token).body;
      EXPECT_EQ(body.find("/shared-1"), std::string::npos) << path << ": " << body;
    }
  }

  // The admin sees both, qualified, and reads each by its qualified id.
  json all = Get("/v1/jobs", kAdminToken);
  ASSERT_EQ(all["jobs"].size(), 2u);
  EXPECT_EQ(all["jobs"][0]["id"], "a/shared-1");
  EXPECT_EQ(all["jobs"][1]["id"], "b/shared-1");
  EXPECT_EQ(Get("/v1/jobs/b/shared-1", kAdminToken)["gpus"], 4);
  json admin_plan = Get("/v1/plan", kAdminToken);
  EXPECT_EQ(WithId(admin_plan["jobs"], "a/shared-1").size(), 1u);
  EXPECT_EQ(WithId(admin_plan["jobs"], "b/shared-1").size(), 1u);
  // A tenant cannot reach the other's job by its qualified id.
  EXPECT_EQ(server_.Get("/v1/jobs/b/shared-1", kTokenA).status, 404);

  // DELETE by A leaves B's.
  Response cancel = server_.Delete("/v1/jobs/shared-1", kTokenA);
  EXPECT_EQ(cancel.status, 200) << cancel.body;
  EXPECT_EQ(Get("/v1/jobs/shared-1", kTokenA)["state"], "cancelled");
  EXPECT_EQ(Get("/v1/jobs/shared-1", kTokenB)["state"], "pending");
}

TEST_F(TenantIdsTest, GeneratedIdsNeitherCollideNorRevealAnotherTenantsCount) {
  for (int k = 1; k <= 5; ++k) {
    Response r = server_.Post("/v1/jobs", kTokenA, Job("", 1, 1, 1).dump());
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(r.json()["id"], "job-" + std::to_string(k));
  }
  // B's first generated id is job-1: five jobs of A's neither took it nor show in it.
  Response b = server_.Post("/v1/jobs", kTokenB, Job("", 2, 1, 1).dump());
  ASSERT_EQ(b.status, 201) << b.body;
  EXPECT_EQ(b.json()["id"], "job-1");
  EXPECT_EQ(Get("/v1/jobs/job-1", kTokenB)["gpus"], 2);
  EXPECT_EQ(Get("/v1/jobs/job-1", kTokenA)["gpus"], 1);
  // Both survive a restart, and the counters go on from where each was.
  EXPECT_EQ(server_.Terminate(), 0);
  server_.Restart();
  ASSERT_TRUE(server_.running());
  Response a6 = server_.Post("/v1/jobs", kTokenA, Job("", 1, 1, 1).dump());
  ASSERT_EQ(a6.status, 201) << a6.body;
  EXPECT_EQ(a6.json()["id"], "job-6");
  Response b2 = server_.Post("/v1/jobs", kTokenB, Job("", 1, 1, 1).dump());
  ASSERT_EQ(b2.status, 201) << b2.body;
  EXPECT_EQ(b2.json()["id"], "job-2");
}

}  // namespace
}  // namespace ordo::testing::e2e
