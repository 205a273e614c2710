#include "ordo/sim/experiment.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "ordo/core/check_plan.h"
#include "ordo/core/validate.h"

namespace ordo::sim {

Result<RunSpec> ParseRunSpec(std::string_view item, int default_replan_every) {
  RunSpec spec;
  spec.label = std::string(item);
  spec.replan_every = default_replan_every;
  const size_t at = item.find('@');
  spec.policy = std::string(item.substr(0, at));
  if (at == std::string_view::npos) return spec;
  const std::string_view k = item.substr(at + 1);
  if (k == "plan") {
    spec.whole_plan = true;
    return spec;
  }
  int steps = 0;
  const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), steps);
  if (ec != std::errc() || end != k.data() + k.size() || steps < 1 ||
      steps > Limits::kMaxHorizonSteps) {
    return FailInput("--policies", "\"" + std::string(item) +
                                       "\": after @ comes a number of steps (1 to " +
                                       std::to_string(Limits::kMaxHorizonSteps) + ") or \"plan\"");
  }
  spec.replan_every = steps;
  return spec;
}

World WithDurationNoise(World world, double sigma, uint64_t seed) {
  world.duration_noise = DurationNoise{sigma, seed};
  for (WorldJob& job : world.jobs) {
    for (WorldShape& shape : job.shapes) shape.forecast_duration_steps.reset();
  }
  return world;
}

World WithTrafficNoise(World world, double sigma, uint64_t seed, double quantile) {
  world.traffic_noise = TrafficNoise{sigma, 0.8, seed, quantile};
  for (WorldService& service : world.services) {
    service.forecast_demand.clear();
    service.forecast_rate.clear();
  }
  return world;
}

std::vector<NoiseLevel> NoiseSweep(const World& base, NoiseKind kind,
                                   const std::vector<double>& sigmas,
                                   const std::vector<uint64_t>& seeds, double traffic_quantile) {
  std::vector<NoiseLevel> levels;
  for (size_t i = 0; i < sigmas.size(); ++i) {
    char sigma[32];
    std::snprintf(sigma, sizeof(sigma), "%g", sigmas[i]);
    for (uint64_t seed : seeds) {
      NoiseLevel level;
      level.name = (kind == NoiseKind::kDuration ? "duration noise " : "traffic noise ") +
                   std::string(sigma);
      level.index = i;
      level.seed = seed;
      level.label_seed = seeds.size() > 1;
      level.world = kind == NoiseKind::kDuration
                        ? WithDurationNoise(base, sigmas[i], seed)
                        : WithTrafficNoise(base, sigmas[i], seed, traffic_quantile);
      levels.push_back(std::move(level));
    }
  }
  return levels;
}

namespace {

SimOptions RunOptions(const RunSpec& spec, const World& world, const ExperimentOptions& options) {
  SimOptions o;
  o.replan_every = spec.replan_every;
  o.replan_on_arrival = spec.policy != "ordo-full" && options.replan_on_arrival;
  if (spec.whole_plan || options.commit_whole_plan) {
    o.replan_every = world.horizon_steps;
    o.replan_on_arrival = false;
  }
  o.arrivals_lookahead = options.arrivals_lookahead;
  const bool ordo_policy = spec.policy == "ordo" || spec.policy == "ordo-full";
  if (options.planning_for == PlanningFor::kAll ||
      (options.planning_for == PlanningFor::kOrdo && ordo_policy)) {
    o.planning = options.planning;
  }
  o.time_limit_s = options.time_limit_s;
  o.seed = options.seed;
  o.lend_idle_gpus = options.lend_idle_gpus;
  o.replan_on_surge = options.replan_on_surge;
  return o;
}

// Every committed step against the spec's rules, with actual durations and demand.
void CheckCommitted(const World& world, const SimRun& run, const std::string& label,
                    std::vector<std::string>& problems) {
  const CommittedTimeline timeline = BuildCommittedTimeline(world, run);
  if (auto ok = ValidateScenario(timeline.scenario); !ok) {
    problems.push_back(
        label + ": the committed timeline is not a valid scenario: " + ok.error().ToString());
  }
  for (const Violation& v : CheckPlan(timeline.scenario, timeline.plan)) {
    problems.push_back(label + ": committed timeline: " + FormatViolation(v));
  }
}

}  // namespace

