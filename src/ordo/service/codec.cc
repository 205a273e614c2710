#include "ordo/service/codec.h"

#include <utility>

#include "ordo/io/document.h"
#include "ordo/io/json_fields.h"

namespace ordo::service {
namespace {

using Json = nlohmann::json;

constexpr double kMaxRate = 1e12;
constexpr double kMaxHeadroom = 100;
constexpr size_t kMaxTrafficSamples = 100'000;
constexpr double kMaxUnixTime = 1e11;
constexpr double kMaxSampleRate = 1e15;
constexpr size_t kMaxWhatIfJobs = 10'000;
constexpr size_t kMaxWhatIfServices = 1000;
constexpr size_t kMaxPolicyName = 64;

// An entry's error under its list's path: `jobs[2]` + `gpus` -> `jobs[2].gpus`; `jobs[2]` + ""
// (the entry itself) -> `jobs[2]`.
Error Nested(Error error, const std::string& parent) {
  error.field = error.field.empty() ? parent : io::internal::FieldPath(parent, error.field);
  return error;
}

// The scenario a body is wrapped into: the config's grid and cluster, one job or one service.
Json Wrapper(const ServiceConfig& config) {
  Json doc = Json::object();
  doc["version"] = 1;
  doc["step_minutes"] = config.base.step_minutes;
  doc["horizon_steps"] = config.base.horizon_steps;
  doc["cluster"] = config.cluster_json;
  return doc;
}

// `jobs[0].gpus` -> `gpus`: the wrapper is invisible to the caller.
Error Unwrap(Error error, std::string_view prefix) {
  const std::string dotted = std::string(prefix) + ".";
  if (error.field == prefix) {
    error.field.clear();
  } else if (error.field.rfind(dotted, 0) == 0) {
    error.field = error.field.substr(dotted.size());
  }
  return error;
}

// The first group matching `req` that has a block of `gpus`; or which of the two is missing.
Result<void> CheckFits(const Cluster& cluster, const GpuRequirement& req, int gpus,
                       const std::string& gpus_field) {
  bool any_group = false;
  for (int g = 0; g < static_cast<int>(cluster.groups.size()); ++g) {
    const NodeGroup& group = cluster.groups[g];
    if (!req.Matches(group)) continue;
    any_group = true;
    const int gpn = group.gpus_per_node;
    if (gpus <= cluster.group_gpus(g) && (gpus <= gpn || gpus % gpn == 0)) return {};
  }
  if (!any_group) {
    return FailInput(req.gpu_type ? "gpu_type" : "min_gpu_memory_gb",
                     "no node group of the cluster matches the job's GPU requirement");
  }
  return FailInput(gpus_field, "no node group matching the job has a block of " +
                                   std::to_string(gpus) + " GPUs");
}

Result<Job> ParseOneJob(Json job, const ServiceConfig& config, const io::ReadOptions& options) {
  job["arrival_step"] = 0;
  Json doc = Wrapper(config);
  doc["jobs"] = Json::array({std::move(job)});
  auto scenario = io::ParseScenario(doc.dump(), false, options);
  if (!scenario) return Fail(Unwrap(scenario.error(), "jobs[0]"));
  return std::move(scenario->jobs.front());
}

Result<Service> ParseOneService(Json service, const ServiceConfig& config) {
  Json doc = Wrapper(config);
  doc["services"] = Json::array({std::move(service)});
  auto scenario = io::ParseScenario(doc.dump(), false);
  if (!scenario) return Fail(Unwrap(scenario.error(), "services[0]"));
  return std::move(scenario->services.front());
}

Result<std::optional<TrafficDemand>> ReadForecast(const Json& body) {
  auto it = body.find("forecast");
  if (it == body.end()) return std::optional<TrafficDemand>();
  auto obj = io::internal::ObjectReader::Make(*it, "forecast", "the forecast settings");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(obj->AllowOnly({"per_gpu_rate", "headroom", "method"}));
  TrafficDemand traffic;
  ORDO_ASSIGN_OR_RETURN(traffic.per_gpu_rate, obj->Number("per_gpu_rate", 0, kMaxRate, true));
  std::optional<double> headroom;
  ORDO_ASSIGN_OR_RETURN(headroom, obj->OptionalNumber("headroom", 0, kMaxHeadroom));
  if (headroom) traffic.headroom = *headroom;
  ORDO_ASSIGN_OR_RETURN(auto method, obj->OptionalString("method", 32, true));
  if (method && *method == "profile") {
    traffic.method = forecast::DemandMethod::kProfile;
  } else if (method && *method != "level-shape") {
    return FailInput(obj->Path("method"),
                     R"(must be "level-shape" or "profile" (got ")" + *method + "\")");
  }
  return std::optional<TrafficDemand>(traffic);
}

}  // namespace

