#include "ordo/policy/fast/block_grid.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "ordo/core/assert.h"

namespace ordo::policy {
namespace {

int Log2(int power_of_two) { return std::countr_zero(static_cast<unsigned>(power_of_two)); }
// Candidates at the best start examined for a tighter fit before the search settles.
constexpr int kMaxTies = 8;
// Below this many GPUs a search costs about what a memo lookup does: no memo.
constexpr int kMemoMinGpus = 256;

// The lowest level L with slack < 2^L (every level above it too).
int LowFrom(int slack) {
  return slack <= 0 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(slack)));
}

int LevelOf(int node, int height) {
  return height - (31 - std::countl_zero(static_cast<unsigned>(node)));
}

}  // namespace

BlockGrid::BlockGrid(const Cluster& cluster, int horizon_steps)
    : horizon_(horizon_steps), words_((horizon_steps + 63) / 64), cluster_(&cluster) {
  trees_.resize(cluster.groups.size());
  for (size_t g = 0; g < cluster.groups.size(); ++g) {
    Tree& tree = trees_[g];
    tree.group = static_cast<int>(g);
    tree.first_gpu = cluster.group_first_gpu(static_cast<int>(g));
    tree.size = cluster.group_gpus(static_cast<int>(g));
    tree.gpus_per_node = cluster.groups[g].gpus_per_node;
    tree.height = static_cast<int>(std::bit_width(static_cast<unsigned>(tree.size - 1)));
    if (tree.size == 1) tree.height = 0;
    const int leaves = 1 << tree.height;
    // Only nodes at or above level L keep a level-L mask, and in heap order they are the first
    // 2^(height - L + 1): about four masks per leaf in all, not height + 1.
    tree.and_masks.resize(tree.height + 1);
    for (int l = 0; l <= tree.height; ++l) {
      tree.and_masks[l].assign((static_cast<size_t>(2) << (tree.height - l)) * words_, 0);
    }
    // Padding GPUs past the group's end are busy at every step of the horizon.
    for (int offset = tree.size; offset < leaves; ++offset) {
      SetInterval(Mask(tree, 0, leaves + offset), 0, horizon_);
    }
    for (int node = leaves - 1; node >= 1; --node) {
      const int level = LevelOf(node, tree.height);
      for (int l = 0; l <= level; ++l) {
        uint64_t* out = Mask(tree, l, node);
        const uint64_t* left = Mask(tree, l == level ? l - 1 : l, 2 * node);
        const uint64_t* right = Mask(tree, l == level ? l - 1 : l, 2 * node + 1);
        for (int w = 0; w < words_; ++w) {
          out[w] = l == level ? (left[w] | right[w]) : (left[w] & right[w]);
        }
      }
    }
    tree.slack.assign(horizon_, tree.size);
    tree.low_slack.assign(tree.height + 1, std::vector<uint64_t>(words_, 0));
    for (int t = 0; t < horizon_; ++t) RefreshSlackBits(tree, t);
  }
}

bool BlockGrid::IntervalClear(const uint64_t* mask, int from, int to) const {
  for (int t = from; t < to;) {
    const int w = t / 64, bit = t % 64;
    const int span = std::min(64 - bit, to - t);
    const uint64_t bits = (span == 64 ? ~uint64_t{0} : ((uint64_t{1} << span) - 1)) << bit;
    if (mask[w] & bits) return false;
    t += span;
  }
  return true;
}

void BlockGrid::SetInterval(uint64_t* mask, int from, int to) const {
  for (int t = from; t < to;) {
    const int w = t / 64, bit = t % 64;
    const int span = std::min(64 - bit, to - t);
    mask[w] |= (span == 64 ? ~uint64_t{0} : ((uint64_t{1} << span) - 1)) << bit;
    t += span;
  }
}

