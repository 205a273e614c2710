// `ordo simulate WORLD [--policies a,b@K,...] [--replan-every K] [--days D] ...`: replays a world
// through each policy with the rolling-horizon simulator, checks every committed step, prints
// per-day and total metrics, and writes the timeline JSON and an HTML chart. `--make-world` turns
// the real traces (or the synthetic generator) into a world file.
#include "simulate_command.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "ordo/io/document.h"
#include "ordo/report/sim_tables.h"
#include "ordo/sim/experiment.h"
#include "ordo/sim/random_world.h"
#include "ordo/sim/trace_world.h"

namespace ordo::cli {

const char* const kSimulateUsage =
    "usage: ordo simulate WORLD [--policies LIST] [--replan-every K] [--days D] [--horizon H]\n"
    "                     [--no-arrival-replan] [--commit-whole-plan] [--lookahead]\n"
    "                     [--duration-noise SIGMA] [--traffic-noise SIGMA] [--noise-seed N]\n"
    "                     [--sweep-duration-noise LIST] [--sweep-traffic-noise LIST]\n"
    "                     [--noise-seeds LIST] [--per-run] [--traffic-quantile Q]\n"
    "                     [--time-limit S] [--seed N] [--format text|markdown|json] [--per-day]\n"
    "                     [--timeline FILE.json] [--html FILE.html] [--progress] [--quiet]\n"
    "       ordo simulate --make-world OUT.json --data DIR [trace options]\n"
    "       ordo simulate --make-world OUT.json --synthetic [synthetic options]\n"
    "\n"
    "Replays WORLD (docs/world-format.md) step by step through each policy: the planner sees the\n"
    "jobs that have arrived with forecast durations and the forecast demand; each re-plan commits\n"
    "the current step only; jobs run their actual durations and demand above the allocation is\n"
    "unmet. Every committed step is checked against the spec's rules. docs/simulator.md.\n"
    "  --policies LIST         comma-separated NAME, NAME@K (re-plan every K steps) or NAME@plan\n"
    "                          (plan once per horizon, commit all of it); names: fifo,\n"
    "                          fifo-backfill, priority-backfill, reactive, priority-preempt,\n"
    "                          reactive-preempt, ordo, ordo-full.\n"
    "                          Default: the four baselines and ordo (ordo-full is slow)\n"
    "  --replan-every K        re-plan every K steps (default 1); jobs arriving also trigger a\n"
    "                          re-plan, except for ordo-full or with --no-arrival-replan\n"
    "  --commit-whole-plan     every run plans once per horizon and commits all of it\n"
    "  --lookahead             planners see jobs that will arrive inside their horizon\n"
    "  --days D, --horizon H   simulate D days (at most the world's), plans H steps long\n"
    "  --duration-noise SIGMA  forecast durations = actual x exp(SIGMA x z) for every job "
    "(replaces\n"
    "                          the world's forecasts); --traffic-noise SIGMA: actual demand moves\n"
    "                          off the forecast curve (log-AR(1), correlation 0.8), the planner\n"
    "                          told the curve's --traffic-quantile Q (default 0.5); --noise-seed "
    "N\n"
    "  --sweep-duration-noise LIST, --sweep-traffic-noise LIST\n"
    "                          run every policy at each SIGMA of LIST (e.g. 0,0.15,0.3,0.5) and\n"
    "                          print the value kept against the first; --noise-seeds LIST\n"
    "                          repeats each level with each noise seed (means are printed);\n"
    "                          --per-run also prints every run's totals\n"
    "  --time-limit S          per decision; default 1 (fast mode stops sooner when done)\n"
    "  --seed N                the policies' seed (default 1)\n"
    "  --no-headroom           ordo does not lend idle GPUs to the services at the committed\n"
    "                          step (docs/fast-mode.md, step 9)\n"
    "  --no-checkpoints        drop the jobs' checkpoints: nothing can be preempted\n"
    "  --surge-replan          every policy re-plans within a step whose actual demand is above\n"
    "                          a service's allocation, told that step's observed demand\n"
    "  --format F              text (default), markdown or json, on stdout\n"
    "  --per-day               also print each run's per-day table\n"
    "  --by-hour               also print utilization and unmet demand by 2-hour block of the day\n"
    "  --timeline FILE         the committed timelines as JSON; --html FILE: a self-contained "
    "page\n"
    "  --progress, --quiet     force or silence the progress bar (default: when stderr is a tty)\n"
    "Planning priorities (docs/simulator.md, \"Starvation\"): a waiting job is planned at\n"
    "base x min(cap, 1 + rate x hours waited) x its tenant's fair-share factor / its size;\n"
    "metrics keep base priorities.\n"
    "  --planning-priority P   ordo (default: ordo and ordo-full), all (every policy) or off\n"
    "  --aging-rate R (0.25/h)  --aging-cap C (4, >= 1)  --fair-share-half-life H (24 h)\n"
    "  --wait-bound W          hours; a job waiting W or more gets base + 1000 (default 0: off)\n"
    "  --size-exponent E       divide by max(1, the job's GPU-hours)^E (default 1; 0: off)\n"
    "  --fair-share-weight K   fair share 2^(K x (1 - usage/share)), clamped (default 1)\n"
    "  --borrowing-factor F    a job beyond its tenant's share plans at F x its priority and\n"
    "                          may be preempted for one within its share (default 1: off)\n"
    "  --ramp-reserve H        services with a churn limit are planned above their forecast by\n"
    "                          their largest one-step rise of the last H hours, less the limit\n"
    "                          (default 0: none; docs/simulator.md, \"Preemption\")\n"
    "World generation (--make-world OUT.json):\n"
    "  --data DIR              ../shared/data: ITP jobs + ServeGen services "
    "(docs/world-format.md)\n"
    "    --trace-cluster C (cluster04)  --start-day D (7)  --load L (0.9)  --max-job-gpus N\n"
    "    --demand-forecast forecaster|seasonal|none (forecaster: the demand forecaster in the\n"
    "    loop, refitted hourly, planner told its p90 in GPUs; seasonal: the same hour a week\n"
    "    earlier; none: the planner is told the actual demand)\n"
    "    --forecast-method level-shape|profile  the forecaster's method (default level-shape;\n"
    "    profile: the older weekly-profile forecaster)\n"
    "  --synthetic             sim/random_world.h: --load L (1.2)  --services N (2)\n"
    "  both: --days D (7)  --nodes N (16)  --gpus-per-node G (8)  --step-minutes M (30)\n"
    "        --horizon H (48)  --seed N (1)\n"
    "Exit: 0 every committed step legal; 1 a policy failed or broke a rule; 2 bad arguments or an\n"
    "unreadable or invalid file.\n";

namespace {

constexpr int kMaxSeed = 1 << 30;  // every seed option's bound: --seed, --noise-seed(s)

Result<std::string> ReadMaybeGz(const std::string& path) {
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".gz") != 0) {
    return io::ReadFileText(path);
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return Fail(Error{ErrorCode::kIo, "", "cannot open " + path});
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) return Fail(Error{ErrorCode::kIo, "", "cannot decompress " + path});
  return out;
}

