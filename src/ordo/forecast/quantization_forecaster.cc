#include "ordo/forecast/quantization_forecaster.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ordo/core/scenario.h"
#include "ordo/forecast/gpu_catalog.h"
#include "ordo/forecast/model_format.h"

namespace ordo::forecast {
namespace {

using internal::Json;
using internal::ObjectReader;
constexpr double kA100Tflops = 312;
constexpr double kMaxParamsB = 1e6;  // 10^15 parameters

// Seconds on `gpu_type` relative to an A100 (> 1 on a slower GPU).
Result<double> SlowdownVsA100(const std::string& gpu_type, const std::string& field) {
  const auto gpu = FindGpu(gpu_type);
  if (!gpu) return FailInput(field, UnknownGpuMessage(gpu_type));
  return std::sqrt(kA100Tflops / gpu->bf16_tflops);
}

// The fields of a query, shared by a job's features and a history's entries.
Result<QuantizationQuery> ReadQuery(const ObjectReader& obj) {
  QuantizationQuery q;
  ORDO_ASSIGN_OR_RETURN(q.params_b, obj.Number("params_b", 0, kMaxParamsB, true));
  ORDO_ASSIGN_OR_RETURN(const std::string algorithm,
                        obj.String("algorithm", Limits::kMaxIdLength, false));
  const auto parsed = ParseQuantAlgorithm(algorithm);
  if (!parsed) {
    return FailInput(obj.Path("algorithm"),
                     "unknown algorithm \"" + algorithm + "\" (known: bitsandbytes, awq, gptq)");
  }
  q.algorithm = *parsed;
  ORDO_ASSIGN_OR_RETURN(const std::optional<std::string> gpu_type,
                        obj.OptionalString("gpu_type", Limits::kMaxIdLength, false));
  if (gpu_type) q.gpu_type = *gpu_type;
  if (!FindGpu(q.gpu_type)) return FailInput(obj.Path("gpu_type"), UnknownGpuMessage(q.gpu_type));
  ORDO_ASSIGN_OR_RETURN(const std::optional<std::string> model,
                        obj.OptionalString("model", Limits::kMaxIdLength, false));
  q.model = model.value_or("");
  return q;
}

std::string Key2(const QuantizationQuery& q) {
  const auto gpu = FindGpu(q.gpu_type);
  return std::string(QuantAlgorithmName(q.algorithm)) + "|" + (gpu ? gpu->name : q.gpu_type) + "|" +
         q.model;
}

}  // namespace

std::string_view QuantAlgorithmName(QuantAlgorithm a) {
  switch (a) {
    case QuantAlgorithm::kBitsandbytes:
      return "bitsandbytes";
    case QuantAlgorithm::kAwq:
      return "awq";
    case QuantAlgorithm::kGptq:
      return "gptq";
  }
  return "gptq";
}

std::optional<QuantAlgorithm> ParseQuantAlgorithm(std::string_view name) {
  std::string n;
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "bitsandbytes" || n == "bnb" || n == "nf4" || n == "int8" || n == "llm.int8" ||
      n == "bnb4" || n == "bnb8") {
    return QuantAlgorithm::kBitsandbytes;
  }
  if (n == "awq") return QuantAlgorithm::kAwq;
  if (n == "gptq") return QuantAlgorithm::kGptq;
  return std::nullopt;
}

