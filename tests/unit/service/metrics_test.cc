#include "ordo/service/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ordo::service {
namespace {

TEST(ServiceMetrics, LabelsAreEscaped) {
  EXPECT_EQ(Labels({}), "");
  EXPECT_EQ(Labels({{"a", "x"}, {"b", "y\"z\\\n"}}), "{a=\"x\",b=\"y\\\"z\\\\\\n\"}");
}

TEST(ServiceMetrics, CountersRenderPerLabelSet) {
  LabeledCounter c;
  c.Inc(Labels({{"code", "200"}}));
  c.Inc(Labels({{"code", "200"}}), 2);
  c.Inc(Labels({{"code", "404"}}));
  EXPECT_EQ(c.Value(Labels({{"code", "200"}})), 3);
  std::string out;
  c.Render(out, "requests_total", "Requests");
  EXPECT_EQ(out,
            "# HELP requests_total Requests\n# TYPE requests_total counter\n"
            "requests_total{code=\"200\"} 3\nrequests_total{code=\"404\"} 1\n");
}

TEST(ServiceMetrics, HistogramBucketsAreCumulative) {
  LabeledHistogram h({0.1, 1});
  h.Observe("", 0.05);
  h.Observe("", 0.5);
  h.Observe("", 0.5);
  h.Observe("", 7);
  EXPECT_EQ(h.Count(""), 4u);
  EXPECT_EQ(h.QuantileUpperBound("", 0.5), 1);
  EXPECT_EQ(h.QuantileUpperBound("", 0.25), 0.1);
  EXPECT_TRUE(std::isinf(h.QuantileUpperBound("", 0.99)));
  std::string out;
  h.Render(out, "latency_seconds", "Latency");
  EXPECT_NE(out.find("latency_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("latency_seconds_bucket{le=\"1\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("latency_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos) << out;
  EXPECT_NE(out.find("latency_seconds_sum 8.05\n"), std::string::npos) << out;
  EXPECT_NE(out.find("latency_seconds_count 4\n"), std::string::npos) << out;

  LabeledHistogram labeled({1});
  labeled.Observe(Labels({{"mode", "fast"}}), 0.5);
  std::string text;
  labeled.Render(text, "p", "P");
  EXPECT_NE(text.find("p_bucket{mode=\"fast\",le=\"1\"} 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace ordo::service
