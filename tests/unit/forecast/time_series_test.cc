#include "ordo/forecast/time_series.h"

#include <gtest/gtest.h>

#include <string>

namespace ordo::forecast {
namespace {

TEST(ParseTimestamp, AcceptsIsoFormsAndUnixSeconds) {
  struct Case {
    const char* text;
    double expected;
  };
  const Case cases[] = {
      {"1970-01-01T00:00:00Z", 0},
      {"2024-05-06T14:00:00Z", 1715004000},
      {"2024-05-06 14:00", 1715004000},
      {"2024-05-06T16:00:00+02:00", 1715004000},
      {"2024-05-06T09:30-0430", 1715004000},
      {"2024-05-06", 1714953600},
      {"2024-05-06T14:00:00.5Z", 1715004000.5},
      {"1715004000", 1715004000},
      {"1.715004e9", 1715004000},
      {"  1715004000 ", 1715004000},
      {"2024-02-29T00:00:00Z", 1709164800},
  };
  for (const Case& c : cases) {
    auto t = ParseTimestamp(c.text, "time");
    ASSERT_TRUE(t.has_value()) << c.text << ": " << t.error().ToString();
    EXPECT_DOUBLE_EQ(*t, c.expected) << c.text;
  }
}

TEST(ParseTimestamp, RejectsMalformedTimesNamingTheField) {
  for (const char* text : {"", "yesterday", "2024-13-01", "2023-02-29", "2024-05-06T25:00",
                           "2024-05-06T14:00:00Zjunk", "2024/05/06", "12:00"}) {
    auto t = ParseTimestamp(text, "rows[3].time");
    ASSERT_FALSE(t.has_value()) << text;
    EXPECT_EQ(t.error().field, "rows[3].time") << text;
    EXPECT_EQ(t.error().code, ErrorCode::kInvalidInput);
  }
}

TEST(FormatTimestamp, RoundTripsWholeSeconds) {
  for (double t : {0.0, 1715004000.0, 951782400.0, -86400.0, 4102444800.0}) {
    auto back = ParseTimestamp(FormatTimestamp(t), "t");
    ASSERT_TRUE(back.has_value()) << FormatTimestamp(t);
    EXPECT_DOUBLE_EQ(*back, t);
  }
  EXPECT_EQ(FormatTimestamp(1715004000), "2024-05-06T14:00:00Z");
}

TEST(ParseRateCsv, ReadsTimeAndRateColumnsInAnyOrder) {
  auto pts = ParseRateCsv(
      "model,Rate,time\r\n"
      "a,10.5,2024-05-06T00:00:00Z\r\n"
      "a,11,2024-05-06T01:00:00Z\r\n"
      "\n");
  ASSERT_TRUE(pts.has_value()) << pts.error().ToString();
  ASSERT_EQ(pts->size(), 2u);
  EXPECT_DOUBLE_EQ((*pts)[0].rate, 10.5);
  EXPECT_DOUBLE_EQ((*pts)[1].time_s - (*pts)[0].time_s, 3600);
}

TEST(ParseRateCsv, BadInputNamesTheRowOrColumn) {
  struct Case {
    const char* text;
    const char* field;
    const char* message_part;
  };
  const Case cases[] = {
      {"", "history", "empty"},
      {"time,rate\n", "history", "no data rows"},
      {"time,value\n0,1\n", "rate", "missing column `rate`"},
      {"when,rate\n0,1\n", "time", "missing column `time`"},
      {"time,rate\n0,1\n3600,abc\n", "rows[1].rate", "line 3"},
      {"time,rate\n0,1\n3600,nan\n", "rows[1].rate", "not a"},
      {"time,rate\n0,1\n3600,-2\n", "rows[1].rate", "negative"},
      {"time,rate\n3600,1\n0,1\n", "rows[1].time", "before the previous"},
      {"time,rate\n0,1\n0,2\n", "rows[1].time", "duplicate"},
      {"time,rate\n0,1\nnoon,2\n", "rows[1].time", "line 3"},
      {"time,rate\n0,1\n3600\n", "rows[1]", "columns"},
  };
  for (const Case& c : cases) {
    auto pts = ParseRateCsv(c.text);
    ASSERT_FALSE(pts.has_value()) << c.text;
    EXPECT_EQ(pts.error().field, c.field) << c.text;
    EXPECT_NE(pts.error().message.find(c.message_part), std::string::npos)
        << c.text << " -> " << pts.error().message;
  }
}

TEST(ValidateRateHistory, ChecksOrderAndValues) {
  EXPECT_FALSE(ValidateRateHistory({}).has_value());
  EXPECT_TRUE(ValidateRateHistory({{0, 1}, {60, 0}}).has_value());
  auto dup = ValidateRateHistory({{0, 1}, {0, 2}});
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().field, "history[1].time");
  auto neg = ValidateRateHistory({{0, 1}, {60, -1}});
  ASSERT_FALSE(neg.has_value());
  EXPECT_EQ(neg.error().field, "history[1].rate");
}

}  // namespace
}  // namespace ordo::forecast
