#include "ordo/forecast/time_series.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace ordo::forecast {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Quote(std::string_view s) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  out += s.size() > kMax ? std::string(s.substr(0, kMax)) + "..." : std::string(s);
  out += "'";
  return out;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t& y, int64_t& m, int64_t& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = yoe + era * 400;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp + (mp < 10 ? 3 : -9);
  y += m <= 2 ? 1 : 0;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos`.
bool Digits(std::string_view s, std::size_t& pos, int n, int64_t& out) {
  if (pos + static_cast<std::size_t>(n) > s.size()) return false;
  out = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[pos + static_cast<std::size_t>(i)];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  pos += static_cast<std::size_t>(n);
  return true;
}

bool LooksNumeric(std::string_view s) {
  if (s.empty()) return false;
  // A date has '-' after four digits; a number only at the start or after an exponent.
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == 'T' || c == ':' || c == ' ' || c == 'Z') return false;
    if (c == '-' && i > 0 && s[i - 1] != 'e' && s[i - 1] != 'E') return false;
  }
  return true;
}

}  // namespace

Result<double> ParseNumber(std::string_view text, const std::string& field) {
  const std::string_view s = Trim(text);
  if (s.empty()) return FailInput(field, "empty value where a number is expected");
  double value = 0;
  const char* first = s.data();
  if (*first == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return FailInput(field, "not a number: " + Quote(s));
  }
  if (!std::isfinite(value)) return FailInput(field, "not a finite number: " + Quote(s));
  return value;
}

Result<double> ParseTimestamp(std::string_view text, const std::string& field) {
  const std::string_view s = Trim(text);
  if (s.empty()) return FailInput(field, "empty time");
  if (LooksNumeric(s)) {
    auto v = ParseNumber(s, field);
    if (!v) {
      return FailInput(field, "not a time (ISO 8601 or Unix seconds): " + Quote(s));
    }
    return *v;
  }
  const auto bad = [&](const std::string& why) {
    return FailInput(field, "not an ISO 8601 time (" + why + "): " + Quote(s));
  };
  std::size_t pos = 0;
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  double frac = 0;
  if (!Digits(s, pos, 4, year) || pos >= s.size() || s[pos++] != '-' || !Digits(s, pos, 2, month) ||
      pos >= s.size() || s[pos++] != '-' || !Digits(s, pos, 2, day)) {
    return bad("expected YYYY-MM-DD");
  }
  if (month < 1 || month > 12) return bad("month out of range");
  if (day < 1 || day > DaysInMonth(year, month)) return bad("day out of range");
  if (pos < s.size() && (s[pos] == 'T' || s[pos] == 't' || s[pos] == ' ')) {
    ++pos;
    if (!Digits(s, pos, 2, hour) || pos >= s.size() || s[pos++] != ':' ||
        !Digits(s, pos, 2, minute)) {
      return bad("expected hh:mm after the date");
    }
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!Digits(s, pos, 2, second)) return bad("expected ss");
      if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
        ++pos;
        double scale = 0.1;
        bool any = false;
        while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
          frac += (s[pos] - '0') * scale;
          scale /= 10;
          ++pos;
          any = true;
        }
        if (!any) return bad("expected digits after the decimal point");
      }
    }
    if (hour > 24 || minute > 59 || second > 60 ||
        (hour == 24 && (minute || second || frac != 0))) {
      return bad("time of day out of range");
    }
  }
  int64_t offset_s = 0;
  if (pos < s.size()) {
    const char c = s[pos];
    if ((c == 'Z' || c == 'z') && pos + 1 == s.size()) {
      ++pos;
    } else if (c == '+' || c == '-') {
      ++pos;
      int64_t oh = 0, om = 0;
      if (!Digits(s, pos, 2, oh)) return bad("expected a UTC offset +hh:mm");
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (pos < s.size() && !Digits(s, pos, 2, om)) return bad("expected a UTC offset +hh:mm");
      if (oh > 23 || om > 59) return bad("UTC offset out of range");
      offset_s = (oh * 3600 + om * 60) * (c == '+' ? 1 : -1);
    }
  }
  if (pos != s.size()) return bad("unexpected text after the time");
  const int64_t days = DaysFromCivil(year, month, day);
  return static_cast<double>(days * 86400 + hour * 3600 + minute * 60 + second - offset_s) + frac;
}

std::string FormatTimestamp(double time_s) {
  const auto t = static_cast<int64_t>(std::floor(time_s));
  int64_t days = t / 86400;
  int64_t rem = t % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  int64_t y = 0, m = 0, d = 0;
  CivilFromDays(days, y, m, d);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), static_cast<long long>(m), static_cast<long long>(d),
                static_cast<long long>(rem / 3600), static_cast<long long>(rem % 3600 / 60),
                static_cast<long long>(rem % 60));
  return buf;
}

std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

namespace {

std::string Lower(std::string_view s) {
  std::string out(Trim(s));
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Result<std::vector<RatePoint>> ParseRateCsv(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  std::size_t header_line = 0;
  while (header_line < lines.size() && Trim(lines[header_line]).empty()) ++header_line;
  if (header_line == lines.size()) {
    return FailInput("history", "empty file: expected a header with `time` and `rate` columns");
  }
  const std::vector<std::string> header = SplitCsvLine(lines[header_line]);
  int time_col = -1;
  int rate_col = -1;
  for (std::size_t c = 0; c < header.size(); ++c) {
    const std::string name = Lower(header[c]);
    if (name == "time" && time_col < 0) time_col = static_cast<int>(c);
    if (name == "rate" && rate_col < 0) rate_col = static_cast<int>(c);
  }
  if (time_col < 0)
    return FailInput("time", "missing column `time` in the header (line " +
                                 std::to_string(header_line + 1) + ")");
  if (rate_col < 0)
    return FailInput("rate", "missing column `rate` in the header (line " +
                                 std::to_string(header_line + 1) + ")");
  std::vector<RatePoint> points;
  const auto needed = static_cast<std::size_t>(std::max(time_col, rate_col)) + 1;
  for (std::size_t l = header_line + 1; l < lines.size(); ++l) {
    if (Trim(lines[l]).empty()) continue;
    const std::size_t row = points.size();
    const std::string where = "rows[" + std::to_string(row) + "]";
    const std::string line_no = "line " + std::to_string(l + 1) + ": ";
    const std::vector<std::string> cells = SplitCsvLine(lines[l]);
    if (cells.size() < needed) {
      return FailInput(where, line_no + "expected at least " + std::to_string(needed) +
                                  " columns, got " + std::to_string(cells.size()));
    }
    auto t = ParseTimestamp(cells[static_cast<std::size_t>(time_col)], where + ".time");
    if (!t) return FailInput(t.error().field, line_no + t.error().message);
    auto r = ParseNumber(cells[static_cast<std::size_t>(rate_col)], where + ".rate");
    if (!r) return FailInput(r.error().field, line_no + r.error().message);
    if (*r < 0) return FailInput(where + ".rate", line_no + "a rate cannot be negative");
    if (!points.empty()) {
      const double prev = points.back().time_s;
      if (*t == prev) {
        return FailInput(where + ".time", line_no + "duplicate time " + FormatTimestamp(*t) +
                                              " (same as the previous row)");
      }
      if (*t < prev) {
        return FailInput(where + ".time", line_no + "time " + FormatTimestamp(*t) +
                                              " is before the previous row's " +
                                              FormatTimestamp(prev) + " (rows must be sorted)");
      }
    }
    points.push_back({*t, *r});
  }
  if (points.empty()) return FailInput("history", "no data rows after the header");
  return points;
}

Result<void> ValidateRateHistory(const std::vector<RatePoint>& history) {
  if (history.empty()) return FailInput("history", "empty history: nothing to forecast from");
  for (std::size_t i = 0; i < history.size(); ++i) {
    const std::string where = "history[" + std::to_string(i) + "]";
    if (!std::isfinite(history[i].time_s)) return FailInput(where + ".time", "not a finite time");
    if (!std::isfinite(history[i].rate) || history[i].rate < 0) {
      return FailInput(where + ".rate", "must be a finite number >= 0");
    }
    if (i > 0 && history[i].time_s <= history[i - 1].time_s) {
      return FailInput(where + ".time", history[i].time_s == history[i - 1].time_s
                                            ? "duplicate time (same as the previous point)"
                                            : "times must increase");
    }
  }
  return {};
}

}  // namespace ordo::forecast
