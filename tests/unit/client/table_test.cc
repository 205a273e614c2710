#include "ordo/client/table.h"

#include <gtest/gtest.h>

#include "ordo/client/service_client.h"

namespace ordo::client {
namespace {

using Json = nlohmann::json;

TEST(RenderTableTest, PadsColumnsToTheWidestCell) {
  EXPECT_EQ(RenderTable({"A", "BB"}, {{"long", "x"}, {"y", "z"}}),
            "A     BB\n"
            "long  x\n"
            "y     z\n");
}

TEST(RenderJobTableTest, EachStateShowsItsOwnStartAndEnd) {
  const Json list = {
      {"jobs",
       {{{"id", "p"},
         {"kind", "training"},
         {"priority", 5.0},
         {"gpus", 8},
         {"duration_steps", 3},
         {"state", "pending"},
         {"planned_start_step", 12},
         {"planned_start_time", "2026-12-01T12:00:00Z"},
         {"planned_gpus", 8},
         {"planned_duration_steps", 3},
         {"reason", "blocked_by_job"}},
        {{"id", "r"},
         {"kind", "quantization"},
         {"priority", 2.5},
         {"gpus", 2},
         {"state", "running"},
         {"gpus_used", 2},
         {"planned_start_step", 10},
         {"planned_start_time", "T10"},
         {"end_step", 14},
         {"end_time", "T14"},
         {"reason", "none"}},
        {{"id", "n"},
         {"kind", "training"},
         {"priority", 1},
         {"shapes", {{{"gpus", 4}, {"duration_steps", 2}}, {{"gpus", 8}, {"duration_steps", 1}}}},
         {"state", "pending"},
         {"planned_start_step", nullptr},
         {"reason", "no_block_of_size"}},
        {{"id", "d"},
         {"kind", "training"},
         {"priority", 1},
         {"gpus", 1},
         {"state", "done"},
         {"gpus_used", 1},
         {"start_step", 1},
         {"start_time", "T1"},
         {"finished_step", 2},
         {"finished_time", "T2"},
         {"reason", "none"}}}}};
  EXPECT_EQ(
      RenderJobTable(list),
      "JOBID  KIND          PRIO  GPUS  STATE    START  START_TIME            END  END_TIME  "
      "REASON\n"
      "p      training      5     8     pending  12     2026-12-01T12:00:00Z  15   -         "
      "blocked_by_job\n"
      "r      quantization  2.5   2     running  10     T10                   14   T14       none\n"
      "n      training      1     4|8   pending  -      -                     -    -         "
      "no_block_of_size\n"
      "d      training      1     1     done     1      T1                    2    T2        "
      "none\n");
}

TEST(RenderJobDetailTest, UsualFieldsFirstThenTheRest) {
  const Json job = {{"zeta", 1}, {"message", "waits for a"}, {"id", "x"}, {"state", "pending"}};
  EXPECT_EQ(RenderJobDetail(job),
            "id:      x\n"
            "state:   pending\n"
            "message: waits for a\n"
            "zeta:    1\n");
}

TEST(RenderPlanTest, AbsoluteStepsStartedJobsFirst) {
  const Json plan = {
      {"x-step", 10},
      {"x-version", 3},
      {"x-mode", "fast"},
      {"x-created", "T"},
      {"policy", "ordo"},
      {"jobs",
       {{{"id", "later"}, {"start_step", 2}, {"first_gpu", 0}, {"gpus", 4}, {"duration_steps", 1}},
        {{"id", "never"}, {"start_step", nullptr}},
        {{"id", "now"}, {"start_step", 0}, {"first_gpu", 4}, {"gpus", 4}, {"duration_steps", 2}}}},
      {"services", {{{"id", "chat"}, {"gpus", {{0, 1}, {0}, {0, 1, 2}}}}}}};
  EXPECT_EQ(RenderPlan(plan),
            "plan version 3 (fast, policy ordo), made T; its first step is step 10\n"
            "\n"
            "JOBID  GPUS  FIRST_GPU  START               END\n"
            "now    4     4          10                  12\n"
            "later  4     0          12                  13\n"
            "never  -     -          not in the horizon  -\n"
            "\n"
            "SERVICE  GPUS_AT_10  MIN  MAX\n"
            "chat     2           1    3\n");
}

TEST(RefusalMessageTest, StatusFieldAndMessage) {
  EXPECT_EQ(RefusalMessage({400, {{"error", {{"field", "gpus"}, {"message", "bad"}}}}}),
            "400 bad request: gpus: bad");
  EXPECT_EQ(RefusalMessage({401, {{"error", {{"field", ""}, {"message", "no token"}}}}}),
            "401 unauthorized: no token");
  EXPECT_EQ(RefusalMessage({502, nullptr}), "502 HTTP 502");
}

TEST(EncodePathSegmentTest, KeepsIdsEncodesTheRest) {
  EXPECT_EQ(EncodePathSegment("job-1.a_b~"), "job-1.a_b~");
  EXPECT_EQ(EncodePathSegment("a/b c?"), "a%2Fb%20c%3F");
}

}  // namespace
}  // namespace ordo::client
