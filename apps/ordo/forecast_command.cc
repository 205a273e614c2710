#include "forecast_command.h"

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cli.h"
#include "ordo/forecast/demand_forecaster.h"
#include "ordo/forecast/duration_resolver.h"
#include "ordo/forecast/evaluation.h"
#include "ordo/forecast/quantization_forecaster.h"
#include "ordo/forecast/time_series.h"
#include "ordo/forecast/training_forecaster.h"
#include "ordo/io/document.h"

namespace ordo::cli {

const char* const kForecastUsage =
    "usage: ordo forecast demand --history FILE.csv --per-gpu-rate R --start TIME --steps N\n"
    "                            --step-minutes M [--headroom H] [--method level-shape|profile]\n"
    "                            [--model FILE] [--save-model FILE]\n"
    "       ordo forecast eval [--data DIR] [--method level-shape|profile]\n"
    "       ordo forecast training --features FILE.json [--history FILE.json] [--time TIME]\n"
    "                              [--step-minutes M] [--model FILE] [--save-model FILE]\n"
    "       ordo forecast quantization --params-b X --algorithm bitsandbytes|awq|gptq\n"
    "                                  [--gpu-type T] [--model-name NAME] [--history FILE.json]\n"
    "                                  [--step-minutes M] [--model FILE] [--save-model FILE]\n"
    "\n"
    "demand: hourly request rates (CSV with a header naming `time`, ISO 8601 or Unix seconds, and\n"
    "  `rate`) -> level x shape (or the weekly profile) -> one entry per step from --start:\n"
    "  {\"steps\": [{\"start\": ISO, \"rate_p50\": x, \"rate_p90\": y, \"gpus\": n}, ...]}\n"
    "  with gpus = ceil(rate_p90 * (1 + headroom) / per-gpu-rate); headroom defaults to 0.\n"
    "  --method: level-shape (default: recent level x shape of all history, damped trend, level\n"
    "  shifts) or profile (the robust weekly profile); a --model keeps its own unless given.\n"
    "eval: rolling-origin evaluation of the demand forecaster against seasonal-naive baselines on\n"
    "  the inference traces in DIR (default ../shared/data); prints a markdown table.\n"
    "training: duration quantiles in seconds (and steps with --step-minutes) from a features\n"
    "  object (method, params_b, tokens or samples + seq_len, gpu_type, gpu_count, ...), the\n"
    "  physical prior, and a power-of-two GPU count from the memory the job needs.\n"
    "quantization: duration quantiles from parameter count x algorithm x GPU type.\n"
    "\n"
    "--history teaches the forecaster from past outcomes (training/quantization: a JSON list of\n"
    "{\"features\"|params..., \"duration_s\", \"time\"}); --model loads a saved forecaster (then\n"
    "--history adds to it); --save-model writes the fitted forecaster as versioned JSON.\n"
    "Exit codes: 0 success; 2 bad arguments or an unreadable or invalid file.\n";

namespace {

// Keys in the order a reader expects (start, rate_p50, rate_p90, gpus), not sorted.
using Json = nlohmann::ordered_json;

constexpr OptionSpec kDemandOptions[] = {
    {"--history", true}, {"--per-gpu-rate", true}, {"--headroom", true},
    {"--start", true},   {"--steps", true},        {"--step-minutes", true},
    {"--model", true},   {"--save-model", true},   {"--method", true},
};
constexpr OptionSpec kEvalOptions[] = {
    {"--data", true},
    {"--method", true},
};
constexpr OptionSpec kTrainingOptions[] = {
    {"--features", true},     {"--history", true}, {"--time", true},
    {"--step-minutes", true}, {"--model", true},   {"--save-model", true},
};
constexpr OptionSpec kQuantizationOptions[] = {
    {"--params-b", true}, {"--algorithm", true},    {"--gpu-type", true}, {"--model-name", true},
    {"--history", true},  {"--step-minutes", true}, {"--model", true},    {"--save-model", true},
};

int ArgError(const Error& e) { return UsageError(e.ToString(), kForecastUsage); }

std::string Format(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

Result<double> Number(const Args& args, std::string_view option, double lo, double hi) {
  const auto v = args.value(option);
  auto n = forecast::ParseNumber(*v, std::string(option));
  if (!n) return tl::unexpected(n.error());
  if (*n < lo || *n > hi) {
    const std::string range = lo > 0 && lo < 1e-3 ? "a number > 0 and at most " + Format(hi)
                                                  : "between " + Format(lo) + " and " + Format(hi);
    return FailInput(std::string(option), "must be " + range + " (got " + *v + ")");
  }
  return *n;
}

Result<int> WholeNumber(const Args& args, std::string_view option, int lo, int hi) {
  auto n = Number(args, option, lo, hi);
  if (!n) return tl::unexpected(n.error());
  if (*n != std::floor(*n)) {
    return FailInput(std::string(option),
                     "must be a whole number (got " + *args.value(option) + ")");
  }
  return static_cast<int>(*n);
}

Result<void> Require(const Args& args, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (!args.has(n)) return FailInput(std::string(n), "is required");
  }
  return {};
}

// Writes the model when --save-model is given; returns the exit code for a failure, or nothing.
std::optional<int> MaybeSave(const Args& args, const forecast::Forecaster& f) {
  const auto path = args.value("--save-model");
  if (!path) return std::nullopt;
  if (auto ok = WriteTextFile(*path, f.Save()); !ok) return FileError(*path, ok.error());
  return std::nullopt;
}

// Loads --model into `f` when given; returns the exit code for a failure, or nothing.
std::optional<int> MaybeLoad(const Args& args, forecast::Forecaster& f) {
  const auto path = args.value("--model");
  if (!path) return std::nullopt;
  auto text = io::ReadFileText(*path);
  if (!text) return FileError(*path, text.error());
  if (auto ok = f.Load(*text); !ok) return FileError(*path, ok.error());
  return std::nullopt;
}

Json QuantilesJson(const forecast::Quantiles& q, std::optional<int> step_minutes) {
  Json out{{"p10_s", q.p10}, {"p50_s", q.p50}, {"p90_s", q.p90}};
  if (step_minutes) {
    const double step_s = *step_minutes * 60.0;
    const auto steps = [&](double s) {
      return std::max(1, static_cast<int>(std::ceil(s / step_s - 1e-9)));
    };
    out["steps"] = {{"step_minutes", *step_minutes},
                    {"p10", steps(q.p10)},
                    {"p50", steps(q.p50)},
                    {"p90", steps(q.p90)}};
  }
  return out;
}

Result<forecast::DemandMethod> Method(const Args& args) {
  const auto v = args.value("--method");
  if (*v == "level-shape") return forecast::DemandMethod::kLevelShape;
  if (*v == "profile") return forecast::DemandMethod::kProfile;
  return FailInput("--method", "must be level-shape or profile (got " + *v + ")");
}

int RunDemand(const Args& args) {
  if (auto ok = Require(args, {"--per-gpu-rate", "--start", "--steps", "--step-minutes"}); !ok) {
    return ArgError(ok.error());
  }
  if (!args.has("--history") && !args.has("--model")) {
    return ArgError(InvalidInput("--history", "is required (or --model with a saved forecaster)"));
  }
  auto per_gpu = Number(args, "--per-gpu-rate", 1e-12, 1e15);
  if (!per_gpu) return ArgError(per_gpu.error());
  double headroom = 0;
  if (args.has("--headroom")) {
    auto h = Number(args, "--headroom", 0, 100);
    if (!h) return ArgError(h.error());
    headroom = *h;
  }
  auto start = forecast::ParseTimestamp(*args.value("--start"), "--start");
  if (!start) return ArgError(start.error());
  auto steps = WholeNumber(args, "--steps", 1, Limits::kMaxHorizonSteps);
  if (!steps) return ArgError(steps.error());
  auto step_minutes = WholeNumber(args, "--step-minutes", 1, 7 * 24 * 60);
  if (!step_minutes) return ArgError(step_minutes.error());

  std::optional<forecast::DemandMethod> method;
  if (args.has("--method")) {
    auto m = Method(args);
    if (!m) return ArgError(m.error());
    method = *m;
  }
  forecast::DemandOptions options;
  options.method = method.value_or(forecast::DemandMethod::kLevelShape);
  forecast::DemandForecaster f(options);
  if (auto code = MaybeLoad(args, f)) return *code;
  if (method && f.options().method != *method) {
    if (auto ok = f.SetMethod(*method); !ok) return ArgError(ok.error());
  }
  if (const auto path = args.value("--history")) {
    auto text = io::ReadFileText(*path);
    if (!text) return FileError(*path, text.error());
    auto points = forecast::ParseRateCsv(*text);
    if (!points) return FileError(*path, points.error());
    auto ok = args.has("--model") ? f.Refit(*points) : f.Fit(*points);
    if (!ok) return FileError(*path, ok.error());
  }
  auto out = forecast::ForecastSteps(f, *start, *steps, *step_minutes, *per_gpu, headroom);
  if (!out) return ArgError(out.error());
  if (auto code = MaybeSave(args, f)) return *code;
  Json list = Json::array();
  for (const auto& s : *out) {
    list.push_back({{"start", forecast::FormatTimestamp(s.start_s)},
                    {"rate_p50", s.rate_p50},
                    {"rate_p90", s.rate_p90},
                    {"gpus", s.gpus}});
  }
  std::cout << Json{{"steps", list}}.dump(2) << "\n";
  return kExitOk;
}

// A file's text, through zlib when the name ends in .gz.
Result<std::string> ReadMaybeGz(const std::string& path) {
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".gz") != 0) {
    return io::ReadFileText(path);
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return FailInput(path, "cannot open");
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<std::size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) return FailInput(path, "not a readable gzip file");
  return out;
}

