// Bad input never crashes the engine and never reaches the store: valid request bodies, mutated at
// random (a field replaced by a value of the wrong type or range, removed, or joined by an unknown
// one), are answered with success or a 4xx; a 400 always names the field. The seed is printed on
// failure. The engine must still serve a valid request afterwards.
#include <gtest/gtest.h>

#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ordo/service/engine.h"
#include "tests/unit/service/service_test_util.h"

namespace ordo::service {
namespace {

using nlohmann::json;
using testing::kA;
using testing::kAdminPrincipal;
using testing::ScratchDir;

// Every node of `doc`, containers included, as JSON pointers.
void CollectPointers(const json& doc, const json::json_pointer& at,
                     std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) CollectPointers(value, at / key, out);
  } else if (doc.is_array()) {
    for (size_t k = 0; k < doc.size(); ++k) CollectPointers(doc[k], at / k, out);
  }
}

// Values of the wrong type, sign, size or range.
json Weird(std::mt19937& rng) {
  static const std::vector<json> kValues = {
      nullptr,
      true,
      false,
      0,
      -1,
      1,
      3,
      0.5,
      -0.0,
      1e308,
      -1e308,
      2147483648.0,
      9.3e18,
      json(std::numeric_limits<uint64_t>::max()),
      json(std::numeric_limits<int64_t>::min()),
      "",
      "4",
      "training",
      std::string(300, 'x'),
      "caf\xc3\xa9 \xe2\x9c\x93",
      "../../etc/passwd",
      "'; DROP TABLE jobs; --",
      json::array(),
      json::array({1, 2}),
      json::array({json::array({json::array({1})})}),
      json::object(),
      json{{"gpus", 2}},
      json(std::vector<int>(5000, 1)),
  };
  return kValues[rng() % kValues.size()];
}

json Mutate(json doc, std::mt19937& rng) {
  const int mutations = 1 + static_cast<int>(rng() % 3);
  for (int m = 0; m < mutations; ++m) {
    std::vector<json::json_pointer> pointers;
    CollectPointers(doc, json::json_pointer(), pointers);
    const json::json_pointer at = pointers[rng() % pointers.size()];
    if (at.empty()) {
      if (rng() % 2 == 0) doc["zz_unknown"] = Weird(rng);
      continue;
    }
    switch (rng() % 4) {
      case 0: {  // remove it
        const json::json_pointer parent = at.parent_pointer();
        json& container = doc[parent];
        if (container.is_object()) {
          container.erase(at.back());
        } else if (container.is_array() && !container.empty()) {
          container.erase(container.size() - 1);
        }
        break;
      }
      case 1:  // an unknown field beside it
        if (doc[at.parent_pointer()].is_object()) doc[at.parent_pointer()]["zz_unknown"] = 1;
        break;
      default:
        doc[at] = Weird(rng);
        break;
    }
  }
  return doc;
}

json ValidJob(int k) {
  switch (k % 4) {
    case 0:
      return {{"id", "fuzz-" + std::to_string(k)},
              {"kind", "training"},
              {"priority", 3},
              {"gpus", 4},
              {"duration_steps", 2}};
    case 1:
      return {
          {"kind", "batch_inference"},
          {"priority", 2.5},
          {"shapes", {{{"gpus", 2}, {"duration_steps", 4}}, {{"gpus", 8}, {"duration_steps", 1}}}},
          {"min_gpu_memory_gb", 40}};
    case 2:
      return {{"kind", "training"},
              {"priority", 1},
              {"gpus", 8},
              {"features",
               {{"method", "lora"}, {"params_b", 70}, {"tokens", 2.5e8}, {"gpu_type", "H100"}}}};
    default:
      return {{"kind", "quantization"},
              {"priority", 4},
              {"gpus", 1},
              {"features", {{"params_b", 7}, {"algorithm", "awq"}, {"gpu_type", "H100"}}}};
  }
}

json ValidService(int k) {
  json service = {{"id", "svc-" + std::to_string(k)},
                  {"priority", 5},
                  {"min_gpus", 0},
                  {"max_gpus", 4},
                  {"max_change_per_step", 2},
                  {"demand", json(std::vector<int>(12, 1))}};
  if (k % 2 == 1) {
    service.erase("demand");
    service["forecast"] = {{"per_gpu_rate", 10}, {"headroom", 0.2}};
  }
  return service;
}

