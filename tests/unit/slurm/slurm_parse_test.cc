// Parsing of every Slurm output ordo reads, well-formed and malformed.
#include <gtest/gtest.h>

#include "ordo/adapters/slurm/slurm_state.h"

namespace ordo::slurm {
namespace {

// Trimmed from a real Slurm 22.05.8 `sinfo --json` (typed per-index GPUs, one node in use).
constexpr const char* kSinfo =
    R"json({"meta":{"plugin":{"type":"openapi/v0.0.38"},"Slurm":{"release":"22.05.8"}},
 "errors":[],
 "nodes":[
  {"name":"n2","state":"idle","state_flags":[],"partitions":["gpu"],"active_features":"n2",
   "gres":"gpu:g0:1,gpu:g1:1,gpu:g2:1,gpu:g3:1,gpu:g4:1,gpu:g5:1,gpu:g6:1,gpu:g7:1",
   "gres_used":"gpu:g0:0(IDX:N/A),gpu:g1:0(IDX:N/A)"},
  {"name":"n1","state":"mixed","state_flags":[],"partitions":["gpu"],"active_features":"n1",
   "gres":"gpu:g7:1,gpu:g6:1,gpu:g5:1,gpu:g4:1,gpu:g3:1,gpu:g2:1,gpu:g1:1,gpu:g0:1"},
  {"name":"big","state":"idle","state_flags":["DRAIN"],"partitions":["gpu"],"gres":"gpu:h100:8(S:0-1)"},
  {"name":"plain","state":"allocated","partitions":["gpu","other"],"gres":"gpu:4","active_features":"x,gpu_a100"},
  {"name":"cpu","state":"idle","partitions":["cpu"],"gres":""}
 ]})json";

// Trimmed from a real `squeue --json`: a held ordo job, a running 2-node job, a placeholder.
constexpr const char* kSqueue = R"json({"meta":{},"errors":[],"jobs":[
 {"job_id":6,"name":"my job","job_state":"PENDING","state_reason":"JobHeldUser",
  "comment":"ordo:kind=training, priority=5,duration=90m","partition":"gpu","priority":0,
  "nodes":"","required_nodes":"","node_count":2,"tres_per_node":"gres:gpu:8","tres_per_job":"",
  "gres_detail":[],"submit_time":1795970981,"start_time":0,"time_limit":null,"batch_flag":true},
 {"job_id":7,"name":"wide","job_state":"RUNNING","state_reason":"None","comment":"","partition":"gpu",
  "requeue":true,"batch_flag":true,"priority":4294901756,"nodes":"n[3-4]","required_nodes":"n3,n4","node_count":2,
  "tres_per_node":"gres:gpu:g0:1,gres:gpu:g1:1",
  "gres_detail":["gpu:g0:1(IDX:0),gpu:g1:1(IDX:1)","gpu:g0:1(IDX:0),gpu:g1:1(IDX:1)"],
  "submit_time":1795970984,"start_time":1795970984,"time_limit":90},
 {"job_id":8,"name":"ordo-svc-chat","job_state":"RUNNING","state_reason":"None","comment":"",
  "requeue":true,"batch_flag":false,"priority":4294901754,"nodes":"n1","node_count":1,"tres_per_node":"gres:gpu:g7:1",
  "gres_detail":["gpu:g7:1(IDX:7)"],"submit_time":1,"start_time":2,"time_limit":null},
 {"job_id":9,"name":"untyped","job_state":"RUNNING","nodes":"n2","node_count":1,
  "tres_per_node":"gres:gpu:4","gres_detail":["gpu:4(IDX:0-2,5)"],"priority":1,
  "time_limit":{"set":true,"infinite":false,"number":30}}
]})json";

