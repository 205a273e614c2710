// Evaluates the forecasters on the real data in ../shared/data against naive forecasts and prints
// the tables of docs/forecasting.md (markdown) to standard output.
//
//   forecast_eval [DATA_DIR] [--section demand|training|quantization|all]
//
// Demand: ServeGen hourly rates, fit on week one, scored on week two, per model and per client,
// against "same hour last week" and "yesterday's peak held flat". Training: MLPerf runs (fit on
// rounds before the newest, scored on the newest) against the median of similar runs; Microsoft ITP
// jobs (fit on the past, scored on each next week, refit weekly) against the median of similar
// jobs. Quantization: leave-one-out over the published figures the forecaster is calibrated on.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "ordo/forecast/demand_forecaster.h"
#include "ordo/forecast/quantization_forecaster.h"
#include "ordo/forecast/stats.h"
#include "ordo/forecast/time_series.h"
#include "ordo/forecast/training_forecaster.h"

namespace {

using ordo::forecast::Quantiles;

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  [[nodiscard]] int Col(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    std::fprintf(stderr, "forecast_eval: no column %s\n", name.c_str());
    std::exit(2);
  }
};

// Reads a CSV (gzip-compressed when the name ends in .gz, through `gzip -dc`).
bool ReadTable(const std::string& path, Table& table) {
  const bool gz = path.size() > 3 && path.substr(path.size() - 3) == ".gz";
  FILE* f = gz ? popen(("gzip -dc '" + path + "'").c_str(), "r") : std::fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  std::string line;
  bool first = true;
  int c = 0;
  auto flush = [&] {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
    if (line.empty()) return;
    if (first) {
      table.header = ordo::forecast::SplitCsvLine(line);
      first = false;
    } else {
      table.rows.push_back(ordo::forecast::SplitCsvLine(line));
    }
    line.clear();
  };
  while ((c = std::fgetc(f)) != EOF) {
    if (c == '\n') {
      flush();
    } else {
      line += static_cast<char>(c);
    }
  }
  flush();
  if (gz) {
    pclose(f);
  } else {
    std::fclose(f);
  }
  return !table.header.empty();
}

double ToD(const std::string& s) { return s.empty() ? NAN : std::strtod(s.c_str(), nullptr); }

// Scores of one forecaster on one set of points.
struct Score {
  double ape_sum = 0;
  int ape_n = 0;
  double pinball_sum = 0;  // mean over the three quantiles, summed over points
  double actual_sum = 0;
  int n = 0;
  int covered = 0;
  int below = 0;  // actual under p10
  int above = 0;  // actual over p90
  void Add(double actual, const Quantiles& q) {
    below += actual < q.p10 ? 1 : 0;
    above += actual > q.p90 ? 1 : 0;
    if (actual > 0) {
      ape_sum += std::fabs(q.p50 - actual) / actual;
      ++ape_n;
    }
    pinball_sum +=
        (ordo::forecast::Pinball(actual, q.p10, 0.1) + ordo::forecast::Pinball(actual, q.p50, 0.5) +
         ordo::forecast::Pinball(actual, q.p90, 0.9)) /
        3;
    actual_sum += actual;
    abs_err_sum += std::fabs(q.p50 - actual);
    ++n;
    covered += (actual >= q.p10 && actual <= q.p90) ? 1 : 0;
  }
  void Merge(const Score& o) {
    ape_sum += o.ape_sum;
    ape_n += o.ape_n;
    pinball_sum += o.pinball_sum;
    actual_sum += o.actual_sum;
    abs_err_sum += o.abs_err_sum;
    n += o.n;
    covered += o.covered;
    below += o.below;
    above += o.above;
  }
  double abs_err_sum = 0;
  [[nodiscard]] double Mape() const { return ape_n ? 100 * ape_sum / ape_n : NAN; }
  // Weighted absolute percentage error: sum |p50 - actual| / sum actual.
  [[nodiscard]] double Wape() const {
    return actual_sum > 0 ? 100 * abs_err_sum / actual_sum : NAN;
  }
  // Pinball loss relative to the mean actual, in percent: comparable across series.
  [[nodiscard]] double RelPinball() const {
    return actual_sum > 0 ? 100 * pinball_sum / actual_sum : NAN;
  }
  [[nodiscard]] double Coverage() const { return n ? 100.0 * covered / n : NAN; }
};

