// Worlds from the traces: the mappings on small hand-written CSV text (hand-computed outcomes), and
// on the real files in ../shared/data when they are there.
#include "ordo/sim/trace_world.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ordo::sim {
namespace {

// Window: day 1 (86400 s) for one day, 60-minute steps.
constexpr const char* kItp =
    "cluster,job_id,submission_time,duration,num_gpu\n"
    "c1,aaaaaaaa-1,86399,600,1\n"     // before the window
    "c1,bbbbbbbb-2,86400,600,1\n"     // step 0, 1 step
    "c1,cccccccc-3,90000,3601,3\n"    // step 1 (3600 s in), 2 steps, 3 -> 4 GPUs
    "c2,dddddddd-4,90000,3600,1\n"    // another cluster
    "c1,eeeeeeee-5,100000,7200,64\n"  // step 3, 2 steps, 64 -> capped at 8
    "c1,ffffffff-6,172800,600,1\n";   // after the window

// Hours 0-47 of model m: 100 rps, except a gap at hour 30 (min 0) between 200 and 400.
std::string ServeGen() {
  std::ostringstream s;
  s << "model,category,hour_index,day_index,hour_of_day,n_windows,mean_rate_rps,"
       "min_10min_rate_rps,max_10min_rate_rps\n";
  for (int h = 0; h < 48; ++h) {
    double rate = 100, lo = 90;
    if (h == 29) rate = 200;
    if (h == 30) rate = 5, lo = 0;  // a collection gap
    if (h == 31) rate = 400;
    s << "m,"
      << "language," << h << "," << h / 24 << "," << h % 24 << ",6," << rate << "," << lo << ","
      << rate << "\n";
    s << "other,language," << h << "," << h / 24 << "," << h % 24 << ",6,1,1,1\n";
  }
  return s.str();
}

TraceWorldOptions SmallOptions() {
  TraceWorldOptions o;
  o.itp_cluster = "c1";
  o.start_day = 1;
  o.days = 1;
  o.step_minutes = 60;
  o.horizon_steps = 6;
  o.nodes = 2;
  o.gpus_per_node = 8;
  o.target_load = 100;  // keep every job
  o.max_job_gpus = 8;
  o.services = {{"m", "svc", 10, 0.25}};
  o.servegen_start_day = 1;
  o.demand_forecast = DemandForecastKind::kNone;
  return o;
}

TEST(TraceWorld, MapsJobsAsDocumented) {
  TraceWorldReport report;
  auto w = MakeTraceWorld(SmallOptions(), kItp, ServeGen(), &report);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  ASSERT_EQ(w->jobs.size(), 3u);
  EXPECT_EQ(report.trace_jobs, 3);
  EXPECT_EQ(report.capped_jobs, 1);
  EXPECT_EQ(w->jobs[0].arrival_step, 0);
  EXPECT_EQ(w->jobs[0].shapes[0].duration_steps, 1);
  EXPECT_EQ(w->jobs[1].arrival_step, 1);
  EXPECT_EQ(w->jobs[1].shapes[0].duration_steps, 2);  // ceil(3601 / 3600)
  EXPECT_EQ(w->jobs[1].shapes[0].gpus, 4);            // 3 rounded up to a power of two
  EXPECT_EQ(w->jobs[2].arrival_step, 3);              // floor(13600 / 3600)
  EXPECT_EQ(w->jobs[2].shapes[0].gpus, 8);            // capped
  for (const WorldJob& j : w->jobs) {
    EXPECT_EQ(j.kind, JobKind::kTraining);
    EXPECT_GE(j.priority, 1);
    EXPECT_LE(j.priority, 10);
    EXPECT_EQ(j.priority, std::floor(j.priority));
  }
}

TEST(TraceWorld, MapsRatesToGpusWithThePeakAtItsShare) {
  auto w = MakeTraceWorld(SmallOptions(), kItp, ServeGen());
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  ASSERT_EQ(w->services.size(), 1u);
  const WorldService& s = w->services[0];
  // Window day 1 = ServeGen hours 24-47: the gap at hour 30 (step 6) is interpolated to 300; the
  // peak, 400 at step 7, with 20% headroom needs 0.25 x 16 = 4 GPUs.
  ASSERT_GE(s.rate.size(), 24u);
  EXPECT_DOUBLE_EQ(s.rate[6], 300);
  EXPECT_DOUBLE_EQ(s.rate[7], 400);
  EXPECT_DOUBLE_EQ(s.per_gpu_rate, 400 * 1.2 / 4);
  EXPECT_EQ(GpusForRate(s.rate[7], s.per_gpu_rate, s.headroom), 4);
  EXPECT_EQ(GpusForRate(s.rate[0], s.per_gpu_rate, s.headroom), 1);  // 100 rps
  EXPECT_EQ(s.min_gpus, 1);
  EXPECT_EQ(s.max_gpus, 8);
  EXPECT_EQ(s.max_change_per_step, 1);  // 25% of 4 per hour
  EXPECT_TRUE(s.forecast_rate.empty());
}

TEST(TraceWorld, SeasonalForecastIsTheSameHourAWeekEarlier) {
  TraceWorldOptions o = SmallOptions();
  o.demand_forecast = DemandForecastKind::kSeasonalNaive;
  auto early = MakeTraceWorld(o, kItp, ServeGen());
  ASSERT_FALSE(early.has_value());  // day 1 has no week before it
  EXPECT_EQ(early.error().field, "servegen_start_day");
}

TEST(TraceWorld, TheForecasterLearnsFromTheHoursBeforeTheWindow) {
  TraceWorldOptions o = SmallOptions();
  o.demand_forecast = DemandForecastKind::kForecaster;
  auto w = MakeTraceWorld(o, kItp, ServeGen());
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  ASSERT_TRUE(w->services[0].forecaster.has_value());
  EXPECT_EQ(w->services[0].forecaster->history_rate, std::vector<double>(24, 100));  // day 0
  EXPECT_TRUE(ResolveWorld(*w).has_value());
}

TEST(TraceWorld, ThinningIsDeterministicAndSeeded) {
  TraceWorldOptions o = SmallOptions();
  o.target_load = 0.0001;  // keeps almost nothing
  auto a = MakeTraceWorld(o, kItp, ServeGen());
  ASSERT_TRUE(a.has_value());
  EXPECT_LT(a->jobs.size(), 3u);
  auto b = MakeTraceWorld(o, kItp, ServeGen());
  EXPECT_EQ(WorldToJson(*a), WorldToJson(*b));
}

TEST(TraceWorld, ErrorsNameTheInput) {
  auto w = MakeTraceWorld(SmallOptions(), "cluster,job_id\nc1,x\n", ServeGen());
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().field, "itp");
  TraceWorldOptions o = SmallOptions();
  o.services = {{"missing-model", "svc", 10, 0.25}};
  w = MakeTraceWorld(o, kItp, ServeGen());
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().field, "servegen");
  o = SmallOptions();
  o.itp_cluster = "c9";
  w = MakeTraceWorld(o, kItp, ServeGen());
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().field, "itp_cluster");
}

