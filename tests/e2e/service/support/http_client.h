// End-to-end support: a small blocking HTTP/1.1 client over a raw socket to 127.0.0.1, so that
// tests can send both well-formed requests and exactly the bytes an attacker would (trickled
// heads, malformed framing, huge chunked bodies) and see whether the server answers or closes.
//
//   HttpConnection c(port);
//   c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
//   std::optional<RawResponse> r = c.ReadResponse();   // r->status == 200
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ordo::testing::e2e {

struct RawResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;

  std::string Header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return {};
  }
};

class HttpConnection {
 public:
  /// Connects to 127.0.0.1:`port`; connected() says whether it did. Reads and writes give up
  /// after `timeout_s`.
  explicit HttpConnection(int port, double timeout_s = 60) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout_s);
    tv.tv_usec = static_cast<suseconds_t>((timeout_s - static_cast<double>(tv.tv_sec)) * 1e6);
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) Close();
  }
  HttpConnection(HttpConnection&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), pending_(std::move(other.pending_)) {}
  HttpConnection& operator=(HttpConnection&& other) noexcept {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    pending_ = std::move(other.pending_);
    return *this;
  }
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  ~HttpConnection() { Close(); }

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    pending_.clear();
  }

  /// Sends every byte; false when the connection fails (closed or reset by the server).
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      if (fd_ < 0) return false;
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  /// Reads one final response (1xx interim answers are skipped). nullopt when the connection
  /// closes, fails or times out before a whole response has arrived.
  std::optional<RawResponse> ReadResponse() {
    while (true) {
      size_t head_end = 0;
      while ((head_end = pending_.find("\r\n\r\n")) == std::string::npos) {
        if (!Fill()) return std::nullopt;
      }
      RawResponse response;
      const std::string head = pending_.substr(0, head_end);
      pending_.erase(0, head_end + 4);
      size_t line_end = head.find("\r\n");
      const std::string status_line = head.substr(0, line_end);
      if (status_line.size() < 12 || status_line.compare(0, 5, "HTTP/") != 0) return std::nullopt;
      response.status = std::atoi(status_line.c_str() + 9);
      while (line_end != std::string::npos) {
        const size_t start = line_end + 2;
        line_end = head.find("\r\n", start);
        const std::string line = head.substr(start, line_end - start);
        const size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t value_start = colon + 1;
        while (value_start < line.size() && line[value_start] == ' ') ++value_start;
        response.headers.emplace_back(std::move(name), line.substr(value_start));
      }
      if (response.status >= 100 && response.status < 200) continue;
      const std::string length = response.Header("content-length");
      if (!length.empty()) {
        const size_t n = std::strtoull(length.c_str(), nullptr, 10);
        while (pending_.size() < n) {
          if (!Fill()) return std::nullopt;
        }
        response.body = pending_.substr(0, n);
        pending_.erase(0, n);
      } else {
        while (Fill()) {
        }
        response.body = std::move(pending_);
        pending_.clear();
      }
      return response;
    }
  }

  /// Sends a request and reads its answer on this connection (kept alive).
  std::optional<RawResponse> Request(
      const std::string& method, const std::string& path,
      const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
      bool close = false) {
    std::string text = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (const auto& [name, value] : headers) text += name + ": " + value + "\r\n";
    if (!body.empty() || method == "POST" || method == "PUT") {
      text += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
              "\r\n";
    }
    if (close) text += "Connection: close\r\n";
    text += "\r\n" + body;
    if (!Send(text)) return std::nullopt;
    return ReadResponse();
  }

  /// True when the server closes the connection within `timeout_s` (what it still sends is
  /// discarded); false when it is still open then.
  bool WaitClosed(double timeout_s) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    char buffer[16384];
    while (fd_ >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return true;  // end of stream, or reset
    }
    return true;
  }

 private:
  // Appends what arrives to pending_; false on end of stream, error or timeout.
  bool Fill() {
    if (fd_ < 0) return false;
    char buffer[16384];
    while (true) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      pending_.append(buffer, static_cast<size_t>(n));
      return true;
    }
  }

  int fd_ = -1;
  std::string pending_;
};

}  // namespace ordo::testing::e2e
