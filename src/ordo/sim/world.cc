// The world format (docs/world-format.md): reader, writer, validation and the noise models.
#include "ordo/sim/world.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <string_view>
#include <unordered_map>

#include "ordo/core/validate.h"
#include "ordo/forecast/demand_forecaster.h"
#include "ordo/forecast/time_series.h"
#include "ordo/io/json_fields.h"
#include "ordo/io/scenario_io.h"
#include "ordo/io/tenancy_io.h"
#include "ordo/sim/random.h"

namespace ordo::sim {
namespace {

using io::internal::FieldPath;
using io::internal::IndexPath;
using io::internal::Json;
using io::internal::ObjectReader;

constexpr int kMaxDays = 366;
constexpr double kMaxSigma = 5.0;
constexpr double kMaxRate = 1e15;
constexpr int kMaxTenants = 10'000;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The cluster and service rules a scenario shares with a world are checked by ValidateScenario on a
// probe scenario: one implementation of the spec's rules, the same messages, the same paths
// (`cluster.node_groups[0].nodes`, `services[1].min_gpus`).
Scenario ProbeScenario(const World& w) {
  Scenario s;
  s.name = w.name;
  s.step_minutes = w.step_minutes;
  s.horizon_steps = w.horizon_steps;
  s.cluster = w.cluster;
  s.objective = w.objective;
  for (const WorldService& ws : w.services) {
    s.services.push_back(ws.ToService(std::vector<int>(w.horizon_steps, 0)));
  }
  return s;
}

Result<void> CheckCurveLength(size_t size, const std::string& path, int window_steps) {
  if (size < static_cast<size_t>(window_steps)) {
    return FailInput(path, "must have at least one entry per step of the window (" +
                               std::to_string(window_steps) + " = days x steps per day), got " +
                               std::to_string(size));
  }
  return {};
}

}  // namespace

int GpusForRate(double rate, double per_gpu_rate, double headroom) {
  if (rate <= 0) return 0;
  const double gpus = std::ceil(rate * (1.0 + headroom) / per_gpu_rate - 1e-9);
  return static_cast<int>(std::min<double>(gpus, Limits::kMaxGpus));
}

Result<void> ValidateWorld(const World& w) {
  if (w.version != kWorldFormatVersion) {
    return FailInput("version", "must be " + std::to_string(kWorldFormatVersion));
  }
  if (w.step_minutes < 1 || w.step_minutes > 1440 || 1440 % w.step_minutes != 0) {
    return FailInput("step_minutes", "must divide a day (1440 minutes) evenly (got " +
                                         std::to_string(w.step_minutes) + ")");
  }
  if (w.days < 1 || w.days > kMaxDays) {
    return FailInput("days", "must be an integer from 1 to " + std::to_string(kMaxDays));
  }
  // The committed timeline is checked as one scenario over the whole window, so the window obeys
  // a scenario's limits too.
  if (w.window_steps() > Limits::kMaxHorizonSteps) {
    return FailInput("days", "the window has " + std::to_string(w.window_steps()) +
                                 " steps, more than " + std::to_string(Limits::kMaxHorizonSteps));
  }
  if (w.horizon_steps < 1 || w.horizon_steps > Limits::kMaxHorizonSteps) {
    return FailInput("horizon_steps",
                     "must be an integer from 1 to " + std::to_string(Limits::kMaxHorizonSteps));
  }
  Scenario probe = ProbeScenario(w);
  if (auto ok = ValidateScenario(probe); !ok) return ok;
  if (static_cast<int64_t>(w.cluster.total_gpus()) * w.window_steps() > Limits::kMaxGpuSteps) {
    return FailInput("days", "GPUs x window steps exceeds " + std::to_string(Limits::kMaxGpuSteps));
  }
  auto check_sigma = [](double sigma, const std::string& path) -> Result<void> {
    if (!std::isfinite(sigma) || sigma < 0 || sigma > kMaxSigma) {
      return FailInput(path, "must be a number from 0 to 5");
    }
    return {};
  };
  if (w.duration_noise) {
    if (auto ok = check_sigma(w.duration_noise->sigma, "duration_noise.sigma"); !ok) return ok;
  }
  if (w.traffic_noise) {
    if (auto ok = check_sigma(w.traffic_noise->sigma, "traffic_noise.sigma"); !ok) return ok;
    const double c = w.traffic_noise->correlation;
    if (!std::isfinite(c) || c < 0 || c >= 1) {
      return FailInput("traffic_noise.correlation", "must be a number in [0, 1)");
    }
    const double q = w.traffic_noise->planner_quantile;
    if (!(q >= 0.001 && q <= 0.999)) {
      return FailInput("traffic_noise.planner_quantile", "must be a number from 0.001 to 0.999");
    }
  }

  // Tenants: shares are nominal quotas, so together they may not promise more than the cluster.
  std::unordered_map<std::string, size_t> tenant_of;
  double shares_gpus = 0;
  for (size_t t = 0; t < w.tenants.size(); ++t) {
    const WorldTenant& tenant = w.tenants[t];
    const std::string where = IndexPath("tenants", t);
    if (tenant.id.empty() || tenant.id.size() > static_cast<size_t>(Limits::kMaxIdLength)) {
      return FailInput(where + ".id", "must be 1 to 256 characters");
    }
    if (!tenant_of.emplace(tenant.id, t).second) {
      return FailInput(where + ".id", "\"" + tenant.id + "\" is not unique among tenants");
    }
    if (!std::isfinite(tenant.share) || tenant.share < 0) {
      return FailInput(where + ".share",
                       "must not be negative (got " + std::to_string(tenant.share) + ")");
    }
    const int total = w.cluster.total_gpus();
    shares_gpus += tenant.ShareFraction(total) * total;
    if (shares_gpus > total + 1e-9) {
      return FailInput(where + ".share", "the tenants' shares sum to " +
                                             std::to_string(shares_gpus) +
                                             " GPUs, above the cluster's " + std::to_string(total));
    }
    if (tenant.max_priority &&
        (!(*tenant.max_priority > 0) || *tenant.max_priority > Limits::kMaxPriority)) {
      return FailInput(where + ".max_priority", "must be a number > 0 and <= 1e9");
    }
  }

  std::set<std::string> ids;
  for (const WorldService& s : w.services) ids.insert(s.id);
  for (size_t j = 0; j < w.jobs.size(); ++j) {
    const WorldJob& job = w.jobs[j];
    const std::string where = IndexPath("jobs", j);
    if (job.id.empty() || job.id.size() > static_cast<size_t>(Limits::kMaxIdLength)) {
      return FailInput(where + ".id", "must be 1 to 256 characters");
    }
    if (!ids.insert(job.id).second) {
      return FailInput(where + ".id", "\"" + job.id + "\" is not unique among jobs and services");
    }
    if (!(job.priority > 0) || job.priority > Limits::kMaxPriority) {
      return FailInput(where + ".priority", "must be a number > 0 and <= 1e9");
    }
    if (!job.tenant.empty()) {
      auto it = tenant_of.find(job.tenant);
      if (it == tenant_of.end()) {
        return FailInput(where + ".tenant", "\"" + job.tenant + "\" is not in tenants");
      }
      const WorldTenant& tenant = w.tenants[it->second];
      if (tenant.max_priority && job.priority > *tenant.max_priority) {
        return FailInput(where + ".priority", "is above tenant " + tenant.id + "'s max_priority (" +
                                                  std::to_string(job.priority) + " > " +
                                                  std::to_string(*tenant.max_priority) + ")");
      }
    }
    if (job.arrival_step < 0 || job.arrival_step > Limits::kMaxAbsStep) {
      return FailInput(where + ".arrival_step",
                       "must be an integer from 0 (the window's start) to 1000000");
    }
    if (job.shapes.empty() || job.shapes.size() > static_cast<size_t>(Limits::kMaxShapes)) {
      return FailInput(where + ".shapes", "must list 1 to 16 shapes");
    }
    for (size_t k = 0; k < job.shapes.size(); ++k) {
      const WorldShape& shape = job.shapes[k];
      const std::string sp = job.shapes.size() == 1 ? where : IndexPath(where + ".shapes", k);
      if (!IsPowerOfTwo(shape.gpus) || shape.gpus > Limits::kMaxGpus) {
        return FailInput(sp + ".gpus",
                         "must be a power of two (got " + std::to_string(shape.gpus) + ")");
      }
      if (shape.duration_steps < 1 || shape.duration_steps > Limits::kMaxDurationSteps) {
        return FailInput(sp + ".duration_steps", "must be an integer from 1 to 1000000");
      }
      if (shape.forecast_duration_steps &&
          (*shape.forecast_duration_steps < 1 ||
           *shape.forecast_duration_steps > Limits::kMaxDurationSteps)) {
        return FailInput(sp + ".forecast_duration_steps", "must be an integer from 1 to 1000000");
      }
    }
    if (job.requirement.min_gpu_memory_gb && (!std::isfinite(*job.requirement.min_gpu_memory_gb) ||
                                              *job.requirement.min_gpu_memory_gb < 0)) {
      return FailInput(where + ".min_gpu_memory_gb", "must be a finite number >= 0");
    }
    if (job.checkpoint) {
      ORDO_RETURN_IF_ERROR(ValidateCheckpoint(*job.checkpoint, where + ".checkpoint"));
    }
  }

  for (size_t i = 0; i < w.services.size(); ++i) {
    const WorldService& s = w.services[i];
    const std::string where = IndexPath("services", i);
    const bool has_demand = !s.demand.empty();
    const bool has_rate = !s.rate.empty();
    if (has_demand == has_rate) {
      return FailInput(where + ".demand", "give either demand (GPUs per step) or rate, not both");
    }
    if (!s.forecast_demand.empty() && !s.forecast_rate.empty()) {
      return FailInput(where + ".forecast_demand", "give either forecast_demand or forecast_rate");
    }
    if ((has_rate || !s.forecast_rate.empty()) &&
        !(s.per_gpu_rate > 0 && std::isfinite(s.per_gpu_rate))) {
      return FailInput(where + ".per_gpu_rate", "must be a number > 0 where a rate is given");
    }
    if (!std::isfinite(s.headroom) || s.headroom < 0 || s.headroom > 100) {
      return FailInput(where + ".headroom", "must be a number from 0 to 100");
    }
    const int n = w.window_steps();
    if (has_demand) {
      if (auto ok = CheckCurveLength(s.demand.size(), where + ".demand", n); !ok) return ok;
    } else {
      if (auto ok = CheckCurveLength(s.rate.size(), where + ".rate", n); !ok) return ok;
    }
    if (!s.forecast_demand.empty()) {
      if (auto ok = CheckCurveLength(s.forecast_demand.size(), where + ".forecast_demand", n);
          !ok) {
        return ok;
      }
    }
    if (!s.forecast_rate.empty()) {
      if (auto ok = CheckCurveLength(s.forecast_rate.size(), where + ".forecast_rate", n); !ok) {
        return ok;
      }
    }
    for (size_t t = 0; t < s.demand.size(); ++t) {
      if (s.demand[t] < 0) return FailInput(IndexPath(where + ".demand", t), "must be >= 0");
    }
    for (size_t t = 0; t < s.forecast_demand.size(); ++t) {
      if (s.forecast_demand[t] < 0) {
        return FailInput(IndexPath(where + ".forecast_demand", t), "must be >= 0");
      }
    }
    for (size_t t = 0; t < s.rate.size(); ++t) {
      if (!std::isfinite(s.rate[t]) || s.rate[t] < 0) {
        return FailInput(IndexPath(where + ".rate", t), "must be a finite number >= 0");
      }
    }
    for (size_t t = 0; t < s.forecast_rate.size(); ++t) {
      if (!std::isfinite(s.forecast_rate[t]) || s.forecast_rate[t] < 0) {
        return FailInput(IndexPath(where + ".forecast_rate", t), "must be a finite number >= 0");
      }
    }
    if (s.forecaster) {
      const ServiceForecaster& f = *s.forecaster;
      const std::string fw = where + ".forecaster";
      if (!has_rate)
        return FailInput(fw, "needs the service's rate (a forecaster forecasts rates)");
      if (s.has_forecast()) {
        return FailInput(fw, "give a forecaster or forecast_demand / forecast_rate, not both");
      }
      if (f.refit_every_steps < 0 || f.refit_every_steps > Limits::kMaxHorizonSteps) {
        return FailInput(fw + ".refit_every_steps", "must be an integer from 0 to 10080");
      }
      if (f.history_step_minutes < 1 || f.history_step_minutes > 1440) {
        return FailInput(fw + ".history_step_minutes", "must be an integer from 1 to 1440");
      }
      if (f.history_rate.empty()) return FailInput(fw + ".history_rate", "must not be empty");
      for (size_t t = 0; t < f.history_rate.size(); ++t) {
        if (!std::isfinite(f.history_rate[t]) || f.history_rate[t] < 0) {
          return FailInput(IndexPath(fw + ".history_rate", t), "must be a finite number >= 0");
        }
      }
    }
  }
  if (!std::isfinite(w.start_time_s)) return FailInput("start_time", "must be a finite time");
  return {};
}

// ---------------------------------------------------------------------------------------------
// Reader.

namespace {

Result<WorldShape> ReadShape(const ObjectReader& f) {
  WorldShape shape;
  ORDO_ASSIGN_OR_RETURN(int64_t gpus, f.Int("gpus", 1, Limits::kMaxGpus));
  if (!IsPowerOfTwo(gpus)) {
    return FailInput(f.Path("gpus"), "must be a power of two (got " + std::to_string(gpus) + ")");
  }
  shape.gpus = static_cast<int>(gpus);
  ORDO_ASSIGN_OR_RETURN(int64_t d, f.Int("duration_steps", 1, Limits::kMaxDurationSteps));
  shape.duration_steps = static_cast<int>(d);
  ORDO_ASSIGN_OR_RETURN(auto fd,
                        f.OptionalInt("forecast_duration_steps", 1, Limits::kMaxDurationSteps));
  if (fd) shape.forecast_duration_steps = static_cast<int>(*fd);
  return shape;
}

Result<WorldJob> ReadJob(const Json& v, const std::string& path) {
  ORDO_ASSIGN_OR_RETURN(ObjectReader f, ObjectReader::Make(v, path, "a job"));
  ORDO_RETURN_IF_ERROR(f.AllowOnly({"id", "kind", "priority", "arrival_step", "gpus",
                                    "duration_steps", "forecast_duration_steps", "shapes",
                                    "gpu_type", "min_gpu_memory_gb", "tenant", "checkpoint"}));
  WorldJob job;
  ORDO_ASSIGN_OR_RETURN(job.id, f.String("id", Limits::kMaxIdLength, true));
  ORDO_ASSIGN_OR_RETURN(auto tenant, f.OptionalString("tenant", Limits::kMaxIdLength, true));
  job.tenant = tenant.value_or("");
  ORDO_ASSIGN_OR_RETURN(std::string kind, f.String("kind", Limits::kMaxIdLength, true));
  const auto parsed = ParseJobKind(kind);
  if (!parsed) {
    return FailInput(f.Path("kind"), "unknown kind \"" + kind +
                                         "\" (expected training, batch_inference or quantization)");
  }
  job.kind = *parsed;
  ORDO_ASSIGN_OR_RETURN(job.priority, f.Number("priority", 0, Limits::kMaxPriority));
  if (!(job.priority > 0)) return FailInput(f.Path("priority"), "must be > 0");
  ORDO_ASSIGN_OR_RETURN(int64_t arrival, f.Int("arrival_step", 0, Limits::kMaxAbsStep));
  job.arrival_step = static_cast<int>(arrival);
  ORDO_ASSIGN_OR_RETURN(job.requirement, io::ReadRequirementJson(v, path));
  if (const Json* checkpoint = f.Find("checkpoint")) {
    ORDO_ASSIGN_OR_RETURN(job.checkpoint,
                          io::ReadCheckpointJson(*checkpoint, f.Path("checkpoint")));
  }
  const bool single = f.Has("gpus") || f.Has("duration_steps") || f.Has("forecast_duration_steps");
  if (const Json* shapes = f.Find("shapes")) {
    if (single) {
      return FailInput(f.Path("shapes"), "give either gpus + duration_steps or shapes, not both");
    }
    if (!shapes->is_array() || shapes->empty() ||
        shapes->size() > static_cast<size_t>(Limits::kMaxShapes)) {
      return FailInput(f.Path("shapes"), "must be a list of 1 to 16 shapes");
    }
    for (size_t k = 0; k < shapes->size(); ++k) {
      ORDO_ASSIGN_OR_RETURN(
          ObjectReader s,
          ObjectReader::Make((*shapes)[k], IndexPath(f.Path("shapes"), k), "a shape"));
      ORDO_RETURN_IF_ERROR(s.AllowOnly({"gpus", "duration_steps", "forecast_duration_steps"}));
      ORDO_ASSIGN_OR_RETURN(WorldShape shape, ReadShape(s));
      job.shapes.push_back(shape);
    }
  } else {
    ORDO_ASSIGN_OR_RETURN(WorldShape shape, ReadShape(f));
    job.shapes.push_back(shape);
  }
  return job;
}

Result<WorldTenant> ReadTenant(const Json& v, const std::string& path) {
  ORDO_ASSIGN_OR_RETURN(ObjectReader f, ObjectReader::Make(v, path, "a tenant"));
  ORDO_RETURN_IF_ERROR(f.AllowOnly({"id", "share", "max_priority"}));
  WorldTenant tenant;
  ORDO_ASSIGN_OR_RETURN(tenant.id, f.String("id", Limits::kMaxIdLength, true));
  ORDO_ASSIGN_OR_RETURN(std::optional<io::TenantShare> share, io::ReadShare(f));
  if (share) {
    tenant.share = share->amount;
    tenant.share_is_percent = share->percent;
  }
  ORDO_ASSIGN_OR_RETURN(tenant.max_priority, f.OptionalNumber("max_priority", -1e9, 1e9));
  return tenant;
}

Result<WorldService> ReadService(const Json& v, const std::string& path, int cluster_gpus) {
  ORDO_ASSIGN_OR_RETURN(ObjectReader f, ObjectReader::Make(v, path, "a service"));
  ORDO_RETURN_IF_ERROR(
      f.AllowOnly({"id", "priority", "min_gpus", "max_gpus", "max_change_per_step", "current_gpus",
                   "gpu_type", "min_gpu_memory_gb", "demand", "rate", "per_gpu_rate", "headroom",
                   "forecast_demand", "forecast_rate", "forecaster"}));
  WorldService s;
  ORDO_ASSIGN_OR_RETURN(s.id, f.String("id", Limits::kMaxIdLength, true));
  ORDO_ASSIGN_OR_RETURN(s.priority, f.Number("priority", 0, Limits::kMaxPriority));
  if (!(s.priority > 0)) return FailInput(f.Path("priority"), "must be > 0");
  ORDO_ASSIGN_OR_RETURN(auto n, f.OptionalInt("min_gpus", 0, Limits::kMaxGpus));
  s.min_gpus = static_cast<int>(n.value_or(0));
  ORDO_ASSIGN_OR_RETURN(n, f.OptionalInt("max_gpus", 0, Limits::kMaxGpus));
  s.max_gpus = static_cast<int>(n.value_or(cluster_gpus));
  if (!n && s.min_gpus > s.max_gpus) {
    return FailInput(f.Path("min_gpus"), "must be <= max_gpus, which defaults to the cluster's " +
                                             std::to_string(cluster_gpus) + " GPUs (got " +
                                             std::to_string(s.min_gpus) + ")");
  }
  ORDO_ASSIGN_OR_RETURN(n, f.OptionalInt("max_change_per_step", 0, Limits::kMaxGpus));
  if (n) s.max_change_per_step = static_cast<int>(*n);
  ORDO_ASSIGN_OR_RETURN(n, f.OptionalInt("current_gpus", 0, Limits::kMaxGpus));
  if (n) s.current_gpus = static_cast<int>(*n);
  ORDO_ASSIGN_OR_RETURN(s.requirement, io::ReadRequirementJson(v, path));
  const size_t max_items = static_cast<size_t>(Limits::kMaxHorizonSteps) * 2;
  ORDO_ASSIGN_OR_RETURN(s.demand, f.IntList("demand", 0, Limits::kMaxGpus, max_items));
  ORDO_ASSIGN_OR_RETURN(s.rate, f.NumberList("rate", 0, kMaxRate, max_items));
  ORDO_ASSIGN_OR_RETURN(s.forecast_demand,
                        f.IntList("forecast_demand", 0, Limits::kMaxGpus, max_items));
  ORDO_ASSIGN_OR_RETURN(s.forecast_rate, f.NumberList("forecast_rate", 0, kMaxRate, max_items));
  ORDO_ASSIGN_OR_RETURN(auto r, f.OptionalNumber("per_gpu_rate", 0, kMaxRate));
  s.per_gpu_rate = r.value_or(0);
  ORDO_ASSIGN_OR_RETURN(auto h, f.OptionalNumber("headroom", 0, 100));
  s.headroom = h.value_or(0);
  if (!f.Has("demand") && !f.Has("rate")) {
    return FailInput(f.Path("demand"), "is required (or give rate and per_gpu_rate)");
  }
  if (f.Has("demand") && f.Has("rate")) {
    return FailInput(f.Path("rate"), "give either demand or rate, not both");
  }
  if (f.Has("rate") && !f.Has("per_gpu_rate")) {
    return FailInput(f.Path("per_gpu_rate"), "is required where a rate is given");
  }
  if (f.Has("forecast_rate") && !f.Has("per_gpu_rate")) {
    return FailInput(f.Path("per_gpu_rate"), "is required where a forecast_rate is given");
  }
  if (const Json* fc = f.Find("forecaster")) {
    ORDO_ASSIGN_OR_RETURN(ObjectReader o,
                          ObjectReader::Make(*fc, f.Path("forecaster"), "a forecaster"));
    ORDO_RETURN_IF_ERROR(o.AllowOnly(
        {"model", "quantile", "refit_every_steps", "history_step_minutes", "history_rate"}));
    ServiceForecaster sf;
    ORDO_ASSIGN_OR_RETURN(auto model, o.OptionalString("model", Limits::kMaxIdLength, true));
    if (model && (*model == "weekly-profile" || *model == "profile")) {
      sf.method = forecast::DemandMethod::kProfile;
    } else if (model && *model != "level-shape") {
      return FailInput(o.Path("model"),
                       "unknown model \"" + *model + "\" (expected level-shape or weekly-profile)");
    }
    ORDO_ASSIGN_OR_RETURN(auto q, o.OptionalString("quantile", 16, true));
    if (q) {
      if (*q == "p10")
        sf.quantile = forecast::QuantileLevel::kP10;
      else if (*q == "p50")
        sf.quantile = forecast::QuantileLevel::kP50;
      else if (*q == "p90")
        sf.quantile = forecast::QuantileLevel::kP90;
      else
        return FailInput(o.Path("quantile"), "must be p10, p50 or p90 (got \"" + *q + "\")");
    }
    ORDO_ASSIGN_OR_RETURN(auto refit,
                          o.OptionalInt("refit_every_steps", 0, Limits::kMaxHorizonSteps));
    sf.refit_every_steps = static_cast<int>(refit.value_or(0));
    ORDO_ASSIGN_OR_RETURN(auto hs, o.OptionalInt("history_step_minutes", 1, 1440));
    sf.history_step_minutes = static_cast<int>(hs.value_or(60));
    if (!o.Has("history_rate")) return FailInput(o.Path("history_rate"), "is required");
    ORDO_ASSIGN_OR_RETURN(sf.history_rate, o.NumberList("history_rate", 0, kMaxRate, 1'000'000));
    s.forecaster = std::move(sf);
  }
  return s;
}

}  // namespace

Result<World> ParseWorld(std::string_view text) {
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return FailInput("", std::string("not valid JSON: ") + e.what());
  }
  ORDO_ASSIGN_OR_RETURN(ObjectReader f, ObjectReader::Make(doc, "", "a world"));
  ORDO_RETURN_IF_ERROR(f.AllowOnly(
      {"version", "name", "description", "start_time", "step_minutes", "horizon_steps", "days",
       "cluster", "objective", "duration_noise", "traffic_noise", "tenants", "jobs", "services"}));
  World w;
  ORDO_ASSIGN_OR_RETURN(int64_t version, f.Int("version", 0, 1'000'000));
  if (version != kWorldFormatVersion) {
    return FailInput("version", "must be " + std::to_string(kWorldFormatVersion) +
                                    " (this ordo reads world format version 1)");
  }
  ORDO_ASSIGN_OR_RETURN(auto name, f.OptionalString("name", Limits::kMaxIdLength, true));
  w.name = name.value_or("world");
  ORDO_ASSIGN_OR_RETURN(auto description,
                        f.OptionalString("description", Limits::kMaxStringLength, true));
  w.description = description.value_or("");
  if (const Json* start = f.Find("start_time")) {
    if (start->is_string()) {
      ORDO_ASSIGN_OR_RETURN(
          w.start_time_s,
          forecast::ParseTimestamp(start->get_ref<const std::string&>(), "start_time"));
    } else {
      ORDO_ASSIGN_OR_RETURN(w.start_time_s,
                            io::internal::ToNumber(*start, "start_time", -1e12, 1e12));
    }
  }
  ORDO_ASSIGN_OR_RETURN(int64_t step_minutes, f.Int("step_minutes", 1, 1440));
  w.step_minutes = static_cast<int>(step_minutes);
  ORDO_ASSIGN_OR_RETURN(int64_t horizon, f.Int("horizon_steps", 1, Limits::kMaxHorizonSteps));
  w.horizon_steps = static_cast<int>(horizon);
  ORDO_ASSIGN_OR_RETURN(int64_t days, f.Int("days", 1, kMaxDays));
  w.days = static_cast<int>(days);
  const Json* cluster = f.Find("cluster");
  if (!cluster) return FailInput("cluster", "is required");
  ORDO_ASSIGN_OR_RETURN(w.cluster, io::ReadClusterJson(*cluster));
  w.cluster.Index();
  if (const Json* objective = f.Find("objective")) {
    ORDO_ASSIGN_OR_RETURN(ObjectReader o,
                          ObjectReader::Make(*objective, "objective", "the objective"));
    ORDO_RETURN_IF_ERROR(o.AllowOnly({"time_decay", "unmet_penalty_multiplier"}));
    ORDO_ASSIGN_OR_RETURN(auto alpha, o.OptionalNumber("time_decay", 0, 1));
    ORDO_ASSIGN_OR_RETURN(auto m, o.OptionalNumber("unmet_penalty_multiplier", 0, 1e6));
    if (alpha) w.objective.time_decay = *alpha;
    if (m) w.objective.unmet_penalty_multiplier = *m;
  }
  if (const Json* noise = f.Find("duration_noise")) {
    ORDO_ASSIGN_OR_RETURN(ObjectReader o,
                          ObjectReader::Make(*noise, "duration_noise", "the duration noise"));
    ORDO_RETURN_IF_ERROR(o.AllowOnly({"sigma", "seed"}));
    DurationNoise dn;
    ORDO_ASSIGN_OR_RETURN(dn.sigma, o.Number("sigma", 0, kMaxSigma));
    ORDO_ASSIGN_OR_RETURN(auto seed, o.OptionalSeed("seed"));
    dn.seed = seed.value_or(1);
    w.duration_noise = dn;
  }
  if (const Json* noise = f.Find("traffic_noise")) {
    ORDO_ASSIGN_OR_RETURN(ObjectReader o,
                          ObjectReader::Make(*noise, "traffic_noise", "the traffic noise"));
    ORDO_RETURN_IF_ERROR(o.AllowOnly({"sigma", "correlation", "seed", "planner_quantile"}));
    TrafficNoise tn;
    ORDO_ASSIGN_OR_RETURN(tn.sigma, o.Number("sigma", 0, kMaxSigma));
    ORDO_ASSIGN_OR_RETURN(auto pq, o.OptionalNumber("planner_quantile", 0.001, 0.999));
    if (pq) tn.planner_quantile = *pq;
    ORDO_ASSIGN_OR_RETURN(auto c, o.OptionalNumber("correlation", 0, 0.999999));
    if (c) tn.correlation = *c;
    ORDO_ASSIGN_OR_RETURN(auto seed, o.OptionalSeed("seed"));
    tn.seed = seed.value_or(1);
    w.traffic_noise = tn;
  }
  if (const Json* tenants = f.Find("tenants")) {
    if (!tenants->is_array()) return FailInput("tenants", "must be a list");
    if (tenants->size() > static_cast<size_t>(kMaxTenants)) {
      return FailInput("tenants", "more than 10000 tenants");
    }
    for (size_t t = 0; t < tenants->size(); ++t) {
      ORDO_ASSIGN_OR_RETURN(WorldTenant tenant, ReadTenant((*tenants)[t], IndexPath("tenants", t)));
      w.tenants.push_back(std::move(tenant));
    }
  }
  if (const Json* jobs = f.Find("jobs")) {
    if (!jobs->is_array()) return FailInput("jobs", "must be a list");
    if (jobs->size() > static_cast<size_t>(Limits::kMaxJobs)) {
      return FailInput("jobs", "more than 1000000 jobs");
    }
    w.jobs.reserve(jobs->size());
    for (size_t j = 0; j < jobs->size(); ++j) {
      ORDO_ASSIGN_OR_RETURN(WorldJob job, ReadJob((*jobs)[j], IndexPath("jobs", j)));
      w.jobs.push_back(std::move(job));
    }
  }
  if (const Json* services = f.Find("services")) {
    if (!services->is_array()) return FailInput("services", "must be a list");
    if (services->size() > static_cast<size_t>(Limits::kMaxServices)) {
      return FailInput("services", "more than 10000 services");
    }
    for (size_t i = 0; i < services->size(); ++i) {
      ORDO_ASSIGN_OR_RETURN(WorldService s, ReadService((*services)[i], IndexPath("services", i),
                                                        w.cluster.total_gpus()));
      w.services.push_back(std::move(s));
    }
  }
  ORDO_RETURN_IF_ERROR(ValidateWorld(w));
  return w;
}

