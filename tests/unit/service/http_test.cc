// The HTTP layer's pure parts: targets and bearer credentials as the routes see them, and the one
// mapping from error codes to statuses.
#include <gtest/gtest.h>

#include <set>

#include "ordo/service/api.h"
#include "ordo/service/http/message.h"

namespace ordo::service {
namespace {

TEST(HttpMessage, SplitTargetDecodesPathAndQuery) {
  struct Case {
    const char* target;
    const char* path;
    std::vector<std::pair<std::string, std::string>> query;
  };
  const std::vector<Case> cases = {
      {"/v1/jobs", "/v1/jobs", {}},
      {"/v1/jobs?state=pending&limit=5", "/v1/jobs", {{"state", "pending"}, {"limit", "5"}}},
      {"/v1/jobs/bad%20id", "/v1/jobs/bad id", {}},
      {"/v1/services/a%21b", "/v1/services/a!b", {}},
      {"/a+b?x=a+b%2B&&flag", "/a+b", {{"x", "a b+"}, {"flag", ""}}},
      {"/v1/jobs/%zz%4", "/v1/jobs/%zz%4", {}},  // malformed escapes stay as sent
      {"/?", "/", {}},
  };
  for (const Case& c : cases) {
    std::string path;
    std::vector<std::pair<std::string, std::string>> query;
    http::SplitTarget(c.target, path, query);
    EXPECT_EQ(path, c.path) << c.target;
    EXPECT_EQ(query, c.query) << c.target;
  }
}

TEST(HttpMessage, BearerSchemeIsCaseInsensitive) {
  EXPECT_EQ(http::BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(http::BearerToken("bearer abc"), "abc");
  EXPECT_EQ(http::BearerToken("BEARER  abc"), "abc");
  EXPECT_EQ(http::BearerToken("Basic abc"), "");
  EXPECT_EQ(http::BearerToken("Bearerabc"), "");
  EXPECT_EQ(http::BearerToken("Bearer "), "");
  EXPECT_EQ(http::BearerToken(""), "");
}

TEST(HttpMessage, HeadersMatchInAnyCase) {
  http::Request request;
  request.headers = {{"authorization", "Bearer x"}, {"X-Two", "1"}, {"x-two", "2"}};
  EXPECT_EQ(request.Header("Authorization"), "Bearer x");
  EXPECT_EQ(request.Header("X-TWO"), "1");
  EXPECT_TRUE(request.HasHeader("x-two"));
  EXPECT_FALSE(request.HasHeader("Content-Length"));
  EXPECT_EQ(request.Header("Content-Length"), "");
}

// The one mapping from error codes to statuses, pinned: every code (a code missing from the switch
// is a -Wswitch warning; one missing here fails the count below), each to the status the contract
// (docs/openapi.yaml) gives it.
TEST(HttpStatus, EveryErrorCodeMaps) {
  const std::vector<std::pair<ErrorCode, int>> table = {
      {ErrorCode::kInvalidInput, 400},    {ErrorCode::kIo, 500},
      {ErrorCode::kNotFound, 404},        {ErrorCode::kInfeasible, 400},
      {ErrorCode::kInternal, 500},        {ErrorCode::kUnavailable, 503},
      {ErrorCode::kConflict, 409},        {ErrorCode::kPermissionDenied, 403},
      {ErrorCode::kUnauthenticated, 401}, {ErrorCode::kResourceExhausted, 429},
  };
  for (const auto& [code, status] : table) {
    EXPECT_EQ(HttpStatus(code), status) << static_cast<int>(code);
  }
  // The codes are 1..kResourceExhausted with no gaps, and the table lists each once.
  EXPECT_EQ(table.size(), static_cast<size_t>(ErrorCode::kResourceExhausted));
  std::set<ErrorCode> listed;
  for (const auto& entry : table) listed.insert(entry.first);
  EXPECT_EQ(listed.size(), table.size());
}

}  // namespace
}  // namespace ordo::service
