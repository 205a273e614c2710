#include "ordo/service/http/server.h"

// Beast's string_view as std::string_view, so header values pass to message.h as they are.
#define BOOST_BEAST_USE_STD_STRING_VIEW 1

#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ordo::service::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Room for a whole head (the parser's header limit is below it) and the chunk headers of a body;
// the body itself is moved out of this buffer as it is parsed.
constexpr size_t kBufferBytes = size_t{64} * 1024;
// After an answer that leaves a body unread, the rest is drained (and discarded) briefly before the
// socket is closed, so that the client reads the answer rather than a reset.
constexpr size_t kLingerBytes = size_t{256} * 1024;
constexpr auto kLingerTime = std::chrono::seconds(1);

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

class Connection;

struct Server::Impl {
  Impl(ServerLimits l, Handlers h, Logger* lg) : limits(l), handlers(std::move(h)), log(lg) {}

  void Accept();
  void Admit(tcp::socket socket);
  void Release(Connection* connection, const std::string& peer);
  void CloseAll();
  /// Queues `task` for a handler thread; dropped when stopping.
  void Submit(std::function<void()> task);
  void Work();

  ServerLimits limits;
  Handlers handlers;
  Logger* log;

  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  asio::steady_timer accept_retry{ioc};
  std::atomic<bool> stopping{false};

  // I/O thread only.
  // Keyed by address; weak, so that a connection dropped unclosed while stopping leaves no
  // dangling owner behind.
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections;
  std::unordered_map<std::string, int> per_client;

  // The handler pool.
  std::mutex pool_mutex;
  std::condition_variable pool_cv;
  std::condition_variable idle_cv;
  std::deque<std::function<void()>> tasks;
  int busy = 0;
  bool pool_stop = false;
  std::vector<std::thread> workers;
};

