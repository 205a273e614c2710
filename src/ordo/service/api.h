// The HTTP API of `ordo serve` over an Engine: routes, bearer authentication, JSON in and out,
// errors as `{"error": {"field", "message"}}` with the one mapping from error codes to statuses,
// access logs and the dashboard's static files. The transport (connections, framing, limits,
// deadlines) is http/server.h. docs/openapi.yaml describes the routes.
//
// Authentication: every route needs `Authorization: Bearer TOKEN` (401 without or with a wrong
// one; the scheme's name in any case) except the dashboard's static shell (`/`, `/assets/...`),
// which holds no data: the page reads the token from its URL fragment (`/#token=...`, never sent
// to the server) and calls the API with it, and `/healthz` and `/readyz`, which answer a status
// word only. The token is checked from the request's head, before its body is read.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/service/engine.h"
#include "ordo/service/http/message.h"
#include "ordo/service/http/server.h"
#include "ordo/service/log.h"

namespace ordo::service {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (Bind returns it)
  /// Transport limits (http/server.h); `ordo serve` flags set each one.
  http::ServerLimits limits;
};

class HttpServer {
 public:
  HttpServer(Engine& engine, Logger& log, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds the listening socket; returns the port.
  [[nodiscard]] Result<int> Bind();
  /// Serves until Stop(). Call after Bind.
  void Run();
  /// Stops serving: closes the listener and every connection (safe from any thread).
  void Stop();
  /// Waits up to `timeout_s` for request handlers still running; true when none is.
  bool WaitIdle(double timeout_s);

  // The routes without the transport (the server calls these; unit tests may too).
  /// The answer decided from the head alone: public routes, no such route, a missing or wrong
  /// token. nullopt: read the body and call Handle.
  std::optional<http::Response> OnHead(const http::Request& head);
  http::Response Handle(const http::Request& request);
  /// The answer to a request the transport refuses.
  http::Response Refuse(int status, std::string_view field, std::string_view message);

 private:
  struct Route;
  struct Match;
  /// The route for a method and a decoded path; its `route` is null when none.
  Match Find(const http::Request& request) const;
  void AddRoute(Route route);
  void AddJobRoutes();
  void AddServiceRoutes();
  void AddPlanRoutes();
  std::optional<Principal> Authenticate(const http::Request& request) const;
  void Record(const http::Request& request, const std::string& route, const std::string& who,
              int status, double seconds);

  Engine& engine_;
  Logger& log_;
  HttpOptions options_;
  std::vector<Route> routes_;
  std::unique_ptr<http::Server> server_;
};

/// The HTTP status of an error code: the one mapping from the engine's and the codec's errors to
/// statuses (pinned in tests/unit/service/http_test.cc; every route's error paths in
/// api_errors_test.cc).
int HttpStatus(ErrorCode code);

/// What the routes with a body do before the engine: read the body (codec.h), after asking the
/// engine's Permit when the route, or the body's content, is the admin's. The routes call these
/// with the parsed body; unit tests drive the engine through them as a client would.
namespace api {
Result<nlohmann::json> SubmitJob(Engine& engine, const Principal& who, const nlohmann::json& body);
Result<nlohmann::json> PutService(Engine& engine, const Principal& who, const nlohmann::json& body,
                                  std::optional<std::string_view> path_id, bool create);
Result<nlohmann::json> PostTraffic(Engine& engine, const Principal& who, std::string_view id,
                                   const nlohmann::json& body);
/// `received`: when the request arrived; its time limit counts from there.
Result<nlohmann::json> WhatIf(
    Engine& engine, const Principal& who, const nlohmann::json& body,
    std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now());
Result<nlohmann::json> Advance(Engine& engine, const Principal& who, const nlohmann::json& body);
}  // namespace api

/// "host:port" -> host and port ("127.0.0.1:0" gives port 0). Errors name `--listen`.
[[nodiscard]] Result<std::pair<std::string, int>> ParseListen(const std::string& text);

}  // namespace ordo::service
