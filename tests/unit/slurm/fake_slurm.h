// A small simulated Slurm behind the SlurmClient interface, for unit tests: nodes with typed
// per-index GPUs, jobs that are held, released, started, cancelled; placeholder allocations
// (salloc); answers `sinfo --json` and `squeue --all --json` in Slurm 22.05's shape. It records
// every command and can fail the next N commands with a transient error (controller restart).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ordo/adapters/slurm/slurm_client.h"

namespace ordo::slurm::testing {

class FakeSlurm final : public SlurmClient {
 public:
  struct Job {
    int64_t id = 0;
    std::string name = "job";
    std::string comment;
    std::string state = "PENDING";
    bool held = true;
    std::string hold_reason = "JobHeldUser";  // or "JobHeldAdmin"
    int node_count = 1;
    std::string tres_per_node;  // "gres:gpu:4" or typed
    std::vector<std::string> required_nodes;
    std::vector<std::string> nodes;  // while running
    std::vector<int> indices;        // per node, while running
    int64_t submit_time = 1000;
    int64_t start_time = 0;
    int64_t eligible_time = 1000;  // its begin time (StartTime=)
    std::string admin_comment;
    bool batch = true;
    bool requeue = false;      // submitted --requeue
    int restarts = 0;          // times requeued
    int64_t requeued_at = -1;  // the fake clock at its last requeue
    std::string account = "research";
  };

  FakeSlurm(int nodes, int gpus_per_node, bool typed = true) : gpus_(gpus_per_node), typed_(typed) {
    for (int i = 1; i <= nodes; ++i) node_names_.push_back("n" + std::to_string(i));
  }

  /// sbatch --hold with a comment: returns the job id.
  int64_t SubmitHeld(const std::string& comment, int gpus_per_node, int node_count = 1,
                     int64_t submit_time = 1000) {
    Job j;
    j.id = next_id_++;
    j.comment = comment;
    j.node_count = node_count;
    j.tres_per_node = gpus_per_node > 0 ? "gres:gpu:" + std::to_string(gpus_per_node) : "";
    j.submit_time = submit_time;
    j.eligible_time = submit_time;
    jobs_[j.id] = j;
    return j.id;
  }
  /// A job already running on `node` at these indices.
  int64_t AddRunning(const std::string& comment, const std::vector<std::string>& nodes,
                     const std::vector<int>& indices, int64_t start_time,
                     const std::string& name = "job") {
    Job j;
    j.id = next_id_++;
    j.name = name;
    j.comment = comment;
    j.state = "RUNNING";
    j.held = false;
    j.nodes = nodes;
    j.node_count = static_cast<int>(nodes.size());
    j.indices = indices;
    j.start_time = start_time;
    j.tres_per_node = "gres:gpu:" + std::to_string(indices.size());
    jobs_[j.id] = j;
    return j.id;
  }

  std::map<int64_t, Job>& jobs() { return jobs_; }
  const std::vector<std::string>& log() const { return log_; }
  void ClearLog() { log_.clear(); }
  /// The next `n` commands fail as if slurmctld were restarting.
  void FailNext(int n) { fail_next_ = n; }
  /// When false, a released job stays PENDING (waiting for the scheduler's tick).
  bool start_on_release = true;
  int64_t now = 100000;

  Result<CommandResult> Run(const std::vector<std::string>& argv, double /*timeout_s*/) override {
    std::string line;
    for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
    log_.push_back(line);
    if (fail_next_ > 0) {
      --fail_next_;
      return CommandResult{
          1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"};
    }
    if (argv[0] == "sinfo") return CommandResult{0, Sinfo(), ""};
    if (argv[0] == "squeue") return CommandResult{0, Squeue(), ""};
    if (argv[0] == "scancel") {
      jobs_.erase(std::stoll(argv[1]));
      return CommandResult{};
    }
    if (argv[0] == "salloc") return Salloc(argv);
    if (argv[0] == "scontrol" && argv.size() >= 3) {
      if (argv[1] == "release" || argv[1] == "hold") {
        auto it = jobs_.find(std::stoll(argv[2]));
        if (it == jobs_.end()) return CommandResult{1, "", "Invalid job id specified\n"};
        if (argv[1] == "hold") {
          it->second.held = true;
          return CommandResult{};
        }
        it->second.held = false;
        if (start_on_release && it->second.eligible_time <= now) TryStart(it->second);
        return CommandResult{};
      }
      if (argv[1] == "update") return Update(argv);
      if (argv[1] == "requeue") return Requeue(std::stoll(argv[2]));
    }
    return CommandResult{1, "", "fake: unknown command " + line + "\n"};
  }

  /// The scheduler's tick: starts pending jobs that are neither held nor waiting for their begin
  /// time, pinned ones where they are pinned, others (Slurm's own choice) on the first nodes with
  /// enough free GPUs, in job id order.
  void Tick() {
    for (auto& [id, j] : jobs_) {
      if (j.state == "PENDING" && !j.held && j.eligible_time <= now) TryStart(j);
    }
  }

  /// Indices of GPUs used on `node` by running jobs.
  std::set<int> Used(const std::string& node) const {
    std::set<int> used;
    for (const auto& [id, j] : jobs_) {
      if (j.state != "RUNNING") continue;
      for (size_t k = 0; k < j.nodes.size(); ++k) {
        if (j.nodes[k] == node) used.insert(j.indices.begin(), j.indices.end());
      }
    }
    return used;
  }

 private:
  std::string TypedList() const {
    std::string s;
    for (int i = 0; i < gpus_; ++i)
      s += (i ? "," : "") + std::string("gpu:g") + std::to_string(i) + ":1";
    return s;
  }

  std::string Sinfo() const {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : node_names_) {
      nodes.push_back({{"name", n},
                       {"state", Used(n).empty() ? "idle" : "mixed"},
                       {"state_flags", nlohmann::json::array()},
                       {"gres", typed_ ? TypedList() : "gpu:" + std::to_string(gpus_)},
                       {"partitions", {"gpu"}},
                       {"active_features", n}});
    }
    return nlohmann::json{
        {"meta", nlohmann::json::object()}, {"errors", nlohmann::json::array()}, {"nodes", nodes}}
        .dump();
  }

