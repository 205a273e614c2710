// The features of a training job (about 22 of them) and the physical prior the training
// forecaster starts from: training FLOPs, adjusted per method, over the throughput the GPUs can
// reach; and the memory the job needs, hence a power-of-two GPU count.
//
// FLOPs per token processed, N = (active) parameters, F = forward = 2N per token:
//   pre-training, CPT, full fine-tune, SFT: 3F (forward + backward), +1F with activation
//     checkpointing (the forward is recomputed);
//   LoRA, QLoRA: 2F (no weight gradients for the frozen base) + 3F x trainable fraction;
//     QLoRA also runs at 60% of LoRA's efficiency (4-bit weights are dequantised every step);
//   DPO: 3F for the policy + 1F for the frozen reference (tokens = chosen + rejected);
//   distillation: 3F for the student + 2 x teacher parameters per token for the teacher;
//   RLHF (PPO): actor 3F + critic 3F_c + reference 1F + reward 1F_r on prompt + response, plus
//     generating the responses (2N per token) at a quarter of the training efficiency;
//   RLVR (GRPO): actor 3F + reference 1F on generations_per_prompt sequences per prompt, plus their
//     generation as above (the verifier is cheap);
//   batch inference: 1F per token at the training efficiency (prefill-heavy batch work).
// Seconds = FLOPs / (GPUs x peak TFLOPS at the precision x MFU) + overhead. MFU defaults to 0.40
// for large dense models, less for small ones (kernel and launch overheads) and for many GPUs
// (communication); the forecaster's learned correction fixes what this gets wrong.
//
//   auto f = ParseTrainingFeatures(R"({"method": "lora", "params_b": 70, "tokens": 2.5e7,
//                                     "gpu_type": "H100", "gpu_count": 8})");
//   double s = PhysicalPrior(*f).seconds;   // about 2,000 s
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/forecast/gpu_catalog.h"

namespace ordo::forecast {

/// Stored in features and history: values only grow at the end.
enum class TrainingMethod : int {
  kPretrain = 0,
  kCpt = 1,
  kFullFinetune = 2,
  kSft = 3,
  kLora = 4,
  kQlora = 5,
  kDpo = 6,
  kRlhf = 7,
  kRlvr = 8,
  kDistillation = 9,
  kBatchInference = 10,
};
inline constexpr int kTrainingMethodCount = 11;
std::string_view TrainingMethodName(TrainingMethod m);
/// Accepts the names above and common spellings ("pre-training", "full", "ppo", "grpo", ...).
std::optional<TrainingMethod> ParseTrainingMethod(std::string_view name);

struct TrainingFeatures {
  std::optional<TrainingMethod> method;
  std::optional<double> params_b;            // model parameters, billions
  std::optional<double> active_params_b;     // MoE: parameters active per token
  std::optional<double> trainable_fraction;  // LoRA/QLoRA adapters; default 0.01 there, else 1
  std::optional<double> tokens;              // tokens per epoch (or samples x seq_len)
  std::optional<double> samples;             // per epoch (prompts for RL)
  std::optional<double> seq_len;             // tokens per sample (prompt + response for RL)
  double epochs = 1;
  std::optional<double> global_batch;  // samples per optimizer step
  Precision precision = Precision::kBf16;
  std::string gpu_type = "gpu";  // as in a scenario; see gpu_catalog.h
  std::optional<int> gpu_count;
  int tp = 1;             // tensor parallel
  int pp = 1;             // pipeline parallel
  std::optional<int> dp;  // data parallel; default gpu_count / (tp * pp)
  bool activation_checkpointing = false;
  std::optional<double> flops_per_sample;        // forward FLOPs per sample (CNNs, diffusion, ...)
  std::optional<double> rollout_tokens;          // RL: generated tokens per sequence
  std::optional<double> generations_per_prompt;  // RLVR: default 8; RLHF: 1
  std::optional<double> teacher_params_b;        // distillation (required there)
  std::optional<double> critic_params_b;         // RLHF: default params_b
  std::optional<double> reward_params_b;         // RLHF: default params_b
  std::optional<double> gpu_memory_gb;           // default: the catalog's
  std::optional<double> mfu;                     // override the default model FLOPs utilisation
  std::optional<double> peak_tflops;             // override the catalog's throughput per GPU
  double overhead_s = 0;                         // start-up, checkpoint loading, evaluation
  std::string model;                             // identity for learning from history ("llama-70b")
  std::string group;                             // who or where ("cluster04", a team) for history

  /// True when params, tokens (or samples) and a method are given, so the physical prior applies.
  [[nodiscard]] bool HasPhysics() const;
  [[nodiscard]] int GpuCount() const { return gpu_count.value_or(1); }
};

/// Parses a `features` object (JSON text) with io's strict kit: unknown keys are errors ("did you
/// mean") unless they start with `x-`; `null` is a wrong type, never "absent"; errors name the
/// field as `<path>.<key>`. Checks ranges (positive counts, 0 < fractions <= 1, whole GPU counts),
/// a known method and GPU type, and tp * pp * dp == gpu_count when all are given.
[[nodiscard]] Result<TrainingFeatures> ParseTrainingFeatures(std::string_view json,
                                                             const std::string& path = "features");

/// The same from a parsed value (a history entry's `features`).
[[nodiscard]] Result<TrainingFeatures> ReadTrainingFeatures(const nlohmann::json& value,
                                                            const std::string& path);

/// The features as a JSON object text (what ParseTrainingFeatures reads back).
std::string TrainingFeaturesToJson(const TrainingFeatures& f);

struct PriorBreakdown {
  double train_flops = 0;
  double generation_flops = 0;
  double peak_tflops_per_gpu = 0;
  double mfu = 0;
  double seconds = 0;
};

/// The physical prior. Requires HasPhysics(); otherwise an error naming the missing feature.
[[nodiscard]] Result<PriorBreakdown> PhysicalPrior(const TrainingFeatures& f);

struct MemoryPlan {
  double state_gb = 0;       // weights, gradients, optimizer states, frozen models (total)
  double activation_gb = 0;  // one sequence in flight per model replica
  double per_gpu_gb = 0;     // at `gpus`
  int gpus = 0;              // smallest power of two that fits (>= tp * pp)
  bool fits = false;         // false when even the largest count tried does not fit
};

/// The memory a job needs and the smallest power-of-two GPU count whose memory holds it, states
/// sharded across all GPUs (ZeRO-3/FSDP), activations split over tensor/pipeline parallelism,
/// 10% of each GPU kept free. Requires params_b and a method.
[[nodiscard]] Result<MemoryPlan> RecommendGpus(const TrainingFeatures& f, int max_gpus = 65536);

}  // namespace ordo::forecast