const std::vector<PublishedFigure>& PublishedQuantizationFigures() {
  // GPTQ: Frantar et al., "GPTQ: Accurate Post-Training Quantization for Generative Pre-trained
  // Transformers", ICLR 2023, Table 2 ("GPTQ runtime for full quantization", one A100 80GB).
  // Transformers docs (GPTQ page): "~5 minutes to quantize facebook/opt-350m on a free-tier Google
  // Colab GPU" (a T4). llm-compressor docs ("Runtime requirements", PR #2029, 2025-11): Llama-3-8B
  // on one A100, GPTQ ~30 min, AWQ ~30 min. AutoAWQ README (casper-hansen/AutoAWQ, 2023-12):
  // "10-15 minutes on smaller 7B models, and around 1 hour for 70B models" (GPU not stated; taken
  // as an A100). AutoAWQ issue #701 (maintainer, 2025-01): Qwen 32B "about 1 hour" on 2x H100.
  // bitsandbytes quantizes while loading: Hugging Face blog "Overview of natively supported
  // quantization schemes in Transformers" (2023-09), Llama-2-13B 4-bit load time 37.6 s on an
  // A100-SXM4-80GB (26.0 s in fp16).
  static const std::vector<PublishedFigure> kFigures = {
      {"GPTQ paper, Table 2 (OPT-13B)", QuantAlgorithm::kGptq, 13, "A100", 20.9 * 60},
      {"GPTQ paper, Table 2 (OPT-30B)", QuantAlgorithm::kGptq, 30, "A100", 44.9 * 60},
      {"GPTQ paper, Table 2 (OPT-66B)", QuantAlgorithm::kGptq, 66, "A100", 1.6 * 3600},
      {"GPTQ paper, Table 2 (OPT-175B)", QuantAlgorithm::kGptq, 175, "A100", 4.2 * 3600},
      {"GPTQ paper, Table 2 (BLOOM-1.7B)", QuantAlgorithm::kGptq, 1.7, "A100", 2.9 * 60},
      {"GPTQ paper, Table 2 (BLOOM-3B)", QuantAlgorithm::kGptq, 3, "A100", 5.2 * 60},
      {"GPTQ paper, Table 2 (BLOOM-7.1B)", QuantAlgorithm::kGptq, 7.1, "A100", 10.0 * 60},
      {"GPTQ paper, Table 2 (BLOOM-176B)", QuantAlgorithm::kGptq, 176, "A100", 3.8 * 3600},
      {"Transformers docs, GPTQ (opt-350m, Colab T4)", QuantAlgorithm::kGptq, 0.35, "T4", 5 * 60},
      {"llm-compressor docs (Llama-3-8B)", QuantAlgorithm::kGptq, 8, "A100", 30 * 60},
      {"llm-compressor docs (Llama-3-8B)", QuantAlgorithm::kAwq, 8, "A100", 30 * 60},
      {"AutoAWQ README (7B)", QuantAlgorithm::kAwq, 7, "A100", 12.5 * 60},
      {"AutoAWQ README (70B)", QuantAlgorithm::kAwq, 70, "A100", 60 * 60},
      {"AutoAWQ issue #701 (Qwen 32B, 2x H100)", QuantAlgorithm::kAwq, 32, "H100", 60 * 60},
      {"HF blog, quantization overview (Llama-2-13B)", QuantAlgorithm::kBitsandbytes, 13, "A100",
       37.6},
  };
  return kFigures;
}

QuantizationForecaster::QuantizationForecaster(QuantizationOptions options)
    : QuantizationForecaster(options, PublishedQuantizationFigures()) {}

QuantizationForecaster::QuantizationForecaster(QuantizationOptions options,
                                               const std::vector<PublishedFigure>& figures)
    : options_(options) {
  Calibrate(figures);
}

