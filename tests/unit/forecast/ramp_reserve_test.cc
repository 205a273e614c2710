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

TEST(RampReserve, IsAddedToEveryStepUpToTheServicesMaximumAndRecorded) {
  Service service;
  service.max_gpus = 8;
  service.demand = {2, 5, 7, 9};
  AddRampReserve(service, 0);
  EXPECT_TRUE(service.reserve.empty());
  AddRampReserve(service, 3);
  EXPECT_EQ(service.demand, (std::vector<int>{5, 8, 8, 9}));  // 9 was above the maximum already
  EXPECT_EQ(service.reserve, (std::vector<int>{3, 3, 1, 0}));
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(service.forecast_demand(t), (std::vector<int>{2, 5, 7, 9})[t]) << "step " << t;
  }
  service.max_gpus = 20;
  AddRampReserve(service, 2);  // reserves add up
  EXPECT_EQ(service.demand, (std::vector<int>{7, 10, 10, 11}));
  EXPECT_EQ(service.reserve, (std::vector<int>{5, 5, 3, 2}));
}

}  // namespace
}  // namespace ordo::forecast
