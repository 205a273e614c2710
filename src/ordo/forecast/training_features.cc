#include "ordo/forecast/training_features.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ordo/core/scenario.h"
#include "ordo/io/json_fields.h"

namespace ordo::forecast {
namespace {

using io::internal::Json;
using io::internal::ObjectReader;

// Upper bounds of the features: far past any real job (a 10^15-parameter model, 10^18 tokens), so
// they only catch unit mistakes, and they keep the prior's arithmetic finite.
constexpr double kMaxParamsB = 1e6;
constexpr double kMaxCount = 1e18;       // tokens, samples, FLOPs per sample (x 1e6), batch
constexpr double kMaxPerSequence = 1e9;  // sequence length, generated tokens, generations
constexpr double kMaxGpuFigure = 1e6;    // memory in GB, TFLOPS
constexpr double kMaxEpochs = 1e6;
constexpr double kMaxOverheadS = 1e9;

// The optional numbers, read and written alike: each in (0, max].
struct NumberFeature {
  std::string_view key;
  std::optional<double> TrainingFeatures::*member;
  double max;
};
constexpr NumberFeature kNumberFeatures[] = {
    {"params_b", &TrainingFeatures::params_b, kMaxParamsB},
    {"active_params_b", &TrainingFeatures::active_params_b, kMaxParamsB},
    {"trainable_fraction", &TrainingFeatures::trainable_fraction, 1},
    {"tokens", &TrainingFeatures::tokens, kMaxCount},
    {"samples", &TrainingFeatures::samples, kMaxCount},
    {"seq_len", &TrainingFeatures::seq_len, kMaxPerSequence},
    {"global_batch", &TrainingFeatures::global_batch, kMaxCount},
    {"flops_per_sample", &TrainingFeatures::flops_per_sample, kMaxCount * 1e6},
    {"rollout_tokens", &TrainingFeatures::rollout_tokens, kMaxPerSequence},
    {"generations_per_prompt", &TrainingFeatures::generations_per_prompt, kMaxPerSequence},
    {"teacher_params_b", &TrainingFeatures::teacher_params_b, kMaxParamsB},
    {"critic_params_b", &TrainingFeatures::critic_params_b, kMaxParamsB},
    {"reward_params_b", &TrainingFeatures::reward_params_b, kMaxParamsB},
    {"gpu_memory_gb", &TrainingFeatures::gpu_memory_gb, kMaxGpuFigure},
    {"mfu", &TrainingFeatures::mfu, 1},
    {"peak_tflops", &TrainingFeatures::peak_tflops, kMaxGpuFigure},
};

std::string Canon(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == ' ') c = '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Bytes per parameter of model state that a method keeps (mixed precision with Adam: bf16
// weights 2 + bf16 gradients 2 + fp32 master weights 4 + two fp32 moments 8 = 16).
constexpr double kTrainedBytes = 16;
constexpr double kFrozenBytes = 2;
constexpr double kFrozen4BitBytes = 0.55;  // NF4 weights plus quantisation constants

}  // namespace

std::string_view TrainingMethodName(TrainingMethod m) {
  switch (m) {
    case TrainingMethod::kPretrain:
      return "pretrain";
    case TrainingMethod::kCpt:
      return "cpt";
    case TrainingMethod::kFullFinetune:
      return "full_finetune";
    case TrainingMethod::kSft:
      return "sft";
    case TrainingMethod::kLora:
      return "lora";
    case TrainingMethod::kQlora:
      return "qlora";
    case TrainingMethod::kDpo:
      return "dpo";
    case TrainingMethod::kRlhf:
      return "rlhf";
    case TrainingMethod::kRlvr:
      return "rlvr";
    case TrainingMethod::kDistillation:
      return "distillation";
    case TrainingMethod::kBatchInference:
      return "batch_inference";
  }
  return "pretrain";
}

std::optional<TrainingMethod> ParseTrainingMethod(std::string_view name) {
  const std::string n = Canon(name);
  for (int i = 0; i < kTrainingMethodCount; ++i) {
    const auto m = static_cast<TrainingMethod>(i);
    if (n == TrainingMethodName(m)) return m;
  }
  if (n == "pre_training" || n == "pretraining") return TrainingMethod::kPretrain;
  if (n == "continued_pretraining" || n == "continual_pretraining") return TrainingMethod::kCpt;
  if (n == "full" || n == "full_ft" || n == "full_fine_tune" || n == "finetune" ||
      n == "fine_tune" || n == "full_fine_tuning") {
    return TrainingMethod::kFullFinetune;
  }
  if (n == "ppo") return TrainingMethod::kRlhf;
  if (n == "grpo") return TrainingMethod::kRlvr;
  if (n == "distill" || n == "kd" || n == "knowledge_distillation") {
    return TrainingMethod::kDistillation;
  }
  if (n == "inference") return TrainingMethod::kBatchInference;
  return std::nullopt;
}

bool TrainingFeatures::HasPhysics() const {
  return method && params_b && (tokens || (samples && (seq_len || flops_per_sample)));
}

Result<TrainingFeatures> ReadTrainingFeatures(const Json& value, const std::string& path) {
  ORDO_ASSIGN_OR_RETURN(const ObjectReader obj, ObjectReader::Make(value, path, "the features"));
  ORDO_RETURN_IF_ERROR(obj.AllowOnly({"method",
                                      "params_b",
                                      "active_params_b",
                                      "trainable_fraction",
                                      "tokens",
                                      "samples",
                                      "seq_len",
                                      "epochs",
                                      "global_batch",
                                      "precision",
                                      "gpu_type",
                                      "gpu_count",
                                      "tp",
                                      "pp",
                                      "dp",
                                      "activation_checkpointing",
                                      "flops_per_sample",
                                      "rollout_tokens",
                                      "generations_per_prompt",
                                      "teacher_params_b",
                                      "critic_params_b",
                                      "reward_params_b",
                                      "gpu_memory_gb",
                                      "mfu",
                                      "peak_tflops",
                                      "overhead_s",
                                      "model",
                                      "group"}));
  TrainingFeatures f;
  for (const NumberFeature& n : kNumberFeatures) {
    ORDO_ASSIGN_OR_RETURN(f.*n.member, obj.OptionalNumber(n.key, 0, n.max, /*min_exclusive=*/true));
  }
  ORDO_ASSIGN_OR_RETURN(const std::optional<double> epochs,
                        obj.OptionalNumber("epochs", 0, kMaxEpochs, /*min_exclusive=*/true));
  f.epochs = epochs.value_or(1);
  ORDO_ASSIGN_OR_RETURN(const std::optional<double> overhead,
                        obj.OptionalNumber("overhead_s", 0, kMaxOverheadS));
  f.overhead_s = overhead.value_or(0);
  std::optional<int64_t> tp, pp, dp, gpus;
  for (auto [key, target] : {std::pair{"tp", &tp}, std::pair{"pp", &pp}, std::pair{"dp", &dp},
                             std::pair{"gpu_count", &gpus}}) {
    ORDO_ASSIGN_OR_RETURN(*target, obj.OptionalInt(key, 1, Limits::kMaxGpus));
  }
  if (gpus) f.gpu_count = static_cast<int>(*gpus);
  if (tp) f.tp = static_cast<int>(*tp);
  if (pp) f.pp = static_cast<int>(*pp);
  if (dp) f.dp = static_cast<int>(*dp);
  // Each at most kMaxGpus: the products below fit in 64 bits.
  const int64_t model_parallel = int64_t{f.tp} * f.pp;
  if (f.gpu_count && f.dp && model_parallel * *f.dp != *f.gpu_count) {
    return FailInput(obj.Path("dp"), "tp * pp * dp = " + std::to_string(model_parallel * *f.dp) +
                                         " but gpu_count is " + std::to_string(*f.gpu_count));
  }
  if (f.gpu_count && *f.gpu_count % model_parallel != 0) {
    return FailInput(obj.Path("gpu_count"),
                     "must be a multiple of tp * pp (" + std::to_string(model_parallel) + ")");
  }
  ORDO_ASSIGN_OR_RETURN(const std::optional<bool> checkpointing,
                        obj.OptionalBool("activation_checkpointing"));
  f.activation_checkpointing = checkpointing.value_or(false);
  ORDO_ASSIGN_OR_RETURN(const std::optional<std::string> method,
                        obj.OptionalString("method", Limits::kMaxIdLength, false));
  if (method) {
    f.method = ParseTrainingMethod(*method);
    if (!f.method) {
      return FailInput(obj.Path("method"),
                       "unknown method \"" + *method +
                           "\" (known: pretrain, cpt, full_finetune, sft, lora, qlora, dpo, rlhf, "
                           "rlvr, distillation, batch_inference)");
    }
  }
  ORDO_ASSIGN_OR_RETURN(const std::optional<std::string> precision,
                        obj.OptionalString("precision", Limits::kMaxIdLength, false));
  if (precision) {
    const auto p = ParsePrecision(*precision);
    if (!p) {
      return FailInput(obj.Path("precision"), "unknown precision \"" + *precision +
                                                  "\" (known: bf16, fp16, fp8, fp4, tf32, fp32)");
    }
    f.precision = *p;
  }
  ORDO_ASSIGN_OR_RETURN(const std::optional<std::string> gpu_type,
                        obj.OptionalString("gpu_type", Limits::kMaxIdLength, false));
  if (gpu_type) {
    f.gpu_type = *gpu_type;
    if (!FindGpu(f.gpu_type) && !f.peak_tflops) {
      return FailInput(obj.Path("gpu_type"),
                       UnknownGpuMessage(f.gpu_type) + "; or give peak_tflops and gpu_memory_gb");
    }
  }
  for (auto [key, target] : {std::pair{"model", &f.model}, std::pair{"group", &f.group}}) {
    ORDO_ASSIGN_OR_RETURN(const std::optional<std::string> text,
                          obj.OptionalString(key, Limits::kMaxIdLength, false));
    if (text) *target = *text;
  }
  if (f.method == TrainingMethod::kDistillation && f.HasPhysics() && !f.teacher_params_b) {
    return FailInput(obj.Path("teacher_params_b"), "required for distillation");
  }
  return f;
}

Result<TrainingFeatures> ParseTrainingFeatures(std::string_view json, const std::string& path) {
  ORDO_ASSIGN_OR_RETURN(const Json doc, io::internal::ParseJsonText(json, path));
  return ReadTrainingFeatures(doc, path);
}

std::string TrainingFeaturesToJson(const TrainingFeatures& f) {
  Json j = Json::object();
  if (f.method) j["method"] = std::string(TrainingMethodName(*f.method));
  for (const NumberFeature& n : kNumberFeatures) {
    if (const std::optional<double>& value = f.*n.member) j[std::string(n.key)] = *value;
  }
  if (f.epochs != 1) j["epochs"] = f.epochs;
  if (f.precision != Precision::kBf16) j["precision"] = std::string(PrecisionName(f.precision));
  if (f.gpu_type != "gpu") j["gpu_type"] = f.gpu_type;
  if (f.gpu_count) j["gpu_count"] = *f.gpu_count;
  if (f.tp != 1) j["tp"] = f.tp;
  if (f.pp != 1) j["pp"] = f.pp;
  if (f.dp) j["dp"] = *f.dp;
  if (f.activation_checkpointing) j["activation_checkpointing"] = true;
  if (f.overhead_s != 0) j["overhead_s"] = f.overhead_s;
  if (!f.model.empty()) j["model"] = f.model;
  if (!f.group.empty()) j["group"] = f.group;
  return j.dump();
}

Result<PriorBreakdown> PhysicalPrior(const TrainingFeatures& f) {
  if (!f.method) return FailInput("features.method", "needed for the physical prior");
  if (!f.params_b) return FailInput("features.params_b", "needed for the physical prior");
  if (!f.tokens && !f.samples) {
    return FailInput("features.tokens", "needed for the physical prior (or samples and seq_len)");
  }
  const TrainingMethod m = *f.method;
  const double n = f.active_params_b.value_or(*f.params_b) * 1e9;
  const double seq = f.seq_len.value_or(f.tokens && f.samples ? *f.tokens / *f.samples : 2048);
  double samples = f.samples ? *f.samples : *f.tokens / seq;
  double tokens = f.tokens ? *f.tokens : samples * seq;
  samples *= f.epochs;
  tokens *= f.epochs;
  const bool rl = m == TrainingMethod::kRlhf || m == TrainingMethod::kRlvr;
  const double generations =
      f.generations_per_prompt.value_or(m == TrainingMethod::kRlvr ? 8.0 : 1.0);
  if (rl) {
    tokens *= generations;  // every generated sequence is trained on
  }
  // Forward FLOPs of the model over the processed tokens.
  const double forward =
      f.flops_per_sample ? *f.flops_per_sample * samples * (rl ? generations : 1) : 2 * n * tokens;
  const double recompute = f.activation_checkpointing ? forward : 0;
  const double trainable = f.trainable_fraction.value_or(
      m == TrainingMethod::kLora || m == TrainingMethod::kQlora ? 0.01 : 1.0);
  PriorBreakdown out;
  switch (m) {
    case TrainingMethod::kPretrain:
    case TrainingMethod::kCpt:
    case TrainingMethod::kFullFinetune:
    case TrainingMethod::kSft:
      out.train_flops = 3 * forward + recompute;
      break;
    case TrainingMethod::kLora:
    case TrainingMethod::kQlora:
      out.train_flops = 2 * forward + 3 * forward * trainable + recompute;
      break;
    case TrainingMethod::kDpo:
      out.train_flops = 3 * forward + forward + recompute;
      break;
    case TrainingMethod::kDistillation:
      out.train_flops = 3 * forward + recompute + 2 * f.teacher_params_b.value_or(0) * 1e9 * tokens;
      break;
    case TrainingMethod::kRlhf: {
      const double critic = f.critic_params_b.value_or(*f.params_b) / *f.params_b;
      const double reward = f.reward_params_b.value_or(*f.params_b) / *f.params_b;
      out.train_flops = 3 * forward * (1 + critic) + forward * (1 + reward) + recompute;
      break;
    }
    case TrainingMethod::kRlvr:
      out.train_flops = 3 * forward + forward + recompute;
      break;
    case TrainingMethod::kBatchInference:
      out.train_flops = forward;
      break;
  }
  if (rl) {
    const double response = f.rollout_tokens.value_or(seq / 2);
    out.generation_flops = 2 * n * samples * generations * response;
  }
  const auto gpu = FindGpu(f.gpu_type);
  out.peak_tflops_per_gpu =
      f.peak_tflops ? *f.peak_tflops : (gpu ? gpu->PeakTflops(f.precision) : 300.0);
  const int gpus = f.GpuCount();
  if (f.mfu) {
    out.mfu = *f.mfu;
  } else {
    // 0.40 for dense models of 10B+, falling towards 0.25 at 100M parameters; a little less per
    // doubling past one 8-GPU node (communication).
    const double size = std::clamp(0.40 + 0.05 * std::log10(*f.params_b / 10), 0.15, 0.45);
    const double scale = gpus > 8 ? std::max(0.5, 1 - 0.03 * std::log2(gpus / 8.0)) : 1.0;
    out.mfu = size * scale * (m == TrainingMethod::kQlora ? 0.6 : 1.0);
  }
  const double flops_per_s = gpus * out.peak_tflops_per_gpu * 1e12;
  // Generation is memory-bound decoding: a quarter of the training efficiency.
  out.seconds = out.train_flops / (flops_per_s * out.mfu) +
                out.generation_flops / (flops_per_s * out.mfu * 0.25) + f.overhead_s;
  return out;
}

Result<MemoryPlan> RecommendGpus(const TrainingFeatures& f, int max_gpus) {
  if (!f.method) return FailInput("features.method", "needed to size memory");
  if (!f.params_b) return FailInput("features.params_b", "needed to size memory");
  const TrainingMethod m = *f.method;
  const double n = *f.params_b * 1e9;
  const double trainable = f.trainable_fraction.value_or(
      m == TrainingMethod::kLora || m == TrainingMethod::kQlora ? 0.01 : 1.0);
  double bytes = 0;
  switch (m) {
    case TrainingMethod::kPretrain:
    case TrainingMethod::kCpt:
    case TrainingMethod::kFullFinetune:
    case TrainingMethod::kSft:
      bytes = kTrainedBytes * n;
      break;
    case TrainingMethod::kLora:
      bytes = kFrozenBytes * n + kTrainedBytes * trainable * n;
      break;
    case TrainingMethod::kQlora:
      bytes = kFrozen4BitBytes * n + kTrainedBytes * trainable * n;
      break;
    case TrainingMethod::kDpo:
      bytes = (kTrainedBytes + kFrozenBytes) * n;
      break;
    case TrainingMethod::kDistillation:
      bytes = kTrainedBytes * n + kFrozenBytes * f.teacher_params_b.value_or(0) * 1e9;
      break;
    case TrainingMethod::kRlhf:
      bytes = (kTrainedBytes + kFrozenBytes) * n +
              kTrainedBytes * f.critic_params_b.value_or(*f.params_b) * 1e9 +
              kFrozenBytes * f.reward_params_b.value_or(*f.params_b) * 1e9;
      break;
    case TrainingMethod::kRlvr:
      bytes = (kTrainedBytes + kFrozenBytes) * n;
      break;
    case TrainingMethod::kBatchInference:
      bytes = kFrozenBytes * n;
      break;
  }
  // Activations of one sequence: a dense transformer with N = 12 L h^2 and h ~ 128 L has
  // L = (N / 196608)^(1/3). Per layer 34 s h bytes without checkpointing (flash attention), 2 s h
  // with it (the layer inputs only). Inference keeps a KV cache instead: 4 s h L bytes.
  const double layers = std::max(2.0, std::cbrt(n / 196608.0));
  const double hidden = 128 * layers;
  const double seq = f.seq_len.value_or(2048);
  const double per_layer = m == TrainingMethod::kBatchInference ? 4.0
                           : f.activation_checkpointing         ? 2.0
                                                                : 34.0;
  MemoryPlan plan;
  plan.state_gb = bytes / 1e9;
  plan.activation_gb = per_layer * seq * hidden * layers / 1e9;
  const auto gpu = FindGpu(f.gpu_type);
  const double memory = f.gpu_memory_gb ? *f.gpu_memory_gb : (gpu ? gpu->memory_gb : 80.0);
  const double usable = 0.9 * memory - 2.0;  // CUDA context, allocator slack, comms buffers
  const int min_gpus = f.tp * f.pp;
  int g = 1;
  while (g < min_gpus) g *= 2;
  for (; g <= max_gpus; g *= 2) {
    const double per_gpu = plan.state_gb / g + plan.activation_gb / min_gpus;
    plan.gpus = g;
    plan.per_gpu_gb = per_gpu;
    if (per_gpu <= usable) {
      plan.fits = true;
      break;
    }
  }
  return plan;
}

}  // namespace ordo::forecast
