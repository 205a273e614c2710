// Privacy as a property: on random multi-tenant states, no response a tenant gets — a job, the
// list, the plan with x-explain, history, the committed step, the dashboard, a what-if under any
// policy, the errors of reading or cancelling another tenant's job — contains another tenant's job
// id anywhere in its text. Ids are random 12-letter strings, so no other text contains them by
// chance. Each engine carries 25 states in turn (jobs added, steps advanced, jobs cancelled), each
// checked for every tenant; failures name the seed.
//
// Job ids are per tenant, so each engine also has one id several tenants submit (each with its
// own GPU count): a tenant that holds it reads only its own job under it (every object with that
// id and a `gpus` has the tenant's count, its own cancellation never touches another's), one that
// does not hold it never reads it, and no tenant ever reads a qualified id (`tenant/id`).
//
// ORDO_PROPERTY_INSTANCES sets the number of states (default 50; docs/service.md gives the
// 10,000-state run).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "ordo/service/engine.h"
#include "tests/support/random_scenario.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;
using testing::ScratchDir;

constexpr int kStatesPerEngine = 25;
const char* const kTenants[] = {"a", "b", "c"};
const char* const kPolicies[] = {"ordo", "fifo", "fifo-backfill", "priority-backfill", "reactive"};

int StateCount() {
  const char* env = std::getenv("ORDO_PROPERTY_INSTANCES");
  return env != nullptr ? std::max(1, std::atoi(env)) : 50;
}

std::string RandomId(ordo::testing::Rng& rng) {
  std::string id;
  for (int k = 0; k < 12; ++k) id += static_cast<char>('a' + rng.Uniform(0, 25));
  return id;
}

// Every object in `view` whose `id` is `id` and that has `gpus` has `gpus` GPUs; false names the
// first that does not in `found`.
bool AllHaveGpus(const json& view, const std::string& id, int gpus, json& found) {
  if (view.is_object()) {
    if (auto it = view.find("id"); it != view.end() && *it == id) {
      if (auto g = view.find("gpus"); g != view.end() && g->is_number() && *g != gpus) {
        found = view;
        return false;
      }
    }
  }
  if (view.is_structured()) {
    for (const json& item : view) {
      if (!AllHaveGpus(item, id, gpus, found)) return false;
    }
  }
  return true;
}

std::string Text(const Result<json>& result) {
  if (result) return result->dump();
  return std::to_string(testing::Status(result)) + " " + result.error().field + " " +
         result.error().message;
}

