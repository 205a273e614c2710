// Measures full mode (docs/full-mode.md): what CBC proves on contended instances within a time
// limit, and what large-neighbourhood search gains over the warm start at 512 and 4,096 GPUs.
// A plain driver, independent of the CLI; one line per instance, tab-separated.
//
//   full_measure contended --seeds 1-30 --time 60
//   full_measure large --gpus 4096 --seeds 1-3 --time 60
//   full_measure quality --seeds 1-200 --time 20 > quality.tsv       # fast mode against full mode
//   full_measure quality --seeds 1-200 --reuse quality.tsv            # fast mode again, same
//   optima
//   full_measure quality --seeds 1-210 --time 20 --promises   # against the optimum that keeps
//                                                             # fast mode's two promises
//   full_measure diff --seeds 13 --time 20 --promises         # fast mode's plan beside it
//   full_measure contended --seeds 1-30 --dump DIR            # the instances as scenario files
//   full_measure contended --seeds 1-30 --time 20 --checkpoints 0.5  # half the jobs preemptible
// Columns: the warm start (the better of fast mode and the greedy), full mode's objective and its
// gain over the warm start, the status, bound and gap it reports, LNS iterations/improvements/
// proven sub-solves, and the wall and CPU seconds (the CPU figure tells a loaded machine apart).
// `quality` (issue 4's quality loop) runs fast mode as the CLI does and full mode on contended
// instances and prints fast mode's objective as a percentage of the proven optimum (of the best
// bound where full mode proved none), then the distribution. With `--reuse FILE` it takes full
// mode's results from an earlier quality run's output and runs fast mode only: the optima do not
// depend on fast mode, so a change to fast mode is judged in seconds.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/check_plan.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/io/scenario_io.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/common/promises.h"
#include "ordo/policy/fast/fast_policy.h"
#include "ordo/policy/full/bound.h"
#include "ordo/policy/full/decisions.h"
#include "ordo/policy/full/full_mode.h"
#include "ordo/policy/full/full_policy.h"
#include "ordo/policy/full/greedy_start.h"
#include "tests/support/random_scenario.h"