TEST(SlurmParse, SinfoNodes) {
  auto nodes = ParseSinfoJson(kSinfo);
  ASSERT_TRUE(nodes) << nodes.error().ToString();
  ASSERT_EQ(nodes->size(), 5u);
  const SlurmNode& n2 = (*nodes)[0];
  EXPECT_EQ(n2.name, "n2");
  EXPECT_EQ(n2.gpus, 8);
  ASSERT_TRUE(n2.index_typed());
  EXPECT_EQ(n2.index_types[5], "g5");
  EXPECT_TRUE(n2.usable());
  // Types listed out of order still map each index to its own type.
  EXPECT_EQ((*nodes)[1].index_types[0], "g0");
  EXPECT_EQ((*nodes)[1].index_types[7], "g7");
  const SlurmNode& big = (*nodes)[2];
  EXPECT_EQ(big.gpus, 8);
  EXPECT_FALSE(big.index_typed());
  EXPECT_EQ(big.gpu_type, "h100");
  EXPECT_FALSE(big.usable());               // drained
  EXPECT_EQ((*nodes)[3].gpu_type, "a100");  // from the gpu_a100 feature
  EXPECT_EQ((*nodes)[3].partitions.size(), 2u);
  EXPECT_EQ((*nodes)[4].gpus, 0);
}