Result<JobBody> ReadJobBody(const Json& body, const ServiceConfig& config,
                            const io::ReadOptions& options) {
  if (!body.is_object()) {
    return FailInput("", "a job must be a JSON object (got " + io::internal::Describe(body) + ")");
  }
  for (const char* server_field : {"arrival_step", "running"}) {
    if (body.contains(server_field)) {
      return FailInput(server_field,
                       "is set by the service: a job arrives when it is posted and runs when the "
                       "plan starts it");
    }
  }
  JobBody out;
  Json job = body;
  if (auto id = body.find("id"); id != body.end()) {
    if (!id->is_string() || !IsSafeId(id->get_ref<const std::string&>(), kMaxIdLength)) {
      return FailInput("id", "must be a string of 1 to 128 letters, digits, '.', '_', '-' or ':'");
    }
    out.id_given = true;
  } else {
    job["id"] = "unnamed";  // replaced by the id the service assigns
  }
  ORDO_ASSIGN_OR_RETURN(out.job, ParseOneJob(std::move(job), config, options));
  const bool single = out.job.shapes.size() == 1;
  for (size_t k = 0; k < out.job.shapes.size(); ++k) {
    const std::string field = single ? "gpus" : "shapes[" + std::to_string(k) + "].gpus";
    ORDO_RETURN_IF_ERROR(
        CheckFits(config.base.cluster, out.job.requirement, out.job.shapes[k].gpus, field));
  }
  return out;
}

Json JobSpecJson(const Job& job) {
  Json out = Json::object();
  out["id"] = job.id;
  out["kind"] = std::string(JobKindName(job.kind));
  out["priority"] = job.priority;
  if (job.shapes.size() == 1) {
    out["gpus"] = job.shapes.front().gpus;
    out["duration_steps"] = job.shapes.front().duration_steps;
  } else {
    Json shapes = Json::array();
    for (const Shape& shape : job.shapes) {
      shapes.push_back({{"gpus", shape.gpus}, {"duration_steps", shape.duration_steps}});
    }
    out["shapes"] = std::move(shapes);
  }
  if (job.requirement.gpu_type) out["gpu_type"] = *job.requirement.gpu_type;
  if (job.requirement.min_gpu_memory_gb) {
    out["min_gpu_memory_gb"] = *job.requirement.min_gpu_memory_gb;
  }
  if (job.checkpoint) {
    out["checkpoint"] = {{"every_steps", job.checkpoint->every_steps},
                         {"restart_steps", job.checkpoint->restart_steps}};
  }
  if (!job.features_json.empty()) {
    Json features = Json::parse(job.features_json, nullptr, false);
    if (!features.is_discarded()) out["features"] = std::move(features);
  }
  return out;
}

Result<Job> ReadJobSpec(std::string_view text, const ServiceConfig& config) {
  auto doc = io::ParseDocument(text, false);
  if (!doc) return Fail(doc.error());
  if (!doc->is_object()) return FailInput("", "a stored job must be a JSON object");
  return ParseOneJob(std::move(*doc), config, {});
}