// ---------------------------------------------------------------------------------------------
// Writer.

namespace {

using OJson = nlohmann::ordered_json;

OJson Number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
    return static_cast<int64_t>(v);
  }
  return v;
}

void WriteRequirement(const GpuRequirement& req, OJson& out) {
  if (req.gpu_type) out["gpu_type"] = *req.gpu_type;
  if (req.min_gpu_memory_gb) out["min_gpu_memory_gb"] = Number(*req.min_gpu_memory_gb);
}

OJson NumberArray(const std::vector<double>& values) {
  OJson a = OJson::array();
  for (double v : values) a.push_back(Number(v));
  return a;
}

// Pretty text with each job and each curve on one line: a world of thousands of jobs stays
// readable and diffable (one job per line) without a line per number. A value goes on one line
// when it is short or is a list of numbers.
void DumpReadable(const OJson& v, int depth, std::string& out) {
  auto is_scalar = [](const OJson& x) { return !x.is_object() && !x.is_array(); };
  const std::string compact = v.dump(-1, ' ', false, OJson::error_handler_t::replace);
  const bool scalar_list = v.is_array() && std::all_of(v.begin(), v.end(), is_scalar);
  if (is_scalar(v) || scalar_list || v.empty() || (depth > 0 && compact.size() <= 160)) {
    out += compact;
    return;
  }
  const std::string pad(static_cast<size_t>(2 * depth), ' ');
  const std::string pad_in(static_cast<size_t>(2 * (depth + 1)), ' ');
  const bool array = v.is_array();
  out += array ? "[\n" : "{\n";
  size_t i = 0;
  for (const auto& item : v.items()) {
    out += pad_in;
    if (!array) out += OJson(item.key()).dump() + ": ";
    DumpReadable(item.value(), depth + 1, out);
    out += ++i < v.size() ? ",\n" : "\n";
  }
  out += pad + (array ? "]" : "}");
}

}  // namespace