// One client connection: read a head, maybe the body, hand the request to the pool, write the
// answer, again. Every step runs on the I/O thread; the connection is owned by the operation in
// flight (shared_from_this), so it ends when its last operation does.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server::Impl& server, tcp::socket socket, std::string peer)
      : server_(server),
        stream_(std::move(socket)),
        buffer_(kBufferBytes),
        peer_(std::move(peer)) {}

  void Start() { ReadHead(); }

  void Close() {
    if (closed_) return;
    closed_ = true;
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
    server_.Release(this, peer_);
  }

 private:
  void ReadHead() {
    if (server_.stopping) return Close();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(server_.limits.max_header_bytes));
    parser_->body_limit(server_.limits.max_body_bytes);
    request_ = Request{};
    // One deadline for the whole request: set here, not renewed by the bytes that arrive.
    stream_.expires_after(Seconds(server_.limits.request_timeout_s));
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, size_t) { self->OnHead(ec); });
  }

  void OnHead(error_code ec) {
    if (ec) return Failed(ec);
    const auto& head = parser_->get();
    // Beast accepts a repeated or listed Content-Length when the values agree; a proxy in front
    // may not read it the same way (request smuggling), so neither is accepted.
    const size_t lengths = head.count(bhttp::field::content_length);
    if (lengths > 1 ||
        (lengths == 1 && head[bhttp::field::content_length].find(',') != std::string_view::npos)) {
      return Refuse(400, "Content-Length", "must be given once, as one decimal number of bytes");
    }
    if (head.count(bhttp::field::transfer_encoding) > 0) {
      if (lengths > 0) {
        return Refuse(400, "Transfer-Encoding", "must not be sent together with Content-Length");
      }
      if (head.count(bhttp::field::transfer_encoding) > 1 ||
          !EqualsIgnoreCase(Trim(head[bhttp::field::transfer_encoding]), "chunked")) {
        return Refuse(400, "Transfer-Encoding", "only \"chunked\" is accepted");
      }
    }
    request_.method = std::string(head.method_string());
    request_.target = std::string(head.target());
    SplitTarget(request_.target, request_.path, request_.query);
    for (const auto& field : head) {
      request_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request_.peer = peer_;
    request_.received = std::chrono::steady_clock::now();
    keep_alive_ = head.keep_alive();
    if (std::optional<Response> early = server_.handlers.on_head(request_)) {
      return Respond(std::move(*early), /*close=*/!parser_->is_done());
    }
    if (parser_->is_done()) return Dispatch();
    if (EqualsIgnoreCase(Trim(head[bhttp::field::expect]), "100-continue")) {
      auto interim = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
      asio::async_write(stream_, asio::buffer(*interim),
                        [self = shared_from_this(), interim](error_code write_ec, size_t) {
                          if (write_ec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](error_code ec, size_t) { self->OnBody(ec); });
  }

  void OnBody(error_code ec) {
    if (ec) return Failed(ec);
    request_.body = std::move(parser_->get().body());
    Dispatch();
  }

  // The request is complete: a handler thread answers it; the answer is written from here.
  void Dispatch() {
    stream_.expires_never();
    server_.Submit([self = shared_from_this()] {
      Response response;
      try {
        response = self->server_.handlers.handle(self->request_);
      } catch (const std::exception& ex) {
        response =
            self->server_.handlers.refuse(500, "", std::string("internal error: ") + ex.what());
      }
      asio::post(self->server_.ioc, [self, response = std::move(response)]() mutable {
        self->Respond(std::move(response), /*close=*/false);
      });
    });
  }

  // A request the transport will not read on: its answer, then the connection closes.
  void Refuse(int status, std::string_view field, std::string_view message) {
    Respond(server_.handlers.refuse(status, field, message), /*close=*/true);
  }

  void Failed(error_code ec) {
    if (ec == bhttp::error::body_limit) {
      return Refuse(413, "",
                    "the body exceeds " + std::to_string(server_.limits.max_body_bytes) + " bytes");
    }
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return Refuse(
          431, "",
          "the request head exceeds " + std::to_string(server_.limits.max_header_bytes) + " bytes");
    }
    if (ec == bhttp::error::bad_content_length) {
      return Refuse(400, "Content-Length", "must be given once, as one decimal number of bytes");
    }
    if (ec == bhttp::error::bad_transfer_encoding) {
      return Refuse(400, "Transfer-Encoding", "only \"chunked\", without Content-Length");
    }
    if (ec == bhttp::error::bad_chunk || ec == bhttp::error::bad_chunk_extension) {
      return Refuse(400, "Transfer-Encoding", "a chunk is malformed");
    }
    // Nothing was received, the deadline passed or the client went away: nobody to answer.
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
        ec.category() != bhttp::make_error_code(bhttp::error::end_of_stream).category()) {
      if (ec == beast::error::timeout && server_.log->Enabled(LogLevel::kDebug)) {
        server_.log->Debug("http_timeout", {{"peer", peer_}});
      }
      return Close();
    }
    Refuse(400, "", "malformed request: " + ec.message());
  }

  void Respond(Response response, bool close) {
    if (closed_) return;
    const bool keep = keep_alive_ && !close && !server_.stopping;
    auto message = std::make_shared<bhttp::response<bhttp::string_body>>(
        static_cast<bhttp::status>(response.status), 11);
    message->set(bhttp::field::content_type, response.content_type);
    message->set("X-Content-Type-Options", "nosniff");
    message->set(bhttp::field::cache_control, "no-store");
    for (const auto& [name, value] : response.headers) message->set(name, value);
    message->body() = std::move(response.body);
    message->keep_alive(keep);
    message->prepare_payload();
    stream_.expires_after(Seconds(server_.limits.write_timeout_s));
    const bool unread = parser_ && !parser_->is_done();
    bhttp::async_write(stream_, *message,
                       [self = shared_from_this(), message, keep, unread](error_code ec, size_t) {
                         if (ec) return self->Close();
                         if (keep) return self->ReadHead();
                         if (unread) return self->Linger();
                         self->Close();
                       });
  }

  // Closes the sending side and discards what the client still sends, briefly: closing a socket
  // with unread data resets the connection, and a reset can destroy the answer before the client
  // reads it. Bounded in bytes and time, and nothing is kept.
  void Linger() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(kLingerTime);
    Drain();
  }

  void Drain() {
    stream_.async_read_some(asio::buffer(drain_),
                            [self = shared_from_this()](error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ >= kLingerBytes) return self->Close();
                              self->Drain();
                            });
  }

  Server::Impl& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  Request request_;
  std::string peer_;
  bool keep_alive_ = false;
  bool closed_ = false;
  std::array<char, size_t{16} * 1024> drain_{};
  size_t drained_ = 0;
};

void Server::Impl::Accept() {
  acceptor.async_accept([this](error_code ec, tcp::socket socket) {
    if (stopping || !acceptor.is_open()) return;
    if (ec) {
      // Out of descriptors (EMFILE) or a transient failure: retry shortly rather than spin.
      log->Warn("http_accept_failed", {{"error", ec.message()}});
      accept_retry.expires_after(std::chrono::milliseconds(100));
      accept_retry.async_wait([this](error_code) {
        if (!stopping) Accept();
      });
      return;
    }
    Admit(std::move(socket));
    Accept();
  });
}