Result<ServiceBody> ReadServiceBody(const Json& body, const ServiceConfig& config,
                                    std::optional<std::string_view> path_id) {
  if (!body.is_object()) {
    return FailInput("",
                     "a service must be a JSON object (got " + io::internal::Describe(body) + ")");
  }
  Json service = body;
  if (auto id = body.find("id"); id != body.end()) {
    if (!id->is_string() || !IsSafeId(id->get_ref<const std::string&>(), kMaxIdLength)) {
      return FailInput("id", "must be a string of 1 to 128 letters, digits, '.', '_', '-' or ':'");
    }
    if (path_id && *id != *path_id) {
      return FailInput("id", "must equal the id in the path (\"" + std::string(*path_id) + "\")");
    }
  } else if (path_id) {
    service["id"] = std::string(*path_id);
  }
  ServiceBody out;
  ORDO_ASSIGN_OR_RETURN(out.traffic, ReadForecast(body));
  service.erase("forecast");
  if (out.traffic && !service.contains("demand")) {
    service["demand"] = Json(std::vector<int>(static_cast<size_t>(config.base.horizon_steps), 0));
  }
  ORDO_ASSIGN_OR_RETURN(out.service, ParseOneService(std::move(service), config));
  return out;
}

Json ServiceSpecJson(const Service& service, const std::optional<TrafficDemand>& traffic) {
  Json out = Json::object();
  out["id"] = service.id;
  out["priority"] = service.priority;
  out["min_gpus"] = service.min_gpus;
  out["max_gpus"] = service.max_gpus;
  if (service.max_change_per_step) out["max_change_per_step"] = *service.max_change_per_step;
  if (service.current_gpus) out["current_gpus"] = *service.current_gpus;
  if (service.requirement.gpu_type) out["gpu_type"] = *service.requirement.gpu_type;
  if (service.requirement.min_gpu_memory_gb) {
    out["min_gpu_memory_gb"] = *service.requirement.min_gpu_memory_gb;
  }
  out["demand"] = service.demand;
  if (traffic) {
    out["forecast"] = {{"per_gpu_rate", traffic->per_gpu_rate},
                       {"headroom", traffic->headroom},
                       {"method", std::string(forecast::DemandMethodName(traffic->method))}};
  }
  return out;
}

Result<ServiceBody> ReadServiceSpec(std::string_view text, const ServiceConfig& config) {
  auto doc = io::ParseDocument(text, false);
  if (!doc) return Fail(doc.error());
  return ReadServiceBody(*doc, config, std::nullopt);
}

Result<Json> ParseRequestBody(std::string_view body) {
  if (body.empty()) return FailInput("", "the body must be a JSON object");
  auto doc = io::ParseDocument(body, false);
  if (!doc) return FailInput(doc.error().field, "invalid JSON: " + doc.error().message);
  return std::move(*doc);
}

Result<TrafficBody> ReadTrafficBody(const Json& body) {
  using io::internal::ObjectReader;
  ORDO_ASSIGN_OR_RETURN(ObjectReader obj, ObjectReader::Make(body, "", "a traffic post"));
  ORDO_RETURN_IF_ERROR(obj.AllowOnly({"samples"}));
  ORDO_ASSIGN_OR_RETURN(const Json* list, obj.List("samples", kMaxTrafficSamples));
  if (list->empty()) return FailInput("samples", "must list at least one sample");
  TrafficBody out;
  out.samples.reserve(list->size());
  for (size_t k = 0; k < list->size(); ++k) {
    const std::string path = io::internal::IndexPath("samples", k);
    ORDO_ASSIGN_OR_RETURN(ObjectReader sample,
                          ObjectReader::Make((*list)[k], path, "a traffic sample"));
    ORDO_RETURN_IF_ERROR(sample.AllowOnly({"time", "rate"}));
    const Json* time = sample.Find("time");
    if (time == nullptr) return Fail(sample.Missing("time"));
    forecast::RatePoint point;
    if (time->is_string()) {
      ORDO_ASSIGN_OR_RETURN(
          point.time_s, forecast::ParseTimestamp(time->get<std::string>(), sample.Path("time")));
    } else {
      ORDO_ASSIGN_OR_RETURN(point.time_s,
                            io::internal::ToNumber(*time, sample.Path("time"), 0, kMaxUnixTime));
    }
    ORDO_ASSIGN_OR_RETURN(point.rate, sample.Number("rate", 0, kMaxSampleRate));
    if (!out.samples.empty() && point.time_s <= out.samples.back().time_s) {
      return FailInput(sample.Path("time"), "times must increase from sample to sample");
    }
    out.samples.push_back(point);
  }
  return out;
}

