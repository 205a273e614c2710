// The HTTP API of `ordo serve` over an Engine (cpp-httplib): routes, bearer authentication, JSON in
// and out, request size limits, errors as `{"error": {"field", "message"}}`, access logs and the
// dashboard's static files. docs/openapi.yaml describes the routes.
//
// Authentication: every route needs `Authorization: Bearer TOKEN` (401 without or with a wrong
// one) except the dashboard's static shell (`/`, `/assets/...`), which holds no data: the page
// reads the token from its URL fragment (`/#token=...`, never sent to the server) and calls the API
// with it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "ordo/core/error.h"
#include "ordo/service/engine.h"
#include "ordo/service/log.h"

namespace httplib {
class Server;
}

namespace ordo::service {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (Bind returns it)
  size_t max_body_bytes = size_t{1} << 20;
  int threads = 16;  // request handlers; many in flight let group commit batch them
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
  /// Stops serving (safe from any thread, e.g. a signal handler thread).
  void Stop();

 private:
  void Routes();

  Engine& engine_;
  Logger& log_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> server_;
};

/// "host:port" -> host and port ("127.0.0.1:0" gives port 0). Errors name `--listen`.
[[nodiscard]] Result<std::pair<std::string, int>> ParseListen(const std::string& text);

}  // namespace ordo::service
