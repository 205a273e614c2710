#include "ordo/policy/baselines/free_grid.h"

#include <algorithm>
#include <bit>

#include "ordo/core/assert.h"

namespace ordo::policy::baselines {

namespace {

// Bits at the offsets inside a word where an aligned block of `gpus` (< 64) may start.
uint64_t AlignmentMask(int gpus) {
  uint64_t mask = 0;
  for (int bit = 0; bit < 64; bit += gpus) mask |= uint64_t{1} << bit;
  return mask;
}

}  // namespace

FreeGrid::FreeGrid(const Cluster& cluster, int horizon_steps)
    : cluster_(&cluster), steps_(horizon_steps) {
  const int groups = static_cast<int>(cluster.groups.size());
  group_offset_.resize(groups);
  group_words_.resize(groups);
  for (int g = 0; g < groups; ++g) {
    group_offset_[g] = words_per_step_;
    group_words_[g] = (cluster.group_gpus(g) + 63) / 64;
    words_per_step_ += group_words_[g];
  }
  std::vector<uint64_t> row(static_cast<size_t>(words_per_step_), 0);
  for (int g = 0; g < groups; ++g) {
    const int size = cluster.group_gpus(g);
    for (int w = 0; w < group_words_[g]; ++w) {
      const int bits = std::min(64, size - 64 * w);
      row[group_offset_[g] + w] = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    }
  }
  bits_.reserve(static_cast<size_t>(words_per_step_) * steps_);
  for (int t = 0; t < steps_; ++t) bits_.insert(bits_.end(), row.begin(), row.end());
  acc_.resize(static_cast<size_t>(words_per_step_));
}

void FreeGrid::Occupy(int first_gpu, int gpus, int from_step, int to_step) {
  const int g = cluster_->group_of(first_gpu);
  const int local = first_gpu - cluster_->group_first_gpu(g);
  ORDO_ASSERT(local + gpus <= cluster_->group_gpus(g));
  const int from = std::max(0, from_step);
  const int to = std::min(steps_, to_step);
  for (int t = from; t < to; ++t) {
    uint64_t* row = &bits_[static_cast<size_t>(t) * words_per_step_ + group_offset_[g]];
    for (int gpu = local; gpu < local + gpus; ++gpu) row[gpu / 64] &= ~(uint64_t{1} << (gpu % 64));
  }
}

void FreeGrid::Release(int first_gpu, int gpus, int from_step, int to_step) {
  const int g = cluster_->group_of(first_gpu);
  const int local = first_gpu - cluster_->group_first_gpu(g);
  ORDO_ASSERT(local + gpus <= cluster_->group_gpus(g));
  const int from = std::max(0, from_step);
  const int to = std::min(steps_, to_step);
  for (int t = from; t < to; ++t) {
    uint64_t* row = &bits_[static_cast<size_t>(t) * words_per_step_ + group_offset_[g]];
    for (int gpu = local; gpu < local + gpus; ++gpu) row[gpu / 64] |= uint64_t{1} << (gpu % 64);
  }
}

bool FreeGrid::IsFree(int gpu, int step) const {
  const int g = cluster_->group_of(gpu);
  const int local = gpu - cluster_->group_first_gpu(g);
  const uint64_t word =
      bits_[static_cast<size_t>(step) * words_per_step_ + group_offset_[g] + local / 64];
  return (word >> (local % 64)) & 1;
}

void FreeGrid::EligibleGroups(int gpus, const GpuRequirement& req, std::vector<int>& out) const {
  out.clear();
  for (int g = 0; g < static_cast<int>(cluster_->groups.size()); ++g) {
    const NodeGroup& group = cluster_->groups[g];
    if (!req.Matches(group) || gpus > cluster_->group_gpus(g)) continue;
    // Rule 3: a block larger than a node covers whole nodes.
    if (gpus > group.gpus_per_node && gpus % group.gpus_per_node != 0) continue;
    out.push_back(g);
  }
}

int FreeGrid::FindInGroup(int g, int gpus, int from_step, int to_step) const {
  const int words = group_words_[g];
  const int offset = group_offset_[g];
  uint64_t* acc = acc_.data();
  const uint64_t* first_row = &bits_[static_cast<size_t>(from_step) * words_per_step_ + offset];
  std::copy(first_row, first_row + words, acc);
  for (int t = from_step + 1; t < to_step; ++t) {
    const uint64_t* row = &bits_[static_cast<size_t>(t) * words_per_step_ + offset];
    uint64_t any = 0;
    for (int w = 0; w < words; ++w) any |= (acc[w] &= row[w]);
    if (any == 0) return -1;  // nothing is free over the whole window
  }
  if (gpus >= 64) {
    const int span = gpus / 64;
    for (int w = 0; w + span <= words; w += span) {
      bool all = true;
      for (int k = 0; k < span && all; ++k) all = acc[w + k] == ~uint64_t{0};
      if (all) return 64 * w;
    }
    return -1;
  }
  const uint64_t aligned = AlignmentMask(gpus);
  for (int w = 0; w < words; ++w) {
    uint64_t m = acc[w];
    // After the loop, bit i is set iff bits i .. i + gpus - 1 all are.
    for (int shift = 1; shift < gpus; shift <<= 1) m &= m >> shift;
    m &= aligned;
    if (m != 0) return 64 * w + std::countr_zero(m);
  }
  return -1;
}

std::optional<int> FreeGrid::FindAt(int gpus, int duration_steps, const GpuRequirement& req,
                                    int start_step) const {
  if (start_step < 0 || start_step >= steps_ || duration_steps < 1) return std::nullopt;
  EligibleGroups(gpus, req, eligible_);
  const int to = std::min(steps_, start_step + duration_steps);
  for (int g : eligible_) {
    const int local = FindInGroup(g, gpus, start_step, to);
    if (local >= 0) return cluster_->group_first_gpu(g) + local;
  }
  return std::nullopt;
}

std::optional<FreeGrid::Slot> FreeGrid::FindEarliest(int gpus, int duration_steps,
                                                     const GpuRequirement& req,
                                                     int earliest_step) const {
  if (duration_steps < 1) return std::nullopt;
  EligibleGroups(gpus, req, eligible_);
  if (eligible_.empty()) return std::nullopt;
  for (int s = std::max(0, earliest_step); s < steps_; ++s) {
    const int to = std::min(steps_, s + duration_steps);
    for (int g : eligible_) {
      const int local = FindInGroup(g, gpus, s, to);
      if (local >= 0) return Slot{s, cluster_->group_first_gpu(g) + local};
    }
  }
  return std::nullopt;
}

}  // namespace ordo::policy::baselines