// The real traces: the default world (cluster04, days 7-14, 128 GPUs, three ServeGen services).
std::string SharedData() {
  if (const char* dir = std::getenv("ORDO_SHARED_DATA")) return dir;
  const char* src = std::getenv("ORDO_SOURCE_DIR");
  return std::string(src ? src : ".") + "/../shared/data";
}

// Through gzip, so the test needs no zlib link (the CLI reads it with zlib).
std::string ReadGz(const std::string& path) {
  std::string out;
  FILE* p = popen(("gzip -dc '" + path + "'").c_str(), "r");
  if (p == nullptr) return out;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(TraceWorld, TheRealTracesGiveTheDocumentedWorld) {
  const std::string dir = SharedData();
  const std::string itp_path = dir + "/jobs/ms_itp_2021_jobs.csv.gz";
  const std::string sg_path = dir + "/inference/servegen_rate_hourly.csv";
  if (!std::filesystem::exists(itp_path) || !std::filesystem::exists(sg_path)) {
    GTEST_SKIP() << "the real traces are not here (looked for " << itp_path << " and " << sg_path
                 << "; set ORDO_SHARED_DATA to the shared data folder)";
  }
  std::ifstream in(sg_path);
  std::stringstream sg;
  sg << in.rdbuf();
  const std::string itp = ReadGz(itp_path);
  ASSERT_FALSE(itp.empty());
  TraceWorldReport report;
  auto w = MakeTraceWorld(TraceWorldOptions{}, itp, sg.str(), &report);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(report.trace_jobs, 2746);  // cluster04 rows submitted in days [7, 14)
  EXPECT_NEAR(report.keep_fraction * report.trace_jobs, report.kept_jobs,
              4 * std::sqrt(report.trace_jobs * report.keep_fraction));
  EXPECT_EQ(w->cluster.total_gpus(), 128);
  EXPECT_EQ(w->window_steps(), 7 * 48);
  ASSERT_EQ(w->services.size(), 3u);
  for (const WorldService& s : w->services) {
    int peak = 0;
    for (int t = 0; t < w->window_steps(); ++t) {
      peak = std::max(peak, GpusForRate(s.rate[t], s.per_gpu_rate, s.headroom));
    }
    EXPECT_GE(peak, 7) << s.id;  // 6-10% of 128 GPUs
    EXPECT_LE(peak, 13) << s.id;
    ASSERT_TRUE(s.forecaster.has_value()) << s.id;  // the default: the forecaster in the loop
    EXPECT_EQ(s.forecaster->history_rate.size(), 7u * 24);  // ServeGen days 0-6
  }
  for (const WorldJob& j : w->jobs) {
    EXPECT_GE(j.arrival_step, 0);
    EXPECT_LT(j.arrival_step, w->window_steps());
    EXPECT_LE(j.shapes[0].gpus, 64);
  }
}

}  // namespace
}  // namespace ordo::sim
