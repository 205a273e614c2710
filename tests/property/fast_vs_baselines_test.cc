// Fast mode against the baselines on random contended instances (issue 3's acceptance criteria),
// asserted on every instance: fast mode's value (undecayed) is at least fifo's, its unmet
// real-time GPU-steps at most reactive's, its plan legal and the same for the same seed; over all
// instances its mean planning objective is above priority-backfill's and reactive's. The objective
// is not asserted per instance: the guarantee above can cost it (docs/fast-mode.md, "Do no harm"),
// so the instances where a baseline scores a higher objective are counted and printed.
//
// On two of the first 3,000 instances no legal plan keeps both promises (kConflicts, proofs
// below); there fast mode keeps fifo's value, with the least unmet demand it finds, and the test
// asserts exactly that.
//  - random-609: 8 GPUs, all held by a running 8-GPU job at steps 0-2, so fifo reserves no GPU for
//    its services (unmet 95) and runs an 8-GPU, 29-step job (value 1,392) from step 3. Steps 0-2
//    already leave 7 GPU-steps of demand unmet, and a service wants 1 GPU at every step, so
//    keeping reactive's 8 lets that job run at most 1 step inside the horizon; then every other
//    job's best GPU-steps inside the horizon times its priority, the running job's and all the
//    services' demand served sum to at most 1,632.5, below fifo's value of 2,063.
//  - random-1168: 8 GPUs, a service (priority 2, demand up to 6, min 2), a 4-GPU job running until
//    step 14, and long jobs (1 GPU x 72 steps at priority 5.5, 4 x 64 at 10). fifo reserves 3 GPUs
//    and runs both long jobs beside them: value 1,657, unmet 39. Over every start of every job (or
//    none), with service demand served up to the GPUs the jobs leave (churn and alignment
//    ignored, so an upper bound), no schedule with at most reactive's 15 unmet GPU-steps is worth
//    more than 1,118.
//
// ORDO_PROPERTY_INSTANCES raises the count for a soak run (3,000 in docs/fast-mode.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "ordo/core/check_plan.h"
#include "ordo/policy/baselines/baselines.h"
#include "ordo/policy/fast/fast_policy.h"
#include "tests/support/builders.h"
#include "tests/support/random_scenario.h"

namespace ordo {
namespace {

int InstanceCount() {
  const char* env = std::getenv("ORDO_PROPERTY_INSTANCES");
  return env != nullptr ? std::max(1, std::atoi(env)) : 300;
}

// Seeds where fifo's value and reactive's unmet demand cannot both be kept (proofs above).
constexpr int kConflicts[] = {609, 1168};

bool SamePlan(const Plan& a, const Plan& b) {
  if (a.jobs.size() != b.jobs.size() || a.services.size() != b.services.size()) return false;
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    const JobPlacement &x = a.jobs[j], &y = b.jobs[j];
    if (x.start_step != y.start_step) return false;
    if (x.started() &&
        (x.first_gpu != y.first_gpu || x.gpus != y.gpus || x.duration_steps != y.duration_steps)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.services.size(); ++i) {
    if (a.services[i].gpus != b.services[i].gpus) return false;
  }
  return true;
}

TEST(FastVsBaselinesProperty, KeepsFifosValueAndReactivesUnmetDemandOnEveryInstance) {
  const int instances = InstanceCount();
  auto fast = policy::MakeFastPolicy();
  auto again = policy::MakeFastPolicy();
  auto fifo = policy::MakeFifoPolicy();
  auto fifo_backfill = policy::MakeFifoBackfillPolicy();
  auto priority = policy::MakePriorityBackfillPolicy();
  auto reactive = policy::MakeReactivePolicy();
  double sum_fast = 0, sum_fifo = 0, sum_fifo_backfill = 0, sum_priority = 0, sum_reactive = 0;
  double value_fast = 0, value_fifo = 0;
  long long unmet_fast = 0, unmet_reactive = 0;
  int conflicts = 0;
  int objective_below_a_baseline = 0, objective_below_priority = 0, objective_below_reactive = 0;
  PolicyOptions options;
  options.time_limit_s = 60;  // the pass budget, not the clock, bounds fast mode
  for (int seed = 1; seed <= instances; ++seed) {
    testing::RandomScenarioOptions random;
    random.contended = true;
    const Scenario s = testing::RandomScenario(static_cast<uint64_t>(seed), random);
    options.seed = static_cast<uint64_t>(seed);
    const Plan a = *fast->Solve(s, options);
    const Plan f = *fifo->Solve(s, options);
    const Plan b = *fifo_backfill->Solve(s, options);
    const Plan p = *priority->Solve(s, options);
    const Plan r = *reactive->Solve(s, options);
    testing::ExpectLegal(s, a, static_cast<uint64_t>(seed));
    // Every fourth instance: a fresh policy object with the same seed gives the same plan.
    if (seed % 4 == 1) {
      EXPECT_TRUE(SamePlan(a, *again->Solve(s, options))) << "seed " << seed;
    }
    EXPECT_GE(a.metrics.value, f.metrics.value - 1e-6 * std::max(1.0, f.metrics.value))
        << "seed " << seed << ": value below fifo's";
    const bool conflict =
        std::find(std::begin(kConflicts), std::end(kConflicts), seed) != std::end(kConflicts);
    if (!conflict) {
      EXPECT_LE(a.metrics.realtime_unmet_gpu_steps, r.metrics.realtime_unmet_gpu_steps)
          << "seed " << seed << ": more unmet real-time demand than reactive";
    }
    conflicts += conflict ? 1 : 0;
    bool below = false;
    for (const Plan* baseline : {&f, &b, &p, &r}) {
      below |= a.metrics.objective < baseline->metrics.objective - 1e-6;
    }
    objective_below_a_baseline += below ? 1 : 0;
    objective_below_priority += a.metrics.objective < p.metrics.objective - 1e-6 ? 1 : 0;
    objective_below_reactive += a.metrics.objective < r.metrics.objective - 1e-6 ? 1 : 0;
    sum_fast += a.metrics.objective;
    sum_fifo += f.metrics.objective;
    sum_fifo_backfill += b.metrics.objective;
    sum_priority += p.metrics.objective;
    sum_reactive += r.metrics.objective;
    value_fast += a.metrics.value;
    value_fifo += f.metrics.value;
    unmet_fast += a.metrics.realtime_unmet_gpu_steps;
    unmet_reactive += r.metrics.realtime_unmet_gpu_steps;
  }
  EXPECT_GT(sum_fast, sum_priority);
  EXPECT_GT(sum_fast, sum_reactive);
  std::printf(
      "%d contended instances: mean objective ordo %.1f, fifo %.1f, fifo-backfill %.1f, "
      "priority-backfill %.1f, reactive %.1f; value gain over fifo %+.1f%%; unmet real-time "
      "GPU-steps ordo %lld, reactive %lld; objective below some baseline on %d (priority-backfill "
      "%d, reactive %d); %d instances where both promises cannot hold\n",
      instances, sum_fast / instances, sum_fifo / instances, sum_fifo_backfill / instances,
      sum_priority / instances, sum_reactive / instances, 100 * (value_fast / value_fifo - 1),
      unmet_fast, unmet_reactive, objective_below_a_baseline, objective_below_priority,
      objective_below_reactive, conflicts);
}

}  // namespace
}  // namespace ordo
