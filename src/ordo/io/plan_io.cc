// The plan reader and writer. The reader checks structure and types only, and bounds every
// number so later arithmetic (start + duration, GPU ids as indices) cannot overflow; whether the
// plan is legal for a scenario is CheckPlan's question.
#include "ordo/io/plan_io.h"

#include <array>
#include <cstdint>
#include <limits>
#include <new>
#include <utility>

#include "ordo/core/scenario.h"
#include "ordo/io/document.h"
#include "ordo/io/json_fields.h"

namespace ordo::io {
namespace {

using internal::IndexPath;
using internal::Json;
using internal::ObjectReader;
using internal::OrderedJson;

constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();
constexpr double kMaxDouble = std::numeric_limits<double>::max();

constexpr std::array<std::pair<WaitReason, std::string_view>, 13> kReasonNames = {{
    {WaitReason::kNone, "none"},
    {WaitReason::kNotArrived, "not_arrived"},
    {WaitReason::kBlockedByJob, "blocked_by_job"},
    {WaitReason::kServicePeak, "service_peak"},
    {WaitReason::kNoBlockOfSize, "no_block_of_size"},
    {WaitReason::kGpuType, "gpu_type"},
    {WaitReason::kFragmented, "fragmented"},
    {WaitReason::kLowValue, "low_value"},
    {WaitReason::kServiceFloor, "service_floor"},
    {WaitReason::kHeadOfLine, "head_of_line"},
    {WaitReason::kServiceReservation, "service_reservation"},
    {WaitReason::kNotChosen, "not_chosen"},
    {WaitReason::kBlockedByService, "blocked_by_service"},
}};

Result<WaitReason> ReadReason(const ObjectReader& obj) {
  std::string reason;
  ORDO_ASSIGN_OR_RETURN(reason, obj.String("reason", Limits::kMaxIdLength, false));
  for (const auto& [value, name] : kReasonNames) {
    if (name == reason) return value;
  }
  std::string names;
  for (const auto& [unused, name] : kReasonNames) {
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return FailInput(obj.Path("reason"),
                   "unknown reason \"" + reason + "\" (expected one of " + names + ")");
}

// A holder of a span: `{"kind": "job", "id", "start_step", "end_step", "priority", "running"}` or
// `{"kind": "service", "id", "step", "demand", "peak"}`; a hidden job has a null id and no
// priority.
Result<WaitHolder> ReadHolder(const Json& value, const std::string& path) {
  auto obj = ObjectReader::Make(value, path, "a holder");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(obj->AllowOnly(
      {"kind", "id", "start_step", "end_step", "priority", "running", "step", "demand", "peak"}));
  WaitHolder holder;
  std::string kind;
  ORDO_ASSIGN_OR_RETURN(kind, obj->String("kind", Limits::kMaxIdLength, false));
  if (kind != "job" && kind != "service") {
    return FailInput(obj->Path("kind"), R"(must be "job" or "service")");
  }
  holder.service = kind == "service";
  std::optional<std::string> id;
  ORDO_ASSIGN_OR_RETURN(id, obj->OptionalString("id", Limits::kMaxIdLength, true));
  holder.id = id.value_or("");
  auto integer = [&](std::string_view key, int& out) -> Result<void> {
    auto n = obj->OptionalInt(key, -Limits::kMaxAbsStep, Limits::kMaxAbsStep);
    if (!n) return Fail(n.error());
    if (*n) out = static_cast<int>(**n);
    return {};
  };
  ORDO_RETURN_IF_ERROR(integer(holder.service ? "step" : "start_step", holder.step));
  ORDO_RETURN_IF_ERROR(integer("end_step", holder.end_step));
  ORDO_RETURN_IF_ERROR(integer("demand", holder.demand));
  ORDO_RETURN_IF_ERROR(integer("peak", holder.peak));
  std::optional<double> priority;
  ORDO_ASSIGN_OR_RETURN(priority, obj->OptionalNumber("priority", -kMaxDouble, kMaxDouble));
  holder.priority = priority.value_or(0);
  ORDO_ASSIGN_OR_RETURN(const std::optional<bool> running, obj->OptionalBool("running"));
  holder.running = running.value_or(false);
  return holder;
}

Result<WaitSpan> ReadSpan(const Json& value, const std::string& path) {
  auto obj = ObjectReader::Make(value, path, "a wait span");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(obj->AllowOnly({"from_step", "to_step", "reason", "holders"}));
  WaitSpan span;
  int64_t n = 0;
  ORDO_ASSIGN_OR_RETURN(n, obj->Int("from_step", -Limits::kMaxAbsStep, Limits::kMaxAbsStep));
  span.from_step = static_cast<int>(n);
  ORDO_ASSIGN_OR_RETURN(n, obj->Int("to_step", -Limits::kMaxAbsStep, Limits::kMaxAbsStep));
  span.to_step = static_cast<int>(n);
  ORDO_ASSIGN_OR_RETURN(span.reason, ReadReason(*obj));
  const Json* holders = nullptr;
  ORDO_ASSIGN_OR_RETURN(holders,
                        obj->OptionalList("holders", static_cast<size_t>(Limits::kMaxJobs)));
  if (holders != nullptr) {
    for (size_t k = 0; k < holders->size(); ++k) {
      WaitHolder holder;
      ORDO_ASSIGN_OR_RETURN(holder, ReadHolder((*holders)[k], IndexPath(obj->Path("holders"), k)));
      span.holders.push_back(std::move(holder));
    }
  }
  return span;
}

// An integer or null (`start_step`, `planned_start`); the field itself is required.
Result<std::optional<int>> NullableStep(const ObjectReader& obj, std::string_view key) {
  const Json* value = obj.Find(key);
  if (value == nullptr) return Fail(obj.Missing(key, "an integer, or null"));
  if (value->is_null()) return std::optional<int>();
  auto n = internal::ToInt(*value, internal::LazyPath(obj.path(), key), -Limits::kMaxAbsStep,
                           Limits::kMaxAbsStep);
  if (!n) return Fail(n.error());
  return std::optional<int>(static_cast<int>(*n));
}

Result<JobPlacement> ReadJobPlacement(const Json& value, const std::string& path) {
  auto obj = ObjectReader::Make(value, path, "a job placement");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(obj->AllowOnly(
      {"id", "start_step", "first_gpu", "gpus", "duration_steps", "preempt_step", "resume"}));
  JobPlacement job;
  ORDO_ASSIGN_OR_RETURN(job.id, obj->String("id", Limits::kMaxIdLength, false));
  ORDO_ASSIGN_OR_RETURN(job.start_step, NullableStep(*obj, "start_step"));
  // A started job must say where and how; an unstarted one may, and it is then ignored.
  const bool started = job.start_step.has_value();
  auto field = [&](std::string_view key, int64_t min, int64_t max) -> Result<int> {
    if (!started && !obj->Has(key)) return 0;
    auto n = obj->Int(key, min, max);
    if (!n) return Fail(n.error());
    return static_cast<int>(*n);
  };
  ORDO_ASSIGN_OR_RETURN(job.first_gpu, field("first_gpu", 0, Limits::kMaxGpus - 1));
  ORDO_ASSIGN_OR_RETURN(job.gpus, field("gpus", 0, Limits::kMaxGpus));
  ORDO_ASSIGN_OR_RETURN(job.duration_steps, field("duration_steps", 0, Limits::kMaxDurationSteps));
  // Preemption fields are read as given (a null is their absence); whether they make sense for
  // this job (a checkpoint, q after the start, s2 >= q, ...) is CheckPlan's to say.
  if (const Json* preempt = obj->Find("preempt_step"); preempt != nullptr && !preempt->is_null()) {
    ORDO_ASSIGN_OR_RETURN(job.preempt_step, NullableStep(*obj, "preempt_step"));
  }
  if (const Json* resume = obj->Find("resume"); resume != nullptr && !resume->is_null()) {
    auto r = ObjectReader::Make(*resume, obj->Path("resume"), "a resume placement");
    if (!r) return Fail(r.error());
    ORDO_RETURN_IF_ERROR(r->AllowOnly({"start_step", "first_gpu"}));
    ResumePlacement placement;
    int64_t n = 0;
    ORDO_ASSIGN_OR_RETURN(n, r->Int("start_step", -Limits::kMaxAbsStep, Limits::kMaxAbsStep));
    placement.start_step = static_cast<int>(n);
    ORDO_ASSIGN_OR_RETURN(n, r->Int("first_gpu", 0, Limits::kMaxGpus - 1));
    placement.first_gpu = static_cast<int>(n);
    job.resume = placement;
  }
  return job;
}

Result<ServiceAllocation> ReadServiceAllocation(const Json& value, const std::string& path) {
  auto obj = ObjectReader::Make(value, path, "a service allocation");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(obj->AllowOnly({"id", "gpus"}));
  ServiceAllocation service;
  ORDO_ASSIGN_OR_RETURN(service.id, obj->String("id", Limits::kMaxIdLength, false));
  const Json* steps = nullptr;
  ORDO_ASSIGN_OR_RETURN(steps, obj->List("gpus", static_cast<size_t>(Limits::kMaxHorizonSteps)));
  service.gpus.resize(steps->size());
  for (size_t t = 0; t < steps->size(); ++t) {
    const std::string step_path = IndexPath(obj->Path("gpus"), t);
    const Json& ids = (*steps)[t];
    ORDO_RETURN_IF_ERROR(
        internal::CheckList(ids, step_path, static_cast<size_t>(Limits::kMaxGpus)));
    service.gpus[t].reserve(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) {
      auto id = internal::ToInt(ids[k], internal::LazyPath(step_path, k), 0, Limits::kMaxGpus - 1);
      if (!id) return Fail(id.error());
      service.gpus[t].push_back(static_cast<int>(*id));
    }
  }
  return service;
}

Result<Metrics> ReadMetrics(const Json& value) {
  auto obj = ObjectReader::Make(value, "metrics", "the metrics");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(
      obj->AllowOnly({"utilization", "allocated_utilization", "value", "batch_value", "objective",
                      "realtime_unmet_gpu_steps", "jobs_started", "jobs_completed", "preemptions",
                      "lost_gpu_steps", "solve_ms", "status", "best_bound", "gap", "nodes"}));
  Metrics metrics;
  // Every metric is optional: ordo recomputes them; a plan from another tool may leave some out.
  auto number = [&](std::string_view key, double& out) -> Result<void> {
    auto d = obj->OptionalNumber(key, -kMaxDouble, kMaxDouble);
    if (!d) return Fail(d.error());
    if (*d) out = **d;
    return {};
  };
  auto integer = [&](std::string_view key, int64_t max, auto& out) -> Result<void> {
    auto n = obj->OptionalInt(key, 0, max);
    if (!n) return Fail(n.error());
    if (*n) out = static_cast<std::remove_reference_t<decltype(out)>>(**n);
    return {};
  };
  ORDO_RETURN_IF_ERROR(number("utilization", metrics.utilization));
  ORDO_RETURN_IF_ERROR(number("allocated_utilization", metrics.allocated_utilization));
  ORDO_RETURN_IF_ERROR(number("value", metrics.value));
  ORDO_RETURN_IF_ERROR(number("batch_value", metrics.batch_value));
  ORDO_RETURN_IF_ERROR(number("objective", metrics.objective));
  ORDO_RETURN_IF_ERROR(
      integer("realtime_unmet_gpu_steps", kMaxInt64, metrics.realtime_unmet_gpu_steps));
  ORDO_RETURN_IF_ERROR(integer("jobs_started", Limits::kMaxJobs, metrics.jobs_started));
  ORDO_RETURN_IF_ERROR(integer("jobs_completed", Limits::kMaxJobs, metrics.jobs_completed));
  ORDO_RETURN_IF_ERROR(integer("preemptions", Limits::kMaxJobs, metrics.preemptions));
  ORDO_RETURN_IF_ERROR(integer("lost_gpu_steps", kMaxInt64, metrics.lost_gpu_steps));
  ORDO_RETURN_IF_ERROR(number("solve_ms", metrics.solve_ms));
  if (obj->Has("status") || obj->Has("best_bound") || obj->Has("gap") || obj->Has("nodes")) {
    SolverReport report;
    std::optional<std::string> status;
    ORDO_ASSIGN_OR_RETURN(status, obj->OptionalString("status", Limits::kMaxIdLength, false));
    report.status = status.value_or("");
    ORDO_RETURN_IF_ERROR(number("best_bound", report.best_bound));
    ORDO_RETURN_IF_ERROR(number("gap", report.gap));
    ORDO_RETURN_IF_ERROR(integer("nodes", kMaxInt64, report.nodes));
    metrics.solver = std::move(report);
  }
  return metrics;
}

Result<JobExplanation> ReadExplanation(const Json& value, const std::string& path) {
  auto obj = ObjectReader::Make(value, path, "an explanation");
  if (!obj) return Fail(obj.error());
  ORDO_RETURN_IF_ERROR(
      obj->AllowOnly({"id", "planned_start", "reason", "blocking_id", "message", "spans"}));
  JobExplanation explanation;
  ORDO_ASSIGN_OR_RETURN(explanation.id, obj->String("id", Limits::kMaxIdLength, false));
  ORDO_ASSIGN_OR_RETURN(explanation.planned_start, NullableStep(*obj, "planned_start"));
  std::string reason;
  ORDO_ASSIGN_OR_RETURN(reason, obj->String("reason", Limits::kMaxIdLength, false));
  const auto parsed = ParseWaitReason(reason);
  if (!parsed) {
    std::string names;
    for (const auto& [unused, name] : kReasonNames)
      names += (names.empty() ? "" : ", ") + std::string(name);
    return FailInput(obj->Path("reason"),
                     "unknown reason \"" + reason + "\" (expected one of " + names + ")");
  }
  explanation.reason = *parsed;
  std::optional<std::string> text;
  ORDO_ASSIGN_OR_RETURN(text, obj->OptionalString("blocking_id", Limits::kMaxIdLength, true));
  explanation.blocking_id = text.value_or("");
  ORDO_ASSIGN_OR_RETURN(text, obj->OptionalString("message", Limits::kMaxStringLength, true));
  explanation.message = text.value_or("");
  const Json* spans = nullptr;
  ORDO_ASSIGN_OR_RETURN(spans,
                        obj->OptionalList("spans", static_cast<size_t>(Limits::kMaxHorizonSteps)));
  if (spans != nullptr) {
    for (size_t k = 0; k < spans->size(); ++k) {
      WaitSpan span;
      ORDO_ASSIGN_OR_RETURN(span, ReadSpan((*spans)[k], IndexPath(obj->Path("spans"), k)));
      explanation.spans.push_back(std::move(span));
    }
  }
  return explanation;
}

Result<Plan> ReadPlan(const Json& root) {
  if (!root.is_object()) {
    return FailInput("", "a plan must be a JSON object (got " + internal::Describe(root) + ")");
  }
  auto top = ObjectReader::Make(root, "", "a plan");
  if (!top) return Fail(top.error());
  ORDO_RETURN_IF_ERROR(
      top->AllowOnly({"version", "scenario", "policy", "jobs", "services", "metrics"}));
  Plan plan;
  const Json* version = top->Find("version");
  if (version == nullptr) return Fail(top->Missing("version", "this reader knows version 1"));
  auto v = internal::ToInt(*version, "version", std::numeric_limits<int64_t>::min(), kMaxInt64);
  if (!v) return Fail(v.error());
  if (*v != 1) {
    return FailInput("version",
                     "unsupported version " + std::to_string(*v) + "; this reader knows version 1");
  }
  ORDO_ASSIGN_OR_RETURN(plan.scenario, top->String("scenario", Limits::kMaxStringLength, true));
  ORDO_ASSIGN_OR_RETURN(plan.policy, top->String("policy", Limits::kMaxIdLength, true));

  const Json* jobs = nullptr;
  ORDO_ASSIGN_OR_RETURN(jobs, top->List("jobs", static_cast<size_t>(Limits::kMaxJobs)));
  plan.jobs.reserve(jobs->size());
  for (size_t j = 0; j < jobs->size(); ++j) {
    JobPlacement job;
    ORDO_ASSIGN_OR_RETURN(job, ReadJobPlacement((*jobs)[j], IndexPath("jobs", j)));
    plan.jobs.push_back(std::move(job));
  }
  const Json* services = nullptr;
  ORDO_ASSIGN_OR_RETURN(services, top->List("services", static_cast<size_t>(Limits::kMaxServices)));
  plan.services.reserve(services->size());
  for (size_t i = 0; i < services->size(); ++i) {
    ServiceAllocation service;
    ORDO_ASSIGN_OR_RETURN(service, ReadServiceAllocation((*services)[i], IndexPath("services", i)));
    plan.services.push_back(std::move(service));
  }
  if (const Json* metrics = top->Find("metrics")) {
    ORDO_ASSIGN_OR_RETURN(plan.metrics, ReadMetrics(*metrics));
  }
  // The one extension ordo reads back; other x- fields are ignored (AllowOnly skips them).
  if (const Json* explain = top->Find("x-explain")) {
    ORDO_RETURN_IF_ERROR(
        internal::CheckList(*explain, "x-explain", static_cast<size_t>(Limits::kMaxJobs)));
    plan.explanations.reserve(explain->size());
    for (size_t k = 0; k < explain->size(); ++k) {
      JobExplanation explanation;
      ORDO_ASSIGN_OR_RETURN(explanation, ReadExplanation((*explain)[k], IndexPath("x-explain", k)));
      plan.explanations.push_back(std::move(explanation));
    }
  }
  return plan;
}

OrderedJson StepJson(const std::optional<int>& step) {
  return step ? OrderedJson(*step) : OrderedJson(nullptr);
}

OrderedJson SpanJson(const WaitSpan& span) {
  OrderedJson out = OrderedJson::object();
  out["from_step"] = span.from_step;
  out["to_step"] = span.to_step;
  out["reason"] = std::string(WaitReasonName(span.reason));
  OrderedJson holders = OrderedJson::array();
  for (const WaitHolder& h : span.holders) {
    OrderedJson x = OrderedJson::object();
    x["kind"] = h.service ? "service" : "job";
    x["id"] = h.id.empty() ? OrderedJson(nullptr) : OrderedJson(h.id);
    if (h.service) {
      x["step"] = h.step;
      x["demand"] = h.demand;
      x["peak"] = h.peak;
    } else {
      x["start_step"] = h.step;
      x["end_step"] = h.end_step;
      if (!h.id.empty()) x["priority"] = internal::NumberJson(h.priority);
      x["running"] = h.running;
    }
    holders.push_back(std::move(x));
  }
  out["holders"] = std::move(holders);
  return out;
}

}  // namespace

std::string_view WaitReasonName(WaitReason reason) {
  for (const auto& [value, name] : kReasonNames) {
    if (value == reason) return name;
  }
  return "unknown";
}

std::optional<WaitReason> ParseWaitReason(std::string_view name) {
  for (const auto& [value, known] : kReasonNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

Result<Plan> ParsePlan(std::string_view text, bool yaml) {
  try {
    auto document = ParseDocument(text, yaml);
    if (!document) return Fail(document.error());
    return ReadPlan(*document);
  } catch (const std::bad_alloc&) {
    return Fail(Error{ErrorCode::kInternal, "", "out of memory while reading the plan"});
  } catch (const std::exception& ex) {
    return Fail(Error{ErrorCode::kInternal, "", std::string("plan reader: ") + ex.what()});
  }
}

Result<Plan> ReadPlanFile(const std::string& path) {
  auto text = ReadFileText(path);
  if (!text) return Fail(text.error());
  return ParsePlan(*text, LooksLikeYaml(path, *text));
}

std::string WritePlan(const Plan& plan, int indent) {
  try {
    OrderedJson out = OrderedJson::object();
    out["version"] = plan.version;
    out["scenario"] = plan.scenario;
    out["policy"] = plan.policy;
    OrderedJson jobs = OrderedJson::array();
    for (const JobPlacement& job : plan.jobs) {
      OrderedJson j = OrderedJson::object();
      j["id"] = job.id;
      j["start_step"] = StepJson(job.start_step);
      if (job.started()) {
        j["first_gpu"] = job.first_gpu;
        j["gpus"] = job.gpus;
        j["duration_steps"] = job.duration_steps;
      }
      if (job.preempt_step) j["preempt_step"] = *job.preempt_step;
      if (job.resume) {
        j["resume"] = {{"start_step", job.resume->start_step},
                       {"first_gpu", job.resume->first_gpu}};
      }
      jobs.push_back(std::move(j));
    }
    out["jobs"] = std::move(jobs);
    OrderedJson services = OrderedJson::array();
    for (const ServiceAllocation& service : plan.services) {
      services.push_back({{"id", service.id}, {"gpus", service.gpus}});
    }
    out["services"] = std::move(services);
    const Metrics& m = plan.metrics;
    OrderedJson metrics = OrderedJson::object();
    metrics["utilization"] = internal::NumberJson(m.utilization);
    metrics["allocated_utilization"] = internal::NumberJson(m.allocated_utilization);
    metrics["value"] = internal::NumberJson(m.value);
    metrics["batch_value"] = internal::NumberJson(m.batch_value);
    metrics["objective"] = internal::NumberJson(m.objective);
    metrics["realtime_unmet_gpu_steps"] = m.realtime_unmet_gpu_steps;
    metrics["jobs_started"] = m.jobs_started;
    metrics["jobs_completed"] = m.jobs_completed;
    metrics["preemptions"] = m.preemptions;
    metrics["lost_gpu_steps"] = m.lost_gpu_steps;
    metrics["solve_ms"] = internal::NumberJson(m.solve_ms);
    if (m.solver) {
      metrics["status"] = m.solver->status;
      metrics["best_bound"] = internal::NumberJson(m.solver->best_bound);
      metrics["gap"] = internal::NumberJson(m.solver->gap);
      metrics["nodes"] = m.solver->nodes;
    }
    out["metrics"] = std::move(metrics);
    if (!plan.explanations.empty()) {
      OrderedJson explain = OrderedJson::array();
      for (const JobExplanation& e : plan.explanations) {
        OrderedJson x = OrderedJson::object();
        x["id"] = e.id;
        x["planned_start"] = StepJson(e.planned_start);
        x["reason"] = std::string(WaitReasonName(e.reason));
        x["blocking_id"] = e.blocking_id;
        x["message"] = e.message;
        if (!e.spans.empty()) {
          OrderedJson spans = OrderedJson::array();
          for (const WaitSpan& span : e.spans) spans.push_back(SpanJson(span));
          x["spans"] = std::move(spans);
        }
        explain.push_back(std::move(x));
      }
      out["x-explain"] = std::move(explain);
    }
    return internal::Dump(out, indent);
  } catch (const std::exception&) {
    // Only allocation can fail here; an empty text is then the clearest failure for the caller.
    return {};
  }
}

}  // namespace ordo::io
