// End to end on a real Slurm 22.05 cluster (scripts/slurm/up.sh: 4 nodes n1..n4, 8 typed GPUs
// each), started and stopped by scripts/slurm/test.sh (`make test-slurm`). Drives the real
// `ordo slurm --once` binary and checks what Slurm then reports, independently of ordo's code:
// scenario GPU g is node n(g/8+1), index g%8 on this cluster.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "ordo/adapters/slurm/process_slurm_client.h"
#include "ordo/adapters/slurm/slurm_state.h"
#include "ordo/io/plan_io.h"

namespace ordo::slurm {
namespace {

constexpr int kGpusPerNode = 8;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

class SlurmCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Env("SLURM_CONF").empty() || Env("ORDO_BINARY").empty()) {
      GTEST_FAIL()
          << "needs a test cluster: run `make test-slurm` (scripts/slurm/test.sh sets SLURM_CONF)";
    }
    dir_ = Env("SLURM_TEST_DIR").empty() ? "/tmp" : Env("SLURM_TEST_DIR");
    CancelAll();
  }
  void TearDown() override { CancelAll(); }

  CommandResult Sh(const std::vector<std::string>& argv, double timeout_s = 60) {
    auto r = client_.Run(argv, timeout_s);
    EXPECT_TRUE(r) << FormatCommand(argv) << ": " << r.error().ToString();
    return r ? *r : CommandResult{127, "", ""};
  }

  void CancelAll() {
    Sh({"scancel", "--user=root"});
    for (int i = 0; i < 300; ++i) {
      bool busy = false;
      for (const SlurmJob& j : Jobs()) busy = busy || j.running() || j.pending();
      if (!busy) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "jobs still alive after scancel";
  }

  std::vector<SlurmJob> Jobs() {
    const CommandResult r = Sh({"squeue", "--all", "--json"});
    auto jobs = ParseSqueueJson(r.out);
    EXPECT_TRUE(jobs) << jobs.error().ToString() << "\n" << r.err;
    return jobs ? *jobs : std::vector<SlurmJob>{};
  }
  std::map<int64_t, SlurmJob> JobMap() {
    std::map<int64_t, SlurmJob> m;
    for (SlurmJob& j : Jobs()) m[j.id] = j;
    return m;
  }

  // sbatch --hold with ordo's metadata; returns the job id.
  int64_t Submit(const std::string& name, const std::string& meta, int gpus_per_node, int nodes = 1,
                 const std::string& requeue = "--no-requeue") {
    const CommandResult r =
        Sh({"sbatch", "--parsable", "--hold", requeue, "-o", "/dev/null", "-J", name,
            "--comment=ordo:" + meta, "--gres=gpu:" + std::to_string(gpus_per_node), "-N",
            std::to_string(nodes), "--wrap", "sleep 600"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::atoll(r.out.c_str());
  }

  struct OrdoRun {
    int exit_code = -1;
    std::string out;
    std::string err;
  };
  OrdoRun Ordo(std::vector<std::string> args) {
    std::vector<std::string> argv = {Env("ORDO_BINARY"), "slurm", "--once"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = client_.Run(argv, 300);
    EXPECT_TRUE(r);
    return r ? OrdoRun{r->exit_code, r->out, r->err} : OrdoRun{};
  }

  Plan ReadPlan(const std::string& path) {
    auto plan = io::ReadPlanFile(path);
    EXPECT_TRUE(plan) << plan.error().ToString();
    return plan ? *plan : Plan{};
  }

  // Waits until every job in `ids` is RUNNING; after 20 s, reports their states and returns false.
  bool WaitRunning(const std::set<int64_t>& ids) {
    std::map<int64_t, SlurmJob> jobs;
    for (int i = 0; i < 200; ++i) {
      jobs = JobMap();
      if (std::all_of(ids.begin(), ids.end(),
                      [&](int64_t id) { return jobs.count(id) && jobs[id].state == "RUNNING"; })) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (int64_t id : ids) {
      ADD_FAILURE() << "job " << id << " is " << jobs[id].state << " (" << jobs[id].reason << ")\n"
                    << Sh({"scontrol", "show", "job", std::to_string(id)}).out;
    }
    return false;
  }

  // The nodes and per-node indices a planned block means on this cluster.
  static std::pair<std::vector<std::string>, std::vector<int>> Where(const JobPlacement& p) {
    std::vector<std::string> nodes;
    for (int node = p.first_gpu / kGpusPerNode; node <= (p.first_gpu + p.gpus - 1) / kGpusPerNode;
         ++node) {
      nodes.push_back("n" + std::to_string(node + 1));
    }
    std::vector<int> indices;
    for (int g = p.first_gpu; g < p.first_gpu + std::min(p.gpus, kGpusPerNode); ++g)
      indices.push_back(g % kGpusPerNode);
    return {nodes, indices};
  }

  void ExpectRunsWherePlanned(const SlurmJob& job, const JobPlacement& p) {
    const auto [nodes, indices] = Where(p);
    EXPECT_EQ(job.nodes, nodes) << "job " << job.id;
    ASSERT_EQ(job.gpu_indices.size(), nodes.size()) << "job " << job.id;
    for (const auto& got : job.gpu_indices) EXPECT_EQ(got, indices) << "job " << job.id;
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  ProcessSlurmClient client_;
  std::string dir_;
};

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

// Waiting under ordo's control: held, or released with ordo's mark and a begin time to come.
bool Waits(const SlurmJob& job) {
  return job.pending() && (job.held() || (job.deferred_by_ordo() && job.eligible_time > Now()));
}

TEST_F(SlurmCluster, HeldJobsStartWherePlannedInPlannedOrderAndSurviveAControllerRestart) {
  const int64_t a = Submit("a16", "kind=training,priority=5,duration=2h", 8, 2);
  const int64_t b = Submit("b8", "kind=training,priority=4,duration=1h", 8);
  const int64_t c = Submit("c4", "kind=batch_inference,priority=3,duration=3h", 4);
  const int64_t d = Submit("d4", "kind=quantization,priority=2,shapes=4x1h|2x2h", 4);
  const int64_t e = Submit("e8", "kind=training,priority=1,duration=2h", 8);
  const int64_t f = Submit("f16", "kind=training,priority=1,duration=1h", 8, 2);
  const std::set<int64_t> all = {a, b, c, d, e, f};
  const int64_t t0 = Now();
  const std::string plan1_path = dir_ + "/plan1.json";
  const OrdoRun run1 = Ordo({"--now", std::to_string(t0), "--plan-out", plan1_path});
  ASSERT_EQ(run1.exit_code, 0) << run1.err;
  const Plan plan1 = ReadPlan(plan1_path);
  std::map<int64_t, JobPlacement> placed;
  for (const JobPlacement& p : plan1.jobs) placed[std::atoll(p.id.c_str())] = p;
  std::set<int64_t> now_set;
  int next_step = -1;
  for (int64_t id : all) {
    ASSERT_TRUE(placed.count(id)) << "job " << id << " missing from the plan";
    const JobPlacement& p = placed[id];
    if (p.started() && *p.start_step == 0) now_set.insert(id);
    if (p.started() && *p.start_step > 0 && (next_step < 0 || *p.start_step < next_step))
      next_step = *p.start_step;
  }
  ASSERT_FALSE(now_set.empty()) << run1.err;
  ASSERT_LT(now_set.size(), all.size()) << "40+ GPUs asked of 32: something must wait";
  ASSERT_TRUE(WaitRunning(now_set)) << run1.err;
  auto jobs = JobMap();
  for (int64_t id : all) {
    if (now_set.count(id)) {
      ExpectRunsWherePlanned(jobs[id], placed[id]);
    } else {
      EXPECT_TRUE(Waits(jobs[id])) << "job " << id << " started though the plan has it wait";
    }
  }

  // The controller goes away mid-cycle; ordo retries with backoff, and nothing is lost or doubled.
  const std::string scripts = Env("ORDO_SLURM_SCRIPTS");
  ASSERT_FALSE(scripts.empty());
  ASSERT_EQ(Sh({scripts + "/ctld.sh", "stop"}).exit_code, 0);
  // ordo's log goes to a file so that the controller comes back only once ordo has met it gone.
  const std::string log_path = dir_ + "/during-restart.log";
  std::remove(log_path.c_str());
  auto during = std::async(std::launch::async, [&] {
    return Sh({"sh", "-c", "exec \"$0\" slurm --once --now \"$1\" 2> \"$2\"", Env("ORDO_BINARY"),
               std::to_string(t0), log_path},
              300);
  });
  auto read_log = [&] {
    std::ifstream in(log_path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  for (int i = 0; i < 600 && read_log().find("retry") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(read_log().find("retry"), std::string::npos)
      << "ordo did not retry while slurmctld was down";
  const CommandResult started = Sh({scripts + "/ctld.sh", "start"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const CommandResult finished = during.get();
  const OrdoRun run2{finished.exit_code, finished.out, read_log()};
  EXPECT_EQ(run2.exit_code, 0) << run2.err;
  EXPECT_EQ(run2.err.find("start job"), std::string::npos) << "a job was started twice:\n"
                                                           << run2.err;
  auto after = JobMap();
  for (int64_t id : all) {
    ASSERT_TRUE(after.count(id)) << "job " << id << " lost in the restart";
    if (now_set.count(id)) {
      EXPECT_EQ(after[id].state, "RUNNING") << "job " << id;
      EXPECT_EQ(after[id].start_time, jobs[id].start_time) << "job " << id << " restarted";
      ExpectRunsWherePlanned(after[id], placed[id]);
    } else {
      EXPECT_TRUE(Waits(after[id])) << "job " << id;
    }
  }

  // Time moves to the next planned start; the jobs the plan expected to end by then end.
  ASSERT_GT(next_step, 0);
  for (int64_t id : now_set) {
    if (placed[id].end_step() <= next_step) Sh({"scancel", std::to_string(id)});
  }
  for (int i = 0; i < 100; ++i) {
    auto m = JobMap();
    bool done = true;
    for (int64_t id : now_set) {
      if (placed[id].end_step() <= next_step && m.count(id) && (m[id].running() || m[id].pending()))
        done = false;
    }
    if (done) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string plan2_path = dir_ + "/plan2.json";
  // A minute past the step: the jobs started a second or two after t0 have then run `next_step`
  // whole steps, as the first plan assumed.
  const int64_t t1 = t0 + int64_t{next_step} * 3600 + 60;
  const OrdoRun run3 = Ordo({"--now", std::to_string(t1), "--plan-out", plan2_path});
  ASSERT_EQ(run3.exit_code, 0) << run3.err;
  const Plan plan2 = ReadPlan(plan2_path);
  std::set<int64_t> second;
  std::map<int64_t, JobPlacement> placed2;
  for (const JobPlacement& p : plan2.jobs) {
    const int64_t id = std::atoll(p.id.c_str());
    placed2[id] = p;
    if (!now_set.count(id) && all.count(id) && p.started() && *p.start_step == 0) second.insert(id);
  }
  ASSERT_TRUE(WaitRunning(second)) << run3.err;
  auto jobs2 = JobMap();
  for (int64_t id : second) ExpectRunsWherePlanned(jobs2[id], placed2[id]);
  // The planned order: every job the first plan started at that step starts now, and no job it
  // planned later starts while one planned earlier still waits.
  for (int64_t id : all) {
    if (now_set.count(id) || !placed[id].started()) continue;
    if (*placed[id].start_step == next_step) {
      EXPECT_TRUE(second.count(id)) << "job " << id << " planned at step " << next_step << "\n"
                                    << run3.err;
    }
  }
  for (int64_t late : second) {
    for (int64_t id : all) {
      if (now_set.count(id) || second.count(id) || !placed[id].started() || !placed[late].started())
        continue;
      EXPECT_LE(*placed[late].start_step, *placed[id].start_step)
          << "job " << late << " overtook job " << id;
    }
  }
}

TEST_F(SlurmCluster, HighPriorityJobSubmittedLaterStartsBeforeFifoOrder) {
  // Something outside ordo holds three nodes; one node is left.
  const CommandResult filler = Sh({"sbatch", "--parsable", "-o", "/dev/null", "-J", "filler", "-N",
                                   "3", "-w", "n1,n2,n3", "--gres=gpu:8", "--wrap", "sleep 600"});
  ASSERT_EQ(filler.exit_code, 0) << filler.err;
  ASSERT_TRUE(WaitRunning({std::atoll(filler.out.c_str())}));
  const int64_t low1 = Submit("low1", "kind=training,priority=1,duration=2h", 8);
  const int64_t low2 = Submit("low2", "kind=training,priority=1,duration=2h", 8);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const int64_t high = Submit("high", "kind=training,priority=10,duration=2h", 8);
  const std::string now = std::to_string(Now() + 3600);  // low1 and low2 have waited an hour longer

  // What FIFO would do: the oldest job first.
  const OrdoRun fifo = Ordo({"--dry-run", "--policy", "fifo", "--now", now});
  ASSERT_EQ(fifo.exit_code, 0) << fifo.err;
  // A start pins the job's nodes (NumNodes=...); waiting jobs only get a begin time.
  EXPECT_NE(fifo.out.find("JobId=" + std::to_string(low1) + " NumNodes="), std::string::npos)
      << fifo.out;
  EXPECT_EQ(fifo.out.find("JobId=" + std::to_string(high) + " NumNodes="), std::string::npos)
      << fifo.out;
  EXPECT_TRUE(JobMap()[low1].held());  // a dry run changes nothing

  const OrdoRun run = Ordo({"--now", now});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(WaitRunning({high})) << run.err;
  auto jobs = JobMap();
  EXPECT_EQ(jobs[high].nodes, std::vector<std::string>{"n4"});
  EXPECT_TRUE(Waits(jobs[low1]));
  EXPECT_TRUE(Waits(jobs[low2]));
}

TEST_F(SlurmCluster, HighPriorityJobTakesTheNodeOfACheckpointedJobWhichComesBackLater) {
  // Something outside ordo holds two nodes; n3 and n4 are left.
  const CommandResult filler = Sh({"sbatch", "--parsable", "-o", "/dev/null", "-J", "filler", "-N",
                                   "2", "-w", "n1,n2", "--gres=gpu:8", "--wrap", "sleep 600"});
  ASSERT_EQ(filler.exit_code, 0) << filler.err;
  ASSERT_TRUE(WaitRunning({std::atoll(filler.out.c_str())}));
  // Saves every hour, 10 minutes to restart from a save: preemptible (with --requeue).
  const int64_t low = Submit(
      "low", "kind=training,priority=1,duration=10h,checkpoint=1h,restart=10m", 8, 1, "--requeue");
  // The same, but not requeue-able: ordo must never preempt it.
  const int64_t keep = Submit("keep", "kind=training,priority=1,duration=10h,checkpoint=1h", 8);
  const int64_t t0 = Now();
  const OrdoRun run1 = Ordo({"--now", std::to_string(t0)});
  ASSERT_EQ(run1.exit_code, 0) << run1.err;
  ASSERT_TRUE(WaitRunning({low, keep})) << run1.err;
  const SlurmJob keep_before = JobMap()[keep];
  const std::vector<std::string> low_nodes = JobMap()[low].nodes;
  const int64_t low_started = JobMap()[low].start_time;

  // 3 h 20 min later by ordo's clock a priority-10 job arrives for the whole node.
  const int64_t high = Submit("high", "kind=training,priority=10,duration=2h", 8);
  const int64_t t1 = low_started + 3 * 3600 + 20 * 60;
  const std::string plan1_path = dir_ + "/preempt-plan1.json";
  const OrdoRun run2 = Ordo({"--now", std::to_string(t1), "--plan-out", plan1_path});
  ASSERT_EQ(run2.exit_code, 0) << run2.err;
  const Plan plan1 = ReadPlan(plan1_path);
  EXPECT_EQ(plan1.metrics.preemptions, 1) << run2.err;
  EXPECT_NE(run2.err.find("preempt job " + std::to_string(low)), std::string::npos) << run2.err;
  ASSERT_TRUE(WaitRunning({high})) << run2.err;
  auto jobs = JobMap();
  EXPECT_EQ(jobs[high].nodes, low_nodes);
  EXPECT_EQ(jobs[keep].state, "RUNNING");
  EXPECT_EQ(jobs[keep].start_time, keep_before.start_time) << "a job without --requeue was moved";
  EXPECT_TRUE(jobs[low].pending()) << jobs[low].state;
  EXPECT_TRUE(jobs[low].deferred_by_ordo());
  EXPECT_EQ(jobs[low].admin_comment, "ordo:deferred,saved=180m");
  EXPECT_TRUE(Waits(jobs[low])) << "the requeued job waits for ordo, not for Slurm's 121 s";

  // The high job ends; two hours later ordo resumes the low one on the free node.
  Sh({"scancel", std::to_string(high)});
  for (int i = 0; i < 100 && (JobMap()[high].running() || JobMap()[high].pending()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string plan2_path = dir_ + "/preempt-plan2.json";
  const OrdoRun run3 =
      Ordo({"--now", std::to_string(t1 + 2 * 3600 + 60), "--plan-out", plan2_path});
  ASSERT_EQ(run3.exit_code, 0) << run3.err;
  ASSERT_TRUE(WaitRunning({low})) << run3.err;
  jobs = JobMap();
  EXPECT_EQ(jobs[low].nodes, low_nodes);
  EXPECT_EQ(jobs[low].admin_comment, "ordo:saved=180m") << "its saved work is remembered";
  // Planned for its restart step and the 7 of 10 hours it had not saved.
  bool planned = false;
  for (const JobPlacement& p : ReadPlan(plan2_path).jobs) {
    if (p.id != std::to_string(low)) continue;
    planned = true;
    EXPECT_EQ(p.start_step, 0);
    EXPECT_EQ(p.duration_steps, 1 + 10 - 3);
  }
  EXPECT_TRUE(planned);
}

TEST_F(SlurmCluster, WaitingJobsGoToSlurmWhenOrdoFallsSilentAndBackToOrdoWhenItReturns) {
  constexpr int64_t kSilenceS = 20;
  // Something outside ordo holds every GPU, so every ordo job waits in ordo's plan.
  const CommandResult filler =
      Sh({"sbatch", "--parsable", "-o", "/dev/null", "-J", "filler", "-N", "4", "-w", "n1,n2,n3,n4",
          "--gres=gpu:8", "--wrap", "sleep 600"});
  ASSERT_EQ(filler.exit_code, 0) << filler.err;
  const int64_t filler_id = std::atoll(filler.out.c_str());
  ASSERT_TRUE(WaitRunning({filler_id}));
  // 24 GPUs that fit once the filler is gone (Slurm's own order is by submission here), and one
  // 16-GPU job that then does not.
  const std::set<int64_t> fit = {Submit("w8", "kind=training,priority=3,duration=1h", 8),
                                 Submit("w4a", "kind=training,priority=2,duration=1h", 4),
                                 Submit("w4b", "kind=batch_inference,priority=1,duration=1h", 4),
                                 Submit("w8b", "kind=training,priority=1,duration=1h", 8)};
  const int64_t last = Submit("w16", "kind=training,priority=1,duration=1h", 8, 2);
  std::set<int64_t> all = fit;
  all.insert(last);

  // ordo runs as a service, a cycle every 5 s, until it is stopped.
  const std::string log_path = dir_ + "/silence.log";
  std::remove(log_path.c_str());
  const CommandResult spawned =
      Sh({"sh", "-c",
          "\"$0\" slurm --every 5s --silence \"$1\" </dev/null >/dev/null 2> \"$2\" & echo $!",
          Env("ORDO_BINARY"), std::to_string(kSilenceS) + "s", log_path});
  ASSERT_EQ(spawned.exit_code, 0) << spawned.err;
  const std::string pid = std::to_string(std::atoll(spawned.out.c_str()));
  // Alive and not a zombie (whoever reaps orphans here may be slow to).
  auto alive = [&] {
    const CommandResult r = Sh({"ps", "-o", "stat=", "-p", pid});
    return r.exit_code == 0 && !r.out.empty() && r.out[0] != 'Z';
  };
  // A failing assertion below returns early: ordo must not outlive the test.
  struct Stopper {
    std::function<void()> stop;
    ~Stopper() { stop(); }
  } stopper{[&] {
    if (alive()) Sh({"kill", "-TERM", pid});
  }};
  auto read_log = [&] {
    std::ifstream in(log_path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  auto cycles = [&] {
    const std::string text = read_log();
    size_t n = 0;
    for (size_t at = text.find("cycle done"); at != std::string::npos;
         at = text.find("cycle done", at + 1))
      ++n;
    return n;
  };
  for (int i = 0; i < 600 && cycles() < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_GE(cycles(), 1u) << read_log();
  auto first = JobMap();
  for (int64_t id : all) {
    EXPECT_TRUE(first[id].deferred_by_ordo()) << "job " << id << "\n" << read_log();
    EXPECT_TRUE(Waits(first[id])) << "job " << id;
  }
  // Every cycle pushes the begin times out again.
  for (int i = 0; i < 600 && cycles() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_GE(cycles(), 3u) << read_log();
  auto renewed = JobMap();
  for (int64_t id : all) {
    EXPECT_GT(renewed[id].eligible_time, first[id].eligible_time) << "job " << id;
  }

  // ordo stops (SIGTERM ends it between cycles), then the filler ends.
  ASSERT_EQ(Sh({"kill", "-TERM", pid}).exit_code, 0);
  for (int i = 0; i < 600 && alive(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_FALSE(alive()) << "ordo did not stop";
  const int64_t stopped = Now();
  const std::string stopped_log = read_log();
  Sh({"scancel", std::to_string(filler_id)});

  // Slurm's own scheduler starts them once the begin time from ordo's last cycle has passed:
  // within the silence plus a minute of ordo stopping, and not before that begin time.
  std::map<int64_t, SlurmJob> jobs;
  while (Now() <= stopped + kSilenceS + 60) {
    jobs = JobMap();
    if (std::all_of(fit.begin(), fit.end(),
                    [&](int64_t id) { return jobs[id].state == "RUNNING"; }))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  for (int64_t id : fit) {
    ASSERT_EQ(jobs[id].state, "RUNNING")
        << "job " << id << " (" << jobs[id].reason << ") not started by Slurm " << Now() - stopped
        << " s after ordo stopped\n"
        << Sh({"scontrol", "show", "job", std::to_string(id)}).out << stopped_log;
    EXPECT_LE(jobs[id].eligible_time, stopped + kSilenceS + 1) << "job " << id;
    EXPECT_GE(jobs[id].start_time, jobs[id].eligible_time) << "job " << id << " started early";
    EXPECT_LE(jobs[id].start_time, stopped + kSilenceS + 60) << "job " << id;
    std::cout << "job " << id << ": begin time " << jobs[id].eligible_time - stopped
              << " s after ordo stopped, started " << jobs[id].start_time - stopped << " s after\n";
  }
  ASSERT_TRUE(jobs[last].pending()) << "16 GPUs cannot fit beside 24";
  EXPECT_LE(jobs[last].eligible_time, Now()) << "its begin time passed too";

  // ordo comes back: what Slurm started stays where it runs, nothing starts twice, and the job
  // still waiting is ordo's again (its begin time pushed out, its mark kept).
  const std::string plan_path = dir_ + "/plan-back.json";
  const int64_t back_at = Now();
  const OrdoRun back =
      Ordo({"--silence", std::to_string(kSilenceS) + "s", "--plan-out", plan_path});
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.err.find("start job"), std::string::npos) << back.err;
  auto after = JobMap();
  for (int64_t id : fit) {
    EXPECT_EQ(after[id].state, "RUNNING") << "job " << id;
    EXPECT_EQ(after[id].start_time, jobs[id].start_time) << "job " << id << " restarted";
    EXPECT_EQ(after[id].nodes, jobs[id].nodes) << "job " << id << " moved";
    EXPECT_EQ(after[id].gpu_indices, jobs[id].gpu_indices) << "job " << id << " moved";
  }
  EXPECT_TRUE(after[last].deferred_by_ordo()) << back.err;
  EXPECT_GE(after[last].eligible_time, back_at + kSilenceS - 1) << back.err;
  for (const auto& [id, job] : after) {
    // Jobs of earlier tests linger as CANCELLED for MinJobAge; nothing else may be alive.
    if (!all.count(id) && id != filler_id) {
      EXPECT_FALSE(job.running() || job.pending()) << "job " << id << " appeared";
    }
  }
  const Plan plan = ReadPlan(plan_path);
  int planned_waiting = 0;
  for (const JobPlacement& p : plan.jobs) {
    const int64_t id = std::atoll(p.id.c_str());
    if (id == last) ++planned_waiting;
    if (fit.count(id)) {
      EXPECT_TRUE(p.started() && *p.start_step <= 0) << "job " << id << " re-planned";
    }
  }
  EXPECT_EQ(planned_waiting, 1) << "the waiting job is planned again";
}

TEST_F(SlurmCluster, ServiceCapacityFollowsItsCurve) {
  const int64_t t0 = Now();
  const std::vector<int> demand = {2, 6, 3, 9, 1};
  std::string curve;
  for (int d : demand) curve += (curve.empty() ? "" : ", ") + std::to_string(d);
  const std::string config = WriteFile(
      "service.json",
      R"({"step_minutes": 60, "horizon_steps": 5, "services": [{"id": "chat", "priority": 10,
        "demand": [)" +
          curve + R"(], "demand_start": )" + std::to_string(t0) + "}]}");
  const int64_t batch = Submit("batch16", "kind=training,priority=1,duration=10h", 8, 2);
  std::set<int64_t> previous;
  for (size_t k = 0; k < demand.size(); ++k) {
    const OrdoRun run =
        Ordo({"--config", config, "--now", std::to_string(t0 + static_cast<int64_t>(k) * 3600)});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::set<int64_t> held;
    std::set<std::pair<std::string, int>> gpus;
    for (const SlurmJob& j : Jobs()) {
      if (j.name != "ordo-svc-chat" || !j.running()) continue;
      held.insert(j.id);
      ASSERT_EQ(j.gpu_indices.size(), 1u);
      ASSERT_EQ(j.gpu_indices[0].size(), 1u) << "one GPU per placeholder";
      gpus.emplace(j.nodes[0], j.gpu_indices[0][0]);
    }
    EXPECT_EQ(held.size(), static_cast<size_t>(demand[k])) << "step " << k << "\n" << run.err;
    EXPECT_EQ(gpus.size(), held.size());
    // Growing keeps every placeholder; shrinking cancels some and makes none.
    size_t kept = 0;
    for (int64_t id : previous) kept += held.count(id);
    EXPECT_EQ(kept, std::min(previous.size(), held.size())) << "step " << k;
    previous = held;
    if (k == 0) {
      EXPECT_TRUE(WaitRunning({batch})) << run.err;
    }
  }
  EXPECT_EQ(JobMap()[batch].state, "RUNNING");
}

}  // namespace
}  // namespace ordo::slurm