std::string WorldToJson(const World& w) {
  OJson out;
  out["version"] = w.version;
  out["name"] = w.name;
  if (!w.description.empty()) out["description"] = w.description;
  out["start_time"] = forecast::FormatTimestamp(w.start_time_s);
  out["step_minutes"] = w.step_minutes;
  out["horizon_steps"] = w.horizon_steps;
  out["days"] = w.days;
  OJson groups = OJson::array();
  for (const NodeGroup& g : w.cluster.groups) {
    groups.push_back({{"name", g.name},
                      {"nodes", g.nodes},
                      {"gpus_per_node", g.gpus_per_node},
                      {"gpu_type", g.gpu_type},
                      {"gpu_memory_gb", Number(g.gpu_memory_gb)}});
  }
  out["cluster"] = {{"node_groups", groups}};
  out["objective"] = {{"time_decay", Number(w.objective.time_decay)},
                      {"unmet_penalty_multiplier", Number(w.objective.unmet_penalty_multiplier)}};
  if (w.duration_noise) {
    out["duration_noise"] = {{"sigma", Number(w.duration_noise->sigma)},
                             {"seed", w.duration_noise->seed}};
  }
  if (w.traffic_noise) {
    out["traffic_noise"] = {{"sigma", Number(w.traffic_noise->sigma)},
                            {"correlation", Number(w.traffic_noise->correlation)},
                            {"seed", w.traffic_noise->seed},
                            {"planner_quantile", Number(w.traffic_noise->planner_quantile)}};
  }
  if (!w.tenants.empty()) {
    OJson tenants = OJson::array();
    for (const WorldTenant& t : w.tenants) {
      OJson o;
      o["id"] = t.id;
      if (t.share_is_percent) {
        o["share"] = Number(t.share).dump() + "%";
      } else {
        o["share"] = Number(t.share);
      }
      if (t.max_priority) o["max_priority"] = Number(*t.max_priority);
      tenants.push_back(std::move(o));
    }
    out["tenants"] = std::move(tenants);
  }
  OJson jobs = OJson::array();
  for (const WorldJob& job : w.jobs) {
    OJson j;
    j["id"] = job.id;
    j["kind"] = std::string(JobKindName(job.kind));
    j["priority"] = Number(job.priority);
    j["arrival_step"] = job.arrival_step;
    if (!job.tenant.empty()) j["tenant"] = job.tenant;
    auto shape_fields = [](const WorldShape& s, OJson& o) {
      o["gpus"] = s.gpus;
      o["duration_steps"] = s.duration_steps;
      if (s.forecast_duration_steps) o["forecast_duration_steps"] = *s.forecast_duration_steps;
    };
    if (job.shapes.size() == 1) {
      shape_fields(job.shapes[0], j);
    } else {
      OJson shapes = OJson::array();
      for (const WorldShape& s : job.shapes) {
        OJson o;
        shape_fields(s, o);
        shapes.push_back(std::move(o));
      }
      j["shapes"] = std::move(shapes);
    }
    WriteRequirement(job.requirement, j);
    if (job.checkpoint) {
      j["checkpoint"] = {{"every_steps", job.checkpoint->every_steps},
                         {"restart_steps", job.checkpoint->restart_steps}};
    }
    jobs.push_back(std::move(j));
  }
  out["jobs"] = std::move(jobs);
  OJson services = OJson::array();
  for (const WorldService& s : w.services) {
    OJson o;
    o["id"] = s.id;
    o["priority"] = Number(s.priority);
    o["min_gpus"] = s.min_gpus;
    o["max_gpus"] = s.max_gpus;
    if (s.max_change_per_step) o["max_change_per_step"] = *s.max_change_per_step;
    if (s.current_gpus) o["current_gpus"] = *s.current_gpus;
    WriteRequirement(s.requirement, o);
    if (!s.rate.empty() || !s.forecast_rate.empty()) {
      o["per_gpu_rate"] = Number(s.per_gpu_rate);
      o["headroom"] = Number(s.headroom);
    }
    if (!s.demand.empty()) o["demand"] = s.demand;
    if (!s.rate.empty()) o["rate"] = NumberArray(s.rate);
    if (!s.forecast_demand.empty()) o["forecast_demand"] = s.forecast_demand;
    if (!s.forecast_rate.empty()) o["forecast_rate"] = NumberArray(s.forecast_rate);
    if (s.forecaster) {
      static constexpr const char* kQuantile[] = {"p10", "p50", "p90"};
      OJson fc;
      fc["model"] = s.forecaster->method == forecast::DemandMethod::kProfile ? "weekly-profile"
                                                                             : "level-shape";
      fc["quantile"] = kQuantile[static_cast<int>(s.forecaster->quantile)];
      fc["refit_every_steps"] = s.forecaster->refit_every_steps;
      fc["history_step_minutes"] = s.forecaster->history_step_minutes;
      fc["history_rate"] = NumberArray(s.forecaster->history_rate);
      o["forecaster"] = std::move(fc);
    }
    services.push_back(std::move(o));
  }
  out["services"] = std::move(services);
  std::string text;
  DumpReadable(out, 0, text);
  text += "\n";
  return text;
}

