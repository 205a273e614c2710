// Structured logs: one JSON object per line, `{"ts": "...Z", "level": "info", "event":
// "job_submitted", ...fields}`, so a log shipper needs no parsing rules. Thread-safe; a line is
// written with one call, never interleaved.
#pragma once

#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace ordo::service {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
std::optional<LogLevel> ParseLogLevel(std::string_view name);  // "debug", "info", "warn", "error"

class Logger {
 public:
  /// Writes lines at `min` and above to `out` (not owned; stderr by default).
  explicit Logger(LogLevel min = LogLevel::kInfo, std::FILE* out = stderr) : min_(min), out_(out) {}

  [[nodiscard]] bool Enabled(LogLevel level) const { return level >= min_; }
  void Log(LogLevel level, std::string_view event,
           nlohmann::json fields = nlohmann::json::object());

  void Debug(std::string_view event, nlohmann::json fields = nlohmann::json::object()) {
    Log(LogLevel::kDebug, event, std::move(fields));
  }
  void Info(std::string_view event, nlohmann::json fields = nlohmann::json::object()) {
    Log(LogLevel::kInfo, event, std::move(fields));
  }
  void Warn(std::string_view event, nlohmann::json fields = nlohmann::json::object()) {
    Log(LogLevel::kWarn, event, std::move(fields));
  }
  void Error(std::string_view event, nlohmann::json fields = nlohmann::json::object()) {
    Log(LogLevel::kError, event, std::move(fields));
  }

 private:
  LogLevel min_;
  std::FILE* out_;
  std::mutex mutex_;
};

/// "2024-05-06T14:00:00.123Z" for a Unix time.
std::string IsoTime(double unix_seconds);

}  // namespace ordo::service
