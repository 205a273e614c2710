// `ordo serve` under attack on 127.0.0.1, over raw sockets: slow clients trickling bytes, huge
// chunked bodies with and without a token, malformed framing, connection floods, SIGTERM with all
// of that going on; and the small things a real client needs (a lower-case `bearer`, public
// health probes that say nothing, a database only its owner can read). The deadlines asserted
// here are the attacks' criteria, with wide margins for an ASan build on a busy machine.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/service/support/http_client.h"
#include "tests/e2e/service/support/server_process.h"

namespace ordo::testing::e2e {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using Headers = std::vector<std::pair<std::string, std::string>>;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The resident set of a process in kB (VmRSS in /proc/PID/status); -1 when unreadable.
long RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

const Headers kAdmin = {{"Authorization", std::string("Bearer ") + kAdminToken}};

class AttackTest : public ::testing::Test {
 protected:
  void StartServer(std::vector<std::string> args = {}) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = ArtifactDir(std::string("attack-") + info->name());
    args.insert(args.end(), {"--manual-clock", "--full-every", "0"});
    server_ = ServerProcess::Start(TestConfig(), args, dir_);
    ASSERT_TRUE(server_.running());
  }

  void TearDown() override {
    if (HasFailure() && server_.running()) {
      std::cerr << "server log:\n" << server_.Log().substr(0, 20000) << "\n";
    }
  }

  // Opens `n` connections that each send the start of a request head and then nothing.
  std::vector<HttpConnection> SlowClients(int n) {
    std::vector<HttpConnection> clients;
    for (int k = 0; k < n; ++k) {
      clients.push_back(server_.Connect(5));
      EXPECT_TRUE(clients.back().connected()) << "slow client " << k;
      EXPECT_TRUE(clients.back().Send("G")) << "slow client " << k;
    }
    return clients;
  }

  std::filesystem::path dir_;
  ServerProcess server_;
};