int RunEval(const Args& args) {
  forecast::EvalOptions options;
  options.forecaster.method = forecast::DemandMethod::kLevelShape;
  if (args.has("--method")) {
    auto m = Method(args);
    if (!m) return ArgError(m.error());
    options.forecaster.method = *m;
  }
  const std::string dir = args.value("--data").value_or("../shared/data");
  if (!std::filesystem::is_directory(dir)) {
    return ArgError(InvalidInput("--data", "no such directory: " + dir));
  }
  std::vector<forecast::EvalSeries> series;
  std::vector<forecast::EvalSeries> models;
  const std::string inference = dir + "/inference/";
  const auto load = [&](const std::string& file, auto parse) -> std::optional<int> {
    const std::string path = inference + file;
    if (!std::filesystem::exists(path)) {
      std::cout << "- " << file << " is absent: its series are not evaluated.\n";
      return std::nullopt;
    }
    auto text = ReadMaybeGz(path);
    if (!text) return FileError(path, text.error());
    auto parsed = parse(*text);
    if (!parsed) return FileError(path, parsed.error());
    series.insert(series.end(), parsed->begin(), parsed->end());
    return std::nullopt;
  };
  if (auto code = load("servegen_rate_hourly.csv", [&](const std::string& t) {
        auto m = forecast::ParseServeGenModels(t);
        if (m) models = *m;
        return m;
      })) {
    return *code;
  }
  if (auto code = load("servegen_clients_hourly.csv.gz", [&](const std::string& t) {
        return forecast::ParseServeGenClients(t, models);
      })) {
    return *code;
  }
  if (auto code = load("alibaba_dlrm_app_gpu_hourly.csv.gz",
                       [](const std::string& t) { return forecast::ParseDlrmApps(t); })) {
    return *code;
  }
  if (series.empty()) {
    std::cout << "No inference series found under " << inference << ": nothing evaluated.\n";
    return kExitOk;
  }
  auto report = forecast::EvaluateDemand(series, options);
  if (!report) return ArgError(report.error());
  std::cout << forecast::FormatEvalReport(*report);
  return kExitOk;
}

