#include "ordo/forecast/training_features.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "ordo/forecast/json_util.h"

namespace ordo::forecast {
namespace {

using internal::Json;

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

Result<TrainingFeatures> ParseTrainingFeatures(std::string_view json, const std::string& path) {
  auto doc = internal::ParseJson(json, path);
  if (!doc) return tl::unexpected(doc.error());
  const Json& j = *doc;
  if (!j.is_object()) return FailInput(path, "must be a JSON object");
  static const std::set<std::string> kKnown = {"method",
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
                                               "group"};
  for (const auto& [key, value] : j.items()) {
    if (key.rfind("x-", 0) == 0) continue;
    if (!kKnown.count(key)) return FailInput(internal::Join(path, key), "unknown feature");
  }
  TrainingFeatures f;
  const auto field = [&](const char* key) { return internal::Join(path, key); };
  // Positive numbers (> 0), optional.
  struct Pos {
    const char* key;
    std::optional<double>* target;
  };
  const Pos positives[] = {{"params_b", &f.params_b},
                           {"active_params_b", &f.active_params_b},
                           {"tokens", &f.tokens},
                           {"samples", &f.samples},
                           {"seq_len", &f.seq_len},
                           {"global_batch", &f.global_batch},
                           {"flops_per_sample", &f.flops_per_sample},
                           {"rollout_tokens", &f.rollout_tokens},
                           {"generations_per_prompt", &f.generations_per_prompt},
                           {"teacher_params_b", &f.teacher_params_b},
                           {"critic_params_b", &f.critic_params_b},
                           {"reward_params_b", &f.reward_params_b},
                           {"gpu_memory_gb", &f.gpu_memory_gb},
                           {"peak_tflops", &f.peak_tflops}};
  for (const Pos& p : positives) {
    auto v = internal::OptNumber(j, p.key, path);
    if (!v) return tl::unexpected(v.error());
    if (*v && !(**v > 0)) return FailInput(field(p.key), "must be a number > 0");
    *p.target = *v;
  }
  if (f.params_b && *f.params_b > 1e6) {
    return FailInput(field("params_b"), "is in billions of parameters; got more than 10^15");
  }
  for (const char* key : {"trainable_fraction", "mfu"}) {
    auto v = internal::OptNumber(j, key, path);
    if (!v) return tl::unexpected(v.error());
    if (*v && !(**v > 0 && **v <= 1)) return FailInput(field(key), "must be in (0, 1]");
    (std::string_view(key) == "mfu" ? f.mfu : f.trainable_fraction) = *v;
  }
  if (auto v = internal::OptNumber(j, "epochs", path); !v) {
    return tl::unexpected(v.error());
  } else if (*v) {
    if (!(**v > 0)) return FailInput(field("epochs"), "must be a number > 0");
    f.epochs = **v;
  }
  if (auto v = internal::OptNumber(j, "overhead_s", path); !v) {
    return tl::unexpected(v.error());
  } else if (*v) {
    if (**v < 0) return FailInput(field("overhead_s"), "must be >= 0");
    f.overhead_s = **v;
  }
  // Whole numbers >= 1.
  std::optional<double> tp, pp, dp, gpus;
  for (auto [key, target] : {std::pair{"tp", &tp}, std::pair{"pp", &pp}, std::pair{"dp", &dp},
                             std::pair{"gpu_count", &gpus}}) {
    auto v = internal::OptNumber(j, key, path);
    if (!v) return tl::unexpected(v.error());
    if (*v && (**v < 1 || **v != std::floor(**v) || **v > (1 << 24))) {
      return FailInput(field(key), "must be a whole number >= 1");
    }
    *target = *v;
  }
  if (gpus) f.gpu_count = static_cast<int>(*gpus);
  if (tp) f.tp = static_cast<int>(*tp);
  if (pp) f.pp = static_cast<int>(*pp);
  if (dp) f.dp = static_cast<int>(*dp);
  if (f.gpu_count && f.dp && f.tp * f.pp * *f.dp != *f.gpu_count) {
    return FailInput(field("dp"), "tp * pp * dp = " + std::to_string(f.tp * f.pp * *f.dp) +
                                      " but gpu_count is " + std::to_string(*f.gpu_count));
  }
  if (f.gpu_count && *f.gpu_count % (f.tp * f.pp) != 0) {
    return FailInput(field("gpu_count"),
                     "must be a multiple of tp * pp (" + std::to_string(f.tp * f.pp) + ")");
  }
  if (auto v = internal::OptBool(j, "activation_checkpointing", path); !v) {
    return tl::unexpected(v.error());
  } else if (*v) {
    f.activation_checkpointing = **v;
  }
  auto method = internal::OptString(j, "method", path);
  if (!method) return tl::unexpected(method.error());
  if (*method) {
    f.method = ParseTrainingMethod(**method);
    if (!f.method) {
      return FailInput(field("method"),
                       "unknown method \"" + **method +
                           "\" (known: pretrain, cpt, full_finetune, sft, lora, qlora, dpo, rlhf, "
                           "rlvr, distillation, batch_inference)");
    }
  }
  auto precision = internal::OptString(j, "precision", path);
  if (!precision) return tl::unexpected(precision.error());
  if (*precision) {
    auto p = ParsePrecision(**precision);
    if (!p) {
      return FailInput(field("precision"), "unknown precision \"" + **precision +
                                               "\" (known: bf16, fp16, fp8, fp4, tf32, fp32)");
    }
    f.precision = *p;
  }
  auto gpu_type = internal::OptString(j, "gpu_type", path);
  if (!gpu_type) return tl::unexpected(gpu_type.error());
  if (*gpu_type) {
    f.gpu_type = **gpu_type;
    if (!FindGpu(f.gpu_type) && !f.peak_tflops) {
      std::string known;
      for (const std::string& n : KnownGpuNames()) known += (known.empty() ? "" : ", ") + n;
      return FailInput(field("gpu_type"), "unknown GPU type \"" + f.gpu_type +
                                              "\" (give peak_tflops and gpu_memory_gb, or one "
                                              "of: " +
                                              known + ")");
    }
  }
  for (auto [key, target] : {std::pair{"model", &f.model}, std::pair{"group", &f.group}}) {
    auto v = internal::OptString(j, key, path);
    if (!v) return tl::unexpected(v.error());
    if (*v) *target = **v;
  }
  if (f.method == TrainingMethod::kDistillation && f.HasPhysics() && !f.teacher_params_b) {
    return FailInput(field("teacher_params_b"), "required for distillation");
  }
  return f;
}

std::string TrainingFeaturesToJson(const TrainingFeatures& f) {
  Json j = Json::object();
  if (f.method) j["method"] = std::string(TrainingMethodName(*f.method));
  const std::pair<const char*, const std::optional<double>*> numbers[] = {
      {"params_b", &f.params_b},
      {"active_params_b", &f.active_params_b},
      {"trainable_fraction", &f.trainable_fraction},
      {"tokens", &f.tokens},
      {"samples", &f.samples},
      {"seq_len", &f.seq_len},
      {"global_batch", &f.global_batch},
      {"flops_per_sample", &f.flops_per_sample},
      {"rollout_tokens", &f.rollout_tokens},
      {"generations_per_prompt", &f.generations_per_prompt},
      {"teacher_params_b", &f.teacher_params_b},
      {"critic_params_b", &f.critic_params_b},
      {"reward_params_b", &f.reward_params_b},
      {"gpu_memory_gb", &f.gpu_memory_gb},
      {"mfu", &f.mfu},
      {"peak_tflops", &f.peak_tflops}};
  for (const auto& [key, value] : numbers) {
    if (*value) j[key] = **value;
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