Quantiles Point(double x) { return Quantiles{x, x, x}; }

// ---------------------------------------------------------------------------------------------
// Demand

// Hours treated as collection gaps when scoring: zero or under 5% of the series' week-one median
// (the same rule the forecaster applies to its history), excluded for every forecaster alike.
bool IsGap(double actual, double week1_median, bool sparse) {
  return !sparse && actual < 0.05 * week1_median;
}

struct DemandResult {
  Score model;
  Score same_hour;
  Score peak;
  // Provisioning, in GPU-hours, at a per-GPU rate that puts the week-one median at 8 GPUs.
  double gpu_hours_model = 0, gpu_hours_same = 0, gpu_hours_peak = 0;
  double short_model = 0, short_same = 0, short_peak = 0;  // GPU-hours under what was needed
  int hours = 0;
  std::string mode;
};

// Fits on hours [0,168) of `series` and scores hours [168, 336).
DemandResult EvalDemandSeries(const std::vector<double>& series, double base_s, double headroom) {
  DemandResult res;
  std::vector<ordo::forecast::RatePoint> train;
  std::vector<double> week1;
  int zeros = 0;
  for (int h = 0; h < 168; ++h) {
    if (std::isnan(series[h])) continue;
    train.push_back({base_s + h * 3600.0, series[h]});
    week1.push_back(series[h]);
    zeros += series[h] == 0 ? 1 : 0;
  }
  ordo::forecast::DemandForecaster f;
  if (auto ok = f.Fit(train); !ok) {
    res.mode = "error: " + ok.error().ToString();
    return res;
  }
  res.mode = std::string(ordo::forecast::DemandModeName(f.mode()));
  const bool sparse = zeros > 0.3 * static_cast<double>(week1.size());
  const double med = ordo::forecast::Median(week1);
  double last_day_peak = 0;
  for (int h = 144; h < 168; ++h) {
    if (!std::isnan(series[h]) && !IsGap(series[h], med, sparse)) {
      last_day_peak = std::max(last_day_peak, series[h]);
    }
  }
  const double per_gpu = med > 0 ? med / 8 : 1.0;
  for (int h = 168; h < 336; ++h) {
    const double actual = series[h];
    if (std::isnan(actual) || IsGap(actual, med, sparse)) continue;
    auto q = f.Predict(base_s + h * 3600.0);
    if (!q) continue;
    const double same = std::isnan(series[h - 168]) ? 0.0 : series[h - 168];
    res.model.Add(actual, *q);
    res.same_hour.Add(actual, Point(same));
    res.peak.Add(actual, Point(last_day_peak));
    const int need = ordo::forecast::GpusForRate(actual, per_gpu, 0);
    const int gm = ordo::forecast::GpusForRate(q->p90, per_gpu, headroom);
    const int gs = ordo::forecast::GpusForRate(same, per_gpu, headroom);
    const int gp = ordo::forecast::GpusForRate(last_day_peak, per_gpu, headroom);
    res.gpu_hours_model += gm;
    res.gpu_hours_same += gs;
    res.gpu_hours_peak += gp;
    res.short_model += std::max(0, need - gm);
    res.short_same += std::max(0, need - gs);
    res.short_peak += std::max(0, need - gp);
    ++res.hours;
  }
  return res;
}

void PrintScoreRow(const std::string& name, const std::string& who, const Score& s) {
  if (s.below + s.above == s.n || s.n == 0) {  // a point forecast: coverage says nothing
    std::printf("| %s | %s | %d | %.1f | %.1f | %.2f | - |\n", name.c_str(), who.c_str(), s.n,
                s.Mape(), s.Wape(), s.RelPinball());
    return;
  }
  std::printf("| %s | %s | %d | %.1f | %.1f | %.2f | %.1f (%.0f under, %.0f over) |\n",
              name.c_str(), who.c_str(), s.n, s.Mape(), s.Wape(), s.RelPinball(), s.Coverage(),
              100.0 * s.below / s.n, 100.0 * s.above / s.n);
}

