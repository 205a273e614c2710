#include "ordo/forecast/ramp_reserve.h"

#include <gtest/gtest.h>

#include <vector>

namespace ordo::forecast {
namespace {

TEST(RampReserve, IsTheLargestRiseBeyondTheChurnLimit) {
  const std::vector<int> recent = {5, 6, 11, 9, 14, 13};  // rises 1, 5, 5; a fall of 2, of 1
  EXPECT_EQ(RampReserve(recent, 2), 3);
  EXPECT_EQ(RampReserve(recent, 1), 4);
  EXPECT_EQ(RampReserve(recent, 5), 0);  // every rise fits the churn limit
  EXPECT_EQ(RampReserve(recent, 9), 0);
}

TEST(RampReserve, FallsAndShortHistoriesKeepNone) {
  EXPECT_EQ(RampReserve(std::vector<int>{}, 0), 0);
  EXPECT_EQ(RampReserve(std::vector<int>{7}, 0), 0);
  EXPECT_EQ(RampReserve(std::vector<int>{9, 6, 2, 2}, 0), 0);
  EXPECT_EQ(RampReserve(std::vector<int>{2, 3}, 0), 1);
}

TEST(RampReserve, IsAddedToEveryStepUpToTheServicesMaximum) {
  std::vector<int> demand = {2, 5, 7, 9};
  AddRampReserve(demand, 3, 8);
  EXPECT_EQ(demand, (std::vector<int>{5, 8, 8, 9}));  // 9 was above the maximum already
  AddRampReserve(demand, 0, 20);
  EXPECT_EQ(demand, (std::vector<int>{5, 8, 8, 9}));
}

}  // namespace
}  // namespace ordo::forecast
