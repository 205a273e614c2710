// ordo serve with checkpointed jobs: a committed step follows the plan's preemptions and resumes
// (spec, "Preemption: checkpoints and migration"), a job's view says when it was preempted and
// when it resumes, and the state survives a restart.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "service_test_util.h"

namespace ordo::service {
namespace {

using testing::Config;
using testing::JobBody;
using testing::kA;
using testing::kAdminPrincipal;
using testing::kB;
using testing::Manual;
using testing::OpenEngine;
using testing::ScratchDir;

nlohmann::json Checkpointed(const std::string& id, int gpus, int duration, double priority,
                            int every, int restart) {
  nlohmann::json job = JobBody(id, gpus, duration, priority);
  job["checkpoint"] = {{"every_steps", every}, {"restart_steps", restart}};
  return job;
}

// No GPU is held by two jobs at any committed step.
void ExpectNoGpuTwice(const nlohmann::json& committed) {
  std::set<int> held;
  for (const auto& job : committed["jobs"]) {
    for (int g = job["first_gpu"].get<int>();
         g < job["first_gpu"].get<int>() + job["gpus"].get<int>(); ++g) {
      EXPECT_TRUE(held.insert(g).second) << "GPU " << g << " twice: " << committed.dump();
    }
  }
}

// Metric `name`'s value in the exposition text (-1 when absent).
double MetricValue(const std::string& text, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
}

// One 8-GPU node. "low" (tenant a, priority 1, 20 steps, a save every 2 steps, 1 step to restart)
// runs from step 0; "high" (tenant b, priority 10, 2 steps) arrives at step 3 and takes the node:
// low has done 3 steps, saved 2, loses 1; high runs 3-4; low resumes at 5, restarts for one step
// and does its 18 steps left: it ends at 24.
TEST(ServicePreemption, AHighPriorityArrivalTakesACheckpointedJobsNodeAndItResumesLater) {
  ScratchDir dir;
  {
    auto engine = OpenEngine(Config(1, 12), Manual(dir));
    ASSERT_TRUE(engine);
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, Checkpointed("low", 8, 20, 1, 2, 1)));
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 3));
    ASSERT_TRUE(testing::SubmitJob(*engine, kB, JobBody("high", 8, 2, 10)));
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 1));
    auto committed = engine->CommittedJson(kAdminPrincipal);
    ASSERT_TRUE(committed);
    ExpectNoGpuTwice(*committed);
    ASSERT_EQ((*committed)["jobs"].size(), 1U) << committed->dump();
    EXPECT_EQ((*committed)["jobs"][0]["id"], "b/high");

    auto low = engine->GetJob(kA, "low");
    ASSERT_TRUE(low);
    EXPECT_EQ((*low)["state"], "pending") << low->dump();
    EXPECT_EQ((*low)["preemptions"], 1);
    EXPECT_EQ((*low)["preempted_step"], 3);
    EXPECT_EQ((*low)["saved_steps"], 2);
    EXPECT_EQ((*low)["lost_gpu_steps"], 8);
    EXPECT_EQ((*low)["planned_start_step"], 5);  // its resume, once high is done
    // The preempting job's owner learns nothing of low, and low's owner nothing of high.
    EXPECT_EQ(testing::Status(engine->GetJob(kB, "low")), 404);
    EXPECT_EQ(low->dump().find("high"), std::string::npos) << low->dump();
  }
  // The preemption is stored: a restarted service resumes low where it was.
  auto engine = OpenEngine(Config(1, 12), Manual(dir));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 2));  // steps 4 and 5
  auto low = engine->GetJob(kA, "low");
  ASSERT_TRUE(low);
  EXPECT_EQ((*low)["state"], "running") << low->dump();
  EXPECT_EQ((*low)["planned_start_step"], 5);
  EXPECT_EQ((*low)["end_step"], 24);
  EXPECT_FALSE(low->contains("restart_steps_left"));  // step 5 was its restart
  EXPECT_EQ((*low)["lost_gpu_steps"], 16);            // 1 lost work step and 1 restart step, 8 GPUs
  const std::string metrics = engine->MetricsText();
  EXPECT_EQ(MetricValue(metrics, "ordo_preemptions_total"), 1) << metrics;
  EXPECT_EQ(MetricValue(metrics, "ordo_lost_gpu_steps_total"), 16);

  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 18));  // steps 6-23
  low = engine->GetJob(kA, "low");
  ASSERT_TRUE(low);
  EXPECT_EQ((*low)["state"], "done") << low->dump();
  EXPECT_EQ((*low)["finished_step"], 24);
}

