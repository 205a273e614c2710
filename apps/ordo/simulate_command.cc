// `ordo simulate WORLD [--policies a,b@K,...] [--replan-every K] [--days D] ...`: replays a world
// through each policy with the rolling-horizon simulator, checks every committed step, prints
// per-day and total metrics, and writes the timeline JSON and an HTML chart. `--make-world` turns
// the real traces (or the synthetic generator) into a world file.
#include "simulate_command.h"

#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "ordo/core/check_plan.h"
#include "ordo/core/validate.h"
#include "ordo/io/document.h"
#include "ordo/policy/registry.h"
#include "ordo/priority/planning_priority.h"
#include "ordo/sim/random_world.h"
#include "ordo/sim/sim_metrics.h"
#include "ordo/sim/simulator.h"
#include "ordo/sim/timeline.h"
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
    "World generation (--make-world OUT.json):\n"
    "  --data DIR              ../shared/data: ITP jobs + ServeGen services "
    "(docs/world-format.md)\n"
    "    --trace-cluster C (cluster04)  --start-day D (7)  --load L (0.9)  --max-job-gpus N\n"
    "    --demand-forecast forecaster|seasonal|none (forecaster: the weekly-profile forecaster\n"
    "    in the loop, refitted hourly, planner told its p90; seasonal: the same hour a week\n"
    "    earlier; none: the planner is told the actual demand)\n"
    "  --synthetic             sim/random_world.h: --load L (1.2)  --services N (2)\n"
    "  both: --days D (7)  --nodes N (16)  --gpus-per-node G (8)  --step-minutes M (30)\n"
    "        --horizon H (48)  --seed N (1)\n"
    "Exit: 0 every committed step legal; 1 a policy failed or broke a rule; 2 bad arguments or an\n"
    "unreadable or invalid file.\n";

namespace {

struct RunSpec {
  std::string policy;
  std::string label;
  int replan_every = 1;
  bool whole_plan = false;
};

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

Result<double> ParseDouble(std::string_view name, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(x) || x < lo || x > hi) {
    return FailInput(std::string(name), "must be a number from " + std::to_string(lo) + " to " +
                                            std::to_string(hi) + " (got \"" + text + "\")");
  }
  return x;
}

Result<double> ParseDouble(const Args& args, std::string_view name, double def, double lo,
                           double hi) {
  auto v = args.value(name);
  if (!v) return def;
  return ParseDouble(name, *v, lo, hi);
}

Result<std::vector<double>> ParseList(std::string_view name, const std::string& text) {
  std::vector<double> out;
  for (const std::string& item : SplitList(text)) {
    auto x = ParseDouble(name, item, 0, 5);
    if (!x) return Fail(x.error());
    out.push_back(*x);
  }
  if (out.empty()) return FailInput(std::string(name), "lists no value");
  return out;
}