// Smallest s in [from, horizon) with no bit of (a | b) in [s, min(s + duration, horizon)), or -1.
// A start at or before the last conflicting step of a window overlaps it, so the search jumps past
// the window's last conflict.
int BlockGrid::EarliestStart(const uint64_t* a, const uint64_t* b, int duration, int from) const {
  int s = std::max(from, 0);
  if (words_ == 1) {
    const uint64_t mask = a[0] | b[0];
    while (s < horizon_) {
      const int end = std::min(horizon_, s + duration);
      const int span = end - s;
      const uint64_t window = (span == 64 ? ~uint64_t{0} : ((uint64_t{1} << span) - 1)) << s;
      const uint64_t hit = mask & window;
      if (hit == 0) return s;
      s = 64 - std::countl_zero(hit);
    }
    return -1;
  }
  while (s < horizon_) {
    const int end = std::min(horizon_, s + duration);
    int last_conflict = -1;
    for (int t = s; t < end;) {
      const int w = t / 64, bit = t % 64;
      const int span = std::min(64 - bit, end - t);
      const uint64_t bits = (span == 64 ? ~uint64_t{0} : ((uint64_t{1} << span) - 1)) << bit;
      const uint64_t hit = (a[w] | b[w]) & bits;
      if (hit) last_conflict = w * 64 + 63 - std::countl_zero(hit);
      t += span;
    }
    if (last_conflict < 0) return s;
    s = last_conflict + 1;
  }
  return -1;
}

std::optional<BlockGrid::Candidate> BlockGrid::FindEarliest(int gpus, int duration_steps,
                                                            const GpuRequirement& req,
                                                            int earliest_start) const {
  const int level = Log2(gpus);
  // The memo's key: level (6 bits), the duration inside the horizon (14 bits), the matching
  // groups (a bit each, up to 44 groups; more groups go without the memo).
  std::optional<uint64_t> key;
  if (trees_.size() <= 44 && cluster_->total_gpus() >= kMemoMinGpus) {
    uint64_t groups = 0;
    for (size_t g = 0; g < trees_.size(); ++g) {
      if (req.Matches(cluster_->groups[trees_[g].group])) groups |= uint64_t{1} << g;
    }
    const auto duration = static_cast<uint64_t>(std::min(duration_steps, horizon_));
    key = static_cast<uint64_t>(level) | duration << 6 | groups << 20;
  }
  const int asked = std::max(earliest_start, 0);
  if (key) {
    if (auto it = infeasible_.find(*key);
        it != infeasible_.end() && it->second.from <= asked && asked < it->second.to) {
      if (it->second.to >= horizon_) return std::nullopt;
      earliest_start = it->second.to;
    }
  }
  const std::optional<Candidate> found =
      SearchEarliest(level, gpus, duration_steps, req, earliest_start);
  if (key) {
    // [asked, the start found) is infeasible (all of the rest of the horizon when none was):
    // merged into the key's interval when they touch, else the earlier interval is kept.
    const int to = found ? found->start_step : horizon_;
    auto [it, inserted] = infeasible_.try_emplace(*key, Infeasible{asked, to});
    Infeasible& known = it->second;
    if (!inserted && asked <= known.to && known.from <= to) {
      known = Infeasible{std::min(known.from, asked), std::max(known.to, to)};
    } else if (!inserted && asked < known.from) {
      known = Infeasible{asked, to};
    }
  }
  return found;
}

