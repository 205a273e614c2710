// Writes a synthetic scenario of a given size (bench/synthetic.cc) as a spec scenario file, for
// timing the CLI end to end:  make_synthetic GPUS JOBS STEPS [SEED] > scenario.json
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/synthetic.h"
#include "ordo/io/scenario_io.h"

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: make_synthetic GPUS JOBS STEPS [SEED]\n");
    return 2;
  }
  const int gpus = std::atoi(argv[1]), jobs = std::atoi(argv[2]), steps = std::atoi(argv[3]);
  if (gpus < 1 || jobs < 0 || steps < 1) {
    std::fprintf(stderr, "make_synthetic: GPUS and STEPS must be >= 1, JOBS >= 0\n");
    return 2;
  }
  const uint64_t seed = argc == 5 ? std::strtoull(argv[4], nullptr, 10) : 1;
  const std::string text =
      ordo::io::WriteScenario(ordo::bench::SyntheticScenario(gpus, jobs, steps, seed));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
