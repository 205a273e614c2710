// Jobs and services between JSON and the model: request bodies and the specs the store keeps are
// read by io's scenario reader (a body is wrapped into a one-job scenario with the config's
// cluster), so a job posted to the service obeys exactly the rules of a job in a scenario file and
// its errors name the same fields, without the `jobs[0].` prefix.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
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

/// `{"error": {"field": ..., "message": ...}}`.
nlohmann::json ErrorJson(const Error& error);

}  // namespace ordo::service