std::optional<BlockGrid::Candidate> BlockGrid::SearchEarliest(int level, int gpus,
                                                              int duration_steps,
                                                              const GpuRequirement& req,
                                                              int earliest_start) const {
  int best_start = std::numeric_limits<int>::max();
  int best_fit = std::numeric_limits<int>::max();
  int best_gpu = -1;
  // Depth-first stack: at most one pending right sibling per level, plus the node in hand.
  std::array<int, 2 * 32 + 2> stack{};
  int top = 0;
  int ties = 0;                    // candidates seen at the current best start
  std::vector<uint64_t> combined;  // a group's low slack with the cluster's (ReserveAnywhere)
  for (const Tree& tree : trees_) {
    if (level > tree.height || gpus > tree.size) continue;
    if (!req.Matches(cluster_->groups[tree.group])) continue;
    const uint64_t* low_slack = tree.low_slack[level].data();
    if (!anywhere_slack_.empty()) {
      combined.resize(words_);
      for (int w = 0; w < words_; ++w) combined[w] = low_slack[w] | anywhere_low_[level][w];
      low_slack = combined.data();
    }
    // The level at which a block's free ancestors stop, at start s: lower is a tighter fit.
    auto fit = [&](int node, int s) {
      const int end = std::min(horizon_, s + duration_steps);
      int l = LevelOf(node, tree.height);
      for (int n = node; n > 1; n /= 2, ++l) {
        const int parent = n / 2;
        if (!IntervalClear(Mask(tree, l + 1, parent), s, end)) break;
      }
      return l;
    };
    top = 0;
    stack[top++] = 1;
    while (top > 0) {
      const int node = stack[--top];
      const int node_level = LevelOf(node, tree.height);
      const int bound =
          EarliestStart(Mask(tree, level, node), low_slack, duration_steps, earliest_start);
      if (bound < 0 || bound > best_start) continue;
      // Among blocks free at the best start, a tighter fit is worth a bounded search only: nothing
      // fits tighter than exact, and past kMaxTies candidates the gain is not worth the time.
      if (bound == best_start && (best_fit == level || ties >= kMaxTies)) continue;
      const int end = std::min(horizon_, bound + duration_steps);
      // A node wholly free at its bound: its leftmost block is as good as any block inside it.
      const bool wholly_free = IntervalClear(Mask(tree, node_level, node), bound, end);
      if (node_level == level || wholly_free) {
        int block = node;
        while (LevelOf(block, tree.height) > level) block *= 2;
        const int score = fit(node, bound);
        const int first_gpu =
            tree.first_gpu + (block - (1 << (tree.height - level))) * (1 << level);
        ties = bound < best_start ? 1 : ties + 1;
        if (bound < best_start || (bound == best_start && score < best_fit)) {
          best_start = bound;
          best_fit = score;
          best_gpu = first_gpu;
        }
        continue;
      }
      stack[top++] = 2 * node + 1;  // right after left: the stack pops left first
      stack[top++] = 2 * node;
    }
  }
  if (best_gpu < 0) return std::nullopt;
  return Candidate{best_gpu, best_start};
}

bool BlockGrid::IsFree(int first_gpu, int gpus, int start_step, int duration_steps) const {
  const Tree& tree = trees_[cluster_->group_of(first_gpu)];
  const int level = Log2(gpus);
  const int node = (1 << (tree.height - level)) + (first_gpu - tree.first_gpu) / gpus;
  const int end = std::min(horizon_, start_step + duration_steps);
  return IntervalClear(Mask(tree, level, node), start_step, end) &&
         IntervalClear(tree.low_slack[level].data(), start_step, end) &&
         (anywhere_slack_.empty() || IntervalClear(anywhere_low_[level].data(), start_step, end));
}

void BlockGrid::Occupy(int first_gpu, int gpus, int from_step, int to_step) {
  const int from = std::max(0, from_step), to = std::min(horizon_, to_step);
  if (from >= to) return;
  Tree& tree = trees_[cluster_->group_of(first_gpu)];
  const int level = Log2(gpus);
  const int node = (1 << (tree.height - level)) + (first_gpu - tree.first_gpu) / gpus;
  // The block and everything under it: every sub-block is now busy over the interval (each
  // word's bits built once, then OR-ed into every mask).
  for (int w = from / 64; w <= (to - 1) / 64; ++w) {
    const int lo = std::max(from, 64 * w) - 64 * w, hi = std::min(to, 64 * w + 64) - 64 * w;
    const uint64_t bits = (hi - lo == 64 ? ~uint64_t{0} : ((uint64_t{1} << (hi - lo)) - 1)) << lo;
    for (int depth = 0, first = node, count = 1; depth <= level; ++depth, first *= 2, count *= 2) {
      const int node_level = level - depth;
      for (int n = first; n < first + count; ++n) {
        for (int l = 0; l <= node_level; ++l) Mask(tree, l, n)[w] |= bits;
      }
    }
  }
  RefreshAncestors(tree, node);
  for (int t = from; t < to; ++t) {
    // Slack only falls here, so only the levels it falls below gain their bit (slack < 2^L holds
    // from level bit_width(slack) up).
    const int before = LowFrom(tree.slack[t]);
    tree.slack[t] -= gpus;
    const uint64_t bit = uint64_t{1} << (t % 64);
    for (int l = LowFrom(tree.slack[t]); l < std::min(before, tree.height + 1); ++l) {
      tree.low_slack[l][t / 64] |= bit;
    }
    if (!anywhere_slack_.empty()) {
      anywhere_slack_[t] -= gpus;
      RefreshAnywhereBits(t);
    }
  }
}