namespace {

using ordo::Plan;
using ordo::PolicyOptions;
using ordo::Scenario;

/// A large contended cluster: two groups of 8-GPU nodes (3/4 "H100", 1/4 "A100"), 48 steps, batch
/// work about 1.5x the GPU-steps, a tenth of the GPUs held by running jobs at step 0, services with
/// daily curves and churn limits. Deterministic for a seed.
Scenario LargeScenario(int gpus, uint64_t seed) {
  ordo::testing::Rng rng(seed);
  Scenario s;
  s.name = "large-" + std::to_string(gpus) + "-" + std::to_string(seed);
  s.horizon_steps = 48;
  const int nodes = gpus / 8;
  s.cluster.groups.push_back({"h100", nodes * 3 / 4, 8, "H100", 80});
  s.cluster.groups.push_back({"a100", nodes - nodes * 3 / 4, 8, "A100", 80});
  s.cluster.Index();
  const int steps = s.horizon_steps;
  std::vector<char> used(static_cast<size_t>(gpus), 0);
  double work = 0;
  int running_gpus = 0;
  for (int j = 0; work < 1.5 * gpus * steps; ++j) {
    ordo::Job job;
    job.id = "j" + std::to_string(j);
    job.kind = static_cast<ordo::JobKind>(j % 3);
    job.priority = rng.Uniform(1, 10);
    job.arrival_step = rng.Chance(0.3) ? -rng.Uniform(0, 12) : rng.Uniform(0, steps - 1);
    const int draw = rng.Uniform(0, 99);
    const int size = draw < 30   ? 1
                     : draw < 55 ? 2
                     : draw < 75 ? 4
                     : draw < 92 ? 8
                     : draw < 98 ? 16
                                 : 32;
    job.shapes.push_back({size, rng.Chance(0.7) ? rng.Uniform(1, 12) : rng.Uniform(12, 40)});
    if (rng.Chance(0.2) && size > 1) {
      job.shapes.push_back({size / 2, std::min(2 * job.shapes[0].duration_steps, 80)});
    }
    if (rng.Chance(0.15)) job.requirement.gpu_type = rng.Chance(0.5) ? "H100" : "A100";
    if (running_gpus < gpus / 10 && rng.Chance(0.3)) {
      job.shapes.resize(1);
      const int want = job.shapes[0].gpus;
      s.cluster.ForEachBlock(want, job.requirement, [&](int first) {
        if (job.running) return;
        for (int g = first; g < first + want; ++g) {
          if (used[g]) return;
        }
        job.running =
            ordo::RunningPlacement{-rng.Uniform(0, job.shapes[0].duration_steps - 1), first};
        job.arrival_step = job.running->start_step;
        for (int g = first; g < first + want; ++g) used[g] = 1;
        running_gpus += want;
      });
    }
    work += static_cast<double>(job.shapes[0].gpus) * job.shapes[0].duration_steps;
    s.jobs.push_back(std::move(job));
  }
  const int services = std::min(8, std::max(1, gpus / 128));
  for (int i = 0; i < services; ++i) {
    ordo::Service svc;
    svc.id = "svc" + std::to_string(i);
    svc.priority = rng.Uniform(5, 15);
    svc.max_gpus = gpus;
    const int peak = std::max(2, gpus / (5 * services));
    svc.max_change_per_step = std::max(1, peak / 5);
    if (i % 3 == 2) svc.requirement.gpu_type = "A100";
    for (int t = 0; t < steps; ++t) {
      const double phase = 2 * M_PI * (t + 4 * i) / 24.0;
      svc.demand.push_back(static_cast<int>(std::lround(peak * (0.5 + 0.5 * std::sin(phase)))));
    }
    svc.current_gpus = svc.demand[0];
    s.services.push_back(std::move(svc));
  }
  return s;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

struct Settings {
  double time_limit = 60;
  bool lp = false;
  double max_whole_nonzeros = -1;  // negative: full mode's default
  double whole_share = -1;         // negative: full mode's default
  double pooled_share = -1;        // negative: full mode's default
  int64_t max_whole_columns = ordo::policy::kFullModeMaxWholeColumns;
  bool promises = false;  // quality: the optimum under fast mode's promises is the reference
  int effort = 1;         // PolicyOptions::effort of the fast-mode plan measured
  int full_effort = 1;    // PolicyOptions::effort given to full mode (its warm start)
  double checkpoint_fraction = 0;  // contended/quality/diff: share of jobs with a checkpoint
};

void Measure(const Scenario& scenario, uint64_t seed, const Settings& settings) {
  using namespace ordo::policy;
  PolicyOptions fast_options;
  fast_options.seed = seed;
  fast_options.effort = settings.effort;
  fast_options.time_limit_s = 0.25 * settings.time_limit;  // as full mode runs it
  auto fast = MakeFastPolicy()->Solve(scenario, fast_options);
  const double greedy = ordo::ComputeObjective(
      scenario, full::Realize(scenario, full::GreedyDecisions(scenario), "g"));
  PolicyOptions options;
  options.seed = seed;
  options.effort = settings.full_effort;
  options.time_limit_s = settings.time_limit;
  full::FullModeConfig config;
  config.max_whole_columns = settings.max_whole_columns;
  if (settings.whole_share >= 0) config.whole_share = settings.whole_share;
  if (settings.pooled_share >= 0) config.pooled_share = settings.pooled_share;
  if (settings.max_whole_nonzeros >= 0) {
    config.max_whole_nonzeros = settings.max_whole_nonzeros;
    config.whole_nonzeros_per_second = settings.max_whole_nonzeros;
  }
  full::FullModeStats stats;
  const auto started = std::chrono::steady_clock::now();
  const double cpu_started = CpuSeconds();
  auto plan = full::SolveFullMode(scenario, options, config, &stats);
  const double seconds = Seconds(started);
  const double cpu = CpuSeconds() - cpu_started;
  if (!plan) {
    std::printf("%s\terror\t%s\n", scenario.name.c_str(), plan.error().ToString().c_str());
    return;
  }
  const bool legal = ordo::CheckPlan(scenario, *plan).empty();
  const double fast_objective = fast ? ordo::ComputeObjective(scenario, *fast) : NAN;
  double lp_bound = NAN;
  if (settings.lp) {
    if (auto b = LpRelaxationBound(scenario, 120)) lp_bound = *b;
  }
  const auto& report = *plan->metrics.solver;
  const double warm = stats.warm_objective;
  std::printf(
      "%s\tgpus=%d\tsteps=%d\tjobs=%zu\tservices=%zu\tcolumns=%s%lld\tnonzeros=%lld\tmode=%s\t"
      "greedy=%.2f\t"
      "fast=%.2f\twarm=%.2f(%s)\tfull=%.2f\tgain=%.3f%%\tstatus=%s\tbound=%.2f\tgap=%.4f%%\t"
      "nodes=%lld\tlns=%d/%d/%d\twall=%.1f\tcpu=%.1f\tlegal=%d\tlp=%.2f\tpooled=%s/%.2f%s\t"
      "preempts=%d/%d\n",
      scenario.name.c_str(), scenario.cluster.total_gpus(), scenario.horizon_steps,
      scenario.jobs.size(), scenario.services.size(),
      stats.columns > settings.max_whole_columns ? ">" : "",
      static_cast<long long>(std::min(stats.columns, settings.max_whole_columns)),
      static_cast<long long>(stats.nonzeros), stats.whole ? "whole" : "lns", greedy, fast_objective,
      warm, stats.warm_source.c_str(), plan->metrics.objective,
      100.0 * (plan->metrics.objective - warm) / std::max(1.0, std::abs(warm)),
      report.status.c_str(), report.best_bound, 100.0 * report.gap, report.nodes,
      stats.lns.iterations, stats.lns.improvements, stats.lns.proven, seconds, cpu, legal ? 1 : 0,
      lp_bound, stats.pooled_status.c_str(), stats.pooled_bound, stats.packed ? "/packed" : "",
      fast ? fast->metrics.preemptions : -1, plan->metrics.preemptions);
  std::fflush(stdout);
}

/// Full mode under fast mode's two promises (fifo's value, reactive's unmet GPU-steps), on the
/// whole model however large: the promise rows are not in LNS's neighbourhoods.
ordo::policy::full::FullModeConfig PromisesConfig(const Plan& fifo, const Plan& reactive) {
  ordo::policy::full::FullModeConfig config;
  config.promises =
      ordo::policy::Promises{fifo.metrics.value, reactive.metrics.realtime_unmet_gpu_steps};
  config.max_whole_columns = 200'000;
  config.max_whole_nonzeros = 1e9;
  config.whole_nonzeros_per_second = 1e9;
  return config;
}

/// Full mode's result on one instance, as a quality run prints it (and --reuse reads it back).
struct FullResult {
  double objective = NAN;
  std::string status;
  double bound = NAN;
  double gap = NAN;
  double cpu = NAN;
  int keeps = -1;  // full mode's plan keeps fast mode's promises (value >= fifo's, unmet <=
                   // reactive's): 1, 0, or -1 when not known
};

/// Reads `name\tkey=value...` lines of an earlier quality run: full=, status=, bound=, gap=, cpu=.
std::map<std::string, FullResult> ReadQuality(const std::string& path) {
  std::map<std::string, FullResult> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, field;
    std::getline(fields, name, '\t');
    FullResult r;
    while (std::getline(fields, field, '\t')) {
      const size_t eq = field.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      if (key == "full") r.objective = std::atof(value.c_str());
      if (key == "status") r.status = value;
      if (key == "bound") r.bound = std::atof(value.c_str());
      if (key == "gap") r.gap = std::atof(value.c_str());
      if (key == "fullcpu") r.cpu = std::atof(value.c_str());
      if (key == "fullkeeps") r.keeps = std::atoi(value.c_str());
    }
    if (!std::isnan(r.objective)) out[name] = r;
  }
  return out;
}

struct QualityRow {
  std::string name;
  bool proven = false;
  double percent = NAN;  // fast as % of the optimum (proven) or of the bound
  int full_keeps = -1;   // as FullResult::keeps
};

/// Fast mode as the CLI runs it (deterministic: the pass budget, not the clock, bounds it), full
/// mode under the time limit (or from `reused`), and fast's share of the reference.
QualityRow MeasureQuality(const Scenario& scenario, uint64_t seed, const Settings& settings,
                          const std::map<std::string, FullResult>* reused) {
  using namespace ordo::policy;
  PolicyOptions fast_options;
  fast_options.seed = seed;
  fast_options.effort = settings.effort;
  fast_options.time_limit_s = 60;
  const auto fast_started = std::chrono::steady_clock::now();
  auto fast = MakeFastPolicy()->Solve(scenario, fast_options);
  const double fast_ms = 1e3 * Seconds(fast_started);
  const double fast_objective = fast ? ordo::ComputeObjective(scenario, *fast) : NAN;
  const bool fast_legal = fast && ordo::CheckPlan(scenario, *fast).empty();
  FullResult full;
  if (reused != nullptr) {
    auto it = reused->find(scenario.name);
    if (it != reused->end()) full = it->second;
  } else {
    PolicyOptions options;
    options.seed = seed;
    options.effort = settings.full_effort;
    options.time_limit_s = settings.time_limit;
    auto fifo = MakeFifoPolicy()->Solve(scenario, options);
    auto reactive = MakeReactivePolicy()->Solve(scenario, options);
    const full::FullModeConfig config = settings.promises && fifo && reactive
                                            ? PromisesConfig(*fifo, *reactive)
                                            : full::FullModeConfig{};
    const double cpu_started = CpuSeconds();
    auto plan = full::SolveFullMode(scenario, options, config);
    full.cpu = CpuSeconds() - cpu_started;
    if (plan && ordo::CheckPlan(scenario, *plan).empty()) {
      full.objective = plan->metrics.objective;
      full.status = plan->metrics.solver->status;
      full.bound = plan->metrics.solver->best_bound;
      full.gap = 100.0 * plan->metrics.solver->gap;
      if (fifo && reactive) {
        full.keeps = KeepsPromises(
            plan->metrics,
            Promises{fifo->metrics.value, reactive->metrics.realtime_unmet_gpu_steps});
      }
    }
  }
  QualityRow row{scenario.name};
  row.proven = full.status == "optimal";
  row.full_keeps = full.keeps;
  // Best known: full mode's plan, or fast mode's when it is better (full mode never returns less
  // than its own warm start, but that start had a quarter of the time limit).
  const double best = std::max(full.objective, fast_objective);
  const double reference = row.proven ? best : full.bound;
  if (reference > 0) {
    row.percent = 100.0 * fast_objective / reference;
  } else if (fast_objective >= reference - 0.005) {  // --reuse reads objectives to 2 decimals
    row.percent = 100.0;
  }
  std::printf(
      "%s\tgpus=%d\tsteps=%d\tjobs=%zu\tservices=%zu\tfast=%.2f\t"
      "full=%.2f\tstatus=%s\t"
      "bound=%.2f\tgap=%.4f\tpct=%.2f\tfastms=%.1f\tfullcpu=%.1f\tlegal=%d\tfullkeeps=%d\n",
      scenario.name.c_str(), scenario.cluster.total_gpus(), scenario.horizon_steps,
      scenario.jobs.size(), scenario.services.size(), fast_objective, full.objective,
      full.status.c_str(), full.bound, full.gap, row.percent, fast_ms, full.cpu, fast_legal ? 1 : 0,
      full.keeps);
  std::fflush(stdout);
  return row;
}

/// One plan as `diff` prints it: objective, value, unmet, each job's placement and each service's
/// allocated GPUs per step.
void PrintPlan(const Scenario& scenario, const char* label, const Plan& plan) {
  const ordo::Metrics m = ordo::ComputeMetrics(scenario, plan);
  std::printf("== %s: objective %.2f value %.2f unmet %lld\n", label, m.objective, m.value,
              static_cast<long long>(m.realtime_unmet_gpu_steps));
  for (size_t j = 0; j < scenario.jobs.size(); ++j) {
    const ordo::Job& job = scenario.jobs[j];
    std::string shapes;
    for (const ordo::Shape& shape : job.shapes) {
      shapes += std::to_string(shape.gpus) + "x" + std::to_string(shape.duration_steps) + " ";
    }
    const ordo::JobPlacement& p = plan.jobs[j];
    std::printf("  %-5s p=%-5.2f arr=%-3d %-16s%s -> ", job.id.c_str(), job.priority,
                job.arrival_step, shapes.c_str(), job.running ? "RUNNING " : "");
    if (p.started()) {
      std::printf("start %d gpu %d (%dx%d)\n", *p.start_step, p.first_gpu, p.gpus,
                  p.duration_steps);
    } else {
      std::printf("none\n");
    }
  }
  for (size_t s = 0; s < scenario.services.size(); ++s) {
    std::printf("  %s alloc: ", scenario.services[s].id.c_str());
    for (const auto& ids : plan.services[s].gpus) std::printf("%3zu", ids.size());
    std::printf("\n");
  }
}

/// Fast mode's plan beside full mode's (under the promises with --promises) on one instance: what
/// the optimum does that fast mode does not, for the quality loop's list of exceptions.
void Diff(const Scenario& scenario, uint64_t seed, const Settings& settings) {
  using namespace ordo::policy;
  PolicyOptions options;
  options.seed = seed;
  options.effort = settings.effort;
  options.time_limit_s = 60;
  auto fast = MakeFastPolicy()->Solve(scenario, options);
  auto fifo = MakeFifoPolicy()->Solve(scenario, options);
  auto reactive = MakeReactivePolicy()->Solve(scenario, options);
  if (!fast || !fifo || !reactive) {
    std::printf("%s\terror\n", scenario.name.c_str());
    return;
  }
  options.effort = settings.full_effort;
  options.time_limit_s = settings.time_limit;
  const full::FullModeConfig config =
      settings.promises ? PromisesConfig(*fifo, *reactive) : full::FullModeConfig{};
  auto full = full::SolveFullMode(scenario, options, config);
  std::printf("%s: %d GPUs, %d steps, decay %.2f, M %.1f; fifo value %.2f, reactive unmet %lld\n",
              scenario.name.c_str(), scenario.cluster.total_gpus(), scenario.horizon_steps,
              scenario.objective.time_decay, scenario.objective.unmet_penalty_multiplier,
              fifo->metrics.value,
              static_cast<long long>(reactive->metrics.realtime_unmet_gpu_steps));
  for (const ordo::NodeGroup& g : scenario.cluster.groups) {
    std::printf("  group %s: %d x %d %s\n", g.name.c_str(), g.nodes, g.gpus_per_node,
                g.gpu_type.c_str());
  }
  for (const ordo::Service& service : scenario.services) {
    std::printf("  %s p=%.2f min=%d max=%d churn=%d demand:", service.id.c_str(), service.priority,
                service.min_gpus, service.max_gpus, service.max_change_per_step.value_or(-1));
    for (int d : service.demand) std::printf("%3d", d);
    std::printf("\n");
  }
  PrintPlan(scenario, "fast", *fast);
  if (full) {
    PrintPlan(scenario, full->metrics.solver->status.c_str(), *full);
  } else {
    std::printf("full mode: %s\n", full.error().ToString().c_str());
  }
}

void PrintDistribution(std::vector<QualityRow> rows) {
  auto report = [](const char* label, std::vector<double> values) {
    if (values.empty()) return;
    std::sort(values.begin(), values.end());
    const auto at_least =
        std::count_if(values.begin(), values.end(), [](double v) { return v >= 97.0 - 1e-9; });
    std::printf(
        "# %s: %zu instances, min %.2f%%, median %.2f%%, mean %.2f%%, >= 97%%: %ld (%.1f%%)\n",
        label, values.size(), values.front(), values[values.size() / 2],
        std::accumulate(values.begin(), values.end(), 0.0) / values.size(),
        static_cast<long>(at_least), 100.0 * at_least / values.size());
  };
  std::vector<double> proven, proven_keeping, all;
  for (const QualityRow& row : rows) {
    if (std::isnan(row.percent)) continue;
    all.push_back(row.percent);
    if (row.proven) proven.push_back(row.percent);
    if (row.proven && row.full_keeps == 1) proven_keeping.push_back(row.percent);
  }
  report("fast / proven optimum", proven);
  report("fast / proven optimum that keeps fast mode's promises", proven_keeping);
  report("fast / optimum or best bound", all);
  std::sort(rows.begin(), rows.end(), [](const QualityRow& a, const QualityRow& b) {
    return (std::isnan(a.percent) ? -1e300 : a.percent) <
           (std::isnan(b.percent) ? -1e300 : b.percent);
  });
  std::printf("# below 97%%:");
  for (const QualityRow& row : rows) {
    if (std::isnan(row.percent) || row.percent < 97.0 - 1e-9) {
      std::printf(" %s(%s%.1f%%)", row.name.c_str(), row.proven ? "" : "bound ", row.percent);
    }
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: full_measure contended|large|quality|diff [--seeds A-B] [--time S] "
                 "[--gpus G] [--lp]\n"
                 "                    [--whole-max COLUMNS] [--whole-max-nonzeros NONZEROS]\n"
                 "                    [--whole-share SHARE] [--pooled-share SHARE]\n"
                 "                    [--reuse QUALITY_OUTPUT] [--dump DIR]\n"
                 "                    [--promises] [--effort N] [--full-effort N]\n"
                 "                    [--checkpoints FRACTION]\n");
    return 2;
  }
  const std::string_view mode = argv[1];
  uint64_t first = 1, last = 1;
  Settings settings;
  int gpus = 512;
  std::string reuse;
  std::string dump;  // a directory: write each instance there as a scenario file, then go on
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--seeds" && i + 1 < argc) {
      const std::string range = argv[++i];
      const size_t dash = range.find('-');
      first = std::strtoull(range.substr(0, dash).c_str(), nullptr, 10);
      last = dash == std::string::npos ? first
                                       : std::strtoull(range.substr(dash + 1).c_str(), nullptr, 10);
    } else if (arg == "--time" && i + 1 < argc) {
      settings.time_limit = std::atof(argv[++i]);
    } else if (arg == "--gpus" && i + 1 < argc) {
      gpus = std::atoi(argv[++i]);
    } else if (arg == "--reuse" && i + 1 < argc) {
      reuse = argv[++i];
    } else if (arg == "--dump" && i + 1 < argc) {
      dump = argv[++i];
    } else if (arg == "--effort" && i + 1 < argc) {
      settings.effort = std::atoi(argv[++i]);
    } else if (arg == "--full-effort" && i + 1 < argc) {
      settings.full_effort = std::atoi(argv[++i]);
    } else if (arg == "--promises") {
      settings.promises = true;
    } else if (arg == "--checkpoints" && i + 1 < argc) {
      settings.checkpoint_fraction = std::atof(argv[++i]);
    } else if (arg == "--lp") {
      settings.lp = true;
    } else if (arg == "--whole-max" && i + 1 < argc) {
      settings.max_whole_columns = std::atoll(argv[++i]);
    } else if (arg == "--whole-share" && i + 1 < argc) {
      settings.whole_share = std::atof(argv[++i]);
    } else if (arg == "--pooled-share" && i + 1 < argc) {
      settings.pooled_share = std::atof(argv[++i]);
    } else if (arg == "--whole-max-nonzeros" && i + 1 < argc) {
      settings.max_whole_nonzeros = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  std::map<std::string, FullResult> reused;
  if (!reuse.empty()) reused = ReadQuality(reuse);
  std::vector<QualityRow> rows;
  for (uint64_t seed = first; seed <= last; ++seed) {
    Scenario scenario;
    if (mode == "contended" || mode == "quality" || mode == "diff") {
      scenario = ordo::testing::RandomScenario(
          seed, {.contended = true, .checkpoint_fraction = settings.checkpoint_fraction});
    } else if (mode == "large") {
      scenario = LargeScenario(gpus, seed);
    } else {
      std::fprintf(stderr, "unknown mode %s\n", argv[1]);
      return 2;
    }
    if (auto valid = ordo::ValidateScenario(scenario); !valid) {
      std::printf("%s\tinvalid\t%s\n", scenario.name.c_str(), valid.error().ToString().c_str());
      continue;
    }
    if (!dump.empty()) {
      std::ofstream(dump + "/" + scenario.name + ".json") << ordo::io::WriteScenario(scenario);
      continue;
    }
    if (mode == "diff") {
      Diff(scenario, seed, settings);
      continue;
    }
    if (mode == "quality") {
      rows.push_back(MeasureQuality(scenario, seed, settings, reuse.empty() ? nullptr : &reused));
    } else {
      Measure(scenario, seed, settings);
    }
  }
  if (mode == "quality") PrintDistribution(std::move(rows));
  return 0;
}
