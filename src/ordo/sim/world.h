// The world the simulator replays (docs/world-format.md): what really happens — arrivals, actual
// durations, actual service demand — and what the planner is told — forecast durations, forecast
// demand, or a noise model that derives one from the other. A world is plain data, read from JSON
// text (ParseWorld) or built by a generator (trace_world.h, random_world.h).
//
//   Result<World> w = ParseWorld(text);          // checks every field, errors name the path
//   Result<ResolvedWorld> r = ResolveWorld(*w);  // noise applied: integer curves per step
//   // r->jobs[i].shapes[k].{actual,forecast}_steps, r->services[i].ActualAt(step)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/core/scenario.h"
#include "ordo/forecast/demand_forecaster.h"
#include "ordo/forecast/forecaster.h"

namespace ordo::sim {

/// Version of the world format this code reads and writes.
inline constexpr int kWorldFormatVersion = 1;

/// One way to run a job, with what it really takes and (optionally) what the planner is told.
struct WorldShape {
  int gpus = 0;
  int duration_steps = 0;                      // actual
  std::optional<int> forecast_duration_steps;  // absent: from the world's duration_noise
};

/// A batch job as it really arrives: `arrival_step` is absolute (step 0 = the window's start).
struct WorldJob {
  std::string id;
  JobKind kind = JobKind::kTraining;
  double priority = 1;
  int arrival_step = 0;
  std::vector<WorldShape> shapes;  // never empty; the first is what the baselines use
  GpuRequirement requirement;
  std::string tenant;  // empty: no tenant (fair share does not apply)
  /// How the job saves its work (the scenario's `checkpoint`); absent: it is never preempted.
  /// The simulator keeps the saved progress when a plan preempts it and charges the restart steps
  /// when it runs again.
  std::optional<Checkpoint> checkpoint;
};

/// A tenant with a share of the cluster (Kueue's nominal quota): when GPUs are contended a tenant
/// below its share is served before one above it (priority/planning_priority.h); idle capacity is
/// still lent to whoever has work. JSON `share`: a number of GPUs, or a percentage ("25%").
struct WorldTenant {
  std::string id;
  double share = 0;  // GPUs, or percent of the cluster when share_is_percent
  bool share_is_percent = false;
  std::optional<double> max_priority;  // a job of this tenant may not ask for more

  /// The share as a fraction of a cluster of `total_gpus` GPUs.
  [[nodiscard]] double ShareFraction(int total_gpus) const {
    if (share_is_percent) return share / 100.0;
    return total_gpus > 0 ? share / total_gpus : 0;
  }
};

/// A forecaster in the loop (forecast/demand_forecaster.h): fitted on `history_rate` (the rates of
/// the `history_step_minutes` steps just before the window) and refitted every `refit_every_steps`
/// with the actual rates observed since; the planner is told the `quantile` of its forecast,
/// turned into GPUs as the actual rate is. Needs the service's `rate`. `method` is the world's
/// `model`: "level-shape" (the default, forecast/level_shape.h) or "weekly-profile" (the older
/// weekly-profile forecaster, kept for comparison and for worlds written before level-shape).
struct ServiceForecaster {
  forecast::DemandMethod method = forecast::DemandMethod::kLevelShape;
  forecast::QuantileLevel quantile = forecast::QuantileLevel::kP90;
  int refit_every_steps = 0;  // 0: every hour (at least every step)
  int history_step_minutes = 60;
  std::vector<double> history_rate;
};

/// A real-time service. Actual demand is given either in GPUs per step (`demand`) or as a request
/// rate per step (`rate`) turned into GPUs by `per_gpu_rate` and `headroom`:
/// ceil(rate * (1 + headroom) / per_gpu_rate). The forecast is given the same way
/// (`forecast_demand` / `forecast_rate`); with neither, the planner is told the curve itself and,
/// when the world has `traffic_noise`, reality moves off it.
struct WorldService {
  std::string id;
  double priority = 1;
  int min_gpus = 0;
  int max_gpus = 0;  // ParseWorld fills the default (cluster size)
  std::optional<int> max_change_per_step;
  std::optional<int> current_gpus;  // allocation before step 0
  GpuRequirement requirement;
  std::vector<int> demand;
  std::vector<double> rate;
  double per_gpu_rate = 0;  // > 0 when `rate` or `forecast_rate` is given
  double headroom = 0;
  std::vector<int> forecast_demand;
  std::vector<double> forecast_rate;
  std::optional<ServiceForecaster> forecaster;  // instead of forecast_demand / forecast_rate