// "\r[label] [#####.....]  45%  step 151/336  12.3 s" on stderr.
class Progress {
 public:
  Progress(bool on, std::string label) : on_(on), label_(std::move(label)) {}
  void operator()(int done, int total) {
    if (!on_) return;
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
  bool on_;
  std::string label_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

std::string F(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  std::string Text() const {
    std::vector<size_t> w(header.size(), 0);
    for (size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
    for (const auto& r : rows) {
      for (size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], r[c].size());
    }
    std::string out;
    auto line = [&](const std::vector<std::string>& r) {
      for (size_t c = 0; c < r.size(); ++c) {
        const std::string pad(w[c] - r[c].size(), ' ');
        out += c == 0 ? r[c] + pad : pad + r[c];
        out += c + 1 < r.size() ? "  " : "\n";
      }
    };
    line(header);
    for (const auto& r : rows) line(r);
    return out;
  }
  std::string Markdown() const {
    std::string out = "|";
    for (const auto& h : header) out += " " + h + " |";
    out += "\n|";
    for (size_t c = 0; c < header.size(); ++c) out += c == 0 ? "---|" : "---:|";
    out += "\n";
    for (const auto& r : rows) {
      out += "|";
      for (const auto& x : r) out += " " + x + " |";
      out += "\n";
    }
    return out;
  }
};

std::string Thousands(double v) {
  std::string s = F("%.0f", std::fabs(v));
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return (v < -0.5 ? "-" : "") + out;
}

Table MetricsTable(const std::vector<std::pair<std::string, const sim::PeriodMetrics*>>& rows) {
  Table t;
  t.header = {"run",           "value",     "net value",    "util",        "alloc util",
              "unmet RT",      "started",   "completed",    "wait mean h", "wait p95 h",
              "never started", "decisions", "plan ms mean", "p95",         "max"};
  for (const auto& [name, m] : rows) {
    t.rows.push_back(
        {name, Thousands(m->value), Thousands(m->net_value), F("%.1f%%", 100 * m->utilization),
         F("%.1f%%", 100 * m->allocated_utilization), std::to_string(m->realtime_unmet_gpu_steps),
         std::to_string(m->jobs_started), std::to_string(m->jobs_completed),
         F("%.2f", m->wait_all.mean_hours), F("%.2f", m->wait_all.p95_hours),
         std::to_string(m->wait_all.unstarted), std::to_string(m->decisions),
         F("%.2f", m->plan_ms_mean), F("%.2f", m->plan_ms_p95), F("%.1f", m->plan_ms_max)});
  }
  return t;
}

// Waits by priority class (the job's base priority): mean, p95 and never started per class.
Table WaitClassTable(const std::vector<std::pair<std::string, const sim::PeriodMetrics*>>& rows) {
  Table t;
  t.header = {"run"};
  for (int c = 0; c < sim::kPriorityClasses; ++c) {
    const std::string name = std::string("prio ") + sim::PriorityClassName(c);
    t.header.push_back(name + " jobs");
    t.header.push_back(name + " wait mean h");
    t.header.push_back(name + " p95 h");
    t.header.push_back(name + " never started");
  }
  for (const auto& [name, m] : rows) {
    std::vector<std::string> r = {name};
    for (const sim::WaitStats& w : m->wait_by_class) {
      r.push_back(std::to_string(w.jobs));
      r.push_back(F("%.2f", w.mean_hours));
      r.push_back(F("%.2f", w.p95_hours));
      r.push_back(std::to_string(w.unstarted));
    }
    t.rows.push_back(std::move(r));
  }
  return t;
}

// Per tenant and day: GPU-hours held against min(demand, share) step by step.
Table TenantTable(const sim::World& world, const sim::SimReport& r) {
  Table t;
  t.header = {"run", "tenant", "share GPUs", "period", "GPU-h",
              "demand GPU-h", "min(demand, share) GPU-h", "held / entitled"};
  const int total = world.cluster.total_gpus();
  auto add = [&](const std::string& period, const sim::PeriodMetrics& m) {
    for (size_t k = 0; k < m.tenants.size(); ++k) {
      const sim::TenantUse& u = m.tenants[k];
      t.rows.push_back({r.label, world.tenants[k].id,
                        F("%.0f", world.tenants[k].ShareFraction(total) * total), period,
                        F("%.0f", u.gpu_hours), F("%.0f", u.demand_gpu_hours),
                        F("%.0f", u.entitled_gpu_hours),
                        u.entitled_gpu_hours > 0
                            ? F("%.1f%%", 100 * std::min(u.gpu_hours, u.entitled_gpu_hours) /
                                              u.entitled_gpu_hours)
                            : "-"});
    }
  };
  for (size_t d = 0; d < r.metrics.days.size(); ++d) {
    add("day " + std::to_string(d + 1), r.metrics.days[d]);
  }
  add("total", r.metrics.total);
  return t;
}

int MakeWorld(const Args& args) {
  const std::string out = *args.value("--make-world");
  const bool synthetic = args.has("--synthetic");
  if (synthetic == args.has("--data")) {
    return UsageError("--make-world needs either --data DIR or --synthetic", kSimulateUsage);
  }
#define ORDO_ARG(var, expr) \
  auto var = (expr);        \
  if (!var) return UsageError(var.error().ToString(), kSimulateUsage)
  ORDO_ARG(days, ParseInt(args, "--days", 7, 1, 366));
  ORDO_ARG(nodes, ParseInt(args, "--nodes", 16, 1, 1 << 16));
  ORDO_ARG(gpn, ParseInt(args, "--gpus-per-node", 8, 1, 16));
  ORDO_ARG(step, ParseInt(args, "--step-minutes", 30, 1, 1440));
  ORDO_ARG(horizon, ParseInt(args, "--horizon", 48, 1, Limits::kMaxHorizonSteps));
  ORDO_ARG(seed, ParseInt(args, "--seed", 1, 0, 1 << 30));
  sim::World world;
  std::string summary;
  if (synthetic) {
    sim::RandomWorldOptions o;
    ORDO_ARG(load, ParseDouble(args, "--load", 1.2, 0.01, 100));
    ORDO_ARG(services, ParseInt(args, "--services", 2, 0, 6));
    o.seed = static_cast<uint64_t>(*seed);
    o.days = *days;
    o.nodes = *nodes;
    o.gpus_per_node = *gpn;
    o.step_minutes = *step;
    o.horizon_steps = *horizon;
    o.load = *load;
    o.services = *services;
    world = sim::RandomWorld(o);
    if (auto ok = sim::ValidateWorld(world); !ok) return FileError(out, ok.error());
  } else {
    const std::string dir = *args.value("--data");
    sim::TraceWorldOptions o;
    ORDO_ARG(load, ParseDouble(args, "--load", 0.9, 0.01, 100));
    ORDO_ARG(start, ParseDouble(args, "--start-day", 7, 0, 60));
    ORDO_ARG(max_gpus, ParseInt(args, "--max-job-gpus", 0, 0, 1 << 20));
    o.itp_cluster = args.value("--trace-cluster").value_or("cluster04");
    o.start_day = *start;
    o.days = *days;
    o.nodes = *nodes;
    o.gpus_per_node = *gpn;
    o.step_minutes = *step;
    o.horizon_steps = *horizon;
    o.target_load = *load;
    o.max_job_gpus = *max_gpus;
    o.seed = static_cast<uint64_t>(*seed);
    const std::string forecast = args.value("--demand-forecast").value_or("forecaster");
    if (forecast == "forecaster") {
      o.demand_forecast = sim::DemandForecastKind::kForecaster;
    } else if (forecast == "seasonal") {
      o.demand_forecast = sim::DemandForecastKind::kSeasonalNaive;
    } else if (forecast == "none") {
      o.demand_forecast = sim::DemandForecastKind::kNone;
    } else {
      return UsageError("--demand-forecast: must be forecaster, seasonal or none", kSimulateUsage);
    }
    const std::string itp_path = dir + "/jobs/ms_itp_2021_jobs.csv.gz";
    const std::string sg_path = dir + "/inference/servegen_rate_hourly.csv";
    auto itp = ReadMaybeGz(itp_path);
    if (!itp) return FileError(itp_path, itp.error());
    auto sg = ReadMaybeGz(sg_path);
    if (!sg) return FileError(sg_path, sg.error());
    auto w = sim::MakeTraceWorld(o, *itp, *sg);
    if (!w) return FileError(dir, w.error());
    world = std::move(*w);
  }
#undef ORDO_ARG
  if (auto ok = WriteTextFile(out, sim::WorldToJson(world)); !ok) return FileError(out, ok.error());
  std::cerr << "ordo: wrote " << out << ": " << world.cluster.total_gpus() << " GPUs, "
            << world.days << " days, " << world.jobs.size() << " jobs, " << world.services.size()
            << " services\n";
  if (!world.description.empty()) std::cerr << "      " << world.description << "\n";
  return kExitOk;
}

}  // namespace

int RunSimulateCommand(int argc, char** argv) {
  static constexpr OptionSpec kOptions[] = {
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
      {"--services", true},
      {"--nodes", true},
      {"--gpus-per-node", true},
      {"--step-minutes", true},
      {"--noise-seeds", true},
      {"--per-run", false},
      {"--traffic-quantile", true},
      {"--by-hour", false},
      {"--planning-priority", true},
      {"--aging-rate", true},
      {"--aging-cap", true},
      {"--fair-share-half-life", true},
      {"--wait-bound", true},
      {"--size-exponent", true},
      {"--fair-share-weight", true},
  };
  Result<Args> args = ParseArgs({argv + 1, static_cast<size_t>(argc > 0 ? argc - 1 : 0)}, kOptions);
  if (!args) return UsageError(args.error().ToString(), kSimulateUsage);
  if (args->help) {
    std::cout << kSimulateUsage;
    return kExitOk;
  }
  if (args->has("--make-world")) return MakeWorld(*args);
  if (args->positional.size() != 1)
    return UsageError("simulate needs one WORLD file", kSimulateUsage);
  const std::string path = args->positional[0];

#define ORDO_ARG(var, expr) \
  auto var = (expr);        \
  if (!var) return UsageError(var.error().ToString(), kSimulateUsage)
  ORDO_ARG(replan_every, ParseInt(*args, "--replan-every", 1, 1, Limits::kMaxHorizonSteps));
  ORDO_ARG(seed, ParseInt(*args, "--seed", 1, 0, 1 << 30));
  ORDO_ARG(noise_seed, ParseInt(*args, "--noise-seed", 1, 0, 1 << 30));
  const std::string format = args->value("--format").value_or("text");
  if (format != "text" && format != "markdown" && format != "json") {
    return UsageError("--format: must be text, markdown or json", kSimulateUsage);
  }
  std::optional<double> time_limit;
  if (auto v = args->value("--time-limit")) {
    ORDO_ARG(s, ParseSeconds("--time-limit", *v));
    time_limit = *s;
  }

  // Planning priorities: which runs get them, and the knobs (priority/planning_priority.h).
  const std::string planning_for = args->value("--planning-priority").value_or("ordo");
  if (planning_for != "ordo" && planning_for != "all" && planning_for != "off") {
    return UsageError("--planning-priority: must be ordo, all or off", kSimulateUsage);
  }
  priority::PlanningOptions planning = priority::DefaultPlanningOptions();
  {
    const std::pair<const char*, double*> knobs[] = {
        {"--aging-rate", &planning.aging.rate_per_hour},
        {"--aging-cap", &planning.aging.cap},
        {"--fair-share-half-life", &planning.fair_share.half_life_hours},
        {"--wait-bound", &planning.wait_bound_hours},
        {"--size-exponent", &planning.size_exponent},
        {"--fair-share-weight", &planning.fair_share.weight},
    };
    for (const auto& [flag, target] : knobs) {
      if (auto v = args->value(flag)) {
        ORDO_ARG(x, ParseDouble(flag, *v, -1e9, 1e9));
        *target = *x;
      }
    }
    if (auto ok = priority::ValidatePlanningOptions(planning); !ok) {
      static const std::pair<std::string_view, std::string_view> kFlagOf[] = {
          {"aging.rate_per_hour", "--aging-rate"},
          {"aging.cap", "--aging-cap"},
          {"fair_share.half_life_hours", "--fair-share-half-life"},
          {"wait_bound_hours", "--wait-bound"},
          {"size_exponent", "--size-exponent"},
          {"fair_share.weight", "--fair-share-weight"},
      };
      std::string field = ok.error().field;
      for (const auto& [from, to] : kFlagOf) {
        if (field == from) field = std::string(to) + " (" + field + ")";
      }
      return UsageError(field + ": " + ok.error().message, kSimulateUsage);
    }
  }

  auto text = io::ReadFileText(path);
  if (!text) return FileError(path, text.error());
  auto parsed = sim::ParseWorld(*text);
  if (!parsed) return FileError(path, parsed.error());
  sim::World base = std::move(*parsed);
  if (args->has("--days")) {
    ORDO_ARG(days, ParseInt(*args, "--days", base.days, 1, base.days));
    base.days = *days;
  }
  if (args->has("--horizon")) {
    ORDO_ARG(h, ParseInt(*args, "--horizon", base.horizon_steps, 1, Limits::kMaxHorizonSteps));
    base.horizon_steps = *h;
  }

  // The runs: NAME, NAME@K or NAME@plan.
  const PolicyRegistry registry = MakeInTreeRegistry();
  std::vector<RunSpec> specs;
  const std::string list =
      args->value("--policies").value_or("fifo,fifo-backfill,priority-backfill,reactive,ordo");
  for (const std::string& item : SplitList(list)) {
    RunSpec spec;
    spec.label = item;
    spec.replan_every = *replan_every;
    const size_t at = item.find('@');
    spec.policy = item.substr(0, at);
    if (at != std::string::npos) {
      const std::string k = item.substr(at + 1);
      if (k == "plan") {
        spec.whole_plan = true;
      } else {
        auto v = ParseDouble("--policies", k, 1, Limits::kMaxHorizonSteps);
        if (!v || *v != std::floor(*v)) {
          return UsageError("--policies: \"" + item +
                                "\": after @ comes a number of steps or "
                                "\"plan\"",
                            kSimulateUsage);
        }
        spec.replan_every = static_cast<int>(*v);
      }
    }
    if (auto p = registry.Create(spec.policy); !p) {
      return UsageError("--policies: " + p.error().message, kSimulateUsage);
    }
    specs.push_back(spec);
  }
  if (specs.empty()) return UsageError("--policies: names no policy", kSimulateUsage);

  // Noise levels: one world per level and noise seed (a sweep), or the world as given.
  struct Level {
    std::string name;   // "duration noise 0.3"; empty without a sweep
    size_t index = 0;   // of the sweep's value
    uint64_t seed = 1;  // noise seed
    sim::World world;
  };
  std::vector<Level> levels;
  ORDO_ARG(traffic_quantile, ParseDouble(*args, "--traffic-quantile", 0.5, 0.001, 0.999));
  auto with_duration_noise = [&](sim::World w, double sigma, uint64_t noise) {
    w.duration_noise = sim::DurationNoise{sigma, noise};
    for (sim::WorldJob& j : w.jobs) {
      for (sim::WorldShape& s : j.shapes) s.forecast_duration_steps.reset();
    }
    return w;
  };
  auto with_traffic_noise = [&](sim::World w, double sigma, uint64_t noise) {
    w.traffic_noise = sim::TrafficNoise{sigma, 0.8, noise, *traffic_quantile};
    for (sim::WorldService& s : w.services) {
      s.forecast_demand.clear();
      s.forecast_rate.clear();
    }
    return w;
  };
  const uint64_t noise = static_cast<uint64_t>(*noise_seed);
  if (auto v = args->value("--duration-noise")) {
    ORDO_ARG(sigma, ParseDouble("--duration-noise", *v, 0, 5));
    base = with_duration_noise(std::move(base), *sigma, noise);
  }
  if (auto v = args->value("--traffic-noise")) {
    ORDO_ARG(sigma, ParseDouble("--traffic-noise", *v, 0, 5));
    base = with_traffic_noise(std::move(base), *sigma, noise);
  }
  std::vector<uint64_t> seeds = {noise};
  if (auto v = args->value("--noise-seeds")) {
    ORDO_ARG(list, ParseList("--noise-seeds", *v));
    seeds.clear();
    for (double x : *list) seeds.push_back(static_cast<uint64_t>(x));
  }
  if (args->has("--sweep-duration-noise") && args->has("--sweep-traffic-noise")) {
    return UsageError("sweep one noise at a time", kSimulateUsage);
  }
  const bool duration_sweep = args->has("--sweep-duration-noise");
  if (auto v = duration_sweep ? args->value("--sweep-duration-noise")
                              : args->value("--sweep-traffic-noise")) {
    ORDO_ARG(sigmas,
             ParseList(duration_sweep ? "--sweep-duration-noise" : "--sweep-traffic-noise", *v));
    for (size_t i = 0; i < sigmas->size(); ++i) {
      const double sigma = (*sigmas)[i];
      for (uint64_t seed_k : seeds) {
        Level level;
        level.name = (duration_sweep ? "duration noise " : "traffic noise ") + F("%g", sigma);
        level.index = i;
        level.seed = seed_k;
        level.world = duration_sweep ? with_duration_noise(base, sigma, seed_k)
                                     : with_traffic_noise(base, sigma, seed_k);
        levels.push_back(std::move(level));
      }
    }
  } else {
    Level level;
    level.world = base;
    levels.push_back(std::move(level));
  }
  const bool sweep = !levels.front().name.empty();
#undef ORDO_ARG
  for (Level& level : levels) {
    level.world.cluster.Index();
    if (auto ok = sim::ValidateWorld(level.world); !ok) return FileError(path, ok.error());
  }

  const bool progress_on =
      !args->has("--quiet") && (args->has("--progress") || isatty(STDERR_FILENO) == 1);
  std::vector<std::vector<sim::SimReport>> results(levels.size());
  bool failed = false;
  for (size_t l = 0; l < levels.size(); ++l) {
    const sim::World& world = levels[l].world;
    auto resolved = sim::ResolveWorld(world);
    if (!resolved) return FileError(path, resolved.error());
    for (const RunSpec& spec : specs) {
      auto policy = registry.Create(spec.policy);
      sim::SimOptions o;
      o.replan_every = spec.replan_every;
      o.replan_on_arrival = spec.policy != "ordo-full" && !args->has("--no-arrival-replan");
      if (spec.whole_plan || args->has("--commit-whole-plan")) {
        o.replan_every = world.horizon_steps;
        o.replan_on_arrival = false;
      }
      o.arrivals_lookahead = args->has("--lookahead");
      const bool ordo_policy = spec.policy == "ordo" || spec.policy == "ordo-full";
      if (planning_for == "all" || (planning_for == "ordo" && ordo_policy)) o.planning = planning;
      o.time_limit_s = time_limit.value_or(1.0);
      o.seed = static_cast<uint64_t>(*seed);
      std::string label = spec.label;
      if (sweep) {
        label += " (" + levels[l].name +
                 (seeds.size() > 1 ? ", seed " + std::to_string(levels[l].seed) : "") + ")";
      }
      Progress bar(progress_on, label);
      o.progress = [&bar](int done, int total) { bar(done, total); };
      auto run = sim::Simulate(*resolved, **policy, o);
      if (!run) {
        std::cerr << "ordo: " << label << ": " << run.error().ToString() << "\n";
        if (run.error().code == ErrorCode::kInvalidInput) return FileError(path, run.error());
        failed = true;
        continue;
      }
      // Every committed step, against the spec's rules, with actual durations and demand.
      const sim::CommittedTimeline timeline = sim::BuildCommittedTimeline(world, *run);
      if (auto ok = ValidateScenario(timeline.scenario); !ok) {
        std::cerr << "ordo: " << label
                  << ": the committed timeline is not a valid scenario: " << ok.error().ToString()
                  << "\n";
        failed = true;
      }
      for (const Violation& v : CheckPlan(timeline.scenario, timeline.plan)) {
        std::cerr << "ordo: " << label << ": committed timeline: " << FormatViolation(v) << "\n";
        failed = true;
      }
      sim::SimReport report;
      report.metrics = sim::ComputeSimMetrics(world, *run);
      report.run = std::move(*run);
      report.label = label;
      results[l].push_back(std::move(report));
    }
  }

  // Output.
  const sim::World& world = levels.front().world;
  if (format == "json") {
    std::string out = "{\"world\": " + nlohmann::json(world.name).dump() + ", \"runs\": [";
    bool first = true;
    for (size_t l = 0; l < levels.size(); ++l) {
      for (const sim::SimReport& r : results[l]) {
        out += std::string(first ? "" : ", ") + "{\"label\": " + nlohmann::json(r.label).dump() +
               ", \"policy\": " + nlohmann::json(r.run.policy).dump() +
               ", \"level\": " + nlohmann::json(levels[l].name).dump() +
               ", \"noise_seed\": " + std::to_string(levels[l].seed) +
               ", \"total\": " + sim::PeriodMetricsJson(r.metrics.total) + ", \"days\": [";
        for (size_t d = 0; d < r.metrics.days.size(); ++d) {
          out += (d ? ", " : "") + sim::PeriodMetricsJson(r.metrics.days[d]);
        }
        out += "]}";
        first = false;
      }
    }
    std::cout << out << "]}\n";
  } else {
    const bool md = format == "markdown";
    if (!md) {
      std::cout << "world " << world.name << ": " << world.cluster.total_gpus() << " GPUs, "
                << world.days << " days of " << world.steps_per_day() << " steps ("
                << world.step_minutes << " min), horizon " << world.horizon_steps << " steps, "
                << world.jobs.size() << " jobs, " << world.services.size() << " services\n\n";
    }
    if (!sweep || args->has("--per-run")) {
      std::vector<std::pair<std::string, const sim::PeriodMetrics*>> rows;
      for (size_t l = 0; l < levels.size(); ++l) {
        for (const sim::SimReport& r : results[l]) rows.emplace_back(r.label, &r.metrics.total);
      }
      const Table totals = MetricsTable(rows);
      std::cout << (md ? totals.Markdown() : totals.Text()) << "\n";
      const Table classes = WaitClassTable(rows);
      std::cout << (md ? classes.Markdown() : classes.Text()) << (sweep ? "\n" : "");
      if (!world.tenants.empty()) {
        for (size_t l = 0; l < levels.size(); ++l) {
          for (const sim::SimReport& r : results[l]) {
            const Table tenants = TenantTable(world, r);
            std::cout << "\n" << (md ? tenants.Markdown() : tenants.Text());
          }
        }
      }
    }
    if (sweep) {
      // Per run and level, means over the noise seeds; "kept" is the ratio to the first level of
      // the sweep with the same noise seed (perfect information when that level is 0).
      Table kept;
      kept.header = {"run",       "level",      "value",    "kept",        "min kept",
                     "net value", "kept (net)", "unmet RT", "wait mean h", "plan ms mean"};
      auto find = [&](size_t level, size_t spec) -> const sim::SimReport* {
        if (spec >= results[level].size()) return nullptr;
        return &results[level][spec];
      };
      const size_t per_level = seeds.size();
      for (size_t s = 0; s < specs.size(); ++s) {
        for (size_t first = 0; first < levels.size(); first += per_level) {
          double value = 0, net = 0, unmet = 0, wait = 0, ms = 0, kept_v = 0, kept_n = 0;
          double min_kept = 1e300;
          int n = 0;
          for (size_t k = 0; k < per_level; ++k) {
            const sim::SimReport* r = find(first + k, s);
            const sim::SimReport* ref = find(k, s);
            if (r == nullptr || ref == nullptr) continue;
            const auto& a = r->metrics.total;
            const auto& b = ref->metrics.total;
            value += a.value;
            net += a.net_value;
            unmet += static_cast<double>(a.realtime_unmet_gpu_steps);
            wait += a.wait_all.mean_hours;
            ms += a.plan_ms_mean;
            const double kv = a.value / std::max(1e-9, b.value);
            kept_v += kv;
            min_kept = std::min(min_kept, kv);
            kept_n += a.net_value / std::max(1e-9, b.net_value);
            ++n;
          }
          if (n == 0) continue;
          kept.rows.push_back({specs[s].label, levels[first].name, Thousands(value / n),
                               F("%.1f%%", 100 * kept_v / n), F("%.1f%%", 100 * min_kept),
                               Thousands(net / n), F("%.1f%%", 100 * kept_n / n),
                               F("%.0f", unmet / n), F("%.2f", wait / n), F("%.2f", ms / n)});
        }
      }
      if (per_level > 1) {
        std::cout << (md ? "" : "") << "means over " << per_level << " noise seeds\n"
                  << (md ? "\n" : "");
      }
      std::cout << (md ? kept.Markdown() : kept.Text());
    }
    if (args->has("--by-hour")) {
      // Utilization (batch + served real-time) and unmet real-time GPU-steps by 2-hour block of
      // the day, over the window: where in the day (and, for plans made once a day, where in
      // the plan) capacity is lost.
      const int spd = world.steps_per_day();
      const int blocks = 12;
      Table util, unmet;
      util.header = {"utilization by hour"};
      for (int b = 0; b < blocks; ++b) util.header.push_back(F("%02.0f", 2.0 * b) + "h");
      unmet.header = util.header;
      unmet.header[0] = "unmet RT by hour";
      for (size_t l = 0; l < levels.size(); ++l) {
        for (const sim::SimReport& r : results[l]) {
          const sim::StepSeries series = sim::ComputeStepSeries(r.run);
          std::vector<double> busy(blocks, 0), lost(blocks, 0), cells(blocks, 0);
          for (int t = 0; t < r.run.steps; ++t) {
            const int b = (t % spd) * blocks / spd;
            busy[b] += series.batch_gpus[t] + series.served_gpus[t];
            lost[b] += series.unmet_gpus[t];
            cells[b] += world.cluster.total_gpus();
          }
          std::vector<std::string> u = {r.label}, m = {r.label};
          for (int b = 0; b < blocks; ++b) {
            u.push_back(F("%.0f%%", 100 * busy[b] / std::max(1.0, cells[b])));
            m.push_back(F("%.0f", lost[b]));
          }
          util.rows.push_back(u);
          unmet.rows.push_back(m);
        }
      }
      std::cout << "\n"
                << (md ? util.Markdown() : util.Text()) << "\n"
                << (md ? unmet.Markdown() : unmet.Text());
    }
    if (args->has("--per-day")) {
      for (size_t l = 0; l < levels.size(); ++l) {
        for (const sim::SimReport& r : results[l]) {
          std::vector<std::pair<std::string, const sim::PeriodMetrics*>> days;
          for (size_t d = 0; d < r.metrics.days.size(); ++d) {
            days.emplace_back("day " + std::to_string(d + 1), &r.metrics.days[d]);
          }
          days.emplace_back("total", &r.metrics.total);
          const Table t = MetricsTable(days);
          std::cout << "\n"
                    << (md ? "**" + r.label + "**\n\n" : r.label + "\n")
                    << (md ? t.Markdown() : t.Text());
        }
      }
    }
  }
  std::vector<sim::SimReport> all;
  for (auto& level : results) {
    for (auto& r : level) all.push_back(std::move(r));
  }
  if (auto out = args->value("--timeline")) {
    if (auto ok = WriteTextFile(*out, sim::TimelineJson(world, all)); !ok) {
      return FileError(*out, ok.error());
    }
  }
  if (auto out = args->value("--html")) {
    if (auto ok = WriteTextFile(*out, sim::TimelineHtml(world, all)); !ok) {
      return FileError(*out, ok.error());
    }
  }
  return failed ? kExitFailed : kExitOk;
}

}  // namespace ordo::cli
