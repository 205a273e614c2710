#include "ordo/service/config.h"

#include <gtest/gtest.h>

#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;
using testing::ConfigJson;

Result<ServiceConfig> Parse(const json& doc) { return ParseServiceConfig(doc.dump(), false); }

TEST(ServiceConfig, ReadsClusterTenantsAndAdmin) {
  auto config = Parse(ConfigJson(3, 24));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->base.cluster.total_gpus(), 24);
  EXPECT_EQ(config->base.horizon_steps, 24);
  EXPECT_TRUE(config->base.jobs.empty());
  ASSERT_EQ(config->tenants.size(), 2u);
  EXPECT_EQ(config->tenants[1].name, "b");
  EXPECT_EQ(config->admin_token, testing::kAdmin);
}

TEST(ServiceConfig, ReadsYaml) {
  const std::string yaml =
      "step_minutes: 30\nhorizon_steps: 8\ncluster:\n  node_groups:\n"
      "    - {name: g, nodes: 1, gpus_per_node: 4}\n"
      "tenants:\n  - {name: team-1, token: abcdefghijklmnop}\n"
      "admin_token: qrstuvwxyz0123456\n";
  auto config = ParseServiceConfig(yaml, true);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->base.step_minutes, 30);
  EXPECT_EQ(config->tenants.front().name, "team-1");
}

TEST(ServiceConfig, AuthenticatesEachTokenAsItsPrincipal) {
  auto config = Parse(ConfigJson());
  ASSERT_TRUE(config);
  auto admin = config->Authenticate(testing::kAdmin);
  ASSERT_TRUE(admin);
  EXPECT_TRUE(admin->admin);
  auto a = config->Authenticate(testing::kTokenA);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->name, "a");
  EXPECT_FALSE(a->admin);
  EXPECT_FALSE(config->Authenticate(""));
  EXPECT_FALSE(config->Authenticate("tenant-a-token-012345678"));    // a prefix
  EXPECT_FALSE(config->Authenticate("tenant-a-token-01234567890"));  // one longer
  EXPECT_FALSE(config->Authenticate("TENANT-A-TOKEN-0123456789"));
}

struct BadConfig {
  std::string name;
  std::function<void(json&)> edit;
  std::string field;
};

class ServiceConfigErrors : public ::testing::TestWithParam<BadConfig> {};

