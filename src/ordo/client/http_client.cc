#include "ordo/client/http_client.h"

// Exactly as service/http/server.cc: both are linked into `ordo`, and Beast's inline templates
// differ with this macro, so two settings in one binary would break the one-definition rule (the
// linker keeps one copy; the other TU then reads a std::string_view as boost's, and crashes).
#define BOOST_BEAST_USE_STD_STRING_VIEW 1

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdlib>

namespace ordo::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// A plan or a job list of a large queue runs to megabytes; anything beyond this is not ordo.
constexpr uint64_t kMaxReplyBytes = 256ull << 20;

Error Unreachable(const ServerAddress& server, const std::string& what) {
  return Error{ErrorCode::kIo, "", "cannot reach " + server.Url() + ": " + what};
}

bool ValidPort(const std::string& port) {
  if (port.empty() || port.size() > 5) return false;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
  }
  const long value = std::strtol(port.c_str(), nullptr, 10);
  return value >= 1 && value <= 65535;
}

}  // namespace

std::string ServerAddress::Url() const { return "http://" + host + ":" + port + prefix; }

Result<ServerAddress> ParseServerAddress(const std::string& text, const std::string& field) {
  std::string rest = text;
  bool has_scheme = false;
  if (const size_t colon_slashes = rest.find("://"); colon_slashes != std::string::npos) {
    const std::string scheme = rest.substr(0, colon_slashes);
    if (scheme == "https") {
      return FailInput(field,
                       "https is not supported: ordo serve speaks plain HTTP (put TLS in a "
                       "proxy in front and give http://...) (got \"" +
                           text + "\")");
    }
    if (scheme != "http") {
      return FailInput(field, "must be http://HOST:PORT (got \"" + text + "\")");
    }
    rest = rest.substr(colon_slashes + 3);
    has_scheme = true;
  }
  ServerAddress out;
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    out.prefix = rest.substr(slash);
    while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
    rest = rest.substr(0, slash);
  }
  const size_t colon = rest.rfind(':');
  out.host = rest.substr(0, colon);
  if (colon != std::string::npos) {
    out.port = rest.substr(colon + 1);
  } else if (has_scheme) {
    out.port = "80";
  }
  if (out.host.empty()) return FailInput(field, "has no host (got \"" + text + "\")");
  if (!ValidPort(out.port)) {
    return FailInput(field,
                     "needs a port from 1 to 65535, as http://HOST:PORT (got \"" + text + "\")");
  }
  return out;
}

Result<HttpReply> HttpExchange(const ServerAddress& server, const HttpRequest& request,
                               double timeout_s) {
  const auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(timeout_s));
  asio::io_context io;
  error_code ec;
  tcp::resolver resolver(io);
  const tcp::resolver::results_type endpoints = resolver.resolve(server.host, server.port, ec);
  if (ec) return Fail(Unreachable(server, "cannot resolve " + server.host + ": " + ec.message()));

  bhttp::request<bhttp::string_body> message{bhttp::string_to_verb(request.method),
                                             server.prefix + request.target, 11};
  message.set(bhttp::field::host, server.host + ":" + server.port);
  message.set(bhttp::field::user_agent, "ordo-client");
  message.set(bhttp::field::connection, "close");
  if (!request.token.empty()) message.set(bhttp::field::authorization, "Bearer " + request.token);
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT") {
    message.set(bhttp::field::content_type, "application/json");
    message.body() = request.body;
  }
  message.prepare_payload();

  // Asynchronous operations only so that the stream's deadline applies to each of them; the
  // calling thread runs the io_context until the exchange ends.
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(kMaxReplyBytes);
  std::string failed;  // which stage failed, with the system's message
  stream.expires_after(timeout);
  stream.async_connect(endpoints, [&](error_code connect_ec, const tcp::endpoint&) {
    if (connect_ec) {
      failed = connect_ec == beast::error::timeout ? "no answer within the timeout"
                                                   : connect_ec.message();
      return;
    }
    bhttp::async_write(stream, message, [&](error_code write_ec, size_t) {
      if (write_ec) {
        failed = "sending the request: " + write_ec.message();
        return;
      }
      bhttp::async_read(stream, buffer, parser, [&](error_code read_ec, size_t) {
        if (read_ec) {
          failed = read_ec == beast::error::timeout ? "no answer within the timeout"
                                                    : "reading the answer: " + read_ec.message();
        }
      });
    });
  });
  io.run();
  if (!failed.empty()) return Fail(Unreachable(server, failed));
  HttpReply reply;
  reply.status = static_cast<int>(parser.get().result_int());
  reply.body = std::move(parser.get().body());
  return reply;
}

}  // namespace ordo::client