void QuantizationForecaster::Calibrate(const std::vector<PublishedFigure>& figures) {
  // Per algorithm, log seconds per billion parameters on an A100: the mean over its figures.
  std::array<std::vector<double>, kQuantAlgorithmCount> rates;
  for (const PublishedFigure& f : figures) {
    auto slow = SlowdownVsA100(f.gpu_type, "gpu_type");
    if (!slow || !(f.params_b > 0) || !(f.seconds > 0)) continue;
    rates[static_cast<std::size_t>(f.algorithm)].push_back(
        std::log(f.seconds / *slow / f.params_b));
  }
  double overall = 0;
  int count = 0;
  for (const auto& r : rates) {
    for (double v : r) {
      overall += v;
      ++count;
    }
  }
  overall = count ? overall / count : std::log(60.0);
  double sq = 0;
  int loo = 0;
  for (std::size_t a = 0; a < rates.size(); ++a) {
    const auto& r = rates[a];
    double sum = 0;
    for (double v : r) sum += v;
    log_rate_[a] = r.empty() ? overall : sum / static_cast<double>(r.size());
    if (r.size() < 2) continue;
    for (double v : r) {
      const double others = (sum - v) / static_cast<double>(r.size() - 1);
      sq += (v - others) * (v - others);
      ++loo;
    }
  }
  // The published points disagree (libraries, sample counts, GPUs not always stated); their
  // leave-one-out scatter is the honest spread, never below 0.3 (x1.35).
  sigma_ = std::max(0.3, loo ? std::sqrt(sq / loo) : 0.5);
  CorrectionOptions c;
  c.default_sigma = sigma_;
  c.leave_out_window = 7;
  correction_ = CorrectionModel(c);
}

Result<double> QuantizationForecaster::Calibrated(const QuantizationQuery& q) const {
  if (!(q.params_b > 0 && q.params_b <= kMaxParamsB)) {
    return FailInput("params_b", "must be a number of billions of parameters > 0");
  }
  auto slow = SlowdownVsA100(q.gpu_type, "gpu_type");
  if (!slow) return tl::unexpected(slow.error());
  return std::exp(log_rate_[static_cast<std::size_t>(q.algorithm)]) * q.params_b * *slow;
}

Result<Quantiles> QuantizationForecaster::Predict(const QuantizationQuery& q) const {
  auto base = Calibrated(q);
  if (!base) return tl::unexpected(base.error());
  const CorrectionPrediction c = correction_.Predict(
      {std::log(q.params_b)}, std::string(QuantAlgorithmName(q.algorithm)), Key2(q));
  const double lb = std::log(*base);
  return Quantiles{std::exp(lb + c.q[0]), std::exp(lb + c.q[1]), std::exp(lb + c.q[2])};
}

Result<void> QuantizationForecaster::Fit(std::span<const QuantizationObservation> history) {
  ORDO_RETURN_IF_ERROR(internal::CheckObservations(history));
  QuantizationForecaster next = *this;
  next.history_ = internal::MostRecent(history, options_.max_history);
  const std::optional<double> latest = internal::LatestTime(next.history_);
  std::vector<CorrectionSample> samples;
  for (std::size_t i = 0; i < next.history_.size(); ++i) {
    const auto& o = next.history_[i];
    const std::string path = "history[" + std::to_string(i) + "]";
    auto base = next.Calibrated(o.query);
    if (!base) return FailInput(path + "." + base.error().field, base.error().message);
    CorrectionSample s;
    s.x = {std::log(o.query.params_b)};
    s.y = std::log(o.duration_s) - std::log(*base);
    s.weight = internal::RecencyWeight(o.time_s, latest, options_.half_life_days);
    s.key1 = std::string(QuantAlgorithmName(o.query.algorithm));
    s.key2 = Key2(o.query);
    s.time = o.time_s.value_or(0) / 86400;
    s.timed = o.time_s.has_value();
    samples.push_back(std::move(s));
  }
  next.correction_.Fit(samples);
  *this = std::move(next);
  return {};
}

Result<void> QuantizationForecaster::Refit(std::span<const QuantizationObservation> observations) {
  std::vector<QuantizationObservation> all = history_;
  all.insert(all.end(), observations.begin(), observations.end());
  return Fit(all);
}

