// Accelerators the forecasters know: dense tensor throughput by precision and memory, from the
// vendors' data sheets (dense, no sparsity). Names are matched loosely ("NVIDIA H100-SXM5-80GB",
// "h100", "Blackwell GPU (B200-SXM-180GB)" all find the H100 or B200 entry).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ordo::forecast {

/// Numeric formats the prior distinguishes (stored in features: values only grow at the end).
enum class Precision : int { kBf16 = 0, kFp16 = 1, kFp8 = 2, kFp4 = 3, kTf32 = 4, kFp32 = 5 };
std::string_view PrecisionName(Precision p);
std::optional<Precision> ParsePrecision(std::string_view name);

/// A coarse family for the learned correction (software maturity and memory systems differ more
/// by family than by model).
enum class GpuFamily : int {
  kOther = 0,
  kNvidiaVolta = 1,
  kNvidiaAmpere = 2,
  kNvidiaAda = 3,
  kNvidiaHopper = 4,
  kNvidiaBlackwell = 5,
  kAmdCdna2 = 6,
  kAmdCdna3 = 7,
  kAmdCdna4 = 8,
  kGoogleTpu = 9,
  kIntelGaudi = 10,
  kConsumer = 11,
};
inline constexpr int kGpuFamilyCount = 12;

struct GpuSpec {
  std::string name;  // canonical: "H100", "B200", "MI300X", ...
  GpuFamily family = GpuFamily::kOther;
  double bf16_tflops = 0;  // dense
  double fp8_tflops = 0;   // 0 when not supported in hardware
  double fp4_tflops = 0;   // 0 when not supported in hardware
  double memory_gb = 0;

  /// Peak dense TFLOPS at `p`, falling back to the fastest supported format at least as wide
  /// (fp8 on a GPU without fp8 runs at bf16 speed).
  [[nodiscard]] double PeakTflops(Precision p) const;
};

/// The catalog entry whose name appears in `name` (case, blanks, hyphens and "(R)" ignored), or
/// nothing. "gpu" (the spec's default gpu_type) maps to a generic entry: 300 TFLOPS, 80 GB.
std::optional<GpuSpec> FindGpu(std::string_view name);

/// The message for a GPU type FindGpu does not know: `unknown GPU type "X1" (known: gpu, V100,
/// ...)`.
std::string UnknownGpuMessage(std::string_view name);

}  // namespace ordo::forecast
