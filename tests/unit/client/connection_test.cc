#include "ordo/client/connection.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace ordo::client {
namespace {

Environment Env(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

class ConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ordo-client-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "ordo");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::filesystem::path dir_;
};

TEST_F(ConnectionTest, FlagBeatsEnvironmentBeatsFile) {
  Write("ordo/client.json", R"({"server": "http://file:1", "token": "file-token"})");
  const std::string xdg = dir_.string();
  auto resolve = [&](ConnectionFlags flags, std::map<std::string, std::string> env) {
    env["XDG_CONFIG_HOME"] = xdg;
    Result<Connection> c = ResolveConnection(flags, Env(env));
    EXPECT_TRUE(c.has_value()) << c.error().ToString();
    return *c;
  };
  Connection c = resolve({}, {});
  EXPECT_EQ(c.server.host, "file");
  EXPECT_EQ(c.token, "file-token");
  EXPECT_EQ(c.token_source, (dir_ / "ordo/client.json").string() + ": token");
  c = resolve({}, {{"ORDO_SERVER", "http://env:2"}, {"ORDO_TOKEN", "env-token"}});
  EXPECT_EQ(c.server.Url(), "http://env:2");
  EXPECT_EQ(c.token, "env-token");
  EXPECT_EQ(c.server_source, "ORDO_SERVER");
  c = resolve({"http://flag:3", "flag-token"},
              {{"ORDO_SERVER", "http://env:2"}, {"ORDO_TOKEN", "e"}});
  EXPECT_EQ(c.server.port, "3");
  EXPECT_EQ(c.token, "flag-token");
  // Each is resolved on its own: a server from the environment, the token from the file.
  c = resolve({}, {{"ORDO_SERVER", "http://env:2"}});
  EXPECT_EQ(c.server.host, "env");
  EXPECT_EQ(c.token, "file-token");
}

TEST_F(ConnectionTest, HomeDefaultAndOrdoConfig) {
  std::filesystem::create_directories(dir_ / ".config" / "ordo");
  Write(".config/ordo/client.json", R"({"server": "http://home:4", "token": "t"})");
  Result<Connection> c = ResolveConnection({}, Env({{"HOME", dir_.string()}}));
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->server.host, "home");
  const std::string other = Write("other.json", R"({"server": "127.0.0.1:5", "token": "u"})");
  c = ResolveConnection({}, Env({{"HOME", dir_.string()}, {"ORDO_CONFIG", other}}));
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->server.Url(), "http://127.0.0.1:5");
}

TEST_F(ConnectionTest, ErrorsNameWhereTheValueCameFrom) {
  const std::string empty = dir_.string() + "/none";
  Result<Connection> c = ResolveConnection({}, Env({{"XDG_CONFIG_HOME", empty}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().field, "--server");
  c = ResolveConnection({"http://a:1", std::nullopt}, Env({{"XDG_CONFIG_HOME", empty}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().field, "--token");
  c = ResolveConnection({}, Env({{"ORDO_SERVER", "https://a:1"}, {"ORDO_TOKEN", "t"}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().field, "ORDO_SERVER");
  EXPECT_NE(c.error().message.find("https"), std::string::npos);

  const std::string missing = dir_.string() + "/missing.json";
  c = ResolveConnection({}, Env({{"ORDO_CONFIG", missing}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().field, missing);
  const std::string typo = Write("typo.json", R"({"server": "http://a:1", "tokn": "t"})");
  c = ResolveConnection({}, Env({{"ORDO_CONFIG", typo}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().field, typo + ": tokn");
  const std::string number = Write("number.json", R"({"server": 8080})");
  c = ResolveConnection({}, Env({{"ORDO_CONFIG", number}}));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().field, number + ": server");
  // A broken file is not read when the flags and variables leave nothing to find in it.
  c = ResolveConnection({"http://a:1", "t"}, Env({{"ORDO_CONFIG", typo}}));
  EXPECT_TRUE(c.has_value());
}

TEST(ServerAddressTest, ParsesAndRefuses) {
  Result<ServerAddress> a = ParseServerAddress("http://example.org:8080/ordo/");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->host, "example.org");
  EXPECT_EQ(a->port, "8080");
  EXPECT_EQ(a->prefix, "/ordo");
  a = ParseServerAddress("http://example.org");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->port, "80");
  a = ParseServerAddress("localhost:9");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->Url(), "http://localhost:9");
  for (const char* bad : {"https://a:1", "ftp://a:1", "http://:1", "a", "http://a:0",
                          "http://a:65536", "http://a:x1", ""}) {
    EXPECT_FALSE(ParseServerAddress(bad).has_value()) << bad;
    EXPECT_EQ(ParseServerAddress(bad, "ORDO_SERVER").error().field, "ORDO_SERVER");
  }
}

}  // namespace
}  // namespace ordo::client