TEST(RedactionProperty, NoTenantEverReadsAnotherTenantsJobId) {
  const int states = StateCount();
  json config_json = testing::ConfigJson(2, 12);
  config_json["tenants"] = json::array();
  for (const char* tenant : kTenants) {
    config_json["tenants"].push_back(
        {{"name", tenant}, {"token", std::string("token-of-") + tenant + "-0123456789"}});
  }
  auto config = ParseServiceConfig(config_json.dump(), false);
  ASSERT_TRUE(config) << config.error().ToString();
  ScratchDir dir;
  int checked = 0;
  for (int engine_no = 0; checked < states; ++engine_no) {
    const uint64_t seed = 1000 + static_cast<uint64_t>(engine_no);
    ordo::testing::Rng rng(seed);
    EngineOptions options;
    options.db_path = (dir.path() / ("e" + std::to_string(engine_no) + ".db")).string();
    options.manual_clock = true;
    options.full_interval_s = 0;
    options.debounce_s = 0.001;
    auto opened = Engine::Open(*config, options, &testing::QuietLogger());
    ASSERT_TRUE(opened) << opened.error().ToString();
    std::unique_ptr<Engine> engine = std::move(*opened);
    engine->Start();
    const Principal admin{"admin", true};
    if (rng.Chance(0.5)) {
      std::vector<int> demand;
      for (int t = 0; t < 12; ++t) demand.push_back(rng.Uniform(0, 6));
      json service = {
          {"id", "chat"}, {"priority", 10}, {"min_gpus", 0}, {"max_gpus", 8}, {"demand", demand}};
      ASSERT_TRUE(testing::PutService(*engine, admin, service, std::nullopt, true));
    }
    std::map<std::string, std::vector<std::string>> ids;  // tenant -> its job ids
    // The id several tenants hold, and each holder's GPU count and whether it cancelled its own.
    const std::string shared = RandomId(rng);
    std::map<std::string, int> shared_gpus;
    std::map<std::string, bool> shared_cancelled;
    for (int k = 0; k < kStatesPerEngine && checked < states; ++k, ++checked) {
      // A change: a few jobs, sometimes a step or two, sometimes a cancellation.
      for (int n = rng.Uniform(1, 4); n > 0; --n) {
        const std::string tenant = kTenants[rng.Uniform(0, 2)];
        const std::string id = RandomId(rng);
        json job = {{"id", id},
                    {"kind", "training"},
                    {"priority", rng.Uniform(1, 9)},
                    {"gpus", 1 << rng.Uniform(0, 3)},
                    {"duration_steps", rng.Uniform(1, 6)}};
        ASSERT_TRUE(testing::SubmitJob(*engine, Principal{tenant, false}, job)) << "seed " << seed;
        ids[tenant].push_back(id);
      }
      if (rng.Chance(0.3)) {
        const int t = rng.Uniform(0, 2);
        const std::string tenant = kTenants[t];
        if (!shared_gpus.count(tenant)) {
          json job = {{"id", shared},
                      {"kind", "training"},
                      {"priority", rng.Uniform(1, 9)},
                      {"gpus", 1 << t},
                      {"duration_steps", rng.Uniform(1, 6)}};
          auto added = testing::SubmitJob(*engine, Principal{tenant, false}, job);
          ASSERT_TRUE(added) << "seed " << seed << ": tenant " << tenant
                             << " cannot submit an id another tenant holds: "
                             << added.error().message;
          shared_gpus[tenant] = 1 << t;
        }
      }
      if (rng.Chance(0.3)) {
        ASSERT_TRUE(engine->Advance(admin, rng.Uniform(1, 2), 2.0));
      }
      if (rng.Chance(0.1) && !shared_gpus.empty()) {
        auto it = std::next(shared_gpus.begin(),
                            rng.Uniform(0, static_cast<int>(shared_gpus.size()) - 1));
        auto cancelled = engine->CancelJob(Principal{it->first, false}, shared);
        if (cancelled) {
          shared_cancelled[it->first] = true;
        } else {
          // Only the tenant's own job can stop it: one that ran to its end is done.
          ASSERT_EQ(testing::Status(cancelled), 409) << "seed " << seed << ": " << Text(cancelled);
        }
      }
      if (rng.Chance(0.2)) {
        const std::string tenant = kTenants[rng.Uniform(0, 2)];
        if (!ids[tenant].empty()) {
          (void)engine->CancelJob(
              Principal{tenant, false},
              ids[tenant][rng.Uniform(0, static_cast<int>(ids[tenant].size()) - 1)]);
        }
      }
      engine->WaitForPlan(engine->StateVersion(), 2.0);

      // Every view of every tenant.
      for (const char* name : kTenants) {
        const Principal who{name, false};
        std::vector<std::string> texts;
        for (const std::string& id : ids[name]) texts.push_back(Text(engine->GetJob(who, id, 0.5)));
        texts.push_back(Text(engine->ListJobs(who, JobFilter{})));
        texts.push_back(Text(engine->PlanJson(who)));
        texts.push_back(Text(engine->HistoryJson(who, 0, 100)));
        texts.push_back(Text(engine->CommittedJson(who)));
        texts.push_back(Text(engine->DashboardJson(who, 48)));
        json whatif = {
            {"policy", kPolicies[rng.Uniform(0, 4)]},
            {"jobs",
             {{{"kind", "training"}, {"priority", 1}, {"gpus", 8}, {"duration_steps", 2}}}}};
        texts.push_back(Text(testing::WhatIf(*engine, who, whatif)));
        for (const auto& [other, other_ids] : ids) {
          if (other == name || other_ids.empty()) continue;
          const std::string& probe =
              other_ids[rng.Uniform(0, static_cast<int>(other_ids.size()) - 1)];
          // Asking for it by id echoes the caller's own input; the answer must not add to it.
          const std::string answer = Text(engine->GetJob(who, probe, 0));
          EXPECT_EQ(answer.find("tenant"), std::string::npos) << answer;
          EXPECT_EQ(answer.rfind("404", 0), 0u) << answer;
        }
        if (shared_gpus.count(name)) {
          auto mine = engine->GetJob(who, shared, 0.5);
          ASSERT_TRUE(mine) << "seed " << seed << ": " << Text(mine);
          EXPECT_EQ((*mine)["gpus"], shared_gpus[name]) << "seed " << seed << " " << mine->dump();
          EXPECT_EQ((*mine)["state"] == "cancelled", shared_cancelled[name])
              << "seed " << seed << ": tenant " << name << " " << mine->dump();
          auto list = engine->ListJobs(who, JobFilter{});
          ASSERT_TRUE(list);
          int listed = 0;
          for (const json& job : (*list)["jobs"]) listed += job["id"] == shared ? 1 : 0;
          EXPECT_EQ(listed, 1) << "seed " << seed << ": tenant " << name;
          std::vector<json> views = {*mine, *list};
          for (const Result<json>& view : {engine->PlanJson(who), engine->DashboardJson(who, 48),
                                           engine->HistoryJson(who, 0, 100)}) {
            ASSERT_TRUE(view) << "seed " << seed << ": " << Text(view);
            views.push_back(*view);
          }
          for (const json& view : views) {
            json found;
            ASSERT_TRUE(AllHaveGpus(view, shared, shared_gpus[name], found))
                << "seed " << seed << " state " << k << ": tenant " << name
                << " reads another tenant's " << shared << ": " << found.dump();
          }
        }
        for (const std::string& text : texts) {
          // Ids are the tenant's own as it submitted them: never qualified.
          for (const auto& [other, other_ids] : ids) {
            for (const std::string& id : other_ids) {
              ASSERT_EQ(text.find("/" + id), std::string::npos)
                  << "seed " << seed << ": tenant " << name << " reads a qualified id in "
                  << text.substr(0, 2000);
            }
          }
          ASSERT_EQ(text.find("/" + shared), std::string::npos) << text.substr(0, 2000);
          if (!shared_gpus.count(name)) {
            ASSERT_EQ(text.find(shared), std::string::npos)
                << "seed " << seed << " state " << k << ": tenant " << name
                << " reads the shared id it does not hold in " << text.substr(0, 2000);
          }
          for (const auto& [other, other_ids] : ids) {
            if (other == name) continue;
            for (const std::string& id : other_ids) {
              ASSERT_EQ(text.find(id), std::string::npos)
                  << "seed " << seed << " state " << k << ": tenant " << name << " reads tenant "
                  << other << "'s job " << id << " in " << text.substr(0, 2000);
            }
          }
        }
      }
    }
    engine->Stop();
  }
  std::printf("%d multi-tenant states checked for %zu tenants\n", checked, std::size(kTenants));
}

}  // namespace
}  // namespace ordo::service