Result<Experiment> RunExperiment(const std::vector<NoiseLevel>& levels,
                                 const std::vector<RunSpec>& runs, const PolicyRegistry& registry,
                                 const ExperimentOptions& options) {
  Experiment experiment;
  experiment.reports.resize(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    const NoiseLevel& level = levels[l];
    auto resolved = ResolveWorld(level.world);
    if (!resolved) return Fail(resolved.error());
    for (const RunSpec& spec : runs) {
      std::optional<SimReport>& slot = experiment.reports[l].emplace_back();
      auto policy = registry.Create(spec.policy);
      if (!policy) return Fail(policy.error());
      SimOptions o = RunOptions(spec, level.world, options);
      std::string label = spec.label;
      if (!level.name.empty()) {
        label += " (" + level.name +
                 (level.label_seed ? ", seed " + std::to_string(level.seed) : "") + ")";
      }
      if (options.progress) o.progress = options.progress(label);
      auto run = Simulate(*resolved, **policy, o);
      if (!run) {
        if (run.error().code == ErrorCode::kInvalidInput) return Fail(run.error());
        experiment.problems.push_back(label + ": " + run.error().ToString());
        continue;
      }
      CheckCommitted(level.world, *run, label, experiment.problems);
      SimReport report;
      report.metrics = ComputeSimMetrics(level.world, *run);
      report.run = std::move(*run);
      report.label = label;
      slot = std::move(report);
    }
  }
  return experiment;
}

std::string ExperimentJson(const World& world, const std::vector<NoiseLevel>& levels,
                           const Experiment& experiment) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (size_t l = 0; l < levels.size() && l < experiment.reports.size(); ++l) {
    for (const std::optional<SimReport>& r : experiment.reports[l]) {
      if (!r) continue;
      nlohmann::ordered_json days = nlohmann::ordered_json::array();
      for (const PeriodMetrics& d : r->metrics.days) days.push_back(PeriodMetricsObject(d));
      runs.push_back({{"label", r->label},
                      {"policy", r->run.policy},
                      {"level", levels[l].name},
                      {"noise_seed", levels[l].seed},
                      {"total", PeriodMetricsObject(r->metrics.total)},
                      {"days", std::move(days)}});
    }
  }
  nlohmann::ordered_json out;
  out["world"] = world.name;
  out["runs"] = std::move(runs);
  return out.dump() + "\n";
}

std::vector<SweepRow> SummariseSweep(const Experiment& experiment,
                                     const std::vector<NoiseLevel>& levels,
                                     const std::vector<RunSpec>& runs, size_t seeds_per_level) {
  std::vector<SweepRow> rows;
  const size_t per_level = std::max<size_t>(1, seeds_per_level);
  auto at = [&](size_t level, size_t run) -> const SimReport* {
    if (level >= experiment.reports.size() || run >= experiment.reports[level].size()) {
      return nullptr;
    }
    const auto& slot = experiment.reports[level][run];
    return slot ? &*slot : nullptr;
  };
  for (size_t s = 0; s < runs.size(); ++s) {
    for (size_t first = 0; first < levels.size(); first += per_level) {
      SweepRow row;
      row.run = runs[s].label;
      row.level = levels[first].name;
      row.min_kept = 1e300;
      int n = 0;
      for (size_t k = 0; k < per_level && first + k < levels.size(); ++k) {
        const SimReport* r = at(first + k, s);
        const SimReport* ref = at(k, s);
        if (r == nullptr || ref == nullptr) continue;
        const PeriodMetrics& a = r->metrics.total;
        const PeriodMetrics& b = ref->metrics.total;
        const double kept = a.value / std::max(1e-9, b.value);
        row.value += a.value;
        row.net_value += a.net_value;
        row.unmet_gpu_steps += static_cast<double>(a.realtime_unmet_gpu_steps);
        row.preemptions += a.preemptions;
        row.lost_gpu_steps += static_cast<double>(a.lost_gpu_steps);
        row.wait_mean_hours += a.wait_all.mean_hours;
        row.wait_p95_hours += a.wait_all.p95_hours;
        row.never_started += a.wait_all.unstarted;
        row.top_class_p95_hours += a.wait_by_class[kPriorityClasses - 1].p95_hours;
        row.plan_ms_mean += a.plan_ms_mean;
        row.kept += kept;
        row.min_kept = std::min(row.min_kept, kept);
        row.kept_net += a.net_value / std::max(1e-9, b.net_value);
        ++n;
      }
      if (n == 0) continue;
      for (double* mean :
           {&row.value, &row.net_value, &row.unmet_gpu_steps, &row.preemptions, &row.lost_gpu_steps,
            &row.wait_mean_hours, &row.wait_p95_hours, &row.never_started, &row.top_class_p95_hours,
            &row.plan_ms_mean, &row.kept, &row.kept_net}) {
        *mean /= n;
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

HourBlocks ByBlockOfDay(const World& world, const SimRun& run, int blocks) {
  const int per_day = world.steps_per_day();
  const StepSeries series = ComputeStepSeries(run);
  HourBlocks out;
  out.utilization.assign(blocks, 0);
  out.unmet_gpu_steps.assign(blocks, 0);
  std::vector<double> cells(blocks, 0);
  for (int t = 0; t < run.steps; ++t) {
    const int b = (t % per_day) * blocks / per_day;
    out.utilization[b] += series.batch_gpus[t] + series.served_gpus[t];
    out.unmet_gpu_steps[b] += series.unmet_gpus[t];
    cells[b] += world.cluster.total_gpus();
  }
  for (int b = 0; b < blocks; ++b) out.utilization[b] /= std::max(1.0, cells[b]);
  return out;
}

}  // namespace ordo::sim
