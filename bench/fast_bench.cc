// Fast mode and the baselines at the sizes issue 3 names. Run with `make bench`.
#include <benchmark/benchmark.h>

#include "bench/synthetic.h"
#include "ordo/core/validate.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/fast/fast_policy.h"

namespace ordo::bench {
namespace {

void RunPolicy(benchmark::State& state, std::unique_ptr<Policy> policy) {
  const Scenario s =
      SyntheticScenario(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                        static_cast<int>(state.range(2)));
  if (auto ok = ValidateScenario(s); !ok) {
    state.SkipWithError(ok.error().ToString().c_str());
    return;
  }
  PolicyOptions options;
  options.time_limit_s = 30;  // the pass schedule, not the clock, bounds the work
  double objective = 0, utilization = 0;
  for (auto _ : state) {
    auto plan = policy->Solve(s, options);
    benchmark::DoNotOptimize(plan);
    objective = plan->metrics.objective;
    utilization = plan->metrics.utilization;
  }
  state.counters["objective"] = objective;
  state.counters["utilization"] = utilization;
}

void BM_Fast(benchmark::State& state) { RunPolicy(state, policy::MakeFastPolicy()); }
void BM_Fifo(benchmark::State& state) { RunPolicy(state, policy::MakeFifoPolicy()); }
void BM_PriorityBackfill(benchmark::State& state) {
  RunPolicy(state, policy::MakePriorityBackfillPolicy());
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Args({8, 16, 24})->Args({64, 30, 24})->Args({512, 250, 48})->Args({4096, 2000, 48});
  b->Args({32768, 16000, 48});
  b->ArgNames({"gpus", "jobs", "steps"})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Fast)->Apply(Sizes);
BENCHMARK(BM_Fifo)->Apply(Sizes);
BENCHMARK(BM_PriorityBackfill)->Apply(Sizes);

}  // namespace
}  // namespace ordo::bench
