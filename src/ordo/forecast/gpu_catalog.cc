#include "ordo/forecast/gpu_catalog.h"

#include <cctype>

namespace ordo::forecast {
namespace {

struct Entry {
  const char* pattern;  // matched against the normalised name; earlier entries win
  const char* name;
  GpuFamily family;
  double bf16, fp8, fp4, memory_gb;
};

// Order matters: a pattern that contains another (GB200 vs B200, GH200 vs H200 vs H20, A100 vs
// A10, L40S vs L40 vs L4) comes first. Dense throughput from the vendors' data sheets; where the
// sheet gives only sparse figures, half of them.
constexpr Entry kEntries[] = {
    {"GB300", "GB300", GpuFamily::kNvidiaBlackwell, 2500, 5000, 15000, 279},
    {"GB200", "GB200", GpuFamily::kNvidiaBlackwell, 2500, 5000, 10000, 186},
    {"B300", "B300", GpuFamily::kNvidiaBlackwell, 2250, 4500, 13500, 270},
    {"B200", "B200", GpuFamily::kNvidiaBlackwell, 2250, 4500, 9000, 180},
    {"RTXPRO6000", "RTX-PRO-6000", GpuFamily::kNvidiaBlackwell, 500, 1000, 2000, 96},
    {"GH200", "GH200", GpuFamily::kNvidiaHopper, 989, 1979, 0, 96},
    {"H200NVL", "H200-NVL", GpuFamily::kNvidiaHopper, 836, 1671, 0, 141},
    {"H200", "H200", GpuFamily::kNvidiaHopper, 989, 1979, 0, 141},
    {"H100NVL", "H100-NVL", GpuFamily::kNvidiaHopper, 835, 1670, 0, 94},
    {"H100PCIE", "H100-PCIE", GpuFamily::kNvidiaHopper, 756, 1513, 0, 80},
    {"H100", "H100", GpuFamily::kNvidiaHopper, 989, 1979, 0, 80},
    {"H800", "H800", GpuFamily::kNvidiaHopper, 989, 1979, 0, 80},
    {"H20", "H20", GpuFamily::kNvidiaHopper, 148, 296, 0, 96},
    {"A10040GB", "A100-40GB", GpuFamily::kNvidiaAmpere, 312, 0, 0, 40},
    {"A100SXM440GB", "A100-40GB", GpuFamily::kNvidiaAmpere, 312, 0, 0, 40},
    {"A100SXM40GB", "A100-40GB", GpuFamily::kNvidiaAmpere, 312, 0, 0, 40},
    {"A100", "A100", GpuFamily::kNvidiaAmpere, 312, 0, 0, 80},
    {"A800", "A800", GpuFamily::kNvidiaAmpere, 312, 0, 0, 80},
    {"A10G", "A10G", GpuFamily::kNvidiaAmpere, 70, 0, 0, 24},
    {"A10", "A10", GpuFamily::kNvidiaAmpere, 125, 0, 0, 24},
    {"A30", "A30", GpuFamily::kNvidiaAmpere, 165, 0, 0, 24},
    {"A40", "A40", GpuFamily::kNvidiaAmpere, 150, 0, 0, 48},
    {"A6000", "RTX-A6000", GpuFamily::kNvidiaAmpere, 155, 0, 0, 48},
    {"A5000", "RTX-A5000", GpuFamily::kNvidiaAmpere, 111, 0, 0, 24},
    {"L40S", "L40S", GpuFamily::kNvidiaAda, 362, 733, 0, 48},
    {"L40", "L40", GpuFamily::kNvidiaAda, 181, 362, 0, 48},
    {"6000ADA", "RTX-6000-ADA", GpuFamily::kNvidiaAda, 364, 728, 0, 48},
    {"RTX4090", "RTX-4090", GpuFamily::kConsumer, 165, 330, 0, 24},
    {"7900XTX", "RX-7900-XTX", GpuFamily::kConsumer, 123, 0, 0, 24},
    {"MI355X", "MI355X", GpuFamily::kAmdCdna4, 2500, 5000, 10000, 288},
    {"MI350X", "MI350X", GpuFamily::kAmdCdna4, 2300, 4600, 9200, 288},
    {"MI325X", "MI325X", GpuFamily::kAmdCdna3, 1307, 2615, 0, 256},
    {"MI300X", "MI300X", GpuFamily::kAmdCdna3, 1307, 2615, 0, 192},
    {"MI250X", "MI250X", GpuFamily::kAmdCdna2, 383, 0, 0, 128},
    {"GAUDI3", "GAUDI3", GpuFamily::kIntelGaudi, 1835, 1835, 0, 128},
    {"GAUDI2", "GAUDI2", GpuFamily::kIntelGaudi, 432, 865, 0, 96},
    {"TRILLIUM", "TPU-V6E", GpuFamily::kGoogleTpu, 918, 918, 0, 32},
    {"TPUV6E", "TPU-V6E", GpuFamily::kGoogleTpu, 918, 918, 0, 32},
    {"TPUV5P", "TPU-V5P", GpuFamily::kGoogleTpu, 459, 459, 0, 95},
    {"TPUV5E", "TPU-V5E", GpuFamily::kGoogleTpu, 197, 197, 0, 16},
    {"V100", "V100", GpuFamily::kNvidiaVolta, 125, 0, 0, 32},
    {"L4", "L4", GpuFamily::kNvidiaAda, 121, 242, 0, 24},
    {"T4", "T4", GpuFamily::kNvidiaVolta, 65, 0, 0, 16},
};

std::string Normalise(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '(' || c == ')') {
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  for (const char* mark : {"(R)", "(TM)"}) {
    for (std::size_t pos; (pos = out.find(mark)) != std::string::npos;) {
      out.erase(pos, std::string_view(mark).size());
    }
  }
  std::string bare;
  for (char c : out) {
    if (c != '(' && c != ')') bare += c;
  }
  return bare;
}

}  // namespace

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp4:
      return "fp4";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp32:
      return "fp32";
  }
  return "bf16";
}

