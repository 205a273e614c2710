// HTTP requests and responses as plain data, between the transport (server.h) and the routes
// (api.h): neither side sees the other's library types.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ordo::service::http {

/// A request as the transport read it. The path is percent-decoded; query parameters are split
/// and decoded (`+` is a space, as in a form). Header names keep the client's case; look them up
/// with Header(), which ignores case.
struct Request {
  std::string method;  // "GET", "POST", ... as sent (methods are case-sensitive)
  std::string target;  // the raw request target, "/v1/jobs?state=pending"
  std::string path;    // "/v1/jobs"
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string peer;  // the client's address, "127.0.0.1"
  // When the head was read: a route with a time limit (what-if) counts it from here, so reading
  // and parsing a large body come out of the limit the client asked for.
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();

  /// The first header named `name` (any case); empty when absent.
  [[nodiscard]] std::string_view Header(std::string_view name) const;
  [[nodiscard]] bool HasHeader(std::string_view name) const;
  /// The first query parameter named `name` (exact case), or nullptr when absent.
  [[nodiscard]] const std::string* Param(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond type and length
};

/// True when `a` and `b` are equal ignoring ASCII case.
[[nodiscard]] bool EqualsIgnoreCase(std::string_view a, std::string_view b);

/// Decodes %XX escapes (and `+` as a space when `plus_is_space`). Malformed escapes stay as they
/// are: the result is then an id no route accepts, which the routes report.
[[nodiscard]] std::string PercentDecode(std::string_view text, bool plus_is_space);

/// Splits a target into its decoded path and query parameters.
void SplitTarget(std::string_view target, std::string& path,
                 std::vector<std::pair<std::string, std::string>>& query);

/// The token of an `Authorization: Bearer TOKEN` value; the scheme's name is case-insensitive
/// (RFC 9110 11.1), the token is taken as is. Empty when the value is not a bearer credential.
[[nodiscard]] std::string_view BearerToken(std::string_view authorization);

}  // namespace ordo::service::http
