// Fast mode and the baselines on contended synthetic instances (bench/synthetic.h) from 8 to
// 32,768 GPUs, with fast mode's latency targets beside its times. Run with `make bench`.
#include <benchmark/benchmark.h>

#include "bench/synthetic.h"
#include "ordo/core/validate.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/fast/fast_policy.h"

namespace ordo::bench {
namespace {

// Fast mode's latency targets (CPU time per plan, one core) by cluster size: what a planner that
// re-plans every 30-60 minutes, and on every request, may spend. 0: no target at that size.
double TargetMs(int64_t gpus) {
  switch (gpus) {
    case 8:
      return 1;
    case 64:
      return 5;
    case 4096:
      return 100;
    case 32768:
      return 1000;
    default:
      return 0;
  }
}

void RunPolicy(benchmark::State& state, std::unique_ptr<Policy> policy, bool targets = false) {
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
  state.counters["offered"] = OfferedLoad(s);
  if (targets) state.counters["target_ms"] = TargetMs(state.range(0));
}

void BM_Fast(benchmark::State& state) { RunPolicy(state, policy::MakeFastPolicy(), true); }
void BM_Fifo(benchmark::State& state) { RunPolicy(state, policy::MakeFifoPolicy()); }
void BM_PriorityBackfill(benchmark::State& state) {
  RunPolicy(state, policy::MakePriorityBackfillPolicy());
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Args({8, 16, 24})->Args({64, 30, 24})->Args({512, 1250, 48})->Args({4096, 10000, 48});
  b->Args({32768, 80000, 48});
  b->ArgNames({"gpus", "jobs", "steps"})->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Fast)->Apply(Sizes);
BENCHMARK(BM_Fifo)->Apply(Sizes);
BENCHMARK(BM_PriorityBackfill)->Apply(Sizes);

}  // namespace
}  // namespace ordo::bench