Result<int> ReadAdvanceBody(const Json& body, int max_steps) {
  using io::internal::ObjectReader;
  ORDO_ASSIGN_OR_RETURN(ObjectReader obj, ObjectReader::Make(body, "", "a clock advance"));
  ORDO_RETURN_IF_ERROR(obj.AllowOnly({"steps"}));
  ORDO_ASSIGN_OR_RETURN(const int64_t steps, obj.Int("steps", 1, max_steps));
  return static_cast<int>(steps);
}

bool WhatIfChangesServices(const Json& body) {
  if (!body.is_object()) return false;
  auto it = body.find("services");
  return it != body.end() && it->is_array() && !it->empty();
}

Result<WhatIfRequest> ReadWhatIfBody(const Json& body, const ServiceConfig& config,
                                     const io::ReadOptions& options, double max_time_limit_s,
                                     const std::atomic<bool>* stop) {
  using io::internal::IndexPath;
  using io::internal::ObjectReader;
  ORDO_ASSIGN_OR_RETURN(ObjectReader obj, ObjectReader::Make(body, "", "a what-if"));
  ORDO_RETURN_IF_ERROR(obj.AllowOnly({"jobs", "cancel", "services", "policy", "time_limit_s"}));
  WhatIfRequest out;
  ORDO_ASSIGN_OR_RETURN(out.policy, obj.OptionalString("policy", kMaxPolicyName, false));
  ORDO_ASSIGN_OR_RETURN(out.time_limit_s,
                        obj.OptionalNumber("time_limit_s", 0, max_time_limit_s, true));
  ORDO_ASSIGN_OR_RETURN(const Json* jobs, obj.OptionalList("jobs", kMaxWhatIfJobs));
  for (size_t k = 0; jobs != nullptr && k < jobs->size(); ++k) {
    // Reading 10,000 jobs takes a while: a shutdown does not wait for it.
    if (k % 256 == 0 && stop != nullptr && *stop) {
      return Fail(Error{ErrorCode::kUnavailable, "", "the service is shutting down"});
    }
    auto job = ReadJobBody((*jobs)[k], config, options);
    if (!job) return Fail(Nested(job.error(), IndexPath("jobs", k)));
    out.jobs.push_back(std::move(*job));
  }
  ORDO_ASSIGN_OR_RETURN(const Json* cancel, obj.OptionalList("cancel", kMaxWhatIfJobs));
  for (size_t k = 0; cancel != nullptr && k < cancel->size(); ++k) {
    ORDO_ASSIGN_OR_RETURN(
        std::string id,
        io::internal::ToString((*cancel)[k], IndexPath("cancel", k), kMaxIdLength, false));
    out.cancel.push_back(std::move(id));
  }
  ORDO_ASSIGN_OR_RETURN(const Json* services, obj.OptionalList("services", kMaxWhatIfServices));
  for (size_t k = 0; services != nullptr && k < services->size(); ++k) {
    auto service = ReadServiceBody((*services)[k], config, std::nullopt);
    if (!service) return Fail(Nested(service.error(), IndexPath("services", k)));
    out.services.push_back(std::move(*service));
  }
  return out;
}

Json ErrorJson(const Error& error) {
  return {{"error", {{"field", error.field}, {"message", error.message}}}};
}

}  // namespace ordo::service