void EvalDemand(const std::string& dir) {
  // Hour 0 of ServeGen is put on a Monday 00:00 UTC (1970-01-05); the day of week is not
  // published, and only consistency between fit and forecast matters.
  const double base_s = 4 * 86400.0;
  const double headroom = 0.2;
  Table t;
  if (!ReadTable(dir + "/inference/servegen_rate_hourly.csv", t)) {
    std::printf("servegen_rate_hourly.csv missing: demand evaluation skipped\n");
    return;
  }
  const int cm = t.Col("model"), ch = t.Col("hour_index"), cr = t.Col("mean_rate_rps");
  std::map<std::string, std::vector<double>> series;
  for (const auto& r : t.rows) {
    auto& s = series[r[cm]];
    const int h = std::atoi(r[ch].c_str());
    if (h >= 336) continue;
    if (static_cast<int>(s.size()) <= h) s.resize(h + 1, NAN);
    s[h] = ToD(r[cr]);
  }
  std::printf(
      "\n### Demand: ServeGen aggregate rate per model (fit days 0-6, score days 7-13)\n\n");
  std::printf(
      "| series | forecast | hours | MAPE %% | WAPE %% | pinball %% of mean | "
      "p10-p90 coverage %% |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  std::vector<std::string> prov;
  for (const auto& [name, s0] : series) {
    if (s0.size() < 336) continue;
    const DemandResult r = EvalDemandSeries(s0, base_s, headroom);
    PrintScoreRow(name, "ordo (" + r.mode + ")", r.model);
    PrintScoreRow(name, "same hour last week", r.same_hour);
    PrintScoreRow(name, "yesterday's peak", r.peak);
    char buf[400];
    std::snprintf(buf, sizeof(buf), "| %s | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f |",
                  name.c_str(), r.gpu_hours_model, r.short_model, r.gpu_hours_same, r.short_same,
                  r.gpu_hours_peak, r.short_peak);
    prov.emplace_back(buf);
  }
  std::printf(
      "\nGPU-hours allocated / GPU-hours short of need over week two (per-GPU rate = week-one "
      "median / 8, headroom %.0f%%; need = ceil(actual / per-GPU rate)):\n\n",
      headroom * 100);
  std::printf(
      "| series | ordo p90 | same hour last week | yesterday's peak |\n|---|---|---|---|\n");
  for (const auto& line : prov) std::printf("%s\n", line.c_str());

  // Per client.
  Table c;
  if (!ReadTable(dir + "/inference/servegen_clients_hourly.csv.gz", c)) {
    std::printf("servegen_clients_hourly.csv.gz missing: per-client evaluation skipped\n");
    return;
  }
  const int km = c.Col("model"), kc = c.Col("client_id"), kh = c.Col("hour_index"),
            kr = c.Col("mean_rate_rps");
  std::map<std::pair<std::string, std::string>, std::vector<double>> clients;
  for (const auto& r : c.rows) {
    if (r[km] != "m-large" && r[km] != "m-mid" && r[km] != "m-small") continue;
    auto& s = clients[{r[km], r[kc]}];
    const int h = std::atoi(r[kh].c_str());
    if (h >= 336) continue;
    if (static_cast<int>(s.size()) < 336) s.resize(336, 0.0);  // absent hour: no requests
    s[h] = ToD(r[kr]);
  }
  Score busy_m, busy_s, busy_p, sparse_m, sparse_s, sparse_p;
  int busy_n = 0, sparse_n = 0, skipped = 0, busy_wins = 0;
  for (const auto& [key, s] : clients) {
    int nz1 = 0;
    double sum2 = 0;
    for (int h = 0; h < 168; ++h) nz1 += s[h] > 0 ? 1 : 0;
    for (int h = 168; h < 336; ++h) sum2 += s[h];
    if (nz1 == 0 || sum2 == 0) {
      ++skipped;  // silent in one of the weeks: nothing to fit or nothing to score
      continue;
    }
    const DemandResult r = EvalDemandSeries(s, base_s, headroom);
    if (nz1 >= 84) {
      busy_m.Merge(r.model);
      busy_s.Merge(r.same_hour);
      busy_p.Merge(r.peak);
      ++busy_n;
      busy_wins += r.model.RelPinball() < r.same_hour.RelPinball() ? 1 : 0;
    } else {
      sparse_m.Merge(r.model);
      sparse_s.Merge(r.same_hour);
      sparse_p.Merge(r.peak);
      ++sparse_n;
    }
  }
  std::printf("\n### Demand: ServeGen per client (m-large, m-mid, m-small)\n\n");
  std::printf(
      "%d clients with traffic in both weeks: %d busy (traffic in at least half of week "
      "one's hours), %d sparse; %d silent in a week, not scored. Scores pool every "
      "scored hour of the group.\n\n",
      busy_n + sparse_n, busy_n, sparse_n, skipped);
  std::printf(
      "| clients | forecast | hours | MAPE %% (hours > 0) | WAPE %% | pinball %% of mean | "
      "p10-p90 coverage %% |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  PrintScoreRow("busy", "ordo", busy_m);
  PrintScoreRow("busy", "same hour last week", busy_s);
  PrintScoreRow("busy", "yesterday's peak", busy_p);
  PrintScoreRow("sparse", "ordo", sparse_m);
  PrintScoreRow("sparse", "same hour last week", sparse_s);
  PrintScoreRow("sparse", "yesterday's peak", sparse_p);
  std::printf("\nBusy clients where ordo's pinball loss beats same-hour-last-week: %d of %d.\n",
              busy_wins, busy_n);
}

// The negative control of the data README: DLRM inference instance counts are flat over the day,
// so the forecaster must not invent a daily cycle. Fit weeks one to three, score week four.
void EvalFlatControl(const std::string& dir) {
  Table t;
  if (!ReadTable(dir + "/inference/alibaba_dlrm_alive_hourly.csv", t)) {
    std::printf("alibaba_dlrm_alive_hourly.csv missing: negative control skipped\n");
    return;
  }
  const int ch = t.Col("hour_index"), cv = t.Col("alive_hn_gpu_instances");
  std::vector<double> v;
  for (const auto& r : t.rows) {
    const int h = std::atoi(r[ch].c_str());
    if (static_cast<int>(v.size()) <= h) v.resize(h + 1, NAN);
    v[h] = ToD(r[cv]);
  }
  if (v.size() < 4 * 168) return;
  const double base_s = 4 * 86400.0;
  std::vector<ordo::forecast::RatePoint> train;
  for (int h = 0; h < 3 * 168; ++h) {
    if (!std::isnan(v[h])) train.push_back({base_s + h * 3600.0, v[h]});
  }
  ordo::forecast::DemandForecaster f;
  if (auto ok = f.Fit(train); !ok) return;
  double lo = 1e300, hi = 0;
  for (double p : f.profile()) {
    lo = std::min(lo, p);
    hi = std::max(hi, p);
  }
  Score model, same;
  for (int h = 3 * 168; h < 4 * 168; ++h) {
    if (std::isnan(v[h])) continue;
    model.Add(v[h], *f.Predict(base_s + h * 3600.0));
    same.Add(v[h], Point(v[h - 168]));
  }
  std::printf(
      "\n### Demand, negative control: Alibaba DLRM alive GPU instances (flat over the day)"
      "\n\nFit weeks one to three, score week four. Profile range: %.3f to %.3f (1 = no "
      "daily or weekly shape).\n\n",
      lo, hi);
  std::printf(
      "| series | forecast | hours | MAPE %% | WAPE %% | pinball %% of mean | "
      "p10-p90 coverage %% |\n|---|---|---|---|---|---|---|\n");
  PrintScoreRow("dlrm alive",
                "ordo (" + std::string(ordo::forecast::DemandModeName(f.mode())) + ")", model);
  PrintScoreRow("dlrm alive", "same hour last week", same);
}

// ---------------------------------------------------------------------------------------------
// Training: MLPerf

// What each MLPerf benchmark trains, from the benchmark's name, the published model sizes and the
// reference configurations as far as we know them. Work per run (samples or tokens to reach the
// quality target) is an order-of-magnitude estimate, set once and not fitted to the results; the
// forecaster's learned correction absorbs its error for benchmarks seen in history, so only the
// benchmarks new in the scored round (flux1, llama31_8b) rest on these numbers directly.
struct BenchmarkSpec {
  const char* benchmark;
  const char* method;
  double params_b;
  double samples;           // per run
  double seq_len;           // tokens per sample (0: not a token model)
  double flops_per_sample;  // forward FLOPs per sample for non-transformer models (0: use 2N)
  const char* precision;
};

constexpr BenchmarkSpec kBenchmarks[] = {
    {"bert", "pretrain", 0.34, 2.0e6, 512, 0, "bf16"},
    {"resnet", "pretrain", 0.0256, 1.28e6 * 37, 0, 8.2e9, "bf16"},
    {"ssd", "pretrain", 0.037, 1.17e6 * 5, 0, 6.0e11, "bf16"},
    {"retinanet", "pretrain", 0.037, 1.17e6 * 5, 0, 6.0e11, "bf16"},
    {"maskrcnn", "pretrain", 0.044, 1.18e5 * 14, 0, 4.5e11, "bf16"},
    {"rnnt", "pretrain", 0.049, 2.81e5 * 40, 0, 1.0e11, "bf16"},
    {"unet3d", "pretrain", 0.019, 168.0 * 1500, 0, 1.0e12, "bf16"},
    {"dlrm_dcnv2", "pretrain", 0.05, 4.2e9 * 0.7, 0, 1.5e8, "bf16"},
    {"gnn", "pretrain", 0.003, 1.0e7, 0, 2.0e9, "bf16"},
    {"rgat", "pretrain", 0.003, 1.0e7, 0, 2.0e9, "bf16"},
    {"stable_diffusion", "pretrain", 0.865, 6.0e6, 0, 8.0e11, "bf16"},
    {"flux1", "pretrain", 11.9, 4.0e6, 768, 0, "bf16"},
    {"gpt3", "cpt", 175, 6.0e5, 2048, 0, "fp8"},
    {"llama2_70b_lora", "lora", 70, 3.5e3, 8192, 0, "fp8"},
    {"llama31_405b", "cpt", 405, 3.7e5, 8192, 0, "fp8"},
    {"llama31_8b", "pretrain", 8, 1.8e5, 8192, 0, "fp8"},
};

const BenchmarkSpec* FindBenchmark(const std::string& name) {
  for (const auto& b : kBenchmarks) {
    if (name == b.benchmark) return &b;
  }
  return nullptr;
}

// Naive: the median (and, for a fair pinball, the p10/p90) of the history's runs most like the
// query: same benchmark and accelerator count, else same benchmark, else same count, else all.
Quantiles SimilarQuantiles(const std::vector<double>& v) {
  return Quantiles{ordo::forecast::Quantile(v, 0.1), ordo::forecast::Median(v),
                   ordo::forecast::Quantile(v, 0.9)};
}

struct Similar {
  std::map<std::string, std::vector<double>> by_key;
  std::vector<double> all;
  std::map<std::string, Quantiles> cache;
  void Add(const std::string& k, double v) { by_key[k].push_back(v); }
  // Quantiles of the first key with data, else of `all`.
  Quantiles Find(const std::vector<std::string>& keys) {
    for (const auto& k : keys) {
      const auto it = by_key.find(k);
      if (it == by_key.end() || it->second.empty()) continue;
      const auto c = cache.find(k);
      if (c != cache.end()) return c->second;
      return cache[k] = SimilarQuantiles(it->second);
    }
    const auto c = cache.find("\x01all");
    if (c != cache.end()) return c->second;
    return cache["\x01all"] = SimilarQuantiles(all);
  }
};

void PrintTrainingHeader() {
  std::printf(
      "| runs | forecast | n | MAPE %% | WAPE %% | pinball %% of mean | "
      "p10-p90 coverage %% |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
}

void EvalMlperf(const std::string& dir) {
  Table t;
  if (!ReadTable(dir + "/jobs/mlperf_training_runs.csv", t)) {
    std::printf("mlperf_training_runs.csv missing: MLPerf evaluation skipped\n");
    return;
  }
  const int c_round = t.Col("round"), c_bench = t.Col("benchmark"), c_div = t.Col("division"),
            c_status = t.Col("run_status"), c_acc = t.Col("total_accelerators"),
            c_model = t.Col("accelerator_model_name"), c_gbs = t.Col("global_batch_size"),
            c_time = t.Col("run_time_s"), c_start = t.Col("run_start_unix_ms"),
            c_nodes = t.Col("number_of_nodes");
  struct Run {
    std::string round, bench;
    ordo::forecast::TrainingObservation obs;
  };
  std::vector<Run> runs;
  int skipped = 0;
  for (const auto& r : t.rows) {
    if (r[c_status] != "success" || r[c_div] != "closed") continue;
    const BenchmarkSpec* b = FindBenchmark(r[c_bench]);
    const double acc = ToD(r[c_acc]);
    const double secs = ToD(r[c_time]);
    if (b == nullptr || !(acc >= 1) || !(secs > 0) || !ordo::forecast::FindGpu(r[c_model])) {
      ++skipped;
      continue;
    }
    ordo::forecast::TrainingFeatures f;
    f.method = ordo::forecast::ParseTrainingMethod(b->method);
    f.params_b = b->params_b;
    f.samples = b->samples;
    if (b->seq_len > 0) f.seq_len = b->seq_len;
    if (b->flops_per_sample > 0) f.flops_per_sample = b->flops_per_sample;
    f.precision = *ordo::forecast::ParsePrecision(b->precision);
    f.gpu_type = r[c_model];
    f.gpu_count = static_cast<int>(acc);
    const double gbs = ToD(r[c_gbs]);
    if (gbs > 0) f.global_batch = gbs;
    (void)c_nodes;
    f.model = b->benchmark;
    Run run{r[c_round], r[c_bench], {}};
    run.obs.features = f;
    run.obs.duration_s = secs;
    const double start = ToD(r[c_start]);
    if (start > 0) run.obs.time_s = start / 1000;
    runs.push_back(std::move(run));
  }
  std::string newest;
  for (const auto& r : runs) newest = std::max(newest, r.round);
  std::vector<ordo::forecast::TrainingObservation> train;
  Similar similar;
  std::set<std::string> seen_bench;
  for (const auto& r : runs) {
    if (r.round == newest) continue;
    train.push_back(r.obs);
    const std::string acc = std::to_string(r.obs.features.GpuCount());
    similar.Add(r.bench + "|" + acc, r.obs.duration_s);
    similar.Add(r.bench, r.obs.duration_s);
    similar.Add("|" + acc, r.obs.duration_s);
    similar.all.push_back(r.obs.duration_s);
    seen_bench.insert(r.bench);
  }
  ordo::forecast::TrainingForecaster f;
  if (auto ok = f.Fit(train); !ok) {
    std::printf("MLPerf fit failed: %s\n", ok.error().ToString().c_str());
    return;
  }
  Score model_seen, model_new, naive_seen, naive_new, naiveq_seen, naiveq_new, prior_seen,
      prior_new;
  std::map<std::string, std::array<Score, 4>> per_bench;
  for (const auto& r : runs) {
    if (r.round != newest) continue;
    auto q = f.Forecast(r.obs.features, r.obs.time_s);
    if (!q) continue;
    const std::string acc = std::to_string(r.obs.features.GpuCount());
    const Quantiles nq = similar.Find({r.bench + "|" + acc, r.bench, "|" + acc});
    const bool seen = seen_bench.count(r.bench) > 0;
    const double a = r.obs.duration_s;
    (seen ? model_seen : model_new).Add(a, q->seconds);
    (seen ? naive_seen : naive_new).Add(a, Point(nq.p50));
    (seen ? naiveq_seen : naiveq_new).Add(a, nq);
    (seen ? prior_seen : prior_new).Add(a, Point(*q->prior_s));
    per_bench[r.bench][0].Add(a, q->seconds);
    per_bench[r.bench][1].Add(a, Point(nq.p50));
    per_bench[r.bench][2].Add(a, nq);
    per_bench[r.bench][3].Add(a, Point(*q->prior_s));
  }
  std::printf(
      "\n### Training: MLPerf Training, fit on rounds before %s (%zu runs), scored on %s\n\n",
      newest.c_str(), train.size(), newest.c_str());
  std::printf(
      "Closed division, successful runs on a known accelerator (%d rows skipped: other "
      "status or division, CPU-only, or an accelerator the catalog does not know). "
      "Target: run_time_s.\n\n",
      skipped);
  PrintTrainingHeader();
  Score m_all = model_seen, n_all = naive_seen, nq_all = naiveq_seen, p_all = prior_seen;
  m_all.Merge(model_new);
  n_all.Merge(naive_new);
  nq_all.Merge(naiveq_new);
  p_all.Merge(prior_new);
  PrintScoreRow("all", "ordo", m_all);
  PrintScoreRow("all", "median of similar runs", n_all);
  PrintScoreRow("all", "similar runs' p10/p50/p90", nq_all);
  PrintScoreRow("all", "physical prior alone", p_all);
  PrintScoreRow("benchmark seen before", "ordo", model_seen);
  PrintScoreRow("benchmark seen before", "median of similar runs", naive_seen);
  PrintScoreRow("benchmark seen before", "similar runs' p10/p50/p90", naiveq_seen);
  PrintScoreRow("new benchmark", "ordo", model_new);
  PrintScoreRow("new benchmark", "median of similar runs", naive_new);
  PrintScoreRow("new benchmark", "similar runs' p10/p50/p90", naiveq_new);
  PrintScoreRow("new benchmark", "physical prior alone", prior_new);
  std::printf(
      "\nPer benchmark (ordo / median of similar runs / similar runs' quantiles / "
      "physical prior alone):\n\n");
  std::printf(
      "| benchmark | n | MAPE %% | pinball %% of mean | coverage %% |\n|---|---|---|---|---|\n");
  for (const auto& [b, s] : per_bench) {
    std::printf(
        "| %s%s | %d | %.1f / %.1f / %.1f / %.1f | %.1f / %.1f / %.1f / %.1f | %.1f / - / "
        "%.1f / - |\n",
        b.c_str(), seen_bench.count(b) ? "" : " (new)", s[0].n, s[0].Mape(), s[1].Mape(),
        s[2].Mape(), s[3].Mape(), s[0].RelPinball(), s[1].RelPinball(), s[2].RelPinball(),
        s[3].RelPinball(), s[0].Coverage(), s[2].Coverage());
  }
}

// ---------------------------------------------------------------------------------------------
// Training: Microsoft ITP (history only: GPU count and cluster)

void EvalItp(const std::string& dir) {
  Table t;
  if (!ReadTable(dir + "/jobs/ms_itp_2021_jobs.csv.gz", t)) {
    std::printf("ms_itp_2021_jobs.csv.gz missing: ITP evaluation skipped\n");
    return;
  }
  const int c_cluster = t.Col("cluster"), c_submit = t.Col("submission_time"),
            c_dur = t.Col("duration"), c_gpu = t.Col("num_gpu");
  struct Job {
    std::string cluster;
    double submit, duration;
    int gpus;
  };
  std::vector<Job> jobs;
  for (const auto& r : t.rows) {
    jobs.push_back({r[c_cluster], ToD(r[c_submit]), ToD(r[c_dur]), std::atoi(r[c_gpu].c_str())});
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const Job& a, const Job& b) { return a.submit < b.submit; });
  // t = 0 is taken as 2021-03-04 00:00 UTC (the README's start of collection).
  const double base_s = 1614816000;
  Score model, naive, naiveq;
  int weeks = 0;
  constexpr int cadence = 7;  // days between refits
  for (int day = 14; day + cadence <= 56; day += cadence) {
    const double cutoff = day * 86400.0;
    // What is known at the cutoff: jobs that have finished by then (queueing time unknown,
    // taken as zero), so long jobs are under-represented exactly as they would be live.
    std::vector<ordo::forecast::TrainingObservation> hist;
    Similar similar;
    for (const Job& j : jobs) {
      if (j.submit + j.duration > cutoff) continue;
      ordo::forecast::TrainingObservation o;
      o.features.gpu_count = j.gpus;
      o.features.group = j.cluster;
      o.duration_s = j.duration;
      o.time_s = base_s + j.submit + j.duration;
      hist.push_back(std::move(o));
      similar.Add(j.cluster + "|" + std::to_string(j.gpus), j.duration);
      similar.Add(j.cluster, j.duration);
      similar.all.push_back(j.duration);
    }
    ordo::forecast::TrainingForecaster f;
    if (auto ok = f.Fit(hist); !ok) {
      std::printf("ITP fit failed: %s\n", ok.error().ToString().c_str());
      return;
    }
    ++weeks;
    for (const Job& j : jobs) {
      if (j.submit < cutoff || j.submit >= cutoff + cadence * 86400.0) continue;
      ordo::forecast::TrainingFeatures q;
      q.gpu_count = j.gpus;
      q.group = j.cluster;
      auto p = f.Predict(q);
      if (!p) continue;
      const Quantiles nq = similar.Find({j.cluster + "|" + std::to_string(j.gpus), j.cluster});
      model.Add(j.duration, *p);
      naive.Add(j.duration, Point(nq.p50));
      naiveq.Add(j.duration, nq);
    }
  }
  std::printf(
      "\n### Training: Microsoft ITP jobs (history only), refit weekly, %d weeks scored\n\n",
      weeks);
  std::printf(
      "Each week from day 14 to day 56: fit on the jobs finished before the week starts, "
      "score the jobs submitted during it. Features: GPU count and cluster only.\n\n");
  PrintTrainingHeader();
  PrintScoreRow("all", "ordo", model);
  PrintScoreRow("all", "median of similar jobs", naive);
  PrintScoreRow("all", "similar jobs' p10/p50/p90", naiveq);
}

// ---------------------------------------------------------------------------------------------
// Quantization: leave-one-out over the published figures (../shared/data has no quantization
// trace, so this is the only held-out check available).

void EvalQuantization() {
  const auto& figures = ordo::forecast::PublishedQuantizationFigures();
  Score model, naive;
  std::printf("\n### Quantization: leave-one-out over the published figures\n\n");
  std::printf(
      "Each figure is forecast by a forecaster calibrated on all the others (the only "
      "bitsandbytes figure cannot be left out and is skipped). Naive: the median time of "
      "the other figures of the same algorithm, whatever the model size.\n\n");
  std::printf(
      "| figure | algorithm | params (B) | GPU | published | ordo p10 / p50 / p90 | naive |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < figures.size(); ++i) {
    std::vector<ordo::forecast::PublishedFigure> others;
    std::vector<double> same;
    for (std::size_t j = 0; j < figures.size(); ++j) {
      if (j == i) continue;
      others.push_back(figures[j]);
      if (figures[j].algorithm == figures[i].algorithm) same.push_back(figures[j].seconds);
    }
    if (same.empty()) continue;
    const ordo::forecast::QuantizationForecaster f({}, others);
    ordo::forecast::QuantizationQuery q;
    q.params_b = figures[i].params_b;
    q.algorithm = figures[i].algorithm;
    q.gpu_type = figures[i].gpu_type;
    auto p = f.Predict(q);
    if (!p) continue;
    const double med = ordo::forecast::Median(same);
    model.Add(figures[i].seconds, *p);
    naive.Add(figures[i].seconds, Point(med));
    std::printf("| %s | %s | %g | %s | %.0f min | %.0f / %.0f / %.0f min | %.0f min |\n",
                figures[i].source.c_str(),
                std::string(ordo::forecast::QuantAlgorithmName(figures[i].algorithm)).c_str(),
                figures[i].params_b, figures[i].gpu_type.c_str(), figures[i].seconds / 60,
                p->p10 / 60, p->p50 / 60, p->p90 / 60, med / 60);
  }
  std::printf("\n");
  PrintTrainingHeader();
  PrintScoreRow("published figures", "ordo", model);
  PrintScoreRow("published figures", "median of the algorithm's figures", naive);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "../shared/data";
  std::string section = "all";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--section" && i + 1 < argc) {
      section = argv[++i];
    } else {
      dir = a;
    }
  }
  if (section == "all" || section == "demand") {
    EvalDemand(dir);
    EvalFlatControl(dir);
  }
  if (section == "all" || section == "training") {
    EvalMlperf(dir);
    EvalItp(dir);
  }
  if (section == "all" || section == "quantization") EvalQuantization();
  return 0;
}