Result<int> ParseInt(const Args& args, std::string_view name, int def, int lo, int hi) {
  auto v = args.value(name);
  if (!v) return def;
  return ParseInteger(name, *v, lo, hi);
}

// A sweep's noise levels (sigmas from 0 to 5).
Result<std::vector<double>> ParseSigmaList(std::string_view name, const std::string& text) {
  std::vector<double> out;
  for (const std::string& item : SplitList(text)) {
    auto x = ParseNumber(name, item, 0, 5);
    if (!x) return Fail(x.error());
    out.push_back(*x);
  }
  if (out.empty()) return FailInput(std::string(name), "lists no value");
  return out;
}

// Noise seeds: integers from 0 to kMaxSeed, as --noise-seed.
Result<std::vector<uint64_t>> ParseSeedList(std::string_view name, const std::string& text) {
  std::vector<uint64_t> out;
  for (const std::string& item : SplitList(text)) {
    auto x = ParseInteger(name, item, 0, kMaxSeed);
    if (!x) return Fail(x.error());
    out.push_back(static_cast<uint64_t>(*x));
  }
  if (out.empty()) return FailInput(std::string(name), "lists no value");
  return out;
}

// "\r[label] [#####.....]  45%  step 151/336  12.3 s" on stderr.
class Progress {
 public:
  explicit Progress(std::string label) : label_(std::move(label)) {}
  void operator()(int done, int total) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const int width = 30;
    const int filled = total > 0 ? done * width / total : width;
    const double s = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r%-22s [%s%s] %3d%%  step %d/%d  %.1f s", label_.c_str(),
                 std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                 total > 0 ? done * 100 / total : 100, done, total, s);
    if (done >= total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  std::string label_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// --make-world: the options both generators share.
struct WorldShapeArgs {
  int days = 7;
  int nodes = 16;
  int gpus_per_node = 8;
  int step_minutes = 30;
  int horizon = 48;
  int seed = 1;
};

Result<WorldShapeArgs> ParseWorldShape(const Args& args) {
  WorldShapeArgs w;
  std::pair<const char*, int*> ints[] = {{"--days", &w.days},
                                         {"--nodes", &w.nodes},
                                         {"--gpus-per-node", &w.gpus_per_node},
                                         {"--step-minutes", &w.step_minutes},
                                         {"--horizon", &w.horizon},
                                         {"--seed", &w.seed}};
  const std::pair<int, int> bounds[] = {
      {1, 366}, {1, 1 << 16}, {1, 16}, {1, 1440}, {1, Limits::kMaxHorizonSteps}, {0, kMaxSeed}};
  for (size_t i = 0; i < std::size(ints); ++i) {
    auto v = ParseInt(args, ints[i].first, *ints[i].second, bounds[i].first, bounds[i].second);
    if (!v) return Fail(v.error());
    *ints[i].second = *v;
  }
  return w;
}

Result<sim::World> SyntheticWorld(const Args& args, const WorldShapeArgs& shape) {
  auto load = OptionalNumber(args, "--load", 1.2, 0.01, 100);
  if (!load) return Fail(load.error());
  auto services = ParseInt(args, "--services", 2, 0, 6);
  if (!services) return Fail(services.error());
  sim::RandomWorldOptions o;
  o.seed = static_cast<uint64_t>(shape.seed);
  o.days = shape.days;
  o.nodes = shape.nodes;
  o.gpus_per_node = shape.gpus_per_node;
  o.step_minutes = shape.step_minutes;
  o.horizon_steps = shape.horizon;
  o.load = *load;
  o.services = *services;
  return sim::RandomWorld(o);
}

Result<sim::TraceWorldOptions> TraceOptions(const Args& args, const WorldShapeArgs& shape) {
  sim::TraceWorldOptions o;
  auto load = OptionalNumber(args, "--load", 0.9, 0.01, 100);
  if (!load) return Fail(load.error());
  auto start = OptionalNumber(args, "--start-day", 7, 0, 60);
  if (!start) return Fail(start.error());
  auto max_gpus = ParseInt(args, "--max-job-gpus", 0, 0, 1 << 20);
  if (!max_gpus) return Fail(max_gpus.error());
  o.itp_cluster = args.value("--trace-cluster").value_or("cluster04");
  o.start_day = *start;
  o.days = shape.days;
  o.nodes = shape.nodes;
  o.gpus_per_node = shape.gpus_per_node;
  o.step_minutes = shape.step_minutes;
  o.horizon_steps = shape.horizon;
  o.target_load = *load;
  o.max_job_gpus = *max_gpus;
  o.seed = static_cast<uint64_t>(shape.seed);
  const std::string forecast = args.value("--demand-forecast").value_or("forecaster");
  if (forecast == "forecaster") {
    o.demand_forecast = sim::DemandForecastKind::kForecaster;
  } else if (forecast == "seasonal") {
    o.demand_forecast = sim::DemandForecastKind::kSeasonalNaive;
  } else if (forecast == "none") {
    o.demand_forecast = sim::DemandForecastKind::kNone;
  } else {
    return FailInput("--demand-forecast", "must be forecaster, seasonal or none");
  }
  const std::string method = args.value("--forecast-method").value_or("level-shape");
  if (method == "level-shape") {
    o.forecast_method = forecast::DemandMethod::kLevelShape;
  } else if (method == "profile") {
    o.forecast_method = forecast::DemandMethod::kProfile;
  } else {
    return FailInput("--forecast-method", "must be level-shape or profile (got " + method + ")");
  }
  if (args.has("--forecast-method") && o.demand_forecast != sim::DemandForecastKind::kForecaster) {
    return FailInput("--forecast-method", "applies only with --demand-forecast forecaster");
  }
  return o;
}

int MakeWorld(const Args& args) {
  const std::string out = *args.value("--make-world");
  const bool synthetic = args.has("--synthetic");
  if (synthetic == args.has("--data")) {
    return UsageError("--make-world needs either --data DIR or --synthetic", kSimulateUsage);
  }
  auto shape = ParseWorldShape(args);
  if (!shape) return UsageError(shape.error().ToString(), kSimulateUsage);
  sim::World world;
  if (synthetic) {
    auto w = SyntheticWorld(args, *shape);
    if (!w) return UsageError(w.error().ToString(), kSimulateUsage);
    world = std::move(*w);
    if (auto ok = sim::ValidateWorld(world); !ok) return FileError(out, ok.error());
  } else {
    auto options = TraceOptions(args, *shape);
    if (!options) return UsageError(options.error().ToString(), kSimulateUsage);
    const std::string dir = *args.value("--data");
    const std::string itp_path = dir + "/jobs/ms_itp_2021_jobs.csv.gz";
    const std::string sg_path = dir + "/inference/servegen_rate_hourly.csv";
    auto itp = ReadMaybeGz(itp_path);
    if (!itp) return FileError(itp_path, itp.error());
    auto sg = ReadMaybeGz(sg_path);
    if (!sg) return FileError(sg_path, sg.error());
    auto w = sim::MakeTraceWorld(*options, *itp, *sg);
    if (!w) return FileError(dir, w.error());
    world = std::move(*w);
  }
  if (auto ok = WriteTextFile(out, sim::WorldToJson(world)); !ok) return FileError(out, ok.error());
  std::cerr << "ordo: wrote " << out << ": " << world.cluster.total_gpus() << " GPUs, "
            << world.days << " days, " << world.jobs.size() << " jobs, " << world.services.size()
            << " services\n";
  if (!world.description.empty()) std::cerr << "      " << world.description << "\n";
  return kExitOk;
}

// Planning priorities: the knobs of priority/planning_priority.h, errors naming the flag.
Result<priority::PlanningOptions> ParsePlanning(const Args& args) {
  priority::PlanningOptions planning = priority::DefaultPlanningOptions();
  const std::tuple<const char*, std::string_view, double*> knobs[] = {
      {"--aging-rate", "aging.rate_per_hour", &planning.aging.rate_per_hour},
      {"--aging-cap", "aging.cap", &planning.aging.cap},
      {"--fair-share-half-life", "fair_share.half_life_hours",
       &planning.fair_share.half_life_hours},
      {"--wait-bound", "wait_bound_hours", &planning.wait_bound_hours},
      {"--size-exponent", "size_exponent", &planning.size_exponent},
      {"--ramp-reserve", "ramp_reserve_hours", &planning.ramp_reserve_hours},
      {"--fair-share-weight", "fair_share.weight", &planning.fair_share.weight},
      {"--borrowing-factor", "borrowing_factor", &planning.borrowing_factor},
  };
  for (const auto& [flag, field, target] : knobs) {
    if (auto v = args.value(flag)) {
      auto x = ParseNumber(flag, *v, -1e9, 1e9);
      if (!x) return Fail(x.error());
      *target = *x;
    }
  }
  if (auto ok = priority::ValidatePlanningOptions(planning); !ok) {
    // Named by the flag that set the field, when one did: "--aging-cap (aging.cap)".
    const std::string& field = ok.error().field;
    const auto* knob = std::find_if(std::begin(knobs), std::end(knobs),
                                    [&](const auto& k) { return std::get<1>(k) == field; });
    if (knob == std::end(knobs)) return FailInput(field, ok.error().message);
    return FailInput(std::string(std::get<0>(*knob)) + " (" + field + ")", ok.error().message);
  }
  return planning;
}

Result<sim::ExperimentOptions> ParseExperimentOptions(const Args& args) {
  sim::ExperimentOptions o;
  const std::string planning_for = args.value("--planning-priority").value_or("ordo");
  if (planning_for == "ordo") {
    o.planning_for = sim::PlanningFor::kOrdo;
  } else if (planning_for == "all") {
    o.planning_for = sim::PlanningFor::kAll;
  } else if (planning_for == "off") {
    o.planning_for = sim::PlanningFor::kOff;
  } else {
    return FailInput("--planning-priority", "must be ordo, all or off");
  }
  auto planning = ParsePlanning(args);
  if (!planning) return Fail(planning.error());
  o.planning = *planning;
  auto seed = ParseInt(args, "--seed", 1, 0, kMaxSeed);
  if (!seed) return Fail(seed.error());
  o.seed = static_cast<uint64_t>(*seed);
  o.lend_idle_gpus = !args.has("--no-headroom");
  o.replan_on_surge = args.has("--surge-replan");
  if (auto v = args.value("--time-limit")) {
    auto s = ParseSeconds("--time-limit", *v);
    if (!s) return Fail(s.error());
    o.time_limit_s = *s;
  }
  o.replan_on_arrival = !args.has("--no-arrival-replan");
  o.commit_whole_plan = args.has("--commit-whole-plan");
  o.arrivals_lookahead = args.has("--lookahead");
  return o;
}

Result<std::vector<sim::RunSpec>> ParseRuns(const Args& args, const PolicyRegistry& registry) {
  auto replan_every = ParseInt(args, "--replan-every", 1, 1, Limits::kMaxHorizonSteps);
  if (!replan_every) return Fail(replan_every.error());
  std::vector<sim::RunSpec> runs;
  const std::string list =
      args.value("--policies").value_or("fifo,fifo-backfill,priority-backfill,reactive,ordo");
  for (const std::string& item : SplitList(list)) {
    auto spec = sim::ParseRunSpec(item, *replan_every);
    if (!spec) return Fail(spec.error());
    if (auto p = registry.Create(spec->policy); !p) {
      return FailInput("--policies", p.error().message);
    }
    runs.push_back(std::move(*spec));
  }
  if (runs.empty()) return FailInput("--policies", "names no policy");
  return runs;
}

// The world as given (--days, --horizon, fixed noise), then one world per level of a sweep.
struct Levels {
  std::vector<sim::NoiseLevel> levels;
  size_t seeds_per_level = 1;
  bool sweep = false;
};

Result<Levels> ParseLevels(const Args& args, sim::World base) {
  auto noise_seed = ParseInt(args, "--noise-seed", 1, 0, kMaxSeed);
  if (!noise_seed) return Fail(noise_seed.error());
  auto quantile = OptionalNumber(args, "--traffic-quantile", 0.5, 0.001, 0.999);
  if (!quantile) return Fail(quantile.error());
  auto days = ParseInt(args, "--days", base.days, 1, base.days);
  if (!days) return Fail(days.error());
  auto horizon = ParseInt(args, "--horizon", base.horizon_steps, 1, Limits::kMaxHorizonSteps);
  if (!horizon) return Fail(horizon.error());
  base.days = *days;
  base.horizon_steps = *horizon;
  if (args.has("--no-checkpoints")) {
    for (sim::WorldJob& job : base.jobs) job.checkpoint.reset();
  }
  const auto seed = static_cast<uint64_t>(*noise_seed);
  if (auto v = args.value("--duration-noise")) {
    auto sigma = ParseNumber("--duration-noise", *v, 0, 5);
    if (!sigma) return Fail(sigma.error());
    base = sim::WithDurationNoise(std::move(base), *sigma, seed);
  }
  if (auto v = args.value("--traffic-noise")) {
    auto sigma = ParseNumber("--traffic-noise", *v, 0, 5);
    if (!sigma) return Fail(sigma.error());
    base = sim::WithTrafficNoise(std::move(base), *sigma, seed, *quantile);
  }
  std::vector<uint64_t> seeds = {seed};
  if (auto v = args.value("--noise-seeds")) {
    auto list = ParseSeedList("--noise-seeds", *v);
    if (!list) return Fail(list.error());
    seeds = std::move(*list);
  }
  const bool duration = args.has("--sweep-duration-noise");
  const bool traffic = args.has("--sweep-traffic-noise");
  if (duration && traffic) return FailInput("--sweep-traffic-noise", "sweep one noise at a time");
  Levels out;
  if (!duration && !traffic) {
    out.levels.push_back(sim::NoiseLevel{.world = std::move(base)});
    return out;
  }
  const char* flag = duration ? "--sweep-duration-noise" : "--sweep-traffic-noise";
  auto sigmas = ParseSigmaList(flag, *args.value(flag));
  if (!sigmas) return Fail(sigmas.error());
  out.levels =
      sim::NoiseSweep(base, duration ? sim::NoiseKind::kDuration : sim::NoiseKind::kTraffic,
                      *sigmas, seeds, *quantile);
  out.seeds_per_level = seeds.size();
  out.sweep = true;
  return out;
}

std::string Render(const report::Table& table, bool markdown) {
  return markdown ? table.Markdown() : table.Text();
}

void PrintTotals(const sim::World& world, const sim::Experiment& e, bool sweep, bool md) {
  report::PeriodRows rows;
  for (const auto& level : e.reports) {
    for (const auto& r : level) {
      if (r) rows.emplace_back(r->label, &r->metrics.total);
    }
  }
  std::cout << Render(report::SimTotalsTable(rows), md) << "\n"
            << Render(report::WaitClassTable(rows), md) << (sweep ? "\n" : "");
  if (world.tenants.empty()) return;
  for (const auto& level : e.reports) {
    for (const auto& r : level) {
      if (r) std::cout << "\n" << Render(report::TenantTable(world, *r), md);
    }
  }
}

void PrintPerDay(const sim::Experiment& e, bool md) {
  for (const auto& level : e.reports) {
    for (const auto& r : level) {
      if (!r) continue;
      report::PeriodRows days;
      for (size_t d = 0; d < r->metrics.days.size(); ++d) {
        days.emplace_back("day " + std::to_string(d + 1), &r->metrics.days[d]);
      }
      days.emplace_back("total", &r->metrics.total);
      std::cout << "\n"
                << (md ? "**" + r->label + "**\n\n" : r->label + "\n")
                << Render(report::SimTotalsTable(days), md);
    }
  }
}

void PrintTables(const Args& args, const Levels& levels, const std::vector<sim::RunSpec>& runs,
                 const sim::Experiment& e) {
  const sim::World& world = levels.levels.front().world;
  const bool md = args.value("--format") == "markdown";
  if (!md) {
    std::cout << "world " << world.name << ": " << world.cluster.total_gpus() << " GPUs, "
              << world.days << " days of " << world.steps_per_day() << " steps ("
              << world.step_minutes << " min), horizon " << world.horizon_steps << " steps, "
              << world.jobs.size() << " jobs, " << world.services.size() << " services\n\n";
  }
  if (!levels.sweep || args.has("--per-run")) PrintTotals(world, e, levels.sweep, md);
  if (levels.sweep) {
    if (levels.seeds_per_level > 1) {
      std::cout << "means over " << levels.seeds_per_level << " noise seeds\n" << (md ? "\n" : "");
    }
    std::cout << Render(
        report::SweepTable(sim::SummariseSweep(e, levels.levels, runs, levels.seeds_per_level)),
        md);
  }
  if (args.has("--by-hour")) {
    std::vector<const sim::SimReport*> reports;
    for (const auto& level : e.reports) {
      for (const auto& r : level) {
        if (r) reports.push_back(&*r);
      }
    }
    const auto [util, unmet] = report::ByHourTables(world, reports);
    std::cout << "\n" << Render(util, md) << "\n" << Render(unmet, md);
  }
  if (args.has("--per-day")) PrintPerDay(e, md);
}

int WriteOutputs(const Args& args, const sim::World& world, sim::Experiment& e) {
  std::vector<sim::SimReport> all;
  for (auto& level : e.reports) {
    for (auto& r : level) {
      if (r) all.push_back(std::move(*r));
    }
  }
  if (auto out = args.value("--timeline")) {
    if (auto ok = WriteTextFile(*out, sim::TimelineJson(world, all)); !ok) {
      return FileError(*out, ok.error());
    }
  }
  if (auto out = args.value("--html")) {
    if (auto ok = WriteTextFile(*out, sim::TimelineHtml(world, all)); !ok) {
      return FileError(*out, ok.error());
    }
  }
  return kExitOk;
}

constexpr OptionSpec kOptions[] = {
    {"--policies", true},
    {"--replan-every", true},
    {"--days", true},
    {"--horizon", true},
    {"--no-arrival-replan", false},
    {"--commit-whole-plan", false},
    {"--lookahead", false},
    {"--duration-noise", true},
    {"--traffic-noise", true},
    {"--noise-seed", true},
    {"--sweep-duration-noise", true},
    {"--sweep-traffic-noise", true},
    {"--time-limit", true},
    {"--seed", true},
    {"--format", true},
    {"--per-day", false},
    {"--timeline", true},
    {"--html", true},
    {"--progress", false},
    {"--quiet", false},
    {"--make-world", true},
    {"--data", true},
    {"--synthetic", false},
    {"--trace-cluster", true},
    {"--start-day", true},
    {"--load", true},
    {"--max-job-gpus", true},
    {"--demand-forecast", true},
    {"--forecast-method", true},
    {"--services", true},
    {"--nodes", true},
    {"--gpus-per-node", true},
    {"--step-minutes", true},
    {"--noise-seeds", true},
    {"--per-run", false},
    {"--traffic-quantile", true},
    {"--by-hour", false},
    {"--planning-priority", true},
    {"--no-headroom", false},
    {"--surge-replan", false},
    {"--ramp-reserve", true},
    {"--no-checkpoints", false},
    {"--aging-rate", true},
    {"--aging-cap", true},
    {"--fair-share-half-life", true},
    {"--wait-bound", true},
    {"--size-exponent", true},
    {"--fair-share-weight", true},
    {"--borrowing-factor", true},
};

}  // namespace