  std::string Squeue() const {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& [id, j] : jobs_) {
      nlohmann::json detail = nlohmann::json::array();
      std::string nodes;
      if (j.state == "RUNNING") {
        for (const auto& n : j.nodes) {
          std::string d;
          for (int i : j.indices)
            d += (d.empty() ? "" : ",") + std::string("gpu:g") + std::to_string(i) +
                 ":1(IDX:" + std::to_string(i) + ")";
          detail.push_back(d);
          nodes += (nodes.empty() ? "" : ",") + n;
        }
      }
      std::string required;
      for (const auto& n : j.required_nodes) required += (required.empty() ? "" : ",") + n;
      jobs.push_back({{"job_id", j.id},
                      {"name", j.name},
                      {"job_state", j.state},
                      {"state_reason", j.held                  ? j.hold_reason
                                       : j.eligible_time > now ? "BeginTime"
                                                               : "None"},
                      {"comment", j.comment},
                      {"admin_comment", j.admin_comment},
                      {"eligible_time", j.eligible_time},
                      {"partition", "gpu"},
                      {"account", j.account},
                      {"priority", j.held ? 0 : 4294901757LL},
                      {"nodes", nodes},
                      {"required_nodes", required},
                      {"node_count", j.node_count},
                      {"tres_per_node", j.tres_per_node},
                      {"gres_detail", detail},
                      {"submit_time", j.submit_time},
                      {"start_time", j.start_time},
                      {"time_limit", nullptr},
                      {"batch_flag", j.batch},
                      {"requeue", j.requeue},
                      {"restart_cnt", j.restarts}});
    }
    return nlohmann::json{
        {"meta", nlohmann::json::object()}, {"errors", nlohmann::json::array()}, {"jobs", jobs}}
        .dump();
  }

