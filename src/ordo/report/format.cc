#include "ordo/report/format.h"

#include <cmath>
#include <cstdio>

namespace ordo::report {

std::string Percent(double fraction, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%%", decimals, fraction * 100.0);
  return buf;
}

std::string SignedPercent(std::optional<double> fraction) {
  if (!fraction || !std::isfinite(*fraction)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%%", *fraction * 100.0);
  return buf;
}

std::string Thousands(double value) {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  if (std::fabs(value) < 100 && value != std::round(value)) {
    std::snprintf(buf, sizeof buf, "%.1f", value);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(value));
  std::string digits = buf;
  std::string out;
  const int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (value < 0 && out != "0" ? "-" : "") + out;
}

std::string Millis(double ms) {
  char buf[64];
  if (!std::isfinite(ms) || ms < 0) return "n/a";
  if (ms < 1) {
    std::snprintf(buf, sizeof buf, "%.3f", ms);
  } else if (ms < 10) {
    std::snprintf(buf, sizeof buf, "%.2f", ms);
  } else if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%.1f", ms);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", ms);
  }
  return buf;
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string MarkdownCell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string Hours(double hours) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", hours);
  return buf;
}

}  // namespace ordo::report
