// The service's ramp reserve: with `planning.ramp_reserve_hours`, a service with posted traffic and
// a churn limit is planned above its forecast by the largest rise of its observed hourly traffic
// (in GPUs) over the window, less what its churn limit lets it rise in an hour; values and unmet
// demand stay reported against the forecast.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "ordo/forecast/demand_forecaster.h"
#include "ordo/service/state.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

constexpr double kOrigin = 1'699'833'600;  // Monday 13 November 2023, 00:00 UTC

// 48 one-hour steps of history at 20 requests/s (2 GPUs at 10 each), 60/s (6 GPUs) in hour 40.
struct RampFixture {
  Scenario base;
  Tenancy tenancy;
  State state;

  explicit RampFixture(double window_hours, int step_minutes = 60) {
    base.step_minutes = step_minutes;
    base.horizon_steps = 12;
    base.cluster = testing::Config().base.cluster;  // 16 GPUs
    tenancy.options = priority::OnlinePlanningOptions();
    tenancy.options.ramp_reserve_hours = window_hours;
    state.origin_unix = kOrigin;
    state.next_step = 48 * 60 / step_minutes;
    std::vector<forecast::RatePoint> points;
    for (int h = 0; h < 48; ++h)
      points.push_back({kOrigin + h * 3600.0 + 1800, h == 40 ? 60.0 : 20});
    auto forecaster = std::make_shared<forecast::DemandForecaster>();
    EXPECT_TRUE(forecaster->Fit(points).has_value());
    ServiceRecord record;
    record.service.id = "chat";
    record.service.priority = 5;
    record.service.max_gpus = 8;
    record.service.max_change_per_step = 1;
    record.service.demand.assign(12, 2);
    record.traffic = TrafficDemand{10, 0};
    record.forecaster = forecaster;
    state.services.push_back(record);
  }

  std::vector<int> Planned() const {
    const Frame frame{&base, &tenancy};
    const Scenario scenario = BuildScenario(state, frame);
    EXPECT_EQ(scenario.services.front().demand, std::vector<int>(12, 2));  // reported: forecast
    return PlanningScenario(scenario, state, frame).services.front().demand;
  }
};

TEST(ServiceRampReserve, IsTheObservedRiseLessAnHourOfChurn) {
  // Hour 39 to 40: 2 -> 6 GPUs, a rise of 4; one-hour steps, churn 1: a reserve of 3.
  EXPECT_EQ(RampFixture(24).Planned(), std::vector<int>(12, 5));
  // Half-hour steps: the churn limit allows 2 GPUs an hour, a reserve of 2.
  EXPECT_EQ(RampFixture(24, 30).Planned(), std::vector<int>(12, 4));
}

TEST(ServiceRampReserve, CapsAtMaxGpusAndForgetsRisesOutsideTheWindow) {
  RampFixture capped(24);
  capped.state.services.front().service.max_gpus = 4;
  EXPECT_EQ(capped.Planned(), std::vector<int>(12, 4));
  EXPECT_EQ(RampFixture(6).Planned(), std::vector<int>(12, 2));  // hours 42-47: flat
  EXPECT_EQ(RampFixture(0).Planned(), std::vector<int>(12, 2));  // off
}

TEST(ServiceRampReserve, NeedsAChurnLimitAndPostedTraffic) {
  RampFixture free_churn(24);
  free_churn.state.services.front().service.max_change_per_step.reset();
  EXPECT_EQ(free_churn.Planned(), std::vector<int>(12, 2));
  RampFixture no_traffic(24);
  no_traffic.state.services.front().traffic.reset();
  EXPECT_EQ(no_traffic.Planned(), std::vector<int>(12, 2));
}

}  // namespace
}  // namespace ordo::service