namespace {

Json ObservationToJson(const QuantizationObservation& o) {
  Json j{{"params_b", o.query.params_b},
         {"algorithm", std::string(QuantAlgorithmName(o.query.algorithm))},
         {"gpu_type", o.query.gpu_type},
         {"duration_s", o.duration_s}};
  if (!o.query.model.empty()) j["model"] = o.query.model;
  if (o.time_s) j["time"] = *o.time_s;
  return j;
}

// A history's entries (`list` null: none).
Result<std::vector<QuantizationObservation>> ReadHistory(const Json* list) {
  return internal::ReadObservations<QuantizationObservation>(
      list, {"params_b", "algorithm", "gpu_type", "model", "duration_s", "time"},
      [](const ObjectReader& entry, QuantizationObservation& o) -> Result<void> {
        ORDO_ASSIGN_OR_RETURN(o.query, ReadQuery(entry));
        return {};
      });
}

}  // namespace

std::string QuantizationForecaster::Save() const {
  Json hist = Json::array();
  for (const auto& o : history_) hist.push_back(ObservationToJson(o));
  Json rates = Json::object();
  for (int a = 0; a < kQuantAlgorithmCount; ++a) {
    rates[std::string(QuantAlgorithmName(static_cast<QuantAlgorithm>(a)))] =
        std::exp(log_rate_[static_cast<std::size_t>(a)]);
  }
  Json doc{{"kind", "quantization"},
           {"version", kModelFormatVersion},
           {"options",
            {{"half_life_days", options_.half_life_days}, {"max_history", options_.max_history}}},
           {"history", std::move(hist)}};
  // For people to read: the published calibration (seconds per billion parameters on an A100).
  doc["fitted"] = {{"seconds_per_b_params_a100", rates}, {"log_sigma", sigma_}};
  return doc.dump(1);
}

Result<void> QuantizationForecaster::Load(std::string_view json) {
  ORDO_ASSIGN_OR_RETURN(const Json doc, internal::ParseModelText(json));
  ORDO_ASSIGN_OR_RETURN(const ObjectReader model, internal::ReadModelHeader(doc, kind()));
  QuantizationOptions options;
  if (const Json* value = model.Find("options")) {
    ORDO_ASSIGN_OR_RETURN(const ObjectReader o,
                          ObjectReader::Make(*value, model.Path("options"), "the options"));
    ORDO_RETURN_IF_ERROR(o.AllowOnly({"half_life_days", "max_history"}));
    ORDO_ASSIGN_OR_RETURN(const std::optional<double> half_life,
                          o.OptionalNumber("half_life_days", 0, internal::kMaxDays, true));
    ORDO_ASSIGN_OR_RETURN(const std::optional<int64_t> max_history,
                          o.OptionalInt("max_history", 1, internal::kMaxHistoryEntries));
    options.half_life_days = half_life.value_or(options.half_life_days);
    if (max_history) options.max_history = static_cast<int>(*max_history);
  }
  ORDO_ASSIGN_OR_RETURN(const Json* list,
                        model.OptionalList("history", internal::kMaxHistoryEntries));
  ORDO_ASSIGN_OR_RETURN(const std::vector<QuantizationObservation> history, ReadHistory(list));
  QuantizationForecaster next(options);
  if (auto ok = next.Fit(history); !ok) return ok;
  *this = std::move(next);
  return {};
}

Result<QuantizationQuery> ParseQuantizationFeatures(std::string_view json,
                                                    const std::string& path) {
  ORDO_ASSIGN_OR_RETURN(const Json doc, io::internal::ParseJsonText(json, path));
  ORDO_ASSIGN_OR_RETURN(const ObjectReader obj, ObjectReader::Make(doc, path, "the features"));
  ORDO_RETURN_IF_ERROR(obj.AllowOnly({"params_b", "algorithm", "gpu_type", "model"}));
  return ReadQuery(obj);
}

Result<std::vector<QuantizationObservation>> ParseQuantizationHistory(std::string_view json) {
  ORDO_ASSIGN_OR_RETURN(const Json doc, internal::ParseHistoryText(json));
  ORDO_ASSIGN_OR_RETURN(const Json* list, internal::HistoryList(doc, "quantization"));
  return ReadHistory(list);
}

}  // namespace ordo::forecast
