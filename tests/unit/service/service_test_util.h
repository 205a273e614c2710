// Shared by the service's unit tests: configs, a scratch directory, a quiet logger, an engine.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "ordo/service/api.h"
#include "ordo/service/codec.h"
#include "ordo/service/config.h"
#include "ordo/service/engine.h"
#include "ordo/service/log.h"

namespace ordo::service::testing {

/// A training job's submission body; no `id` field when `id` is empty (the service names it).
inline nlohmann::json JobBody(const std::string& id, int gpus, int duration, double priority = 1) {
  nlohmann::json job = {
      {"kind", "training"}, {"priority", priority}, {"gpus", gpus}, {"duration_steps", duration}};
  if (!id.empty()) job["id"] = id;
  return job;
}

inline constexpr const char* kAdmin = "admin-token-0123456789";
inline constexpr const char* kTokenA = "tenant-a-token-0123456789";
inline constexpr const char* kTokenB = "tenant-b-token-0123456789";

inline nlohmann::json ConfigJson(int nodes = 2, int horizon_steps = 12) {
  return {{"step_minutes", 60},
          {"horizon_steps", horizon_steps},
          {"cluster", {{"node_groups", {{{"name", "g"}, {"nodes", nodes}, {"gpus_per_node", 8}}}}}},
          {"tenants", {{{"name", "a"}, {"token", kTokenA}}, {{"name", "b"}, {"token", kTokenB}}}},
          {"admin_token", kAdmin}};
}

inline ServiceConfig Config(int nodes = 2, int horizon_steps = 12) {
  auto config = ParseServiceConfig(ConfigJson(nodes, horizon_steps).dump(), false);
  EXPECT_TRUE(config) << config.error().ToString();
  return *config;
}

inline const Principal kA{"a", false};
inline const Principal kB{"b", false};
inline const Principal kAdminPrincipal{"admin", true};

/// A fresh directory per test under the system's temp directory, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        std::filesystem::temp_directory_path() / ("ordo-service-" + std::to_string(getpid()) + "-" +
                                                  info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string db() const { return (path_ / "ordo.db").string(); }

 private:
  std::filesystem::path path_;
};

/// A logger that writes nowhere a test run shows (warnings and errors go to a temp file).
inline Logger& QuietLogger() {
  static std::FILE* sink = std::tmpfile();
  static Logger logger(LogLevel::kWarn, sink != nullptr ? sink : stderr);
  return logger;
}

/// Engine options for a test: its database in `dir`, the manual clock, no full mode of its own.
inline EngineOptions Manual(const ScratchDir& dir) {
  EngineOptions options;
  options.db_path = dir.db();
  options.manual_clock = true;
  options.full_interval_s = 0;
  options.debounce_s = 0.001;
  return options;
}

/// An opened and started engine, or null (with a test failure) when it cannot open.
inline std::unique_ptr<Engine> OpenEngine(const ServiceConfig& config, EngineOptions options) {
  auto engine = Engine::Open(config, std::move(options), &QuietLogger());
  EXPECT_TRUE(engine) << engine.error().ToString();
  if (!engine) return nullptr;
  (*engine)->Start();
  return std::move(*engine);
}

// Requests with JSON bodies, through the API's own steps (api.h): the body read by the codec,
// permission asked first where the API asks it.
using api::PostTraffic;
using api::PutService;
using api::SubmitJob;
using api::WhatIf;

/// The HTTP status the API answers a failed request with (api.h's one mapping).
inline int Status(const Result<nlohmann::json>& result) {
  EXPECT_FALSE(result) << "expected an error";
  return result ? 200 : HttpStatus(result.error().code);
}

}  // namespace ordo::service::testing