  static std::vector<std::string> SplitComma(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) out.push_back(item);
    return out;
  }

  // Indices of a typed request "gpu:g4:1,gpu:g5:1" (empty for an untyped one).
  static std::vector<int> TypedIndices(const std::string& gres) {
    std::vector<int> out;
    for (const auto& item : SplitComma(gres)) {
      const auto first = item.find("gpu:g");
      if (first == std::string::npos) continue;
      out.push_back(std::stoi(item.substr(first + 5, item.rfind(':') - first - 5)));
    }
    return out;
  }

  // Slurm 22.05's requeue: a requeue-able batch job goes back to pending (not held), its GPUs
  // freed, with a begin time 121 s away; any other job is refused.
  Result<CommandResult> Requeue(int64_t id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return CommandResult{1, "", "Invalid job id specified\n"};
    Job& j = it->second;
    if (!j.requeue || !j.batch) {
      return CommandResult{
          1, "", "Requested operation is presently disabled for job " + std::to_string(id) + "\n"};
    }
    if (j.state != "RUNNING") return CommandResult{1, "", "Job is pending execution\n"};
    j.state = "PENDING";
    j.held = false;
    j.required_nodes = j.nodes;
    j.nodes.clear();
    j.indices.clear();
    j.start_time = 0;
    j.eligible_time = now + 121;
    j.requeued_at = now;
    ++j.restarts;
    return CommandResult{};
  }

  Result<CommandResult> Update(const std::vector<std::string>& argv) {
    auto it = jobs_.end();
    for (size_t i = 2; i < argv.size(); ++i) {
      const auto eq = argv[i].find('=');
      const std::string key = argv[i].substr(0, eq);
      const std::string value = argv[i].substr(eq + 1);
      if (key == "JobId") {
        it = jobs_.find(std::stoll(value));
        if (it == jobs_.end()) return CommandResult{1, "", "Invalid job id specified\n"};
        continue;
      }
      if (it == jobs_.end()) return CommandResult{1, "", "no JobId\n"};
      Job& j = it->second;
      if (key == "StartTime") {
        if (j.state != "PENDING")
          return CommandResult{1, "", "Job is no longer pending execution\n"};
        j.eligible_time = now + (value.rfind("now+", 0) == 0 ? std::stoll(value.substr(4)) : 0);
      } else if (key == "AdminComment") {
        j.admin_comment = value;
      } else if (key == "TresPerNode") {
        j.tres_per_node = value;
      } else if (key == "NumNodes") {
        j.node_count = std::stoi(value);
      } else if (key == "NodeList") {
        j.required_nodes = SplitComma(value);
      } else if (key == "Gres") {
        // Slurm 22.05: untyped -> typed is refused unless the request was cleared first.
        const bool typed = !TypedIndices(value).empty();
        if (typed && j.tres_per_node.find("gpu:g") == std::string::npos &&
            j.tres_per_node.size() > 5) {
          return CommandResult{
              1, "", "Invalid GRES specification (with and without type identification)\n"};
        }
        std::string tres;
        for (const auto& item : SplitComma(value))
          tres += (tres.empty() ? "" : ",") + std::string("gres:") + item;
        j.tres_per_node = tres;
      }
    }
    return CommandResult{};
  }

  void TryStart(Job& j) {
    if (j.requeued_at >= 0 && now <= j.requeued_at) {
      // Slurm 22.05: slurmd refuses to launch a requeued job in the second of its requeue (its
      // credential was revoked then), and the job fails.
      j.state = "FAILED";
      return;
    }
    if (j.required_nodes.empty()) {
      // Slurm's own choice for an unpinned (untyped) request.
      const int count = std::stoi(j.tres_per_node.substr(j.tres_per_node.rfind(':') + 1));
      std::vector<std::string> nodes;
      std::vector<int> indices;
      for (const auto& n : node_names_) {
        const auto used = Used(n);
        std::vector<int> free;
        for (int i = 0; i < gpus_ && static_cast<int>(free.size()) < count; ++i) {
          if (!used.contains(i)) free.push_back(i);
        }
        if (static_cast<int>(free.size()) < count || (!indices.empty() && free != indices))
          continue;
        nodes.push_back(n);
        indices = free;
        if (static_cast<int>(nodes.size()) == j.node_count) break;
      }
      if (static_cast<int>(nodes.size()) < j.node_count) return;
      j.state = "RUNNING";
      j.nodes = nodes;
      j.indices = indices;
      j.start_time = now;
      return;
    }
    std::vector<int> want = TypedIndices(j.tres_per_node);
    if (want.empty()) {
      // Untyped: the lowest free indices.
      const int count = std::stoi(j.tres_per_node.substr(j.tres_per_node.rfind(':') + 1));
      const auto used = Used(j.required_nodes[0]);
      for (int i = 0; i < gpus_ && static_cast<int>(want.size()) < count; ++i) {
        if (!used.contains(i)) want.push_back(i);
      }
    }
    for (const auto& n : j.required_nodes) {
      const auto used = Used(n);
      for (int i : want) {
        if (used.contains(i)) return;
      }
    }
    j.state = "RUNNING";
    j.nodes = j.required_nodes;
    j.indices = want;
    j.start_time = now;
  }

  Result<CommandResult> Salloc(const std::vector<std::string>& argv) {
    Job j;
    j.id = next_id_++;
    j.state = "RUNNING";
    j.held = false;
    j.batch = false;
    j.start_time = now;
    for (const auto& a : argv) {
      if (a.rfind("--job-name=", 0) == 0) j.name = a.substr(11);
      if (a.rfind("--nodelist=", 0) == 0) j.nodes = {a.substr(11)};
      if (a.rfind("--gres=", 0) == 0) {
        j.indices = TypedIndices(a.substr(7));
        j.tres_per_node = "gres:" + a.substr(7);
      }
    }
    for (int i : j.indices) {
      if (Used(j.nodes[0]).contains(i)) {
        return CommandResult{
            1, "", "salloc: error: Unable to allocate resources: Requested nodes are busy\n"};
      }
    }
    jobs_[j.id] = j;
    return CommandResult{0, "", "salloc: Granted job allocation " + std::to_string(j.id) + "\n"};
  }

  int gpus_;
  bool typed_;
  std::vector<std::string> node_names_;
  std::map<int64_t, Job> jobs_;
  std::vector<std::string> log_;
  int64_t next_id_ = 1;
  int fail_next_ = 0;
};

}  // namespace ordo::slurm::testing
