#include "ordo/service/codec.h"

#include <gtest/gtest.h>

#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;

TEST(ServiceCodec, ReadsAJobAsTheScenarioReaderDoes) {
  const ServiceConfig config = testing::Config();
  auto body = ReadJobBody(
      json{{"id", "a"},
           {"kind", "quantization"},
           {"priority", 2.5},
           {"shapes", {{{"gpus", 1}, {"duration_steps", 4}}, {{"gpus", 2}, {"duration_steps", 2}}}},
           {"gpu_type", "gpu"}},
      config, {});
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_TRUE(body->id_given);
  EXPECT_EQ(body->job.kind, JobKind::kQuantization);
  ASSERT_EQ(body->job.shapes.size(), 2u);
  EXPECT_EQ(body->job.shapes[1], (Shape{2, 2}));
  // And back: the spec the store keeps reads to the same job.
  auto again = ReadJobSpec(JobSpecJson(body->job).dump(), config);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->shapes, body->job.shapes);
  EXPECT_EQ(again->priority, 2.5);
  EXPECT_EQ(again->requirement.gpu_type, "gpu");
}

TEST(ServiceCodec, IdIsOptional) {
  auto body =
      ReadJobBody(json{{"kind", "training"}, {"priority", 1}, {"gpus", 2}, {"duration_steps", 1}},
                  testing::Config(), {});
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_FALSE(body->id_given);
}

TEST(ServiceCodec, KeepsFeatures) {
  auto body = ReadJobBody(json{{"id", "f"},
                               {"kind", "training"},
                               {"priority", 1},
                               {"gpus", 2},
                               {"duration_steps", 1},
                               {"features", {{"params_b", 7}}}},
                          testing::Config(), {});
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_EQ(json::parse(body->job.features_json)["params_b"], 7);
  EXPECT_EQ(JobSpecJson(body->job)["features"]["params_b"], 7);
}

struct BadJob {
  json body;
  std::string field;
};

class ServiceCodecErrors : public ::testing::TestWithParam<BadJob> {};

TEST_P(ServiceCodecErrors, NameTheFieldWithoutTheWrapper) {
  auto body = ReadJobBody(GetParam().body, testing::Config(), {});
  ASSERT_FALSE(body) << GetParam().body.dump();
  EXPECT_EQ(body.error().field, GetParam().field) << body.error().ToString();
}

json Good() {
  return {{"id", "x"}, {"kind", "training"}, {"priority", 1}, {"gpus", 2}, {"duration_steps", 2}};
}
json With(const char* key, json value) {
  json j = Good();
  j[key] = std::move(value);
  return j;
}
json Without(const char* key) {
  json j = Good();
  j.erase(key);
  return j;
}

INSTANTIATE_TEST_SUITE_P(
    Table, ServiceCodecErrors,
    ::testing::Values(BadJob{json::array(), ""}, BadJob{Without("gpus"), "gpus"},
                      BadJob{Without("kind"), "kind"}, BadJob{With("gpus", 6), "gpus"},
                      BadJob{With("gpus", "2"), "gpus"}, BadJob{With("gpus", 32), "gpus"},
                      BadJob{With("priority", 0), "priority"},
                      BadJob{With("duration_steps", 0), "duration_steps"},
                      BadJob{With("arrival_step", 0), "arrival_step"},
                      BadJob{With("running", {{"start_step", 0}, {"first_gpu", 0}}), "running"},
                      BadJob{With("id", "a b"), "id"}, BadJob{With("id", 5), "id"},
                      BadJob{With("gpu_type", "TPU"), "gpu_type"},
                      BadJob{With("min_gpu_memory_gb", 200), "min_gpu_memory_gb"},
                      BadJob{With("features", 3), "features"},
                      BadJob{With("colour", "red"), "colour"},
                      BadJob{Without("duration_steps"), "duration_steps"}));

TEST(ServiceCodec, ServicesMayTakeDemandFromTraffic) {
  const ServiceConfig config = testing::Config(2, 4);
  auto body = ReadServiceBody(json{{"priority", 3}, {"forecast", {{"per_gpu_rate", 20}}}}, config,
                              std::string_view("search"));
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_EQ(body->service.id, "search");
  EXPECT_EQ(body->service.demand, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(body->service.max_gpus, 16);  // the spec's default: the cluster
  ASSERT_TRUE(body->traffic);
  EXPECT_EQ(body->traffic->per_gpu_rate, 20);
  EXPECT_EQ(body->traffic->headroom, 0.2);
  EXPECT_EQ(body->traffic->method, forecast::DemandMethod::kLevelShape);
  auto again = ReadServiceSpec(ServiceSpecJson(body->service, body->traffic).dump(), config);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->traffic->per_gpu_rate, 20);
  EXPECT_EQ(again->traffic->method, forecast::DemandMethod::kLevelShape);
  // The older weekly-profile forecaster stays selectable, and is kept across a restart.
  auto profile = ReadServiceBody(
      json{{"priority", 3}, {"forecast", {{"per_gpu_rate", 20}, {"method", "profile"}}}}, config,
      std::string_view("search"));
  ASSERT_TRUE(profile) << profile.error().ToString();
  EXPECT_EQ(profile->traffic->method, forecast::DemandMethod::kProfile);
  again = ReadServiceSpec(ServiceSpecJson(profile->service, profile->traffic).dump(), config);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->traffic->method, forecast::DemandMethod::kProfile);
  auto bad_method = ReadServiceBody(
      json{{"priority", 3}, {"forecast", {{"per_gpu_rate", 20}, {"method", "arima"}}}}, config,
      std::string_view("search"));
  ASSERT_FALSE(bad_method);
  EXPECT_EQ(bad_method.error().field, "forecast.method");

  auto mismatch = ReadServiceBody(json{{"id", "other"}, {"priority", 1}, {"demand", {1, 1, 1, 1}}},
                                  config, std::string_view("search"));
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().field, "id");
  auto no_demand = ReadServiceBody(json{{"id", "s"}, {"priority", 1}}, config, std::nullopt);
  ASSERT_FALSE(no_demand);
  EXPECT_EQ(no_demand.error().field, "demand");
  auto bad_rate =
      ReadServiceBody(json{{"id", "s"}, {"priority", 1}, {"forecast", {{"per_gpu_rate", 0}}}},
                      config, std::nullopt);
  ASSERT_FALSE(bad_rate);
  EXPECT_EQ(bad_rate.error().field, "forecast.per_gpu_rate");
}

}  // namespace
}  // namespace ordo::service