TEST_P(ServiceConfigErrors, NameTheField) {
  json doc = ConfigJson();
  GetParam().edit(doc);
  auto config = Parse(doc);
  ASSERT_FALSE(config) << GetParam().name;
  EXPECT_EQ(config.error().field, GetParam().field) << config.error().ToString();
  EXPECT_FALSE(config.error().message.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Table, ServiceConfigErrors,
    ::testing::Values(
        BadConfig{"no tenants", [](json& d) { d.erase("tenants"); }, "tenants"},
        BadConfig{"no admin token", [](json& d) { d.erase("admin_token"); }, "admin_token"},
        BadConfig{"short token", [](json& d) { d["tenants"][0]["token"] = "short"; },
                  "tenants[0].token"},
        BadConfig{"token with a space",
                  [](json& d) { d["tenants"][0]["token"] = "has a space in it!!"; },
                  "tenants[0].token"},
        BadConfig{"shared token",
                  [](json& d) { d["tenants"][1]["token"] = d["tenants"][0]["token"]; },
                  "tenants[1].token"},
        BadConfig{"admin's token reused",
                  [](json& d) { d["tenants"][0]["token"] = d["admin_token"]; }, "tenants[0].token"},
        BadConfig{"tenant named admin", [](json& d) { d["tenants"][0]["name"] = "admin"; },
                  "tenants[0].name"},
        BadConfig{"duplicate tenant", [](json& d) { d["tenants"][1]["name"] = "a"; },
                  "tenants[1].name"},
        BadConfig{"tenant name with a slash", [](json& d) { d["tenants"][1]["name"] = "x/y"; },
                  "tenants[1].name"},
        BadConfig{"unknown tenant field", [](json& d) { d["tenants"][0]["role"] = "x"; },
                  "tenants[0].role"},
        BadConfig{"unknown field", [](json& d) { d["tenant"] = json::array(); }, "tenant"},
        BadConfig{"bad cluster",
                  [](json& d) { d["cluster"]["node_groups"][0]["gpus_per_node"] = 3; },
                  "cluster.node_groups[0].gpus_per_node"},
        BadConfig{"no horizon", [](json& d) { d.erase("horizon_steps"); }, "horizon_steps"},
        BadConfig{"negative share", [](json& d) { d["tenants"][0]["share"] = -1; },
                  "tenants[0].share"},
        BadConfig{"negative percent share", [](json& d) { d["tenants"][0]["share"] = "-5%"; },
                  "tenants[0].share"},
        BadConfig{"share that is no number", [](json& d) { d["tenants"][0]["share"] = "half"; },
                  "tenants[0].share"},
        BadConfig{"shares above the cluster",
                  [](json& d) {
                    d["tenants"][0]["share"] = 12;     // of 16 GPUs
                    d["tenants"][1]["share"] = "30%";  // 4.8 more
                  },
                  "tenants[1].share"},
        BadConfig{"max_priority of 0", [](json& d) { d["tenants"][0]["max_priority"] = 0; },
                  "tenants[0].max_priority"},
        BadConfig{"max_priority above 10", [](json& d) { d["tenants"][1]["max_priority"] = 11; },
                  "tenants[1].max_priority"},
        BadConfig{"aging cap below 1", [](json& d) { d["planning"]["aging"]["cap"] = 0.5; },
                  "planning.aging.cap"},
        BadConfig{"negative aging rate",
                  [](json& d) { d["planning"]["aging"]["rate_per_hour"] = -1; },
                  "planning.aging.rate_per_hour"},
        BadConfig{"unknown planning field", [](json& d) { d["planning"]["speed"] = 1; },
                  "planning.speed"},
        BadConfig{"negative ramp reserve",
                  [](json& d) { d["planning"]["ramp_reserve_hours"] = -6; },
                  "planning.ramp_reserve_hours"},
        BadConfig{"borrowing factor of zero",
                  [](json& d) { d["planning"]["borrowing_factor"] = 0; },
                  "planning.borrowing_factor"},
        BadConfig{"bad objective",
                  [](json& d) {
                    d["objective"] = {{"time_decay", 2}};
                  },
                  "objective.time_decay"}),
    [](const auto& info) {
      std::string name = info.param.name;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

TEST(ServiceConfig, ReadsSharesMaxPrioritiesAndPlanningOptions) {
  json doc = ConfigJson();  // 16 GPUs
  doc["tenants"][0]["share"] = "25%";
  doc["tenants"][0]["max_priority"] = 8;
  doc["tenants"][1]["share"] = 12;  // together exactly the cluster: allowed
  doc["planning"] = {{"aging", {{"rate_per_hour", 0.5}, {"cap", 3}}},
                     {"fair_share", {{"half_life_hours", 12}}},
                     {"ramp_reserve_hours", 24},
                     {"borrowing_factor", 0.125}};
  auto config = Parse(doc);
  ASSERT_TRUE(config) << config.error().ToString();
  const Tenant& a = config->tenants[0];
  EXPECT_TRUE(a.share_is_percent);
  EXPECT_DOUBLE_EQ(a.ShareFraction(16), 0.25);
  EXPECT_EQ(a.max_priority, 8);
  EXPECT_DOUBLE_EQ(config->tenants[1].ShareFraction(16), 0.75);
  EXPECT_FALSE(config->tenants[1].max_priority);
  EXPECT_EQ(config->planning.aging.rate_per_hour, 0.5);
  EXPECT_EQ(config->planning.aging.cap, 3);
  EXPECT_EQ(config->planning.fair_share.half_life_hours, 12);
  EXPECT_EQ(config->planning.ramp_reserve_hours, 24);
  EXPECT_EQ(config->planning.borrowing_factor, 0.125);
  // What is not given keeps the service's defaults.
  EXPECT_EQ(config->planning.fair_share.weight,
            priority::OnlinePlanningOptions().fair_share.weight);
  EXPECT_EQ(config->planning.size_exponent, 0);
  // Without `planning`, the defaults: aging and fair share on.
  auto plain = Parse(ConfigJson());
  ASSERT_TRUE(plain);
  EXPECT_GT(plain->planning.aging.rate_per_hour, 0);
  EXPECT_EQ(plain->planning.ramp_reserve_hours, 0);  // no reserve unless asked for
  EXPECT_EQ(plain->planning.borrowing_factor, 1);    // no share guarantee unless asked for
  EXPECT_EQ(plain->FindTenant("b"), &plain->tenants[1]);
  EXPECT_EQ(plain->FindTenant("admin"), nullptr);
}

TEST(ServiceConfig, SafeIds) {
  EXPECT_TRUE(IsSafeId("train-a_1.v2:x", 128));
  EXPECT_FALSE(IsSafeId("", 128));
  EXPECT_FALSE(IsSafeId("a/b", 128));
  EXPECT_FALSE(IsSafeId("a b", 128));
  EXPECT_FALSE(IsSafeId("é", 128));
  EXPECT_FALSE(IsSafeId(std::string(129, 'a'), 128));
}

}  // namespace
}  // namespace ordo::service