// ---------------------------------------------------------------------------------------------
// Noise models.

namespace {

// z with P(Z <= z) = p for a standard normal: bisection on erfc, exact to 1e-12.
double NormalQuantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The value of a curve at `step`; past its end the curve repeats its last whole day.
template <typename T>
T CurveAt(const std::vector<T>& curve, int step, int steps_per_day) {
  const int n = static_cast<int>(curve.size());
  if (step < n) return curve[step];
  const int back = ((step - n) / steps_per_day + 1) * steps_per_day;
  return curve[step - back];
}

// The forecaster in the loop: fitted on the history, refitted every `refit_every` steps with the
// actual rates observed since, each fit issuing the forecast the planner sees until the next (a
// vintage).
Result<void> RunForecaster(const World& w, const WorldService& s,
                           const std::vector<double>& actual_rate, ResolvedService& rs) {
  const ServiceForecaster& f = *s.forecaster;
  const int refit_every =
      f.refit_every_steps > 0 ? f.refit_every_steps : std::max(1, 60 / w.step_minutes);
  const double step_s = w.step_minutes * 60.0;
  const int window = w.window_steps();
  const int span = refit_every + w.horizon_steps;
  rs.refit_every = refit_every;
  std::vector<forecast::RatePoint> history;
  const size_t n = f.history_rate.size();
  for (size_t i = 0; i < n; ++i) {
    history.push_back({w.start_time_s - static_cast<double>(n - i) * f.history_step_minutes * 60.0,
                       f.history_rate[i]});
  }
  forecast::DemandOptions options;
  options.method = f.method;
  forecast::DemandForecaster forecaster(options);
  if (auto ok = forecaster.Fit(history); !ok) {
    Error e = ok.error();
    e.field = "history_rate";
    return Fail(std::move(e));
  }
  for (int v = 0; v < window; v += refit_every) {
    if (v > 0) {
      std::vector<forecast::RatePoint> seen;
      for (int t = v - refit_every; t < v; ++t)
        seen.push_back({w.start_time_s + t * step_s, actual_rate[t]});
      if (auto ok = forecaster.Refit(seen); !ok) return Fail(ok.error());
    }
    std::vector<int> vintage(span);
    for (int k = 0; k < span; ++k) {
      // The highest rate of the hours the step touches: capacity must hold the whole step.
      const double from = w.start_time_s + (v + k) * step_s;
      double rate = 0;
      // Hours counted in integers (exact, unlike a double counter); each hour starts at h * 3600.
      for (auto h = static_cast<int64_t>(std::floor(from / 3600));
           static_cast<double>(h) * 3600 < from + step_s; ++h) {
        auto q = forecaster.Predict(static_cast<double>(h) * 3600);
        if (!q) return Fail(q.error());
        rate = std::max(rate, forecast::Pick(*q, f.quantile));
      }
      vintage[k] = GpusForRate(rate, s.per_gpu_rate, s.headroom);
    }
    rs.vintages.push_back(std::move(vintage));
  }
  for (int t = 0; t < static_cast<int>(rs.forecast.size()); ++t) {
    const int issue = std::min(t, (window - 1) / refit_every * refit_every);
    rs.forecast[t] = rs.PlannerForecast(issue, t);
  }
  return {};
}

}  // namespace

