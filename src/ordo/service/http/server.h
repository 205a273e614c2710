// The HTTP/1.1 transport of `ordo serve` (Boost.Beast over Boost.Asio): accepts connections, reads
// requests with event-driven I/O on one thread, and hands only complete requests to a pool of
// handler threads. Routing, authentication and JSON live in api.h; this file knows none of them.
//
// Why not cpp-httplib (Debian's 0.11): it serves each connection on a pool thread with blocking
// reads and a timeout per read, so a client that trickles bytes holds a handler thread for as long
// as it likes (16 such clients stopped the service); it reads a chunked body whole with no size
// limit before any handler runs, and it has no hook between the head and the body.
//
// What a client can make the server hold, and for how long:
// - a connection costs a socket and a small buffer, never a thread, until its request is complete;
// - a request's head and body must arrive within `request_timeout_s` of the server starting to
//   wait for it (after the accept, or after the previous response): a deadline for the whole
//   request, not per byte. An idle keep-alive connection is closed by the same deadline;
// - the head is at most `max_header_bytes`, the body at most `max_body_bytes` in every transfer
//   encoding, checked while reading (a declared Content-Length over the limit is refused before
//   any of the body is read);
// - `on_head` sees the head before the body is read and may answer at once (the routes refuse a
//   missing token there), after which a connection with an unread body is closed;
// - at most `max_connections` connections, `max_connections_per_client` from one address; beyond
//   them a new connection gets a 503 and is closed at once;
// - malformed framing (a bad, duplicate or listed Content-Length, Transfer-Encoding other than
//   chunked or together with Content-Length, a bad chunk) is answered 400 and the connection
//   closed, as is every request the parser rejects.
//
// Thread-safety: Stop() and WaitIdle() may be called from any thread; the rest from the thread
// that owns the server.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ordo/core/error.h"
#include "ordo/service/http/message.h"
#include "ordo/service/log.h"

namespace ordo::service::http {

struct ServerLimits {
  size_t max_body_bytes = size_t{1} << 20;
  size_t max_header_bytes = size_t{16} * 1024;
  double request_timeout_s = 10;
  double write_timeout_s = 30;  // a client that does not read its response is closed after this
  int max_connections = 1024;
  int max_connections_per_client = 128;
  int threads = 16;  // request handlers; many in flight let the engine's group commit batch them
};

struct Handlers {
  /// Called on the I/O thread once a request's head has arrived, before its body is read (the
  /// request's body is empty). Returns a response to answer at once, or nullopt to read the body
  /// and call `handle`. Must be quick: it holds up every connection.
  std::function<std::optional<Response>(const Request& head)> on_head;
  /// Called on a handler thread with the complete request.
  std::function<Response(const Request& request)> handle;
  /// The response for a request the transport refuses (malformed framing 400, body too large 413,
  /// head too large 431, too many connections 503, a handler that threw 500). Any thread.
  std::function<Response(int status, std::string_view field, std::string_view message)> refuse;
};

class Server {
 public:
  /// Starts the handler threads. `log` must outlive the server.
  Server(ServerLimits limits, Handlers handlers, Logger* log);
  /// Stops, and waits for the handlers still running (WaitIdle first to bound that).
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds and listens; returns the port (`port` 0: any free one). Errors name `--listen`.
  [[nodiscard]] Result<int> Bind(const std::string& host, int port);
  /// Serves until Stop(). Call after Bind, on one thread.
  void Run();
  /// Stops accepting, closes every connection without waiting for slow clients, drops requests
  /// not yet started and makes Run return. Safe from any thread, any number of times.
  void Stop();
  /// Waits until no handler is running, at most `timeout_s`; true when none is.
  bool WaitIdle(double timeout_s);

  struct Impl;  // server.cc's, shared with its connections

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ordo::service::http