int RunTraining(const Args& args) {
  if (auto ok = Require(args, {"--features"}); !ok) return ArgError(ok.error());
  std::optional<int> step_minutes;
  if (args.has("--step-minutes")) {
    auto m = WholeNumber(args, "--step-minutes", 1, 7 * 24 * 60);
    if (!m) return ArgError(m.error());
    step_minutes = *m;
  }
  std::optional<double> when;
  if (args.has("--time")) {
    auto t = forecast::ParseTimestamp(*args.value("--time"), "--time");
    if (!t) return ArgError(t.error());
    when = *t;
  }
  const std::string features_path = *args.value("--features");
  auto features_text = io::ReadFileText(features_path);
  if (!features_text) return FileError(features_path, features_text.error());
  auto features = forecast::ParseTrainingFeatures(*features_text);
  if (!features) return FileError(features_path, features.error());

  forecast::TrainingForecaster f;
  if (auto code = MaybeLoad(args, f)) return *code;
  if (const auto path = args.value("--history")) {
    auto text = io::ReadFileText(*path);
    if (!text) return FileError(*path, text.error());
    auto history = forecast::ParseTrainingHistory(*text);
    if (!history) return FileError(*path, history.error());
    auto ok = args.has("--model") ? f.Refit(*history) : f.Fit(*history);
    if (!ok) return FileError(*path, ok.error());
  }
  auto forecast = f.Forecast(*features, when);
  if (!forecast) return FileError(features_path, forecast.error());
  if (auto code = MaybeSave(args, f)) return *code;
  Json out = QuantilesJson(forecast->seconds, step_minutes);
  if (forecast->prior_s) out["prior_s"] = *forecast->prior_s;
  out["seen"] = forecast->seen;
  out["history"] = forecast->history;
  if (features->method && features->params_b) {
    if (auto plan = forecast::RecommendGpus(*features)) {
      out["recommended_gpus"] = plan->gpus;
      out["memory"] = {{"state_gb", plan->state_gb},
                       {"activation_gb", plan->activation_gb},
                       {"per_gpu_gb", plan->per_gpu_gb},
                       {"fits", plan->fits}};
    }
  }
  std::cout << out.dump(2) << "\n";
  return kExitOk;
}

