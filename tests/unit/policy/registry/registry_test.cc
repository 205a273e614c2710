// The registry: names map to new instances, an unknown name is an error that lists the known ones,
// and the in-tree registry knows the spec's policy names.
#include "ordo/policy/registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ordo/core/validate.h"
#include "tests/support/builders.h"

namespace ordo {
namespace {

// A policy that only reports its name; Solve is never called here.
class NamedPolicy : public Policy {
 public:
  explicit NamedPolicy(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  Result<Plan> Solve(const Scenario&, const PolicyOptions&) override {
    return Fail(Error{ErrorCode::kInternal, "", "not a planner"});
  }

 private:
  std::string name_;
};

PolicyRegistry TwoPolicies() {
  PolicyRegistry registry;
  registry.Register("beta", [] { return std::make_unique<NamedPolicy>("beta"); });
  registry.Register("alpha", [] { return std::make_unique<NamedPolicy>("alpha"); });
  return registry;
}

TEST(PolicyRegistryTest, KeepsRegistrationOrderAndCreatesFreshInstances) {
  const PolicyRegistry registry = TwoPolicies();
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"beta", "alpha"}));
  auto a = registry.Create("alpha");
  auto b = registry.Create("alpha");
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ((*a)->name(), "alpha");
  EXPECT_NE(a->get(), b->get());
}

TEST(PolicyRegistryTest, UnknownNameIsNotFoundAndListsTheKnownNames) {
  const PolicyRegistry registry = TwoPolicies();
  auto missing = registry.Create("gamma");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().field, "policy");
  const std::string text = missing.error().ToString();
  EXPECT_NE(text.find("\"gamma\""), std::string::npos) << text;
  EXPECT_NE(text.find("beta, alpha"), std::string::npos) << text;
}

TEST(PolicyRegistryTest, NamesAreCaseSensitive) {
  EXPECT_FALSE(TwoPolicies().Create("Alpha").has_value());
  EXPECT_FALSE(TwoPolicies().Create("").has_value());
}

// Every in-tree name is a spec name, in the spec's order, and makes a policy of that name.
TEST(InTreeRegistryTest, RegistersSpecNamesInSpecOrder) {
  const std::vector<std::string> spec = {"fifo",     "fifo-backfill",    "priority-backfill",
                                         "reactive", "priority-preempt", "reactive-preempt",
                                         "ordo",     "ordo-full"};
  const PolicyRegistry registry = MakeInTreeRegistry();
  size_t next = 0;
  for (const std::string& name : registry.names()) {
    while (next < spec.size() && spec[next] != name) ++next;
    ASSERT_LT(next, spec.size()) << name << " is not a spec name or out of order";
    auto policy = registry.Create(name);
    ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
    EXPECT_EQ((*policy)->name(), name);
  }
}

TEST(InTreeRegistryTest, KnowsTheEightSpecPolicies) {
  EXPECT_EQ(
      MakeInTreeRegistry().names(),
      (std::vector<std::string>{"fifo", "fifo-backfill", "priority-backfill", "reactive",
                                "priority-preempt", "reactive-preempt", "ordo", "ordo-full"}));
}

// The wiring: each name makes the planner of that name, whose plan of a small scenario is legal.
TEST(InTreeRegistryTest, EveryPolicyPlansASmallScenarioLegally) {
  using testing::MakeJob;
  using testing::MakeService;
  const Scenario scenario = testing::ScenarioBuilder("small")
                                .Steps(6)
                                .Group("a", 1, 4)
                                .Job(MakeJob("a").Gpus(2).Duration(3).Priority(2))
                                .Job(MakeJob("b").Gpus(4).Duration(2).Priority(5).Arrival(1))
                                .Service(MakeService("s").Priority(8).Demand({1, 2, 2, 1, 0, 1}))
                                .Build();
  ASSERT_TRUE(ValidateScenario(scenario).has_value());
  const PolicyRegistry registry = MakeInTreeRegistry();
  for (const std::string& name : registry.names()) {
    auto policy = registry.Create(name);
    ASSERT_TRUE(policy.has_value());
    PolicyOptions options;
    options.time_limit_s = 1;
    Result<Plan> plan = (*policy)->Solve(scenario, options);
    ASSERT_TRUE(plan.has_value()) << name << ": " << plan.error().ToString();
    EXPECT_EQ(plan->policy, name);
    testing::ExpectLegal(scenario, *plan);
  }
}

// A running job with progress and restart steps left frees its block at restart_steps_left +
// duration - progress_steps (1 + 6 - 4 = 3), not at start + duration (5): every policy that does
// not preempt it pins it exactly that long, so the job waiting for the whole node starts at 3.
// priority-preempt preempts it (w has the higher priority) and starts w at 0.
TEST(InTreeRegistryTest, EveryPolicyPinsARunningJobForItsTrueRemainingTime) {
  using testing::MakeJob;
  const Scenario scenario =
      testing::ScenarioBuilder("resumed")
          .Steps(8)
          .Group("a", 1, 4)
          .Job(MakeJob("r").Gpus(4).Duration(6).Running(-1, 0).Progress(4, 1).Checkpointed(2, 1))
          .Job(MakeJob("w").Gpus(4).Duration(2).Priority(5))
          .Build();
  ASSERT_TRUE(ValidateScenario(scenario).has_value());
  const PolicyRegistry registry = MakeInTreeRegistry();
  for (const std::string& name : registry.names()) {
    auto policy = registry.Create(name);
    ASSERT_TRUE(policy.has_value());
    PolicyOptions options;
    options.time_limit_s = 1;
    Result<Plan> plan = (*policy)->Solve(scenario, options);
    ASSERT_TRUE(plan.has_value()) << name << ": " << plan.error().ToString();
    testing::ExpectLegal(scenario, *plan);
    ASSERT_EQ(plan->jobs.size(), 2u) << name;
    if (name == "priority-preempt") {
      EXPECT_EQ(plan->jobs[0].preempt_step, 0) << name;
      EXPECT_EQ(plan->jobs[1].start_step, 0) << name;
    } else if (!plan->jobs[0].preempt_step) {
      EXPECT_EQ(plan->jobs[1].start_step, 3) << name;
    }
    if (name != "priority-preempt" && name != "ordo" && name != "ordo-full") {
      EXPECT_FALSE(plan->jobs[0].preempt_step.has_value()) << name;
    }
  }
}

TEST(InTreeRegistryTest, DefaultTimeLimitsAreLongOnlyForFullMode) {
  EXPECT_EQ(DefaultTimeLimitSeconds("ordo-full"), kFullModeDefaultTimeLimitS);
  // Fast mode stops on its pass budget long before this; the limit is only a ceiling.
  EXPECT_LT(DefaultTimeLimitSeconds("ordo"), kFullModeDefaultTimeLimitS);
  EXPECT_GT(DefaultTimeLimitSeconds("ordo"), 0.0);
}

TEST(InTreeRegistryTest, UnknownNameListsEveryInTreeName) {
  const PolicyRegistry registry = MakeInTreeRegistry();
  auto missing = registry.Create("round-robin");
  ASSERT_FALSE(missing.has_value());
  for (const std::string& name : registry.names()) {
    EXPECT_NE(missing.error().message.find(name), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace ordo
