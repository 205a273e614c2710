// Prometheus text exposition (format 0.0.4) without a client library: counters and histograms with
// labels, and helpers to write gauges computed at scrape time. Thread-safe.
//
//   LabeledCounter requests;                       // ordo_http_requests_total{route,code}
//   requests.Inc(Labels({{"route", "/v1/jobs"}, {"code", "201"}}));
//   std::string text; requests.Render(text, "ordo_http_requests_total", "HTTP requests");
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ordo::service {

/// `{a="x",b="y"}` with values escaped as the format requires; empty for no labels.
std::string Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> labels);

/// `# HELP` and `# TYPE` lines.
void AppendFamily(std::string& out, std::string_view name, std::string_view type,
                  std::string_view help);
/// One sample line: `name{labels} value`.
void AppendSample(std::string& out, std::string_view name, std::string_view labels, double value);
/// A family of one sample: AppendFamily then AppendSample, the name written once.
void AppendSingle(std::string& out, std::string_view name, std::string_view type,
                  std::string_view help, double value, std::string_view labels = "");

/// Counters by label set.
class LabeledCounter {
 public:
  void Inc(const std::string& labels, double amount = 1);
  [[nodiscard]] double Value(const std::string& labels) const;
  void Render(std::string& out, std::string_view name, std::string_view help) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, double> values_;
};

/// Histograms by label set, all with the same bucket bounds (upper bounds, ascending; +Inf is
/// added).
class LabeledHistogram {
 public:
  explicit LabeledHistogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {}
  void Observe(const std::string& labels, double value);
  [[nodiscard]] uint64_t Count(const std::string& labels) const;
  /// The smallest bucket bound at or above quantile q of the observations (an upper estimate, as
  /// Prometheus' histogram_quantile gives), or 0 with no observations.
  [[nodiscard]] double QuantileUpperBound(const std::string& labels, double q) const;
  void Render(std::string& out, std::string_view name, std::string_view help) const;

 private:
  struct Series {
    std::vector<uint64_t> buckets;  // per bound, not cumulative; the last is +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::map<std::string, Series> series_;
};

/// Bucket bounds for latencies in seconds, 0.5 ms .. 60 s.
std::vector<double> LatencyBuckets();

}  // namespace ordo::service