json ValidTraffic(int k) {
  json samples = json::array();
  for (int h = 0; h < 3; ++h) {
    samples.push_back({{"time", 1.7e9 + 3600.0 * (3 * k + h)}, {"rate", 20 + h}});
  }
  if (k % 2 == 1) samples[0]["time"] = "2024-05-06T14:00:00Z";
  return {{"samples", samples}};
}

json ValidWhatIf(int k) {
  return {{"jobs", {ValidJob(k)}},
          {"cancel", json::array()},
          {"policy", "ordo"},
          {"time_limit_s", 0.05}};
}

// What an answer to bad input may be: success, or a 4xx (a 400 naming the field).
void ExpectHandled(const Result<json>& result, const json& body, uint32_t seed) {
  if (result) return;
  const Error& e = result.error();
  const int status = HttpStatus(e.code);
  EXPECT_GE(status, 400) << "seed " << seed << ": " << body.dump();
  EXPECT_LT(status, 500) << "seed " << seed << ": " << body.dump() << " -> " << e.ToString();
  EXPECT_FALSE(e.message.empty()) << "seed " << seed;
  if (status == 400) {
    EXPECT_FALSE(e.field.empty()) << "seed " << seed
                                  << ": a 400 must name the field: " << body.dump() << " -> "
                                  << e.message;
    EXPECT_NE(e.field.back(), '.') << "seed " << seed << ": " << e.field;
    EXPECT_NE(e.field.front(), '.') << "seed " << seed << ": " << e.field;
  }
}

TEST(BadInput, MutatedRequestsAreRefusedWithTheFieldNamedAndNeverCrash) {
  ScratchDir dir;
  EngineOptions options;
  options.db_path = dir.db();
  options.manual_clock = true;
  options.full_interval_s = 0;
  options.debounce_s = 0.001;
  auto opened = Engine::Open(testing::Config(), options, &testing::QuietLogger());
  ASSERT_TRUE(opened) << opened.error().ToString();
  Engine& engine = **opened;
  engine.Start();
  // A service traffic can be posted to, and a job to cancel in what-ifs.
  ASSERT_TRUE(testing::PutService(engine, kAdminPrincipal, ValidService(1), std::nullopt, true));
  ASSERT_TRUE(testing::SubmitJob(engine, kA, ValidJob(0)));

  const uint32_t base_seed = 20261129;
  int accepted = 0;
  int refused = 0;
  std::map<std::string, int> answers;  // "status field" -> count, printed for the record
  for (uint32_t round = 0; round < 600; ++round) {
    const uint32_t seed = base_seed + round;
    std::mt19937 rng(seed);
    const int k = static_cast<int>(round);
    Result<json> result = json();
    json body;
    switch (round % 4) {
      case 0:
        body = Mutate(ValidJob(k), rng);
        result = testing::SubmitJob(engine, kA, body);
        break;
      case 1:
        body = Mutate(ValidService(k), rng);
        result = testing::PutService(engine, kAdminPrincipal, body, std::nullopt, true);
        break;
      case 2:
        body = Mutate(ValidTraffic(k), rng);
        result = testing::PostTraffic(engine, kAdminPrincipal, "svc-1", body);
        break;
      default:
        body = Mutate(ValidWhatIf(k), rng);
        result = testing::WhatIf(engine, kA, body);
        break;
    }
    ExpectHandled(result, body, seed);
    (result ? accepted : refused)++;
    if (!result) ++answers[std::to_string(testing::Status(result)) + " " + result.error().field];
    if (::testing::Test::HasFailure()) break;
  }
  std::cout << accepted << " accepted, " << refused << " refused:";
  for (const auto& [answer, n] : answers) std::cout << " [" << answer << "] x" << n;
  std::cout << "\n";
  // Both outcomes occurred: the mutations neither all missed nor all broke the body.
  EXPECT_GT(accepted, 20);
  EXPECT_GT(refused, 200);
  // Still serving, and every state it published is still one a plan can be made from.
  auto after = testing::SubmitJob(engine, kA, ValidJob(4));
  ASSERT_TRUE(after) << after.error().ToString();
  auto advanced = engine.Advance(kAdminPrincipal, 2);
  ASSERT_TRUE(advanced) << advanced.error().ToString();
  EXPECT_TRUE(engine.WaitForPlan(engine.StateVersion(), 10));
  engine.Stop();
}

}  // namespace
}  // namespace ordo::service