TEST(SlurmParse, SqueueJobs) {
  auto jobs = ParseSqueueJson(kSqueue);
  ASSERT_TRUE(jobs) << jobs.error().ToString();
  ASSERT_EQ(jobs->size(), 4u);
  const SlurmJob& held = (*jobs)[0];
  EXPECT_TRUE(held.held());
  EXPECT_EQ(held.gpus_per_node, 8);
  EXPECT_EQ(held.node_count, 2);
  EXPECT_EQ(held.comment, "ordo:kind=training, priority=5,duration=90m");
  EXPECT_FALSE(held.time_limit_minutes.has_value());
  const SlurmJob& wide = (*jobs)[1];
  EXPECT_TRUE(wide.running());
  EXPECT_FALSE(wide.held());
  EXPECT_EQ(wide.priority, 4294901756LL);
  EXPECT_EQ(wide.nodes, (std::vector<std::string>{"n3", "n4"}));
  ASSERT_EQ(wide.gpu_indices.size(), 2u);
  EXPECT_EQ(wide.gpu_indices[1], (std::vector<int>{0, 1}));
  EXPECT_EQ(wide.requested_indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(wide.time_limit_minutes, 90);
  EXPECT_TRUE(wide.requeue);
  EXPECT_TRUE(wide.batch);
  EXPECT_FALSE(held.requeue);  // absent: never requeued by ordo
  EXPECT_TRUE((*jobs)[2].requeue);
  EXPECT_FALSE((*jobs)[2].batch);  // an salloc placeholder
  EXPECT_EQ((*jobs)[2].gpu_indices[0], (std::vector<int>{7}));
  const SlurmJob& untyped = (*jobs)[3];
  EXPECT_TRUE(untyped.requested_indices.empty());
  EXPECT_EQ(untyped.gpu_indices[0], (std::vector<int>{0, 1, 2, 5}));
  EXPECT_EQ(untyped.time_limit_minutes, 30);  // 23.x's wrapped number
}

TEST(SlurmParse, MalformedJsonIsAClearError) {
  struct Case {
    const char* text;
    const char* field;
    const char* message_part;
  };
  const Case cases[] = {
      {"", "", "not JSON"},
      {"squeue: error: Unable to contact slurm controller", "", "not JSON"},
      {R"json({"jobs": [)json", "", "not JSON"},
      {"[]", "", "expected a JSON object"},
      {R"json({"meta":{}})json", "jobs", "missing"},
      {R"json({"jobs": {}})json", "jobs", "expected a list"},
      {R"json({"errors":[{"error":"Invalid user"}],"jobs":[]})json", "errors[0]", "Invalid user"},
      {R"json({"jobs":[7]})json", "jobs[0]", "expected an object"},
      {R"json({"jobs":[{"name":"x","job_state":"RUNNING"}]})json", "jobs[0].job_id", "missing"},
      {R"json({"jobs":[{"job_id":"12","job_state":"RUNNING"}]})json", "jobs[0].job_id",
       "expected a number"},
      {R"json({"jobs":[{"job_id":1}]})json", "jobs[0].job_state", "missing"},
      {R"json({"jobs":[{"job_id":1,"job_state":5}]})json", "jobs[0].job_state",
       "expected a string"},
      {R"json({"jobs":[{"job_id":1,"job_state":"RUNNING","nodes":"n[1-"}]})json", "jobs[0].nodes",
       "unbalanced"},
      {R"json({"jobs":[{"job_id":1,"job_state":"RUNNING","nodes":"n[3-1]"}]})json", "jobs[0].nodes",
       "bad range"},
      {R"json({"jobs":[{"job_id":1,"job_state":"RUNNING","tres_per_node":"gres:gpu:g1:x"}]})json",
       "jobs[0].tres_per_node", "bad count"},
      {R"json({"jobs":[{"job_id":1,"job_state":"RUNNING","gres_detail":"gpu"}]})json",
       "jobs[0].gres_detail", "expected a list"},
      {R"json({"jobs":[{"job_id":1,"job_state":"RUNNING","gres_detail":["gpu:g1:1(IDX:2-1)"]}]})json",
       "jobs[0].gres_detail[0]", "bad index range"},
      {R"json({"jobs":[{"job_id":1,"job_state":"RUNNING","priority":1e300}]})json",
       "jobs[0].priority", "out of range"},
      {R"json({"jobs":[{"job_id":1,"job_state":"RUNNING","requeue":"yes"}]})json",
       "jobs[0].requeue", "expected true or false"},
  };
  for (const Case& c : cases) {
    auto jobs = ParseSqueueJson(c.text);
    ASSERT_FALSE(jobs) << c.text;
    EXPECT_EQ(jobs.error().field, c.field) << c.text;
    EXPECT_NE(jobs.error().message.find(c.message_part), std::string::npos)
        << c.text << " -> " << jobs.error().message;
  }
  const Case node_cases[] = {
      {R"json({"nodes":[{"state":"idle"}]})json", "nodes[0].name", "missing"},
      {R"json({"nodes":[{"name":""}]})json", "nodes[0].name", "empty"},
      {R"json({"nodes":[{"name":"n1","gres":"gpu:g0:1(IDX:0"}]})json", "nodes[0].gres", "unclosed"},
      {R"json({"nodes":[{"name":"n1","partitions":[1]}]})json", "nodes[0].partitions[0]",
       "expected a string"},
      {R"json({"nodes":[{"name":"n1","state":{}}]})json", "nodes[0].state", "expected a string"},
  };
  for (const Case& c : node_cases) {
    auto nodes = ParseSinfoJson(c.text);
    ASSERT_FALSE(nodes) << c.text;
    EXPECT_EQ(nodes.error().field, c.field) << c.text;
    EXPECT_NE(nodes.error().message.find(c.message_part), std::string::npos)
        << c.text << " -> " << nodes.error().message;
  }
}

TEST(SlurmParse, Hostlists) {
  auto a = ExpandHostlist("n[1-3,7],gpu-a[08-10],login");
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, (std::vector<std::string>{"n1", "n2", "n3", "n7", "gpu-a08", "gpu-a09", "gpu-a10",
                                          "login"}));
  EXPECT_TRUE(ExpandHostlist("")->empty());
  EXPECT_TRUE(ExpandHostlist("(null)")->empty());
  for (const char* bad : {"n[1-2", "n]1[", "n[[1]]", "n[a-b]", "n[5-2]", "a,,b", "n[1-9999999]"}) {
    EXPECT_FALSE(ExpandHostlist(bad)) << bad;
  }
}

TEST(SlurmParse, IndexListsAndGres) {
  EXPECT_EQ(*ParseIndexList("0-3,6"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_TRUE(ParseIndexList("N/A")->empty());
  EXPECT_FALSE(ParseIndexList("1-"));
  EXPECT_FALSE(ParseIndexList("-1"));
  auto g = ParseGres("gpu:g0:0(IDX:),gpu:g5:1(IDX:5),gres:gpu:h100:2(S:0-1),license:3");
  ASSERT_TRUE(g) << g.error().ToString();
  ASSERT_EQ(g->size(), 4u);
  EXPECT_EQ((*g)[0].count, 0);
  EXPECT_TRUE((*g)[0].indices->empty());
  EXPECT_EQ((*g)[1].type, "g5");
  EXPECT_EQ(*(*g)[1].indices, std::vector<int>{5});
  EXPECT_EQ((*g)[2].type, "h100");
  EXPECT_EQ((*g)[2].count, 2);
  EXPECT_FALSE((*g)[2].indices.has_value());
  EXPECT_EQ((*g)[3].name, "license");
  auto idx = ParseGres("gpu:4(IDX:0,2-3,7)");
  ASSERT_TRUE(idx);
  EXPECT_EQ(*(*idx)[0].indices, (std::vector<int>{0, 2, 3, 7}));
  for (const char* bad : {"gpu:a:b", "gpu:g1:1(IDX:x)", "gpu:1:2:3", ":4", "gpu:-2"}) {
    EXPECT_FALSE(ParseGres(bad)) << bad;
  }
}

TEST(SlurmParse, Durations) {
  EXPECT_EQ(*ParseDurationMinutes("90"), 90);
  EXPECT_EQ(*ParseDurationMinutes("90m"), 90);
  EXPECT_EQ(*ParseDurationMinutes("6h"), 360);
  EXPECT_EQ(*ParseDurationMinutes("1h30m"), 90);
  EXPECT_EQ(*ParseDurationMinutes("2d"), 2880);
  for (const char* bad : {"", "h", "6x", "0", "0m", "1h30", "-5", "99999999999", "6 h"}) {
    EXPECT_FALSE(ParseDurationMinutes(bad)) << bad;
  }
}

TEST(SlurmParse, OrdoComment) {
  auto none = ParseOrdoComment("just a comment");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  auto m = ParseOrdoComment("ordo:kind=quantization,priority=2.5,shapes=4x6h|8x3h,gpu_type=H100");
  ASSERT_TRUE(m) << m.error().ToString();
  ASSERT_TRUE(m->has_value());
  EXPECT_EQ((*m)->kind, JobKind::kQuantization);
  EXPECT_DOUBLE_EQ((*m)->priority, 2.5);
  ASSERT_EQ((*m)->shapes.size(), 2u);
  EXPECT_EQ((*m)->shapes[1].gpus, 8);
  EXPECT_EQ((*m)->shapes[1].minutes, 180);
  EXPECT_EQ((*m)->gpu_type, "H100");
  auto d = ParseOrdoComment(" ordo: kind=training , priority=5 , duration=45 ");
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ((*d)->duration_minutes, 45);

  struct Case {
    const char* comment;
    const char* field;
  };
  const Case bad[] = {
      {"ordo:priority=5,duration=1h", "comment.kind"},
      {"ordo:kind=training,duration=1h", "comment.priority"},
      {"ordo:kind=training,priority=5", "comment.duration"},
      {"ordo:kind=painting,priority=5,duration=1h", "comment.kind"},
      {"ordo:kind=training,priority=0,duration=1h", "comment.priority"},
      {"ordo:kind=training,priority=x,duration=1h", "comment.priority"},
      {"ordo:kind=training,priority=5,duration=soon", "comment.duration"},
      {"ordo:kind=training,priority=5,shapes=4by6h", "comment.shapes"},
      {"ordo:kind=training,priority=5,shapes=4x", "comment.shapes"},
      {"ordo:kind=training,priority=5,duration=1h,colour=red", "comment.colour"},
      {"ordo:kind=training,priority=5,duration", "comment"},
      {"ordo:kind=training,priority=5,duration=", "comment.duration"},
  };
  for (const Case& c : bad) {
    auto r = ParseOrdoComment(c.comment);
    ASSERT_FALSE(r) << c.comment;
    EXPECT_EQ(r.error().field, c.field) << c.comment << " -> " << r.error().ToString();
  }
}

TEST(SlurmParse, NaturalOrder) {
  EXPECT_TRUE(NaturalLess("n2", "n10"));
  EXPECT_FALSE(NaturalLess("n10", "n2"));
  EXPECT_TRUE(NaturalLess("a01", "a2"));
  EXPECT_TRUE(NaturalLess("gpu", "gpu1"));
  EXPECT_FALSE(NaturalLess("n1", "n1"));
}

}  // namespace
}  // namespace ordo::slurm
