// Deterministic random numbers for the simulator and its generators: the same seed gives the same
// numbers on every platform and standard library (no std distributions, whose output is
// implementation-defined).
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace ordo::sim {

/// splitmix64: small, fast, and good enough for noise and sampling.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), 53 bits.
  double Real() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [lo, hi]; lo <= hi.
  int Uniform(int lo, int hi) {
    if (hi < lo) return lo;  // a caller's empty range: no draw, and no division by zero
    return lo + static_cast<int>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return Real() < p; }
  /// A standard normal (Box-Muller; one draw per call keeps the stream simple to reason about).
  double Normal() {
    const double u1 = 1.0 - Real();  // (0, 1]: log is finite
    const double u2 = Real();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }

 private:
  uint64_t state_;
};

/// FNV-1a of `text`, mixed with `seed`: a stable per-entity seed, so one job's noise does not
/// depend on which other jobs the world lists or in which order.
inline uint64_t HashSeed(uint64_t seed, std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL ^ (seed * 0x9e3779b97f4a7c15ULL);
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return Rng(h).Next();
}

}  // namespace ordo::sim
