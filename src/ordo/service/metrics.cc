#include "ordo/service/metrics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ordo::service {
namespace {

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // The shortest text that reads back to the same double: 0.1, not 0.10000000000000001.
  char buffer[32];
  for (int precision = 15; precision <= 17; ++precision) {
    const int n = std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value || precision == 17) {
      return {buffer, static_cast<size_t>(n)};
    }
  }
  return buffer;
}

// Appends `le="bound"` to a label set written by Labels().
std::string WithLe(std::string_view labels, std::string_view le) {
  std::string out;
  if (labels.empty()) {
    out = "{le=\"";
  } else {
    out.assign(labels.substr(0, labels.size() - 1));
    out += ",le=\"";
  }
  out += le;
  out += "\"}";
  return out;
}

}  // namespace

std::string Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> labels) {
  if (labels.size() == 0) return {};
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += key;
    out += "=\"";
    for (const char c : value) {
      if (c == '\\') {
        out += "\\\\";
      } else if (c == '"') {
        out += "\\\"";
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out += c;
      }
    }
    out += '"';
  }
  out += '}';
  return out;
}

void AppendFamily(std::string& out, std::string_view name, std::string_view type,
                  std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void AppendSample(std::string& out, std::string_view name, std::string_view labels, double value) {
  out += name;
  out += labels;
  out += ' ';
  out += FormatValue(value);
  out += '\n';
}

void AppendSingle(std::string& out, std::string_view name, std::string_view type,
                  std::string_view help, double value, std::string_view labels) {
  AppendFamily(out, name, type, help);
  AppendSample(out, name, labels, value);
}

void LabeledCounter::Inc(const std::string& labels, double amount) {
  std::lock_guard lock(mutex_);
  values_[labels] += amount;
}

double LabeledCounter::Value(const std::string& labels) const {
  std::lock_guard lock(mutex_);
  auto it = values_.find(labels);
  return it == values_.end() ? 0 : it->second;
}

void LabeledCounter::Render(std::string& out, std::string_view name, std::string_view help) const {
  AppendFamily(out, name, "counter", help);
  std::lock_guard lock(mutex_);
  for (const auto& [labels, value] : values_) AppendSample(out, name, labels, value);
}

void LabeledHistogram::Observe(const std::string& labels, double value) {
  std::lock_guard lock(mutex_);
  Series& s = series_[labels];
  if (s.buckets.empty()) s.buckets.assign(bounds_.size() + 1, 0);
  size_t b = 0;
  while (b < bounds_.size() && value > bounds_[b]) ++b;
  ++s.buckets[b];
  s.sum += value;
  ++s.count;
}

uint64_t LabeledHistogram::Count(const std::string& labels) const {
  std::lock_guard lock(mutex_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

double LabeledHistogram::QuantileUpperBound(const std::string& labels, double q) const {
  std::lock_guard lock(mutex_);
  auto it = series_.find(labels);
  if (it == series_.end() || it->second.count == 0) return 0;
  const double target = q * static_cast<double>(it->second.count);
  uint64_t seen = 0;
  for (size_t b = 0; b < bounds_.size(); ++b) {
    seen += it->second.buckets[b];
    if (static_cast<double>(seen) >= target) return bounds_[b];
  }
  return INFINITY;
}

void LabeledHistogram::Render(std::string& out, std::string_view name,
                              std::string_view help) const {
  AppendFamily(out, name, "histogram", help);
  const std::string bucket = std::string(name) + "_bucket";
  const std::string sum = std::string(name) + "_sum";
  const std::string count = std::string(name) + "_count";
  std::lock_guard lock(mutex_);
  for (const auto& [labels, s] : series_) {
    uint64_t cumulative = 0;
    for (size_t b = 0; b < bounds_.size(); ++b) {
      cumulative += s.buckets[b];
      AppendSample(out, bucket, WithLe(labels, FormatValue(bounds_[b])),
                   static_cast<double>(cumulative));
    }
    AppendSample(out, bucket, WithLe(labels, "+Inf"), static_cast<double>(s.count));
    AppendSample(out, sum, labels, s.sum);
    AppendSample(out, count, labels, static_cast<double>(s.count));
  }
}

std::vector<double> LatencyBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

}  // namespace ordo::service
