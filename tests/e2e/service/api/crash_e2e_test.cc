// Durability: `kill -9` in the middle of a burst of 1,000 submissions from concurrent clients.
// After a restart every acknowledged job is there, none is there twice, and nothing appeared that
// no client sent.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/service/support/server_process.h"

namespace ordo::testing::e2e {
namespace {

using nlohmann::json;

TEST(ServeCrash, KillNineDuringBurstLosesNoAcknowledgedJob) {
  const std::filesystem::path dir = ArtifactDir("serve-crash-kill9");
  ServerProcess server = ServerProcess::Start(
      TestConfig(8), {"--manual-clock", "--full-every", "0", "--log-level", "warn"}, dir);
  ASSERT_TRUE(server.running());

  constexpr int kTotal = 1000;
  constexpr int kClients = 8;
  // The kill lands after a random share of the burst has been acknowledged (seeded: reproducible).
  std::mt19937 rng(20240506);
  const int kill_after = std::uniform_int_distribution<int>(250, 650)(rng);

  std::mutex mutex;
  // Ids are per tenant: every id here is qualified, `tenant/id`, as the admin lists them.
  std::vector<std::string> acknowledged;  // ids answered 201
  std::set<std::string> sent_with_id;     // ids the clients chose
  int sent_without_id = 0;                // submissions that let the service choose
  std::atomic<int> next{0};
  std::atomic<int> acks{0};
  std::atomic<bool> killed{false};

  auto client = [&](int c) {
    HttpConnection http = server.Connect();
    const std::string tenant = c % 2 == 0 ? "a" : "b";
    const std::vector<std::pair<std::string, std::string>> headers = {
        {"Authorization", std::string("Bearer ") + (c % 2 == 0 ? kTokenA : kTokenB)}};
    for (int k = next++; k < kTotal; k = next++) {
      // One in four lets the service pick the id: generated ids must survive a crash too.
      json job = {{"kind", "training"},
                  {"priority", 1 + k % 7},
                  {"gpus", 1 << (k % 4)},
                  {"duration_steps", 1 + k % 5}};
      const bool with_id = k % 4 != 0;
      if (with_id) job["id"] = "burst-" + std::to_string(k);
      {
        std::lock_guard lock(mutex);
        if (with_id) {
          sent_with_id.insert(tenant + "/" + job["id"].get<std::string>());
        } else {
          ++sent_without_id;
        }
      }
      auto result = http.Request("POST", "/v1/jobs", headers, job.dump());
      if (!result) {
        if (killed) return;  // the server is gone: this request may or may not have landed
        http = server.Connect();
        continue;
      }
      if (result->status == 201) {
        const std::string id = json::parse(result->body)["id"];
        std::lock_guard lock(mutex);
        acknowledged.push_back(tenant + "/" + id);
        ++acks;
      } else {
        ADD_FAILURE() << "status " << result->status << ": " << result->body;
      }
    }
  };
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) clients.emplace_back(client, c);
  while (acks < kill_after && next < kTotal)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  killed = true;
  server.Kill9();
  for (std::thread& t : clients) t.join();

  const int attempted = std::min(next.load(), kTotal);
  std::cout << "acknowledged " << acknowledged.size() << " of " << attempted
            << " submissions before kill -9 (kill after " << kill_after << ")\n";
  ASSERT_GE(static_cast<int>(acknowledged.size()), kill_after);
  ASSERT_LT(attempted, kTotal) << "the kill came after the burst; it must land in the middle";

  server.Restart();
  ASSERT_TRUE(server.running());
  Response list = server.Get("/v1/jobs?limit=10000", kAdminToken);
  ASSERT_EQ(list.status, 200) << list.body;
  std::map<std::string, int> stored;
  int generated = 0;
  for (const json& job : list.json()["jobs"]) {
    const std::string id = job["id"];
    ++stored[id];
    if (!sent_with_id.count(id)) ++generated;
  }
  // Every acknowledged job is there...
  for (const std::string& id : acknowledged) {
    EXPECT_EQ(stored.count(id), 1u) << "acknowledged job " << id << " is missing";
  }
  // ...none twice...
  for (const auto& [id, n] : stored) EXPECT_EQ(n, 1) << id << " is stored " << n << " times";
  // ...and nothing no client sent (a job in flight at the kill may or may not be there).
  for (const auto& [id, n] : stored) {
    EXPECT_TRUE(sent_with_id.count(id) || id.rfind("a/job-", 0) == 0 || id.rfind("b/job-", 0) == 0)
        << "unexpected job " << id;
  }
  EXPECT_LE(generated, sent_without_id);
  EXPECT_LE(static_cast<int>(stored.size()), attempted);

  // A retry of an acknowledged submission is refused, not stored twice; the service goes on
  // numbering generated ids after the ones it gave before the crash.
  Response retry = server.Post("/v1/jobs", kTokenA,
                               json{{"id", "burst-1"},
                                    {"kind", "training"},
                                    {"priority", 1},
                                    {"gpus", 1},
                                    {"duration_steps", 1}}
                                   .dump());
  if (stored.count("a/burst-1")) {
    EXPECT_EQ(retry.status, 409) << retry.body;
  }
  Response fresh = server.Post(
      "/v1/jobs", kTokenA,
      json{{"kind", "training"}, {"priority", 1}, {"gpus", 1}, {"duration_steps", 1}}.dump());
  ASSERT_EQ(fresh.status, 201) << fresh.body;
  EXPECT_EQ(stored.count("a/" + fresh.json()["id"].get<std::string>()), 0u)
      << "a generated id was reused";
}

}  // namespace
}  // namespace ordo::testing::e2e