  /// True when the world gives the forecast curve outright (then no traffic noise applies).
  [[nodiscard]] bool has_forecast() const {
    return !forecast_demand.empty() || !forecast_rate.empty();
  }

  /// The scenario's service: this one's rules, with `demand` as the curve.
  [[nodiscard]] Service ToService(std::vector<int> demand) const;
};

/// Forecast durations of jobs without `forecast_duration_steps`: actual x exp(sigma * z), z a
/// standard normal drawn from (seed, job id) — median-unbiased, the same factor for every shape of
/// a job, rounded to whole steps and at least 1.
struct DurationNoise {
  double sigma = 0;
  uint64_t seed = 1;
};

/// Reality off the forecast curve for services without an explicit forecast: the curve (rate, or
/// GPUs) times exp(x_t), where x is an AR(1) process in log space with stationary standard
/// deviation `sigma` and lag-one `correlation`, drawn from (seed, service id).
/// The planner is told the `planner_quantile` of that distribution: the curve x exp(sigma x
/// z_q) (0.5: the curve itself; 0.9: what an operator who knows the error's spread would plan
/// for). A service with a forecaster is told the forecaster's own quantile instead.
struct TrafficNoise {
  double sigma = 0;
  double correlation = 0.8;
  uint64_t seed = 1;
  double planner_quantile = 0.5;
};

struct World {
  int version = kWorldFormatVersion;
  std::string name;
  std::string description;
  int step_minutes = 60;   // divides a day (1440)
  int horizon_steps = 24;  // what each plan looks ahead
  int days = 1;            // the simulated window
  /// Where step 0 falls on the calendar (Unix seconds, UTC): the forecasters' weekly profile is
  /// by hour of week. Default 2024-01-01T00:00:00Z, a Monday.
  double start_time_s = 1704067200;
  Cluster cluster;  // indexed by ParseWorld / generators
  Objective objective;
  std::optional<DurationNoise> duration_noise;
  std::optional<TrafficNoise> traffic_noise;
  std::vector<WorldTenant> tenants;
  std::vector<WorldJob> jobs;
  std::vector<WorldService> services;

  [[nodiscard]] int steps_per_day() const { return 1440 / step_minutes; }
  [[nodiscard]] int window_steps() const { return days * steps_per_day(); }
};

/// Checks a world built by code or read by ParseWorld (the reader calls it). Errors name the field
/// as a path (`jobs[3].shapes[0].forecast_duration_steps`). The cluster must be indexed.
[[nodiscard]] Result<void> ValidateWorld(const World& world);

/// Reads a world from JSON text. Unknown fields are errors unless they start with `x-`.
[[nodiscard]] Result<World> ParseWorld(std::string_view json_text);

/// The world as JSON text (what ParseWorld reads back to an equal world).
std::string WorldToJson(const World& world);

/// A job with both duration curves settled.
struct ResolvedShape {
  int gpus = 0;
  int actual_steps = 0;
  int forecast_steps = 0;
};

struct ResolvedJob {
  std::vector<ResolvedShape> shapes;
};

/// A service's actual and forecast GPU demand for every step the simulation can ask about:
/// the window plus one horizon. Curves shorter than that repeat their last day.
struct ResolvedService {
  std::vector<int> actual;
  std::vector<int> forecast;  // a fixed curve; with a forecaster, the forecast each step had
  /// With a forecaster: the forecast issued at step k * refit_every (vintage k), for steps
  /// [k * refit_every, k * refit_every + refit_every + horizon).
  int refit_every = 0;
  std::vector<std::vector<int>> vintages;

  /// What a plan made at `issue_step` is told about step `step` (issue_step <= step).
  [[nodiscard]] int PlannerForecast(int issue_step, int step) const {
    if (vintages.empty()) return forecast[step];
    const int k = issue_step / refit_every;
    return vintages[k][step - k * refit_every];
  }
};

/// The world with its noise models applied: integer durations and demand curves. Deterministic:
/// the same world gives the same curves.
struct ResolvedWorld {
  const World* world = nullptr;           // not owned; outlives this
  std::vector<ResolvedJob> jobs;          // world order
  std::vector<ResolvedService> services;  // world order
};

[[nodiscard]] Result<ResolvedWorld> ResolveWorld(const World& world);

/// ceil(rate * (1 + headroom) / per_gpu_rate), 0 for a zero rate; per_gpu_rate > 0.
int GpusForRate(double rate, double per_gpu_rate, double headroom);

}  // namespace ordo::sim
