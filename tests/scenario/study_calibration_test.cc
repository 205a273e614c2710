// The scenarios that re-create the study are calibrated on FIFO alone (scenarios/calibrate.py,
// scenarios/README.md): FIFO's utilization on each is within 2 points of the study's FIFO figure,
// and FIFO is not crippled, so the gains over it measure ordo, not a blocked baseline. Crippled is
// what calibrate.py's `fifo_crippled` rejects: fewer than a quarter of the jobs started, or a step
// at which jobs wait while no batch job runs (a queue stuck behind a job that can never start, or
// a FIFO that has stopped): FIFO's idle GPUs must come from its order and its static reservation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ordo/core/metrics.h"
#include "ordo/io/scenario_io.h"
#include "ordo/policy/registry.h"
#include "ordo/report/study.h"
#include "tests/support/builders.h"

namespace ordo::testing {
namespace {

std::filesystem::path SourceDir() {
  if (const char* dir = std::getenv("ORDO_SOURCE_DIR"); dir != nullptr && *dir != '\0') return dir;
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
}

// The scenario files by their `name`.
std::map<std::string, Scenario> ScenariosByName() {
  std::map<std::string, Scenario> by_name;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() / "scenarios", ec)) {
    if (entry.path().extension() != ".json") continue;
    Result<Scenario> s = io::ReadScenarioFile(entry.path().string());
    if (s.has_value()) by_name.emplace(s->name, std::move(*s));
  }
  return by_name;
}

Plan FifoPlan(const Scenario& scenario) {
  auto fifo = MakeInTreeRegistry().Create("fifo");
  EXPECT_TRUE(fifo.has_value());
  if (!fifo.has_value()) return {};
  Result<Plan> plan = (*fifo)->Solve(scenario, PolicyOptions{});
  EXPECT_TRUE(plan.has_value()) << scenario.name << ": " << plan.error().ToString();
  return plan.has_value() ? *plan : Plan{};
}

// Why FIFO's plan is crippled, or "" when it is not (calibrate.py's `fifo_crippled`).
std::string WhyCrippled(const Scenario& scenario, const Plan& plan) {
  std::map<std::string, const JobPlacement*> placed;
  for (const JobPlacement& p : plan.jobs) placed[p.id] = &p;
  int started = 0;
  for (const Job& job : scenario.jobs) {
    const JobPlacement* p = placed[job.id];
    if (p != nullptr && p->started() && *p->start_step >= 0 &&
        *p->start_step < scenario.horizon_steps) {
      ++started;
    }
  }
  if (4 * started < static_cast<int>(scenario.jobs.size())) {
    return "starts " + std::to_string(started) + " of " + std::to_string(scenario.jobs.size()) +
           " jobs";
  }
  for (int t = 0; t < scenario.horizon_steps; ++t) {
    bool waiting = false, running = false;
    for (const Job& job : scenario.jobs) {
      const JobPlacement* p = placed[job.id];
      const bool has_start = p != nullptr && p->started();
      if (std::max(0, job.arrival_step) <= t && (!has_start || *p->start_step > t)) waiting = true;
      if (has_start && *p->start_step <= t && t < p->end_step()) running = true;
    }
    if (waiting && !running) {
      return "runs no batch job at step " + std::to_string(t) + " while jobs wait";
    }
  }
  return "";
}

TEST(StudyCalibrationTest, FifoMatchesTheStudysFifoUtilizationWithoutBeingCrippled) {
  const std::map<std::string, Scenario> scenarios = ScenariosByName();
  ASSERT_EQ(report::StudyTable().size(), 7u);
  for (const report::StudyFigures& row : report::StudyTable()) {
    const auto it = scenarios.find(row.scenario);
    ASSERT_NE(it, scenarios.end()) << "no scenario file named " << row.scenario;
    const Scenario& scenario = it->second;
    const Plan plan = FifoPlan(scenario);
    const Metrics m = ComputeMetrics(scenario, plan);
    EXPECT_NEAR(m.utilization, row.fifo_utilization, 0.02) << row.scenario;
    EXPECT_EQ(WhyCrippled(scenario, plan), "") << row.scenario;
  }
}

// The guard can fail both ways. One 8-GPU node whose service reserves its peak (GPUs 6-7) all
// day: a 4-GPU job queued behind a 2-GPU one waits, and the node keeps working (not crippled);
// an 8-GPU job at the head can never start beside the reservation, so once the small job ends
// FIFO runs nothing while the rest wait (crippled); and a FIFO that starts 1 of 5 jobs is
// crippled by the count.
TEST(StudyCalibrationTest, TheCrippledGuardSeesAStuckQueueAndTooFewStarts) {
  auto node = [](int head_gpus, int jobs) {
    ScenarioBuilder b("guard");
    b.Steps(24).Group("h100", 1, 8).Service(MakeService("chat").Demand(std::vector<int>(24, 2)));
    b.Job(MakeJob("small").Gpus(2).Duration(6).Arrival(0));
    b.Job(MakeJob("head").Gpus(head_gpus).Duration(6).Arrival(1));
    for (int j = 2; j < jobs; ++j) {
      b.Job(MakeJob("after-" + std::to_string(j)).Gpus(2).Duration(2).Arrival(2));
    }
    return b.Build();
  };
  const Scenario works = node(4, 4);
  EXPECT_EQ(WhyCrippled(works, FifoPlan(works)), "");
  const Scenario stuck = node(8, 4);
  EXPECT_EQ(WhyCrippled(stuck, FifoPlan(stuck)), "runs no batch job at step 6 while jobs wait");
  const Scenario few = node(8, 5);
  EXPECT_EQ(WhyCrippled(few, FifoPlan(few)), "starts 1 of 5 jobs");
}

}  // namespace
}  // namespace ordo::testing