std::optional<Precision> ParsePrecision(std::string_view name) {
  std::string n;
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "bf16" || n == "bfloat16" || n == "mixed") return Precision::kBf16;
  if (n == "fp16" || n == "float16" || n == "half") return Precision::kFp16;
  if (n == "fp8" || n == "float8") return Precision::kFp8;
  if (n == "fp4" || n == "nvfp4" || n == "mxfp4") return Precision::kFp4;
  if (n == "tf32") return Precision::kTf32;
  if (n == "fp32" || n == "float32") return Precision::kFp32;
  return std::nullopt;
}

double GpuSpec::PeakTflops(Precision p) const {
  switch (p) {
    case Precision::kFp4:
      if (fp4_tflops > 0) return fp4_tflops;
      [[fallthrough]];
    case Precision::kFp8:
      if (fp8_tflops > 0) return fp8_tflops;
      return bf16_tflops;
    case Precision::kBf16:
    case Precision::kFp16:
      return bf16_tflops;
    case Precision::kTf32:
      return bf16_tflops / 2;
    // Plain fp32 has no tensor-core path on most parts: roughly a fifteenth of bf16.
    case Precision::kFp32:
      return bf16_tflops / 15;
  }
  return bf16_tflops;
}

std::optional<GpuSpec> FindGpu(std::string_view name) {
  const std::string n = Normalise(name);
  if (n == "GPU" || n == "GENERIC") {
    return GpuSpec{"gpu", GpuFamily::kOther, 300, 0, 0, 80};
  }
  if (n.empty()) return std::nullopt;
  for (const Entry& e : kEntries) {
    if (n.find(e.pattern) != std::string::npos) {
      return GpuSpec{e.name, e.family, e.bf16, e.fp8, e.fp4, e.memory_gb};
    }
  }
  return std::nullopt;
}

std::string UnknownGpuMessage(std::string_view name) {
  std::string message = "unknown GPU type \"" + std::string(name) + "\" (known: gpu";
  std::string_view last;
  for (const Entry& e : kEntries) {
    // Entries of one name with several patterns stand together.
    if (e.name == last) continue;
    message += ", ";
    message += e.name;
    last = e.name;
  }
  return message + ")";
}

}  // namespace ordo::forecast