int RunQuantization(const Args& args) {
  if (auto ok = Require(args, {"--params-b", "--algorithm"}); !ok) return ArgError(ok.error());
  forecast::QuantizationQuery q;
  auto params = Number(args, "--params-b", 1e-6, 1e6);
  if (!params) return ArgError(params.error());
  q.params_b = *params;
  const auto alg = forecast::ParseQuantAlgorithm(*args.value("--algorithm"));
  if (!alg) {
    return ArgError(InvalidInput("--algorithm", "unknown algorithm \"" +
                                                    *args.value("--algorithm") +
                                                    "\" (known: bitsandbytes, awq, gptq)"));
  }
  q.algorithm = *alg;
  if (const auto g = args.value("--gpu-type")) q.gpu_type = *g;
  if (const auto m = args.value("--model-name")) q.model = *m;
  std::optional<int> step_minutes;
  if (args.has("--step-minutes")) {
    auto m = WholeNumber(args, "--step-minutes", 1, 7 * 24 * 60);
    if (!m) return ArgError(m.error());
    step_minutes = *m;
  }
  forecast::QuantizationForecaster f;
  if (auto code = MaybeLoad(args, f)) return *code;
  if (const auto path = args.value("--history")) {
    auto text = io::ReadFileText(*path);
    if (!text) return FileError(*path, text.error());
    auto history = forecast::ParseQuantizationHistory(*text);
    if (!history) return FileError(*path, history.error());
    auto ok = args.has("--model") ? f.Refit(*history) : f.Fit(*history);
    if (!ok) return FileError(*path, ok.error());
  }
  auto quantiles = f.Predict(q);
  if (!quantiles) {
    Error e = quantiles.error();
    e.field = "--" + (e.field == "params_b" ? std::string("params-b") : std::string("gpu-type"));
    return ArgError(e);
  }
  if (auto code = MaybeSave(args, f)) return *code;
  Json out = QuantilesJson(*quantiles, step_minutes);
  if (auto base = f.Calibrated(q)) out["calibrated_s"] = *base;
  std::cout << out.dump(2) << "\n";
  return kExitOk;
}

}  // namespace

int RunForecastCommand(int argc, char** argv) {
  if (argc < 2 || argv[1] == nullptr)
    return UsageError("forecast: which forecaster?", kForecastUsage);
  const std::string_view which = argv[1];
  if (which == "--help" || which == "-h" || which == "help") {
    std::cout << kForecastUsage;
    return kExitOk;
  }
  const std::span<char* const> rest(argv + 2, static_cast<std::size_t>(argc - 2));
  std::span<const OptionSpec> options;
  int (*run)(const Args&) = nullptr;
  if (which == "demand") {
    options = kDemandOptions;
    run = RunDemand;
  } else if (which == "eval") {
    options = kEvalOptions;
    run = RunEval;
  } else if (which == "training") {
    options = kTrainingOptions;
    run = RunTraining;
  } else if (which == "quantization") {
    options = kQuantizationOptions;
    run = RunQuantization;
  } else {
    return UsageError("forecast: unknown forecaster \"" + std::string(which) +
                          "\" (demand, eval, training or quantization)",
                      kForecastUsage);
  }
  auto args = ParseArgs(rest, options);
  if (!args) return ArgError(args.error());
  if (args->help) {
    std::cout << kForecastUsage;
    return kExitOk;
  }
  if (!args->positional.empty()) {
    return ArgError(InvalidInput(args->positional.front(), "unexpected argument"));
  }
  return run(*args);
}

}  // namespace ordo::cli
