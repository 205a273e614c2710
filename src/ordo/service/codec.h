// Request bodies and stored specs between JSON and typed requests: the HTTP layer (api.cc) reads
// every body here and hands the engine the result, so the engine never sees JSON input. Jobs and
// services are read by io's scenario reader (a body is wrapped into a one-job scenario with the
// config's cluster), so a job posted to the service obeys exactly the rules of a job in a scenario
// file and its errors name the same fields, without the `jobs[0].` prefix. Every error here is
// invalid input naming the field, except a read cut short by a shutdown (kUnavailable).
#pragma once

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
#include "ordo/forecast/time_series.h"
#include "ordo/io/scenario_io.h"
#include "ordo/service/config.h"
#include "ordo/service/state.h"

namespace ordo::service {

/// Longest id the service accepts for a job or a service (ids travel in URL paths).
inline constexpr size_t kMaxIdLength = 128;

struct JobBody {
  Job job;
  bool id_given = false;  // false: the caller assigns an id
};

/// Reads a job posted to `POST /v1/jobs`: a job object as in a scenario, without `arrival_step`
/// (it arrives now) and `running`, `id` optional (1..128 of [A-Za-z0-9._:-]). Beyond the scenario
/// reader's rules, each shape must fit some node group matching the job's requirement. Errors
/// name the field (`gpus`, `shapes[1].duration_steps`, `features.params_b`).
[[nodiscard]] Result<JobBody> ReadJobBody(const nlohmann::json& body, const ServiceConfig& config,
                                          const io::ReadOptions& options);

/// A job as JSON in the scenario format without `arrival_step` and `running` (what the store
/// keeps; durations resolved, features kept).
nlohmann::json JobSpecJson(const Job& job);
/// Reads JobSpecJson's output back.
[[nodiscard]] Result<Job> ReadJobSpec(std::string_view text, const ServiceConfig& config);

struct ServiceBody {
  Service service;                       // demand: the profile (horizon_steps entries)
  std::optional<TrafficDemand> traffic;  // from the `forecast` field
};

/// Reads a service posted to `POST /v1/services` or `PUT /v1/services/{id}`: a service object as
/// in a scenario, plus an optional `forecast: {"per_gpu_rate": r, "headroom": h}` under which the
/// demand comes from posted traffic (`demand` may then be omitted; it is the fallback until
/// traffic arrives, zeros when omitted). `path_id`, when given, is the id in the URL: the body's
/// `id` may be omitted and must otherwise equal it.
[[nodiscard]] Result<ServiceBody> ReadServiceBody(const nlohmann::json& body,
                                                  const ServiceConfig& config,
                                                  std::optional<std::string_view> path_id);

nlohmann::json ServiceSpecJson(const Service& service, const std::optional<TrafficDemand>& traffic);
[[nodiscard]] Result<ServiceBody> ReadServiceSpec(std::string_view text,
                                                  const ServiceConfig& config);

/// A request's body as JSON. The Content-Type is not checked (curl -d sends form encoding): the
/// body must parse as JSON whatever it claims. Errors are invalid input naming where it broke.
[[nodiscard]] Result<nlohmann::json> ParseRequestBody(std::string_view body);

/// `POST /v1/services/{id}/traffic`: `{"samples": [{"time": ISO 8601 or Unix seconds, "rate": r},
/// ...]}`, at least one sample, times increasing. Errors name the field (`samples[2].time`).
struct TrafficBody {
  std::vector<forecast::RatePoint> samples;
};
[[nodiscard]] Result<TrafficBody> ReadTrafficBody(const nlohmann::json& body);

/// `POST /v1/clock/advance`: `{"steps": n}` with n from 1 to `max_steps`.
[[nodiscard]] Result<int> ReadAdvanceBody(const nlohmann::json& body, int max_steps);

/// `POST /v1/whatif`: a hypothetical change. Jobs and services are read as by ReadJobBody and
/// ReadServiceBody, their errors nested under `jobs[k]` and `services[k]`.
struct WhatIfRequest {
  std::optional<std::string> policy;   // the engine's fast policy when absent
  std::optional<double> time_limit_s;  // (0, max_time_limit_s]; a default by policy when absent
  std::vector<JobBody> jobs;           // added, in the caller's namespace
  std::vector<std::string> cancel;     // the caller's job ids, as it addresses them
  std::vector<ServiceBody> services;   // added or replacing (admin only: the engine checks)
  // When the request arrived: the time limit counts from here (the API sets the transport's).
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
};
/// True when the body asks to change services (a non-empty `services` list): the admin's, which
/// the API checks before reading the rest.
bool WhatIfChangesServices(const nlohmann::json& body);
/// `stop`, when set while the jobs are read (10,000 take a while), ends the reading with
/// kUnavailable: the service is shutting down.
[[nodiscard]] Result<WhatIfRequest> ReadWhatIfBody(const nlohmann::json& body,
                                                   const ServiceConfig& config,
                                                   const io::ReadOptions& options,
                                                   double max_time_limit_s,
                                                   const std::atomic<bool>* stop);

/// `{"error": {"field": ..., "message": ...}}`.
nlohmann::json ErrorJson(const Error& error);

}  // namespace ordo::service
