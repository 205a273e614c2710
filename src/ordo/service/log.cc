#include "ordo/service/log.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <string>

namespace ordo::service {

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  return std::nullopt;
}

std::string IsoTime(double unix_seconds) {
  const double whole = std::floor(unix_seconds);
  const auto t = static_cast<std::time_t>(whole);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[40];
  const int millis = static_cast<int>((unix_seconds - whole) * 1000);
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                std::min(999, std::max(0, millis)));
  return buffer;
}

void Logger::Log(LogLevel level, std::string_view event, nlohmann::json fields) {
  if (!Enabled(level)) return;
  static constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::ordered_json line;
  line["ts"] = IsoTime(now);
  line["level"] = kNames[static_cast<int>(level)];
  line["event"] = std::string(event);
  if (fields.is_object()) {
    for (auto& [key, value] : fields.items()) line[key] = value;
  }
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  std::lock_guard lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

}  // namespace ordo::service
