#include "ordo/core/scenario.h"

#include <algorithm>

#include "ordo/core/assert.h"

namespace ordo {

std::string_view JobKindName(JobKind kind) {
  switch (kind) {
    case JobKind::kTraining:
      return "training";
    case JobKind::kBatchInference:
      return "batch_inference";
    case JobKind::kQuantization:
      return "quantization";
  }
  return "unknown";
}

std::optional<JobKind> ParseJobKind(std::string_view name) {
  for (JobKind kind : {JobKind::kTraining, JobKind::kBatchInference, JobKind::kQuantization}) {
    if (JobKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

void Cluster::Index() {
  group_first_.assign(groups.size(), 0);
  int next = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    group_first_[g] = next;
    next += groups[g].nodes * groups[g].gpus_per_node;
  }
  total_gpus_ = next;
  gpu_group_.assign(static_cast<size_t>(total_gpus_), 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    std::fill_n(gpu_group_.begin() + group_first_[g], group_gpus(static_cast<int>(g)),
                static_cast<int>(g));
  }
}

int Cluster::group_of(int gpu) const {
  ORDO_ASSERT(gpu >= 0 && gpu < total_gpus_);
  return gpu_group_[static_cast<size_t>(gpu)];
}

bool Cluster::IsAlignedBlock(int first_gpu, int gpus) const {
  if (gpus <= 0 || first_gpu < 0 || first_gpu >= total_gpus_) return false;
  const int g = group_of(first_gpu);
  const int offset = first_gpu - group_first_[g];
  const int gpn = groups[g].gpus_per_node;
  if (offset % gpus != 0 || offset + gpus > group_gpus(g)) return false;
  // Within one node when it fits in one; else whole nodes (aligned offsets then start on a node).
  return gpus <= gpn || gpus % gpn == 0;
}

}  // namespace ordo
