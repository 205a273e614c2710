// Worlds from real traces (../shared/data, described in its README): batch jobs from the
// Microsoft ITP trace (ElasticFlow, 2021), real-time services from Alibaba ServeGen's hourly
// request rates. Every mapping choice is listed in docs/world-format.md ("Worlds from the traces").
//
// Jobs: the rows of one ITP cluster submitted in [start_day, start_day + days) become training
// jobs: arrival = floor((submission - window start) / step), actual duration = ceil(duration /
// step) steps, GPUs = num_gpu rounded up to a power of two and capped at `max_job_gpus`. The trace
// has no priority: each job gets an integer 1-10 from a hash of (seed, job id), uniform. The
// trace's cluster is larger than the simulated one, so jobs are thinned — each kept with the same
// probability, from a hash of (seed, job id) — until the offered batch work inside the window is
// `target_load` times what the services leave of the cluster.
// Services: each is one ServeGen model's hourly rate (sum of its clients), day `servegen_start_day`
// aligned to the window's first day; hours whose 10-minute minimum is 0 are collection gaps and are
// interpolated. A per-GPU rate turns requests into GPUs: chosen so that the service's peak inside
// the window, with `headroom`, needs `peak_share` of the cluster.
// Forecasts: demand from the level-shape forecaster (forecast/level_shape.h; or the older
// weekly-profile one, `forecast_method`) fitted on the ServeGen hours before the window and
// refitted every hour as traffic is observed, the planner told its p90 in GPUs; or the same hour
// one week earlier (seasonal naive); or none (the planner is told the truth, and the world's noise
// models decide the error). Durations are exact unless a noise model is given at simulation time.
//
//   Result<World> w = MakeTraceWorld(options, itp_csv_text, servegen_hourly_csv_text);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/sim/world.h"

namespace ordo::sim {

struct TraceService {
  std::string model;  // ServeGen `model` column: m-large, m-mid, m-small
  std::string id;
  double priority = 10;
  double peak_share = 0.1;  // the service's peak GPUs as a share of the cluster
};

enum class DemandForecastKind : int { kNone = 0, kSeasonalNaive = 1, kForecaster = 2 };

struct TraceWorldOptions {
  std::string itp_cluster = "cluster04";
  double start_day = 7;  // of the ITP trace (t = 0 is the start of its collection)
  int days = 7;
  int step_minutes = 30;
  int horizon_steps = 48;
  int nodes = 16;
  int gpus_per_node = 8;
  double target_load = 0.9;
  int max_job_gpus = 0;  // 0: half the cluster
  uint64_t seed = 1;
  std::vector<TraceService> services = {
      {"m-large", "chat-large", 10, 0.06},
      {"m-mid", "chat-mid", 8, 0.10},
      {"m-small", "chat-small", 6, 0.10},
  };
  int servegen_start_day = 7;
  double headroom = 0.2;
  /// GPUs a service may add or remove per hour, as a share of its peak (at least 1 per step).
  double churn_per_hour = 0.25;
  DemandForecastKind demand_forecast = DemandForecastKind::kForecaster;
  /// With kForecaster: the quantile the planner is told (p90: under-provisioning costs M times
  /// more than an idle GPU, so the planner should aim high).
  forecast::QuantileLevel forecast_quantile = forecast::QuantileLevel::kP90;
  /// With kForecaster: which demand forecaster.
  forecast::DemandMethod forecast_method = forecast::DemandMethod::kLevelShape;
};

/// What the generator did, for the world's description and the docs.
struct TraceWorldReport {
  int trace_jobs = 0;  // rows of the cluster inside the window
  int kept_jobs = 0;
  double keep_fraction = 1;
  int capped_jobs = 0;           // GPU count lowered to max_job_gpus
  double offered_gpu_hours = 0;  // kept jobs, inside the window
  double service_mean_gpus = 0;  // summed over services, actual
  int gap_hours = 0;             // ServeGen hours interpolated
};

[[nodiscard]] Result<World> MakeTraceWorld(const TraceWorldOptions& options,
                                           std::string_view itp_csv,
                                           std::string_view servegen_hourly_csv,
                                           TraceWorldReport* report = nullptr);

}  // namespace ordo::sim
