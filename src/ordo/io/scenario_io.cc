// The strict scenario reader and the writer. Reading is two passes: this file checks every field on
// its own (type, range, allowed names, defaults, the shape and running rules local to one job);
// ValidateScenario then checks what needs the whole scenario (ids, blocks, feasibility). Fields are
// read in spec order, so the first error reported is the first a reader of the file would meet.
#include "ordo/io/scenario_io.h"

#include <cstdint>
#include <limits>
#include <new>

#include "ordo/core/validate.h"
#include "ordo/io/document.h"
#include "ordo/io/json_fields.h"

namespace ordo::io {
namespace {

using internal::IndexPath;
using internal::Json;
using internal::ObjectReader;
using internal::OrderedJson;

constexpr int kMaxStepMinutes = 7 * 24 * 60;  // as ValidateScenario: a step of at most a week
constexpr double kMaxUnmetMultiplier = 1e6;   // as ValidateScenario
// Memory sizes are finite and positive; the bound only keeps absurd values out.
constexpr double kMaxMemoryGb = 1e9;

Result<int> PowerOfTwo(const ObjectReader& obj, std::string_view key, int max) {
  auto n = obj.Int(key, 1, max);
  if (!n) return Fail(n.error());
  if (!internal::IsPowerOfTwo(*n)) {
    return FailInput(obj.Path(key),
                     "must be a power of two (1, 2, 4, 8, ...) (got " + std::to_string(*n) + ")");
  }
  return static_cast<int>(*n);
}

Result<GpuRequirement> ReadRequirement(const ObjectReader& obj) {
  GpuRequirement req;
  ORDO_ASSIGN_OR_RETURN(req.gpu_type, obj.OptionalString("gpu_type", Limits::kMaxIdLength, false));
  ORDO_ASSIGN_OR_RETURN(req.min_gpu_memory_gb,
                        obj.OptionalNumber("min_gpu_memory_gb", 0, kMaxMemoryGb));
  return req;
}

}  // namespace

Result<GpuRequirement> ReadRequirementJson(const nlohmann::json& value, const std::string& path) {
  ORDO_ASSIGN_OR_RETURN(const ObjectReader obj, ObjectReader::Make(value, path, "an object"));
  return ReadRequirement(obj);
}

Result<Checkpoint> ReadCheckpointJson(const nlohmann::json& value, const std::string& path) {
  ORDO_ASSIGN_OR_RETURN(const ObjectReader c, ObjectReader::Make(value, path, "the checkpoint"));
  ORDO_RETURN_IF_ERROR(c.AllowOnly({"every_steps", "restart_steps"}));
  Checkpoint read;
  int64_t n = 0;
  ORDO_ASSIGN_OR_RETURN(n, c.Int("every_steps", 1, Limits::kMaxDurationSteps));
  read.every_steps = static_cast<int>(n);
  ORDO_ASSIGN_OR_RETURN(n, c.Int("restart_steps", 0, Limits::kMaxDurationSteps));
  read.restart_steps = static_cast<int>(n);
  return read;
}

Result<Cluster> ReadClusterJson(const nlohmann::json& value) {
  auto obj = ObjectReader::Make(value, "cluster", "the cluster");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(obj->AllowOnly({"node_groups"}));
  auto groups = obj->List("node_groups", Limits::kMaxNodeGroups);
  if (!groups) return Fail(groups.error());
  if ((*groups)->empty())
    return FailInput(obj->Path("node_groups"), "must list at least one group");

  Cluster cluster;
  int64_t total_gpus = 0;
  for (size_t k = 0; k < (*groups)->size(); ++k) {
    auto g =
        ObjectReader::Make((**groups)[k], IndexPath(obj->Path("node_groups"), k), "a node group");
    if (!g) return Fail(g.error());
    ORDO_RETURN_IF_ERROR(
        g->AllowOnly({"name", "nodes", "gpus_per_node", "gpu_type", "gpu_memory_gb"}));
    NodeGroup group;
    std::optional<std::string> name;
    ORDO_ASSIGN_OR_RETURN(name, g->OptionalString("name", Limits::kMaxIdLength, true));
    group.name = name.value_or("");
    int64_t nodes = 0;
    ORDO_ASSIGN_OR_RETURN(nodes, g->Int("nodes", 1, Limits::kMaxGpus));
    group.nodes = static_cast<int>(nodes);
    auto gpn = g->Int("gpus_per_node", 1, 16);
    if (!gpn) return Fail(gpn.error());
    if (!internal::IsPowerOfTwo(*gpn)) {
      return FailInput(g->Path("gpus_per_node"), "must be a power of two: 1, 2, 4, 8 or 16 (got " +
                                                     std::to_string(*gpn) + ")");
    }
    group.gpus_per_node = static_cast<int>(*gpn);
    std::optional<std::string> gpu_type;
    ORDO_ASSIGN_OR_RETURN(gpu_type, g->OptionalString("gpu_type", Limits::kMaxIdLength, false));
    if (gpu_type) group.gpu_type = *gpu_type;
    std::optional<double> memory;
    ORDO_ASSIGN_OR_RETURN(memory, g->OptionalNumber("gpu_memory_gb", 0, kMaxMemoryGb, true));
    if (memory) group.gpu_memory_gb = *memory;
    // Checked here, before Cluster::Index() allocates a table of every GPU.
    total_gpus += nodes * group.gpus_per_node;
    if (total_gpus > Limits::kMaxGpus) {
      return FailInput(g->Path("nodes"), "the cluster would have more than " +
                                             std::to_string(Limits::kMaxGpus) + " GPUs");
    }
    cluster.groups.push_back(std::move(group));
  }
  return cluster;
}

namespace {

Result<Cluster> ReadCluster(const ObjectReader& top) {
  const Json* value = top.Find("cluster");
  if (value == nullptr) return Fail(top.Missing("cluster"));
  return ReadClusterJson(*value);
}

Result<Objective> ReadObjective(const ObjectReader& top) {
  Objective objective;
  const Json* value = top.Find("objective");
  if (value == nullptr) return objective;
  auto obj = ObjectReader::Make(*value, "objective", "the objective");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(obj->AllowOnly({"time_decay", "unmet_penalty_multiplier"}));
  std::optional<double> decay;
  ORDO_ASSIGN_OR_RETURN(decay, obj->OptionalNumber("time_decay", 0, 1));
  if (decay) objective.time_decay = *decay;
  std::optional<double> multiplier;
  ORDO_ASSIGN_OR_RETURN(multiplier,
                        obj->OptionalNumber("unmet_penalty_multiplier", 0, kMaxUnmetMultiplier));
  if (multiplier) objective.unmet_penalty_multiplier = *multiplier;
  return objective;
}

// One shape: `gpus` and `duration_steps` of `obj`. A missing duration is left at 0 and reported in
// `needs_duration` for the caller to resolve (only it knows whether that is allowed).
Result<Shape> ReadShape(const ObjectReader& obj, bool& needs_duration) {
  Shape shape;
  ORDO_ASSIGN_OR_RETURN(shape.gpus, PowerOfTwo(obj, "gpus", Limits::kMaxGpus));
  needs_duration = !obj.Has("duration_steps");
  if (!needs_duration) {
    int64_t duration = 0;
    ORDO_ASSIGN_OR_RETURN(duration, obj.Int("duration_steps", 1, Limits::kMaxDurationSteps));
    shape.duration_steps = static_cast<int>(duration);
  }
  return shape;
}

Result<int> ResolveDuration(const Job& job, const Shape& shape, const std::string& duration_path,
                            const std::string& job_path, int step_minutes,
                            const ReadOptions& options) {
  if (!options.resolve_duration) {
    return FailInput(duration_path, "missing required field (no duration forecaster is set up)");
  }
  if (job.features_json.empty()) {
    return FailInput(duration_path,
                     "missing required field (a forecaster can supply it only for a job with "
                     "features)");
  }
  // The resolver sees the job with just the shape being resolved, so it knows the GPU count.
  Job probe = job;
  probe.shapes = {Shape{shape.gpus, 0}};
  Result<int> duration = 0;
  try {
    duration = options.resolve_duration(probe, probe.features_json, step_minutes);
  } catch (const std::exception& ex) {
    return Fail(Error{ErrorCode::kInternal, job_path + ".features",
                      std::string("the duration forecaster failed: ") + ex.what()});
  } catch (...) {
    return Fail(
        Error{ErrorCode::kInternal, job_path + ".features", "the duration forecaster failed"});
  }
  if (!duration) {
    Error error = duration.error();
    error.field = internal::FieldPath(job_path + ".features", error.field);
    return Fail(std::move(error));
  }
  if (*duration < 1 || *duration > Limits::kMaxDurationSteps) {
    return FailInput(duration_path, "the forecast duration " + std::to_string(*duration) +
                                        " steps is outside 1.." +
                                        std::to_string(Limits::kMaxDurationSteps));
  }
  return *duration;
}

Result<Job> ReadJob(const Json& value, const std::string& path, int step_minutes,
                    const ReadOptions& options) {
  auto obj = ObjectReader::Make(value, path, "a job");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(
      obj->AllowOnly({"id", "kind", "priority", "arrival_step", "gpus", "duration_steps", "shapes",
                      "gpu_type", "min_gpu_memory_gb", "running", "features", "checkpoint"}));
  Job job;
  ORDO_ASSIGN_OR_RETURN(job.id, obj->String("id", Limits::kMaxIdLength, false));
  std::string kind;
  ORDO_ASSIGN_OR_RETURN(kind, obj->String("kind", Limits::kMaxIdLength, false));
  const auto parsed_kind = ParseJobKind(kind);
  if (!parsed_kind) {
    return FailInput(obj->Path("kind"), "unknown kind \"" + kind +
                                            "\" (expected training, batch_inference or "
                                            "quantization)");
  }
  job.kind = *parsed_kind;
  ORDO_ASSIGN_OR_RETURN(job.priority, obj->Number("priority", 0, Limits::kMaxPriority, true));
  int64_t arrival = 0;
  ORDO_ASSIGN_OR_RETURN(arrival,
                        obj->Int("arrival_step", -Limits::kMaxAbsStep, Limits::kMaxAbsStep));
  job.arrival_step = static_cast<int>(arrival);
  ORDO_ASSIGN_OR_RETURN(job.requirement, ReadRequirement(*obj));
  if (const Json* features = obj->Find("features")) {
    if (!features->is_object()) {
      return FailInput(obj->Path("features"),
                       "must be an object (got " + internal::Describe(*features) + ")");
    }
    job.features_json = features->dump(-1, ' ', false, Json::error_handler_t::replace);
  }

  // The shapes: `gpus` + `duration_steps`, or a `shapes` list — exactly one of the two.
  struct Pending {
    size_t shape;
    std::string path;  // of the missing duration_steps
  };
  std::vector<Pending> pending;
  const bool has_single = obj->Has("gpus") || obj->Has("duration_steps");
  if (const Json* shapes = obj->Find("shapes")) {
    if (has_single) {
      return FailInput(obj->Path("shapes"),
                       "give either gpus + duration_steps or shapes, not both");
    }
    ORDO_RETURN_IF_ERROR(internal::CheckList(*shapes, obj->Path("shapes"), Limits::kMaxShapes));
    if (shapes->empty()) return FailInput(obj->Path("shapes"), "must list at least one shape");
    for (size_t k = 0; k < shapes->size(); ++k) {
      auto s = ObjectReader::Make((*shapes)[k], IndexPath(obj->Path("shapes"), k), "a shape");
      if (!s) return Fail(s.error());
      ORDO_RETURN_IF_ERROR(s->AllowOnly({"gpus", "duration_steps"}));
      bool needs_duration = false;
      Shape shape;
      ORDO_ASSIGN_OR_RETURN(shape, ReadShape(*s, needs_duration));
      if (needs_duration) pending.push_back({k, s->Path("duration_steps")});
      job.shapes.push_back(shape);
    }
  } else {
    if (!obj->Has("gpus")) {
      return Fail(obj->Missing("gpus", "give gpus + duration_steps, or shapes"));
    }
    bool needs_duration = false;
    Shape shape;
    ORDO_ASSIGN_OR_RETURN(shape, ReadShape(*obj, needs_duration));
    if (needs_duration) pending.push_back({0, obj->Path("duration_steps")});
    job.shapes.push_back(shape);
  }

  if (const Json* running = obj->Find("running")) {
    auto r = ObjectReader::Make(*running, obj->Path("running"), "the running placement");
    if (!r) return Fail(r.error());
    ORDO_RETURN_IF_ERROR(
        r->AllowOnly({"start_step", "first_gpu", "progress_steps", "restart_steps_left"}));
    if (job.shapes.size() != 1) {
      return FailInput(obj->Path("running"), "a running job must have a single shape (got " +
                                                 std::to_string(job.shapes.size()) + " shapes)");
    }
    RunningPlacement placement;
    int64_t start = 0;
    ORDO_ASSIGN_OR_RETURN(start, r->Int("start_step", -Limits::kMaxAbsStep, Limits::kMaxAbsStep));
    if (start > 0) {
      return FailInput(r->Path("start_step"),
                       "must be <= 0: a running job started now or in the past (got " +
                           std::to_string(start) + ")");
    }
    placement.start_step = static_cast<int>(start);
    int64_t first = 0;
    ORDO_ASSIGN_OR_RETURN(first, r->Int("first_gpu", 0, Limits::kMaxGpus - 1));
    placement.first_gpu = static_cast<int>(first);
    std::optional<int64_t> progress;
    ORDO_ASSIGN_OR_RETURN(progress,
                          r->OptionalInt("progress_steps", 0, Limits::kMaxDurationSteps - 1));
    if (progress) placement.progress_steps = static_cast<int>(*progress);
    std::optional<int64_t> restart_left;
    ORDO_ASSIGN_OR_RETURN(restart_left,
                          r->OptionalInt("restart_steps_left", 0, Limits::kMaxDurationSteps));
    if (restart_left) placement.restart_steps_left = static_cast<int>(*restart_left);
    job.running = placement;
  }

  if (const Json* checkpoint = obj->Find("checkpoint")) {
    ORDO_ASSIGN_OR_RETURN(job.checkpoint, ReadCheckpointJson(*checkpoint, obj->Path("checkpoint")));
  }

  for (const Pending& p : pending) {
    ORDO_ASSIGN_OR_RETURN(
        job.shapes[p.shape].duration_steps,
        ResolveDuration(job, job.shapes[p.shape], p.path, path, step_minutes, options));
  }
  return job;
}

Result<Service> ReadService(const Json& value, const std::string& path, int horizon_steps,
                            int cluster_gpus) {
  auto obj = ObjectReader::Make(value, path, "a service");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(
      obj->AllowOnly({"id", "priority", "min_gpus", "max_gpus", "max_change_per_step",
                      "current_gpus", "gpu_type", "min_gpu_memory_gb", "demand"}));
  Service service;
  ORDO_ASSIGN_OR_RETURN(service.id, obj->String("id", Limits::kMaxIdLength, false));
  ORDO_ASSIGN_OR_RETURN(service.priority, obj->Number("priority", 0, Limits::kMaxPriority, true));
  std::optional<int64_t> n;
  ORDO_ASSIGN_OR_RETURN(n, obj->OptionalInt("min_gpus", 0, Limits::kMaxGpus));
  service.min_gpus = static_cast<int>(n.value_or(0));
  ORDO_ASSIGN_OR_RETURN(n, obj->OptionalInt("max_gpus", 0, Limits::kMaxGpus));
  service.max_gpus = static_cast<int>(n.value_or(cluster_gpus));
  if (service.min_gpus > service.max_gpus) {
    if (n) {
      return FailInput(obj->Path("max_gpus"), "must be >= min_gpus (" +
                                                  std::to_string(service.min_gpus) + ") (got " +
                                                  std::to_string(service.max_gpus) + ")");
    }
    return FailInput(obj->Path("min_gpus"),
                     "must be <= max_gpus, which defaults to the cluster's " +
                         std::to_string(cluster_gpus) + " GPUs (got " +
                         std::to_string(service.min_gpus) + ")");
  }
  ORDO_ASSIGN_OR_RETURN(n, obj->OptionalInt("max_change_per_step", 0, Limits::kMaxGpus));
  if (n) service.max_change_per_step = static_cast<int>(*n);
  ORDO_ASSIGN_OR_RETURN(n, obj->OptionalInt("current_gpus", 0, Limits::kMaxGpus));
  if (n) service.current_gpus = static_cast<int>(*n);
  ORDO_ASSIGN_OR_RETURN(service.requirement, ReadRequirement(*obj));

  const Json* demand = obj->Find("demand");
  if (demand == nullptr) return Fail(obj->Missing("demand"));
  if (!demand->is_array()) {
    return FailInput(obj->Path("demand"),
                     "must be a list of GPU counts (got " + internal::Describe(*demand) + ")");
  }
  const Json& list = *demand;
  if (list.size() != static_cast<size_t>(horizon_steps)) {
    return FailInput(obj->Path("demand"),
                     "must have horizon_steps = " + std::to_string(horizon_steps) +
                         " entries (got " + std::to_string(list.size()) + ")");
  }
  service.demand.reserve(list.size());
  const std::string demand_path = obj->Path("demand");
  for (size_t t = 0; t < list.size(); ++t) {
    auto d = internal::ToInt(list[t], internal::LazyPath(demand_path, t), 0, Limits::kMaxGpus);
    if (!d) return Fail(d.error());
    service.demand.push_back(static_cast<int>(*d));
  }
  return service;
}

Result<Scenario> ReadScenario(const Json& root, const ReadOptions& options) {
  if (!root.is_object()) {
    return FailInput("", "a scenario must be a JSON object (got " + internal::Describe(root) + ")");
  }
  auto top = ObjectReader::Make(root, "", "a scenario");
  if (!top) return Fail(top.error());
  ORDO_RETURN_IF_ERROR(
      top->AllowOnly({"version", "name", "description", "step_minutes", "horizon_steps", "cluster",
                      "objective", "jobs", "services"}));
  Scenario scenario;
  const Json* version = top->Find("version");
  if (version == nullptr) return Fail(top->Missing("version", "this reader knows version 1"));
  auto v = internal::ToInt(*version, "version", std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max());
  if (!v) return Fail(v.error());
  if (*v != 1) {
    return FailInput("version",
                     "unsupported version " + std::to_string(*v) + "; this reader knows version 1");
  }
  std::optional<std::string> text;
  ORDO_ASSIGN_OR_RETURN(text, top->OptionalString("name", Limits::kMaxStringLength, true));
  scenario.name = text.value_or("");
  ORDO_ASSIGN_OR_RETURN(text, top->OptionalString("description", Limits::kMaxStringLength, true));
  scenario.description = text.value_or("");
  int64_t n = 0;
  ORDO_ASSIGN_OR_RETURN(n, top->Int("step_minutes", 1, kMaxStepMinutes));
  scenario.step_minutes = static_cast<int>(n);
  ORDO_ASSIGN_OR_RETURN(n, top->Int("horizon_steps", 1, Limits::kMaxHorizonSteps));
  scenario.horizon_steps = static_cast<int>(n);
  ORDO_ASSIGN_OR_RETURN(scenario.cluster, ReadCluster(*top));
  scenario.cluster.Index();
  ORDO_ASSIGN_OR_RETURN(scenario.objective, ReadObjective(*top));

  const Json* jobs = nullptr;
  ORDO_ASSIGN_OR_RETURN(jobs, top->OptionalList("jobs", static_cast<size_t>(Limits::kMaxJobs)));
  if (jobs != nullptr) {
    scenario.jobs.reserve(jobs->size());
    for (size_t j = 0; j < jobs->size(); ++j) {
      Job job;
      ORDO_ASSIGN_OR_RETURN(
          job, ReadJob((*jobs)[j], IndexPath("jobs", j), scenario.step_minutes, options));
      scenario.jobs.push_back(std::move(job));
    }
  }
  const Json* services = nullptr;
  ORDO_ASSIGN_OR_RETURN(services,
                        top->OptionalList("services", static_cast<size_t>(Limits::kMaxServices)));
  if (services != nullptr) {
    scenario.services.reserve(services->size());
    for (size_t i = 0; i < services->size(); ++i) {
      Service service;
      ORDO_ASSIGN_OR_RETURN(
          service, ReadService((*services)[i], IndexPath("services", i), scenario.horizon_steps,
                               scenario.cluster.total_gpus()));
      scenario.services.push_back(std::move(service));
    }
  }
  ORDO_RETURN_IF_ERROR(ValidateScenario(scenario));
  return scenario;
}

void RequirementJson(const GpuRequirement& req, OrderedJson& out) {
  if (req.gpu_type) out["gpu_type"] = *req.gpu_type;
  if (req.min_gpu_memory_gb) {
    out["min_gpu_memory_gb"] = internal::NumberJson(*req.min_gpu_memory_gb);
  }
}

OrderedJson JobJson(const Job& job) {
  OrderedJson out = OrderedJson::object();
  out["id"] = job.id;
  out["kind"] = std::string(JobKindName(job.kind));
  out["priority"] = internal::NumberJson(job.priority);
  out["arrival_step"] = job.arrival_step;
  if (job.shapes.size() == 1) {
    out["gpus"] = job.shapes.front().gpus;
    out["duration_steps"] = job.shapes.front().duration_steps;
  } else {
    OrderedJson shapes = OrderedJson::array();
    for (const Shape& shape : job.shapes) {
      shapes.push_back({{"gpus", shape.gpus}, {"duration_steps", shape.duration_steps}});
    }
    out["shapes"] = std::move(shapes);
  }
  RequirementJson(job.requirement, out);
  if (job.running) {
    OrderedJson running = {{"start_step", job.running->start_step},
                           {"first_gpu", job.running->first_gpu}};
    if (job.running->progress_steps) running["progress_steps"] = *job.running->progress_steps;
    if (job.running->restart_steps_left) {
      running["restart_steps_left"] = *job.running->restart_steps_left;
    }
    out["running"] = std::move(running);
  }
  if (job.checkpoint) {
    out["checkpoint"] = {{"every_steps", job.checkpoint->every_steps},
                         {"restart_steps", job.checkpoint->restart_steps}};
  }
  if (!job.features_json.empty()) {
    // features_json is the text of a JSON object (the reader stores it so); text built by code
    // that does not parse is a caller bug and is left out rather than written as garbage.
    OrderedJson features = OrderedJson::parse(job.features_json, nullptr, false);
    if (!features.is_discarded()) out["features"] = std::move(features);
  }
  return out;
}

OrderedJson ServiceJson(const Service& service) {
  OrderedJson out = OrderedJson::object();
  out["id"] = service.id;
  out["priority"] = internal::NumberJson(service.priority);
  out["min_gpus"] = service.min_gpus;
  out["max_gpus"] = service.max_gpus;
  if (service.max_change_per_step) out["max_change_per_step"] = *service.max_change_per_step;
  if (service.current_gpus) out["current_gpus"] = *service.current_gpus;
  RequirementJson(service.requirement, out);
  out["demand"] = service.demand;
  return out;
}

}  // namespace

Result<Scenario> ParseScenario(std::string_view text, bool yaml, const ReadOptions& options) {
  try {
    auto document = ParseDocument(text, yaml);
    if (!document) return Fail(document.error());
    return ReadScenario(*document, options);
  } catch (const std::bad_alloc&) {
    return Fail(Error{ErrorCode::kInternal, "", "out of memory while reading the scenario"});
  } catch (const std::exception& ex) {
    return Fail(Error{ErrorCode::kInternal, "", std::string("scenario reader: ") + ex.what()});
  }
}

Result<Scenario> ReadScenarioFile(const std::string& path, const ReadOptions& options) {
  auto text = ReadFileText(path);
  if (!text) return Fail(text.error());
  return ParseScenario(*text, LooksLikeYaml(path, *text), options);
}

std::string WriteScenario(const Scenario& scenario, int indent) {
  try {
    OrderedJson out = OrderedJson::object();
    out["version"] = scenario.version;
    out["name"] = scenario.name;
    if (!scenario.description.empty()) out["description"] = scenario.description;
    out["step_minutes"] = scenario.step_minutes;
    out["horizon_steps"] = scenario.horizon_steps;
    OrderedJson groups = OrderedJson::array();
    for (const NodeGroup& group : scenario.cluster.groups) {
      OrderedJson g = OrderedJson::object();
      g["name"] = group.name;
      g["nodes"] = group.nodes;
      g["gpus_per_node"] = group.gpus_per_node;
      g["gpu_type"] = group.gpu_type;
      g["gpu_memory_gb"] = internal::NumberJson(group.gpu_memory_gb);
      groups.push_back(std::move(g));
    }
    out["cluster"] = {{"node_groups", std::move(groups)}};
    out["objective"] = {{"time_decay", internal::NumberJson(scenario.objective.time_decay)},
                        {"unmet_penalty_multiplier",
                         internal::NumberJson(scenario.objective.unmet_penalty_multiplier)}};
    OrderedJson jobs = OrderedJson::array();
    for (const Job& job : scenario.jobs) jobs.push_back(JobJson(job));
    out["jobs"] = std::move(jobs);
    OrderedJson services = OrderedJson::array();
    for (const Service& service : scenario.services) services.push_back(ServiceJson(service));
    out["services"] = std::move(services);
    return internal::Dump(out, indent);
  } catch (const std::exception&) {
    // Only allocation can fail here; an empty text is then the clearest failure for the caller.
    return {};
  }
}

}  // namespace ordo::io
