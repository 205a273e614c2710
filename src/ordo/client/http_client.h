// One blocking HTTP/1.1 exchange with `ordo serve`: the transport of the `ordo submit | queue |
// cancel | show | plan | advance` commands. Boost.Beast over Boost.Asio, included only by
// http_client.cc.
//
//   Result<ServerAddress> server = ParseServerAddress("http://127.0.0.1:8080");
//   Result<HttpReply> reply = HttpExchange(*server, {"GET", "/v1/jobs", token, ""});
//   // reply->status == 200; a refused connection is an Error with code kIo.
#pragma once

#include <string>

#include "ordo/core/error.h"

namespace ordo::client {

/// Where the service listens: `http://HOST:PORT[/PREFIX]`. A prefix (a reverse proxy's path) is
/// put before every route.
struct ServerAddress {
  std::string host;
  std::string port;
  std::string prefix;  // "" or "/ordo" (no trailing slash)

  /// "http://HOST:PORT/PREFIX", as given back in messages.
  [[nodiscard]] std::string Url() const;
};

/// Reads `http://HOST[:PORT][/PREFIX]` or `HOST:PORT` (port 80 when an http URL has none). Errors
/// (field `field`): https (ordo serve speaks plain HTTP; put TLS in a proxy in front), another
/// scheme, an empty host, a port that is not 1..65535.
[[nodiscard]] Result<ServerAddress> ParseServerAddress(const std::string& text,
                                                       const std::string& field = "--server");

struct HttpRequest {
  std::string method;  // GET, POST, DELETE, PUT
  std::string target;  // "/v1/jobs?state=pending", without the prefix
  std::string token;   // sent as `Authorization: Bearer TOKEN` when not empty
  std::string body;    // JSON; sent with Content-Type: application/json when not empty
};

struct HttpReply {
  int status = 0;
  std::string body;
};

/// Sends `request` and reads the whole answer. Every answer the server gives, 4xx and 5xx
/// included, is a reply; an Error (code kIo, field empty, a one-line message naming the server)
/// means no answer: the name does not resolve, the connection is refused or reset, or the
/// exchange takes longer than `timeout_s` in all.
[[nodiscard]] Result<HttpReply> HttpExchange(const ServerAddress& server,
                                             const HttpRequest& request, double timeout_s = 30);

}  // namespace ordo::client