Result<ResolvedWorld> ResolveWorld(const World& w) {
  ResolvedWorld r;
  r.world = &w;
  const int spd = w.steps_per_day();
  const int needed = w.window_steps() + w.horizon_steps;
  r.jobs.reserve(w.jobs.size());
  for (const WorldJob& job : w.jobs) {
    ResolvedJob rj;
    double factor = 1.0;
    if (w.duration_noise && w.duration_noise->sigma > 0) {
      Rng rng(HashSeed(w.duration_noise->seed, job.id));
      factor = std::exp(w.duration_noise->sigma * rng.Normal());
    }
    for (const WorldShape& shape : job.shapes) {
      ResolvedShape rs;
      rs.gpus = shape.gpus;
      rs.actual_steps = shape.duration_steps;
      if (shape.forecast_duration_steps) {
        rs.forecast_steps = *shape.forecast_duration_steps;
      } else {
        const double f = std::round(shape.duration_steps * factor);
        rs.forecast_steps =
            static_cast<int>(std::clamp(f, 1.0, static_cast<double>(Limits::kMaxDurationSteps)));
      }
      rj.shapes.push_back(rs);
    }
    r.jobs.push_back(std::move(rj));
  }
  for (const WorldService& s : w.services) {
    ResolvedService rs;
    rs.actual.resize(needed);
    rs.forecast.resize(needed);
    // Log-space AR(1) deviations of reality from the given curve (zero without traffic noise or
    // where the world gives its own forecast: then both curves are as given).
    std::vector<double> deviation(needed, 0.0);
    double told = 1.0;  // the planner's curve, as a factor of the given one
    if (w.traffic_noise && w.traffic_noise->sigma > 0 && !s.has_forecast()) {
      told = std::exp(w.traffic_noise->sigma * NormalQuantile(w.traffic_noise->planner_quantile));
      Rng rng(HashSeed(w.traffic_noise->seed, s.id));
      const double rho = w.traffic_noise->correlation;
      const double sigma = w.traffic_noise->sigma;
      double x = sigma * rng.Normal();
      for (int t = 0; t < needed; ++t) {
        if (t > 0) x = rho * x + std::sqrt(1 - rho * rho) * sigma * rng.Normal();
        deviation[t] = x;
      }
    }
    std::vector<double> actual_rate(s.rate.empty() ? 0 : needed);
    for (int t = 0; t < needed; ++t) {
      const double noise = std::exp(deviation[t]);
      if (!s.rate.empty()) {
        const double rate = CurveAt(s.rate, t, spd);
        actual_rate[t] = rate * noise;
        rs.actual[t] = GpusForRate(rate * noise, s.per_gpu_rate, s.headroom);
        rs.forecast[t] = GpusForRate(rate * told, s.per_gpu_rate, s.headroom);
      } else {
        const int d = CurveAt(s.demand, t, spd);
        rs.actual[t] = static_cast<int>(std::min<double>(std::round(d * noise), Limits::kMaxGpus));
        rs.forecast[t] = static_cast<int>(std::min<double>(std::round(d * told), Limits::kMaxGpus));
      }
      if (!s.forecast_demand.empty()) {
        rs.forecast[t] = CurveAt(s.forecast_demand, t, spd);
      } else if (!s.forecast_rate.empty()) {
        rs.forecast[t] = GpusForRate(CurveAt(s.forecast_rate, t, spd), s.per_gpu_rate, s.headroom);
      }
    }
    if (s.forecaster) {
      auto ok = RunForecaster(w, s, actual_rate, rs);
      if (!ok) {
        Error e = ok.error();
        e.field = FieldPath(IndexPath("services", r.services.size()) + ".forecaster", e.field);
        return Fail(std::move(e));
      }
    }
    r.services.push_back(std::move(rs));
  }
  return r;
}

Service WorldService::ToService(std::vector<int> demand_curve) const {
  Service svc;
  svc.id = id;
  svc.priority = priority;
  svc.min_gpus = min_gpus;
  svc.max_gpus = max_gpus;
  svc.max_change_per_step = max_change_per_step;
  svc.current_gpus = current_gpus;
  svc.requirement = requirement;
  svc.demand = std::move(demand_curve);
  return svc;
}

}  // namespace ordo::sim