void Server::Impl::Admit(tcp::socket socket) {
  error_code ec;
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;
  std::string peer = remote.address().to_string();
  int& from_peer = per_client[peer];
  if (static_cast<int>(connections.size()) >= limits.max_connections ||
      from_peer >= limits.max_connections_per_client) {
    if (from_peer == 0) per_client.erase(peer);
    // Best effort, never blocking: a fresh socket's send buffer takes a short answer whole.
    const bool per_client_cap = static_cast<int>(connections.size()) < limits.max_connections;
    Response busy = handlers.refuse(
        503, "",
        per_client_cap ? "too many connections from this address" : "too many connections");
    std::string text = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + busy.content_type +
                       "\r\nContent-Length: " + std::to_string(busy.body.size()) +
                       "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + busy.body;
    socket.non_blocking(true, ec);
    socket.write_some(asio::buffer(text), ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
    if (log->Enabled(LogLevel::kDebug)) log->Debug("http_connection_refused", {{"peer", peer}});
    return;
  }
  // A response is written in one piece, but the 100-continue and the answer can still meet a
  // delayed ACK without this.
  socket.set_option(tcp::no_delay(true), ec);
  ++from_peer;
  auto connection = std::make_shared<Connection>(*this, std::move(socket), std::move(peer));
  connections[connection.get()] = connection;
  connection->Start();
}

void Server::Impl::Release(Connection* connection, const std::string& peer) {
  connections.erase(connection);
  auto it = per_client.find(peer);
  if (it != per_client.end() && --it->second <= 0) per_client.erase(it);
}

void Server::Impl::CloseAll() {
  error_code ec;
  acceptor.close(ec);
  accept_retry.cancel();
  std::vector<std::shared_ptr<Connection>> open;
  for (const auto& [key, weak] : connections) {
    if (auto connection = weak.lock()) open.push_back(std::move(connection));
  }
  for (const auto& connection : open) connection->Close();
}

void Server::Impl::Submit(std::function<void()> task) {
  {
    std::lock_guard lock(pool_mutex);
    if (pool_stop || stopping) return;
    tasks.push_back(std::move(task));
  }
  pool_cv.notify_one();
}

void Server::Impl::Work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(pool_mutex);
      pool_cv.wait(lock, [&] { return pool_stop || !tasks.empty(); });
      if (pool_stop) return;
      task = std::move(tasks.front());
      tasks.pop_front();
      ++busy;
    }
    // Once stopping, a request not begun is dropped with its connection.
    if (!stopping) task();
    task = nullptr;  // drops the connection it holds before the pool counts itself idle
    {
      std::lock_guard lock(pool_mutex);
      --busy;
    }
    idle_cv.notify_all();
  }
}

Server::Server(ServerLimits limits, Handlers handlers, Logger* log)
    : impl_(std::make_unique<Impl>(limits, std::move(handlers), log)) {
  const int threads = std::max(1, impl_->limits.threads);
  for (int k = 0; k < threads; ++k) impl_->workers.emplace_back([this] { impl_->Work(); });
}

Server::~Server() {
  Stop();
  {
    std::lock_guard lock(impl_->pool_mutex);
    impl_->pool_stop = true;
    impl_->tasks.clear();
  }
  impl_->pool_cv.notify_all();
  for (std::thread& worker : impl_->workers) worker.join();
}

Result<int> Server::Bind(const std::string& host, int port) {
  const std::string where = host + ":" + std::to_string(port);
  error_code ec;
  tcp::resolver resolver(impl_->ioc);
  const auto endpoints = resolver.resolve(
      host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return Fail(Error{ErrorCode::kIo, "--listen", "cannot resolve " + host + ": " + ec.message()});
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  tcp::acceptor& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor.close(ignored);
    return Fail(Error{ErrorCode::kIo, "--listen",
                      "cannot listen on " + where + " (" + ec.message() +
                          ": in use, or not an address of this host)"});
  }
  return static_cast<int>(acceptor.local_endpoint().port());
}

void Server::Run() {
  if (!impl_->stopping) impl_->Accept();
  impl_->ioc.run();
}

void Server::Stop() {
  if (impl_->stopping.exchange(true)) return;
  asio::post(impl_->ioc, [impl = impl_.get()] {
    impl->CloseAll();
    std::deque<std::function<void()>> dropped;  // destroyed here, outside the lock
    {
      std::lock_guard lock(impl->pool_mutex);
      dropped.swap(impl->tasks);
    }
    impl->ioc.stop();
  });
}

bool Server::WaitIdle(double timeout_s) {
  std::unique_lock lock(impl_->pool_mutex);
  return impl_->idle_cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                 [&] { return impl_->busy == 0; });
}

}  // namespace ordo::service::http