void BlockGrid::Release(int first_gpu, int gpus, int from_step, int to_step) {
  const int from = std::max(0, from_step), to = std::min(horizon_, to_step);
  if (from >= to) return;
  // Starts found infeasible may be free now.
  infeasible_.clear();
  Tree& tree = trees_[cluster_->group_of(first_gpu)];
  const int level = Log2(gpus);
  const int node = (1 << (tree.height - level)) + (first_gpu - tree.first_gpu) / gpus;
  // The block was its occupant's alone over the interval, so the block and everything under it
  // are free there now, at every level.
  for (int w = from / 64; w <= (to - 1) / 64; ++w) {
    const int lo = std::max(from, 64 * w) - 64 * w, hi = std::min(to, 64 * w + 64) - 64 * w;
    const uint64_t bits = (hi - lo == 64 ? ~uint64_t{0} : ((uint64_t{1} << (hi - lo)) - 1)) << lo;
    for (int depth = 0, first = node, count = 1; depth <= level; ++depth, first *= 2, count *= 2) {
      const int node_level = level - depth;
      for (int n = first; n < first + count; ++n) {
        for (int l = 0; l <= node_level; ++l) {
          ORDO_ASSERT((Mask(tree, l, n)[w] & bits) == bits);
          Mask(tree, l, n)[w] &= ~bits;
        }
      }
    }
  }
  RefreshAncestors(tree, node);
  for (int t = from; t < to; ++t) {
    tree.slack[t] += gpus;
    RefreshSlackBits(tree, t);
    if (!anywhere_slack_.empty()) {
      anywhere_slack_[t] += gpus;
      RefreshAnywhereBits(t);
    }
  }
}

void BlockGrid::Reserve(int group, int step, int gpus) {
  Tree& tree = trees_[group];
  tree.slack[step] -= gpus;
  ORDO_ASSERT(tree.slack[step] >= 0);
  RefreshSlackBits(tree, step);
  if (!anywhere_slack_.empty()) {
    anywhere_slack_[step] -= gpus;
    RefreshAnywhereBits(step);
  }
}

void BlockGrid::ReserveAnywhere(int step, int gpus) {
  if (anywhere_slack_.empty()) {
    int height = 0;
    for (const Tree& tree : trees_) height = std::max(height, tree.height);
    anywhere_slack_.assign(horizon_, 0);
    anywhere_low_.assign(height + 1, std::vector<uint64_t>(words_, 0));
    for (int t = 0; t < horizon_; ++t) {
      for (const Tree& tree : trees_) anywhere_slack_[t] += tree.slack[t];
      RefreshAnywhereBits(t);
    }
  }
  anywhere_slack_[step] -= gpus;
  ORDO_ASSERT(anywhere_slack_[step] >= 0);
  RefreshAnywhereBits(step);
}

void BlockGrid::RefreshAncestors(Tree& tree, int node) {
  // A node's own-level mask is the OR of its children's (busy if any half is); below its level,
  // the AND of theirs (every sub-block busy).
  for (int n = node / 2; n >= 1; n /= 2) {
    const int node_level = LevelOf(n, tree.height);
    for (int l = 0; l <= node_level; ++l) {
      uint64_t* out = Mask(tree, l, n);
      const uint64_t* left = Mask(tree, l == node_level ? l - 1 : l, 2 * n);
      const uint64_t* right = Mask(tree, l == node_level ? l - 1 : l, 2 * n + 1);
      for (int w = 0; w < words_; ++w) {
        out[w] = l == node_level ? (left[w] | right[w]) : (left[w] & right[w]);
      }
    }
  }
}

void BlockGrid::RefreshAnywhereBits(int step) {
  const uint64_t bit = uint64_t{1} << (step % 64);
  for (size_t l = 0; l < anywhere_low_.size(); ++l) {
    uint64_t& word = anywhere_low_[l][step / 64];
    word = anywhere_slack_[step] < (1 << l) ? (word | bit) : (word & ~bit);
  }
}

void BlockGrid::RefreshSlackBits(Tree& tree, int step) {
  const uint64_t bit = uint64_t{1} << (step % 64);
  for (int l = 0; l <= tree.height; ++l) {
    uint64_t& word = tree.low_slack[l][step / 64];
    word = tree.slack[step] < (1 << l) ? (word | bit) : (word & ~bit);
  }
}

}  // namespace ordo::policy