// 64 clients trickle a request head one byte a second (no token: they never get far enough to
// need one). Reading is event-driven, so they hold no handler thread, and the per-client cap
// (128 by default) is above them: a real client on the same address is answered within 1 s
// throughout.
TEST_F(AttackTest, SlowClientsDoNotDelayOthers) {
  // A deadline longer than the test, so that the slow clients stay connected throughout.
  StartServer({"--request-timeout", "60"});
  std::vector<HttpConnection> slow = SlowClients(64);
  const std::string head = "ET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a";
  std::atomic<bool> done{false};
  std::thread trickler([&] {
    for (size_t i = 0; !done; ++i) {
      for (HttpConnection& c : slow) c.Send(std::string(1, head[std::min(i, head.size() - 1)]));
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  });
  const auto start = Clock::now();
  int answered = 0;
  while (SecondsSince(start) < 6) {
    const auto t0 = Clock::now();
    Response health = server_.Get("/v1/health", kAdminToken);
    EXPECT_EQ(health.status, 200);
    EXPECT_LT(SecondsSince(t0), 1.0) << "GET /v1/health under 64 slow clients";
    const auto t1 = Clock::now();
    Response job = server_.Post(
        "/v1/jobs", kTokenA,
        json{{"kind", "training"}, {"priority", 1}, {"gpus", 1}, {"duration_steps", 1}}.dump());
    EXPECT_EQ(job.status, 201) << job.body;
    EXPECT_LT(SecondsSince(t1), 1.0) << "POST /v1/jobs under 64 slow clients";
    answered += 2;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  done = true;
  trickler.join();
  EXPECT_GT(answered, 10);
  // The slow clients were really there all along: still connected, none refused.
  int open = 0;
  for (HttpConnection& c : slow) open += c.WaitClosed(0.01) ? 0 : 1;
  EXPECT_EQ(open, 64);
}

// The deadline is for the whole head, not per byte: a client sending a byte every half second
// is closed once --request-timeout has passed.
TEST_F(AttackTest, TricklingHeadIsClosedAtTheDeadline) {
  StartServer({"--request-timeout", "2"});
  HttpConnection slow = server_.Connect(5);
  ASSERT_TRUE(slow.connected());
  const std::string head = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a";
  const auto start = Clock::now();
  bool closed = false;
  for (size_t i = 0; SecondsSince(start) < 12 && !closed; ++i) {
    // A send that fails means the server has closed the connection too.
    closed = !slow.Send(std::string(1, head[std::min(i, head.size() - 1)])) || slow.WaitClosed(0.5);
  }
  const double took = SecondsSince(start);
  EXPECT_TRUE(closed) << "still open after " << took << " s";
  EXPECT_GE(took, 1.5);
  EXPECT_LT(took, 8.0);
}

// 100 MB chunked without a token: 401 from the head alone, the connection closed, and the
// server neither reads nor keeps the body.
TEST_F(AttackTest, HugeChunkedBodyWithoutTokenIsRefusedUnread) {
  StartServer();
  ASSERT_EQ(server_.Get("/v1/health", kAdminToken).status, 200);
  const long before_kb = RssKb(server_.pid());
  ASSERT_GT(before_kb, 0);
  HttpConnection c = server_.Connect(10);
  ASSERT_TRUE(
      c.Send("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
             "application/json\r\nTransfer-Encoding: chunked\r\n\r\n"));
  std::optional<RawResponse> answer = c.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 401);
  EXPECT_EQ(answer->Header("connection"), "close");
  const std::string chunk = "100000\r\n" + std::string(1 << 20, 'x') + "\r\n";
  size_t sent = 0;
  while (sent < 100u << 20 && c.Send(chunk)) sent += 1 << 20;
  EXPECT_LT(sent, 100u << 20) << "the server took the whole body";
  const long after_kb = RssKb(server_.pid());
  EXPECT_LT(after_kb - before_kb, 32 * 1024) << "RSS " << before_kb << " -> " << after_kb << " kB";
  EXPECT_EQ(server_.Get("/v1/health", kAdminToken).status, 200);
}

// With a token, a chunked body is held to --max-body-bytes as it arrives: 413, and closed.
TEST_F(AttackTest, ChunkedBodyOverTheLimitIs413) {
  StartServer({"--max-body-bytes", "65536"});
  const long before_kb = RssKb(server_.pid());
  HttpConnection c = server_.Connect(10);
  ASSERT_TRUE(c.Send(std::string("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                                 "Bearer ") +
                     kTokenA + "\r\nTransfer-Encoding: chunked\r\n\r\n"));
  std::atomic<size_t> sent{0};
  std::thread sender([&] {
    const std::string chunk = "4000\r\n" + std::string(0x4000, ' ') + "\r\n";
    while (sent < 64u << 20 && c.Send(chunk)) sent += 0x4000;
  });
  std::optional<RawResponse> answer = c.ReadResponse();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 413) << answer->body;
  EXPECT_NE(answer->body.find("65536"), std::string::npos) << answer->body;
  sender.join();
  EXPECT_LT(sent, 64u << 20);
  EXPECT_LT(RssKb(server_.pid()) - before_kb, 32 * 1024);
  // Within the limit, chunked is fine.
  HttpConnection ok = server_.Connect(10);
  const std::string job =
      json{{"kind", "training"}, {"priority", 1}, {"gpus", 1}, {"duration_steps", 1}}.dump();
  char size[16];
  std::snprintf(size, sizeof size, "%zx", job.size());
  ASSERT_TRUE(ok.Send(std::string("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                                  "Bearer ") +
                      kTokenA + "\r\nTransfer-Encoding: chunked\r\n\r\n" + size + "\r\n" + job +
                      "\r\n0\r\n\r\n"));
  std::optional<RawResponse> created = ok.ReadResponse();
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 201) << created->body;
}

// Framing a proxy and this server could read differently (request smuggling), or that cannot be
// read at all: 400 naming the header, then the connection is closed.
TEST_F(AttackTest, MalformedFramingIs400AndClosed) {
  StartServer();
  const std::string start = std::string("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n") +
                            "Authorization: Bearer " + kTokenA + "\r\n";
  struct Case {
    const char* name;
    std::string text;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"negative length", start + "Content-Length: -1\r\n\r\n{}", "Content-Length"},
      {"non-numeric length", start + "Content-Length: ten\r\n\r\n{}", "Content-Length"},
      {"absurd length", start + "Content-Length: 99999999999999999999999\r\n\r\n{}",
       "Content-Length"},
      {"duplicate equal lengths", start + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
       "Content-Length"},
      {"duplicate different lengths", start + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} ",
       "Content-Length"},
      {"listed lengths", start + "Content-Length: 2, 2\r\n\r\n{}", "Content-Length"},
      {"chunked then length",
       start + "Transfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n2\r\n{}\r\n0\r\n\r\n", ""},
      {"length then chunked",
       start + "Content-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", ""},
      {"other coding", start + "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
       "Transfer-Encoding"},
      {"bad chunk size", start + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
       "Transfer-Encoding"},
      {"overflowing chunk size",
       start + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffffffff\r\n{}\r\n0\r\n\r\n",
       "Transfer-Encoding"},
  };
  for (const Case& c : cases) {
    HttpConnection connection = server_.Connect(10);
    ASSERT_TRUE(connection.Send(c.text)) << c.name;
    std::optional<RawResponse> answer = connection.ReadResponse();
    ASSERT_TRUE(answer) << c.name << ": no answer";
    EXPECT_EQ(answer->status, 400) << c.name << ": " << answer->body;
    const json error = json::parse(answer->body, nullptr, false);
    if (*c.field != '\0') {
      EXPECT_EQ(error["error"]["field"], c.field) << c.name;
    }
    EXPECT_FALSE(error["error"]["message"].get<std::string>().empty()) << c.name;
    EXPECT_TRUE(connection.WaitClosed(5)) << c.name << ": the connection stayed open";
  }
  // Nothing was stored by any of them.
  EXPECT_EQ(server_.Get("/v1/jobs", kAdminToken).json()["jobs"].size(), 0u);
}