int RunSimulateCommand(int argc, char** argv) {
  Result<Args> args = ParseArgs({argv + 1, static_cast<size_t>(argc > 0 ? argc - 1 : 0)}, kOptions);
  if (!args) return UsageError(args.error().ToString(), kSimulateUsage);
  if (args->help) {
    std::cout << kSimulateUsage;
    return kExitOk;
  }
  if (args->has("--make-world")) return MakeWorld(*args);
  if (args->positional.size() != 1) {
    return UsageError("simulate needs one WORLD file", kSimulateUsage);
  }
  const std::string format = args->value("--format").value_or("text");
  if (format != "text" && format != "markdown" && format != "json") {
    return UsageError("--format: must be text, markdown or json", kSimulateUsage);
  }
  const PolicyRegistry registry = MakeInTreeRegistry();
  auto options = ParseExperimentOptions(*args);
  if (!options) return UsageError(options.error().ToString(), kSimulateUsage);
  auto runs = ParseRuns(*args, registry);
  if (!runs) return UsageError(runs.error().ToString(), kSimulateUsage);

  const std::string path = args->positional[0];
  auto text = io::ReadFileText(path);
  if (!text) return FileError(path, text.error());
  auto world = sim::ParseWorld(*text);
  if (!world) return FileError(path, world.error());
  auto levels = ParseLevels(*args, std::move(*world));
  if (!levels) return UsageError(levels.error().ToString(), kSimulateUsage);
  for (sim::NoiseLevel& level : levels->levels) {
    level.world.cluster.Index();
    if (auto ok = sim::ValidateWorld(level.world); !ok) return FileError(path, ok.error());
  }

  if (!args->has("--quiet") && (args->has("--progress") || isatty(STDERR_FILENO) == 1)) {
    options->progress = [](const std::string& label) {
      return std::function<void(int, int)>(Progress(label));
    };
  }
  auto experiment = sim::RunExperiment(levels->levels, *runs, registry, *options);
  if (!experiment) return FileError(path, experiment.error());
  for (const std::string& problem : experiment->problems) std::cerr << "ordo: " << problem << "\n";

  const sim::World& first = levels->levels.front().world;
  if (format == "json") {
    std::cout << sim::ExperimentJson(first, levels->levels, *experiment);
  } else {
    PrintTables(*args, *levels, *runs, *experiment);
  }
  if (const int written = WriteOutputs(*args, first, *experiment); written != kExitOk) {
    return written;
  }
  return experiment->problems.empty() ? kExitOk : kExitFailed;
}

}  // namespace ordo::cli