// With two restart steps, the second (a step where nothing else about the job changes) is
// stored too: a restarted service reports all of the job's lost GPU-steps.
TEST(ServicePreemption, EveryRestartStepIsStored) {
  ScratchDir dir;
  {
    auto engine = OpenEngine(Config(1, 12), Manual(dir));
    ASSERT_TRUE(engine);
    ASSERT_TRUE(testing::SubmitJob(*engine, kA, Checkpointed("low", 8, 20, 1, 2, 2)));
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 3));
    ASSERT_TRUE(testing::SubmitJob(*engine, kB, JobBody("high", 8, 2, 10)));
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 4));  // steps 3-6: high, then low restarts 5-6
  }
  auto engine = OpenEngine(Config(1, 12), Manual(dir));
  ASSERT_TRUE(engine);
  auto low = engine->GetJob(kA, "low");
  ASSERT_TRUE(low);
  EXPECT_EQ((*low)["state"], "running") << low->dump();
  EXPECT_EQ((*low)["lost_gpu_steps"], 8 + 2 * 8);  // 1 lost work step, 2 restart steps
}

TEST(ServicePreemption, AJobWithoutACheckpointIsNeverPreempted) {
  ScratchDir dir;
  auto engine = OpenEngine(Config(1, 12), Manual(dir));
  ASSERT_TRUE(engine);
  ASSERT_TRUE(testing::SubmitJob(*engine, kA, JobBody("low", 8, 20, 1)));
  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 3));
  ASSERT_TRUE(testing::SubmitJob(*engine, kB, JobBody("high", 8, 2, 10)));
  ASSERT_TRUE(engine->Advance(kAdminPrincipal, 1));
  auto low = engine->GetJob(kA, "low");
  ASSERT_TRUE(low);
  EXPECT_EQ((*low)["state"], "running");
  EXPECT_FALSE(low->contains("preemptions"));
  auto high = engine->GetJob(kB, "high");
  ASSERT_TRUE(high);
  EXPECT_EQ((*high)["state"], "pending");
  EXPECT_TRUE((*high)["planned_start_step"].is_null()) << high->dump();  // after the horizon
}

TEST(ServicePreemption, AMalformedCheckpointIsRejectedNamingTheField) {
  ScratchDir dir;
  auto engine = OpenEngine(Config(1, 12), Manual(dir));
  ASSERT_TRUE(engine);
  auto bad = testing::SubmitJob(*engine, kA, Checkpointed("x", 8, 4, 1, 0, 1));
  ASSERT_FALSE(bad);
  EXPECT_EQ(testing::Status(bad), 400);
  EXPECT_EQ(bad.error().field, "checkpoint.every_steps") << bad.error().ToString();
}

// Random submissions from both tenants, half of them checkpointed, over 60 committed steps on two
// nodes: no committed step holds a GPU twice, and preemptions do happen.
TEST(ServicePreemption, RandomLoadNeverCommitsAGpuTwice) {
  ScratchDir dir;
  auto engine = OpenEngine(Config(2, 12), Manual(dir));
  ASSERT_TRUE(engine);
  uint64_t x = 12345;
  auto next = [&](int n) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((x >> 33) % static_cast<uint64_t>(n));
  };
  int submitted = 0;
  for (int step = 0; step < 60; ++step) {
    for (int k = next(3); k > 0; --k) {
      const int gpus = 1 << next(5);  // 1 to 16
      const double priority = 1 + next(10);
      const std::string id = "j" + std::to_string(submitted++);
      nlohmann::json body =
          next(2) == 0 ? Checkpointed(id, gpus, 2 + next(12), priority, 1 + next(3), next(3))
                       : JobBody(id, gpus, 2 + next(12), priority);
      ASSERT_TRUE(testing::SubmitJob(*engine, next(2) == 0 ? kA : kB, body));
    }
    ASSERT_TRUE(engine->Advance(kAdminPrincipal, 1));
    auto committed = engine->CommittedJson(kAdminPrincipal);
    ASSERT_TRUE(committed);
    ExpectNoGpuTwice(*committed);
  }
  EXPECT_GT(MetricValue(engine->MetricsText(), "ordo_preemptions_total"), 0);
}

}  // namespace
}  // namespace ordo::service