// RFC 9110: the scheme name is case-insensitive.
TEST_F(AttackTest, BearerInAnyCaseIsAccepted) {
  StartServer();
  for (const char* scheme : {"bearer", "BEARER", "Bearer", "bEaReR"}) {
    HttpConnection c = server_.Connect(10);
    auto answer =
        c.Request("GET", "/v1/jobs", {{"Authorization", std::string(scheme) + " " + kTokenA}}, "");
    ASSERT_TRUE(answer) << scheme;
    EXPECT_EQ(answer->status, 200) << scheme << ": " << answer->body;
  }
  HttpConnection c = server_.Connect(10);
  auto basic =
      c.Request("GET", "/v1/jobs", {{"Authorization", std::string("Basic ") + kTokenA}}, "");
  ASSERT_TRUE(basic);
  EXPECT_EQ(basic->status, 401);
}

// The probes need no token and say nothing but a status word.
TEST_F(AttackTest, HealthProbesArePublicAndSayNothing) {
  StartServer();
  Response job = server_.Post("/v1/jobs", kTokenB,
                              json{{"id", "secret-x"},
                                   {"kind", "training"},
                                   {"priority", 9},
                                   {"gpus", 8},
                                   {"duration_steps", 2}}
                                  .dump());
  ASSERT_EQ(job.status, 201) << job.body;
  Response healthz = server_.Get("/healthz", nullptr);
  EXPECT_EQ(healthz.status, 200);
  EXPECT_EQ(healthz.json(), json({{"status", "ok"}})) << healthz.body;
  Response readyz = server_.Get("/readyz", nullptr);
  EXPECT_EQ(readyz.status, 200);
  EXPECT_EQ(readyz.json(), json({{"status", "ready"}})) << readyz.body;
  for (const Response* r : {&healthz, &readyz}) {
    for (const char* secret : {"secret-x", "\"b\"", kTokenB, kAdminToken, "h100", "step"}) {
      EXPECT_EQ(r->body.find(secret), std::string::npos) << r->body << " contains " << secret;
    }
  }
  // The rest of the API still needs a token.
  EXPECT_EQ(server_.Get("/v1/health", nullptr).status, 401);
}

// The database and its WAL and shared-memory files are the owner's alone.
TEST_F(AttackTest, DatabaseFilesAreOwnerOnly) {
  StartServer();
  Response job = server_.Post(
      "/v1/jobs", kTokenA,
      json{{"kind", "training"}, {"priority", 1}, {"gpus", 1}, {"duration_steps", 1}}.dump());
  ASSERT_EQ(job.status, 201);
  for (const char* name : {"ordo.db", "ordo.db-wal", "ordo.db-shm"}) {
    struct stat st {};
    ASSERT_EQ(stat((dir_ / name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name << " has mode " << std::oct << (st.st_mode & 0777);
  }
}

// Beyond --max-connections-per-client, a new connection is refused at once (503, closed); the
// others are served, and a slot freed is usable again.
TEST_F(AttackTest, ConnectionsBeyondTheCapAreRefused) {
  StartServer({"--max-connections-per-client", "4"});
  std::vector<HttpConnection> held = SlowClients(4);
  HttpConnection extra = server_.Connect(10);
  ASSERT_TRUE(extra.connected());
  const auto t0 = Clock::now();
  std::optional<RawResponse> refused = extra.ReadResponse();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_TRUE(extra.WaitClosed(5));
  EXPECT_LT(SecondsSince(t0), 5.0);
  held.pop_back();  // closes one
  // The server notices the close on its own schedule: retry briefly.
  int status = 0;
  for (int attempt = 0; attempt < 50 && status != 200; ++attempt) {
    status = server_.Get("/v1/health", kAdminToken).status;
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 200);
}

// SIGTERM ends the process within seconds although slow clients are connected and a request is
// being handled.
TEST_F(AttackTest, SigtermEndsPromptlyWithSlowClients) {
  StartServer();
  std::vector<HttpConnection> slow = SlowClients(64);
  // A keep-alive client between requests, too.
  HttpConnection idle = server_.Connect(10);
  ASSERT_TRUE(idle.Request("GET", "/v1/health", kAdmin, ""));
  const auto t0 = Clock::now();
  EXPECT_EQ(server_.Terminate(), 0);
  EXPECT_LT(SecondsSince(t0), 5.0);
  for (HttpConnection& c : slow) EXPECT_TRUE(c.WaitClosed(1));
}

}  // namespace
}  // namespace ordo::testing::e2e
