// The engine's read side: what a job, the plan, the committed steps, a what-if, the dashboard,
// health and metrics look like to a principal. Everything here reads the published state under a
// shared lock, or the adopted plan (immutable), and never blocks the writer for long.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <unordered_set>

#include "ordo/core/chart_axes.h"
#include "ordo/core/metrics.h"
#include "ordo/core/validate.h"
#include "ordo/io/json_fields.h"
#include "ordo/io/plan_io.h"
#include "ordo/policy/common/explain.h"
#include "ordo/service/codec.h"
#include "ordo/service/engine.h"
#include "ordo/solver/milp_backend.h"

namespace ordo::service {

using Json = nlohmann::json;

namespace {

constexpr size_t kMaxListLimit = 10'000;
// Share of a what-if's time limit (at most a second) kept for checking and explaining its plan.
constexpr double kWhatIfFinishShare = 0.2;
// Share of that which is kept for writing the answer after the explanations.
constexpr double kWhatIfAnswerShare = 0.5;
constexpr int kMaxHistorySteps = 10'000;

// A committed step as the API shows it (`GET /v1/plan/committed`, each of `/v1/plan/history`),
// with only the jobs the reader may see; the caller scrubs ids.
Json CommittedStepView(const CommittedStep& step, double start_unix, const Redactor& redact) {
  Json jobs = Json::array();
  for (const CommittedJob& job : step.jobs) {
    if (!redact.Visible(job.id)) continue;
    jobs.push_back({{"id", job.id}, {"first_gpu", job.first_gpu}, {"gpus", job.gpus}});
  }
  Json services = Json::array();
  for (const CommittedService& s : step.services) {
    services.push_back({{"id", s.id}, {"gpus", s.gpus}, {"demand", s.demand}});
  }
  return {{"step", step.step},
          {"time", IsoTime(start_unix)},
          {"policy", step.policy},
          {"jobs", std::move(jobs)},
          {"services", std::move(services)},
          {"utilization", step.utilization},
          {"allocated_utilization", step.allocated_utilization},
          {"value", step.value},
          {"unmet_gpus", step.unmet_gpus}};
}

// A plan in the plan format (steps relative to its step 0), keeping only the jobs the reader may
// see; their explanations are redacted for the reader.
Json PlanDocument(const Plan& plan, const std::vector<JobExplanation>& explanations,
                  const Redactor& redact) {
  auto keep = [&](const std::string& id) { return redact.Visible(id); };
  Plan shown;
  shown.version = plan.version;
  shown.scenario = plan.scenario;
  shown.policy = plan.policy;
  shown.services = plan.services;
  shown.metrics = plan.metrics;
  for (const JobPlacement& job : plan.jobs) {
    if (keep(job.id)) shown.jobs.push_back(job);
  }
  for (const JobExplanation& e : explanations) {
    if (keep(e.id)) shown.explanations.push_back(redact.Explanation(e, plan.policy, 0));
  }
  Json doc = Json::parse(io::WritePlan(shown, -1), nullptr, false);
  if (doc.is_discarded()) return Json::object();
  redact.Scrub(doc);
  return doc;
}

// GPU ids as runs: [[first, count], ...] (a service's GPUs are mostly contiguous).
Json Runs(const std::vector<int>& gpus) {
  std::vector<int> sorted = gpus;
  std::sort(sorted.begin(), sorted.end());
  Json runs = Json::array();
  for (size_t k = 0; k < sorted.size();) {
    size_t end = k + 1;
    while (end < sorted.size() && sorted[end] == sorted[end - 1] + 1) ++end;
    runs.push_back({sorted[k], static_cast<int>(end - k)});
    k = end;
  }
  return runs;
}

// The dashboard's chart data as it is gathered: job blocks (committed history merged per job,
// then the plan), service cells, utilization by step and each service's demand and allocation.
struct DashboardBlock {
  std::string id;
  int first_gpu = 0;
  int gpus = 0;
  int64_t start = 0;
  int64_t end = 0;
  std::string state;  // committed, running or planned
};
struct DashboardCharts {
  std::vector<DashboardBlock> blocks;
  std::map<std::string, size_t> open;  // job id -> index of its latest history block
  Json cells = Json::array();
  Json utilization = Json::array();
  std::map<std::string, Json> service_series;
  int64_t first_shown = 0;  // the first step shown
};

// The GPU axis: groups, and every node's name and GPU range, so the page draws node boundaries
// and GPU numbers without re-deriving the spec's numbering.
void AddClusterAxis(const Cluster& cluster, Json& out) {
  Json groups = Json::array();
  for (int g = 0; g < static_cast<int>(cluster.groups.size()); ++g) {
    const NodeGroup& group = cluster.groups[g];
    groups.push_back({{"name", group.name},
                      {"first_gpu", cluster.group_first_gpu(g)},
                      {"gpus", cluster.group_gpus(g)},
                      {"gpus_per_node", group.gpus_per_node},
                      {"gpu_type", group.gpu_type}});
  }
  out["groups"] = std::move(groups);
  Json nodes = Json::array();
  for (const NodeSpan& n : NodeSpans(cluster)) {
    nodes.push_back({{"name", n.name},
                     {"group", n.group},
                     {"node", n.node},
                     {"first_gpu", n.first_gpu},
                     {"gpus", n.gpus}});
  }
  out["nodes"] = std::move(nodes);
}

// The committed steps from `history_from` on: a job's consecutive steps on one block are one
// block.
void AddCommittedHistory(const State& s, int64_t history_from, DashboardCharts& charts) {
  for (const CommittedStep& step : s.recent) {
    if (step.step < history_from) continue;
    charts.first_shown = std::min(charts.first_shown, step.step);
    for (const CommittedJob& job : step.jobs) {
      auto it = charts.open.find(job.id);
      if (it != charts.open.end() && charts.blocks[it->second].end == step.step &&
          charts.blocks[it->second].first_gpu == job.first_gpu) {
        charts.blocks[it->second].end = step.step + 1;
      } else {
        charts.open[job.id] = charts.blocks.size();
        charts.blocks.push_back(
            {job.id, job.first_gpu, job.gpus, step.step, step.step + 1, "committed"});
      }
    }
    for (const CommittedService& svc : step.services) {
      charts.cells.push_back({{"id", svc.id}, {"step", step.step}, {"runs", Runs(svc.gpus)}});
      charts.service_series[svc.id].push_back({{"step", step.step},
                                               {"demand", svc.demand},
                                               {"allocated", svc.gpus.size()},
                                               {"planned", false}});
    }
    charts.utilization.push_back({{"step", step.step},
                                  {"utilization", step.utilization},
                                  {"allocated_utilization", step.allocated_utilization},
                                  {"planned", false}});
  }
}

// The adopted plan's steps (a running job's committed steps and its planned rest are one block);
// returns the plan's summary.
Json AddPlannedSteps(const AdoptedPlan& plan, const State& s, int gpus, int horizon,
                     DashboardCharts& charts) {
  const Plan& p = plan.plan();
  const int64_t base = plan.base_step();
  std::vector<long long> batch(static_cast<size_t>(horizon), 0);
  for (const JobPlacement& job : p.jobs) {
    if (!job.started()) continue;
    const int64_t start = base + *job.start_step;
    const int64_t end = start + job.duration_steps;
    const int64_t shown_start = std::max(start, base);
    if (end <= shown_start) continue;
    const JobRecord* record = s.FindJob(job.id);
    const bool running = record != nullptr && record->state == JobState::kRunning;
    auto it = charts.open.find(job.id);
    if (running && it != charts.open.end() && charts.blocks[it->second].end == shown_start &&
        charts.blocks[it->second].first_gpu == job.first_gpu) {
      charts.blocks[it->second].end = end;
      charts.blocks[it->second].state = "running";
    } else {
      charts.blocks.push_back(
          {job.id, job.first_gpu, job.gpus, shown_start, end, running ? "running" : "planned"});
    }
    for (int64_t t = shown_start; t < std::min<int64_t>(end, base + horizon); ++t) {
      batch[static_cast<size_t>(t - base)] += job.gpus;
    }
  }
  std::vector<long long> useful(static_cast<size_t>(horizon), 0);
  std::vector<long long> allocated(static_cast<size_t>(horizon), 0);
  for (size_t i = 0; i < p.services.size(); ++i) {
    const ServiceAllocation& alloc = p.services[i];
    const Service* svc =
        i < plan.scenario().services.size() ? &plan.scenario().services[i] : nullptr;
    for (int t = 0; t < horizon && t < static_cast<int>(alloc.gpus.size()); ++t) {
      const int held = static_cast<int>(alloc.gpus[t].size());
      const int demand = svc != nullptr ? svc->demand[t] : 0;
      useful[t] += std::min(held, demand);
      allocated[t] += held;
      charts.cells.push_back({{"id", alloc.id}, {"step", base + t}, {"runs", Runs(alloc.gpus[t])}});
      charts.service_series[alloc.id].push_back(
          {{"step", base + t}, {"demand", demand}, {"allocated", held}, {"planned", true}});
    }
  }
  const double capacity = std::max(1, gpus);
  for (int t = 0; t < horizon; ++t) {
    charts.utilization.push_back(
        {{"step", base + t},
         {"utilization", static_cast<double>(batch[t] + useful[t]) / capacity},
         {"allocated_utilization", static_cast<double>(batch[t] + allocated[t]) / capacity},
         {"planned", true}});
  }
  return {{"mode", plan.mode()},
          {"version", plan.version()},
          {"base_step", base},
          {"objective", p.metrics.objective},
          {"utilization", p.metrics.utilization},
          {"allocated_utilization", p.metrics.allocated_utilization},
          {"value", p.metrics.value},
          {"realtime_unmet_gpu_steps", p.metrics.realtime_unmet_gpu_steps},
          {"solve_ms", p.metrics.solve_ms},
          {"created", IsoTime(plan.created_unix())}};
}

// The time axis: the steps the charts span (the history kept, then the horizon) and ticks at a
// round interval, each with its absolute step and its wall-clock time (one clock, as elsewhere).
Json TimeAxisJson(const State& s, const Frame& frame, int64_t from_step, int64_t to_step,
                  int step_minutes) {
  const int every = TickEvery(to_step - from_step, step_minutes, 12);
  Json ticks = Json::array();
  for (int64_t t = (from_step + every - 1) / every * every; t <= to_step; t += every) {
    ticks.push_back({{"step", t}, {"time", IsoTime(StepStartUnix(s, frame, t))}});
  }
  return {{"from_step", from_step},
          {"to_step", to_step},
          {"every_steps", every},
          {"ticks", std::move(ticks)}};
}

// The blocks as the page draws them; a job the viewer may not see keeps its place, not its id.
Json BlocksJson(const std::vector<DashboardBlock>& blocks, const State& s, const Frame& frame,
                const Redactor& redact) {
  Json out = Json::array();
  for (const DashboardBlock& b : blocks) {
    const JobRecord* record = s.FindJob(b.id);
    const bool shown = redact.Visible(b.id);
    Json j = {{"id", shown ? Json(b.id) : Json(nullptr)},
              {"first_gpu", b.first_gpu},
              {"gpus", b.gpus},
              {"start", b.start},
              {"end", b.end},
              {"start_time", IsoTime(StepStartUnix(s, frame, b.start))},
              {"end_time", IsoTime(StepStartUnix(s, frame, b.end))},
              {"state", b.state}};
    if (shown && record != nullptr) {
      j["kind"] = std::string(JobKindName(record->job.kind));
      j["tenant"] = record->tenant;
    }
    out.push_back(std::move(j));
  }
  return out;
}

// The state's figures: the step, jobs by state, the queue, the current step's utilization and
// services, and the value committed so far.
void AppendStateMetrics(const State& s, std::string& out) {
  AppendSingle(out, "ordo_step", "gauge", "The current (last committed) step; -1 before the first",
               s.recent.empty() ? static_cast<double>(s.next_step) - 1
                                : static_cast<double>(s.recent.back().step));
  std::map<std::string, int> by_state;
  std::map<std::string, int> queue;
  for (const char* kind : {"training", "batch_inference", "quantization"}) queue[kind] = 0;
  for (const char* state : {"pending", "running", "done", "cancelled"}) by_state[state] = 0;
  for (const auto& [seq, record] : s.jobs) {
    by_state[std::string(JobStateName(record.state))]++;
    if (record.state == JobState::kPending) queue[std::string(JobKindName(record.job.kind))]++;
  }
  AppendFamily(out, "ordo_jobs", "gauge", "Jobs by state");
  for (const auto& [state, n] : by_state)
    AppendSample(out, "ordo_jobs", Labels({{"state", state}}), n);
  AppendFamily(out, "ordo_queue_length", "gauge", "Pending jobs by kind");
  for (const auto& [kind, n] : queue) {
    AppendSample(out, "ordo_queue_length", Labels({{"kind", kind}}), n);
  }
  if (!s.recent.empty()) {
    const CommittedStep& step = s.recent.back();
    AppendSingle(out, "ordo_utilization_ratio", "gauge",
                 "Useful GPU share at the current step: batch GPUs plus min(allocated, demand)",
                 step.utilization);
    AppendSingle(out, "ordo_allocated_utilization_ratio", "gauge",
                 "Allocated GPU share at the current step, idle reservations included",
                 step.allocated_utilization);
    AppendSingle(out, "ordo_realtime_unmet_gpus", "gauge",
                 "Real-time GPUs demanded but not allocated at the current step",
                 static_cast<double>(step.unmet_gpus));
    AppendFamily(out, "ordo_service_gpus", "gauge", "Services' GPUs at the current step");
    for (const CommittedService& svc : step.services) {
      AppendSample(out, "ordo_service_gpus", Labels({{"service", svc.id}, {"of", "demand"}}),
                   svc.demand);
      AppendSample(out, "ordo_service_gpus", Labels({{"service", svc.id}, {"of", "allocated"}}),
                   static_cast<double>(svc.gpus.size()));
    }
  }
  int64_t preemptions = 0;
  int64_t lost = 0;
  for (const auto& [seq, record] : s.jobs) {
    preemptions += record.preemptions;
    lost += record.lost_gpu_steps;
  }
  AppendSingle(out, "ordo_preemptions_total", "counter",
               "Jobs preempted at committed steps (a job preempted twice counts twice)",
               static_cast<double>(preemptions));
  AppendSingle(out, "ordo_lost_gpu_steps_total", "counter",
               "GPU-steps of work lost to preemptions and of restarts from a checkpoint",
               static_cast<double>(lost));
  AppendSingle(out, "ordo_committed_value_total", "counter",
               "Value earned over every committed step (priority-weighted GPU work); its rate "
               "is the value earned per second",
               s.committed_value_total);
}

// The adopted plan's figures over its horizon, and its age at `now`.
void AppendPlanMetrics(const AdoptedPlan& plan, double now, std::string& out) {
  const Metrics& m = plan.plan().metrics;
  AppendSingle(out, "ordo_plan_utilization_ratio", "gauge",
               "Utilization of the adopted plan over its horizon", m.utilization);
  AppendSingle(out, "ordo_plan_allocated_utilization_ratio", "gauge",
               "Allocated utilization of the adopted plan over its horizon",
               m.allocated_utilization);
  AppendSingle(out, "ordo_plan_value", "gauge",
               "Value of the adopted plan over its horizon (priority-weighted GPU work)", m.value);
  AppendSingle(out, "ordo_plan_objective", "gauge", "Planning objective of the adopted plan",
               m.objective);
  AppendSingle(out, "ordo_plan_realtime_unmet_gpu_steps", "gauge",
               "Real-time GPU-steps the adopted plan leaves unmet over its horizon",
               static_cast<double>(m.realtime_unmet_gpu_steps));
  AppendSingle(out, "ordo_plan_age_seconds", "gauge", "Seconds since the adopted plan was made",
               now - plan.created_unix());
  AppendSingle(out, "ordo_plan_info", "gauge", "The adopted plan's mode (value 1)", 1,
               Labels({{"mode", plan.mode()}}));
}

}  // namespace

Json Engine::JobView(const JobRecord& record, const State& state, const AdoptedPlan* plan,
                     const Redactor& redact) const {
  const Job& job = record.job;
  Json out = JobSpecJson(job);
  out["tenant"] = record.tenant;
  out["state"] = std::string(JobStateName(record.state));
  out["submitted_step"] = record.submitted_step;
  out["submitted_time"] = IsoTime(record.submitted_unix);
  const int64_t now = state.next_step;
  out["planned_start_step"] = nullptr;
  out["reason"] = "none";
  out["blocking_id"] = nullptr;
  // One clock: every step is absolute and comes with its wall-clock time; the distance from now
  // is an extra beside them.
  auto set_start = [&](int64_t absolute) {
    out["planned_start_step"] = absolute;
    out["planned_start_time"] = IsoTime(StepStartUnix(state, frame(), absolute));
    out["planned_start_in_steps"] = absolute - now;
  };
  switch (record.state) {
    case JobState::kPending: {
      const JobPlacement* placement = plan != nullptr ? plan->FindJob(job.id) : nullptr;
      if (placement == nullptr) {
        out["reason"] = "planning";
        out["message"] = "submitted after the current plan was made; the next plan includes it";
        break;
      }
      if (placement->started()) {
        set_start(plan->base_step() + *placement->start_step);
        out["planned_first_gpu"] = placement->first_gpu;
        out["planned_gpus"] = placement->gpus;
        out["planned_duration_steps"] = placement->duration_steps;
      }
      const JobExplanation* why = plan->Explain(job.id);
      if (why != nullptr) {
        const JobExplanation shown =
            redact.Explanation(*why, plan->plan().policy, plan->base_step());
        out["reason"] = std::string(io::WaitReasonName(shown.reason));
        out["message"] = shown.message;
        if (!shown.blocking_id.empty()) out["blocking_id"] = shown.blocking_id;
      } else {
        out["message"] = "starts at the next step";
      }
      break;
    }
    case JobState::kRunning: {
      set_start(record.start_step);
      out["first_gpu"] = record.first_gpu;
      out["gpus_used"] = record.shape.gpus;
      out["end_step"] = record.stay_end_step();
      out["end_time"] = IsoTime(StepStartUnix(state, frame(), record.stay_end_step()));
      out["message"] = "running on GPUs " + std::to_string(record.first_gpu) + ".." +
                       std::to_string(record.first_gpu + record.shape.gpus - 1) + " since step " +
                       std::to_string(record.start_step) + ", until step " +
                       std::to_string(record.stay_end_step());
      const int64_t restart_left = record.start_step + record.stay_restart_steps - now;
      if (record.preemptions > 0 && restart_left > 0) out["restart_steps_left"] = restart_left;
      // The current plan may preempt it later (and say where it resumes).
      const JobPlacement* placement = plan != nullptr ? plan->FindJob(job.id) : nullptr;
      if (placement != nullptr && placement->preempt_step) {
        const int64_t at = plan->base_step() + *placement->preempt_step;
        out["planned_preempt_step"] = at;
        out["planned_preempt_time"] = IsoTime(StepStartUnix(state, frame(), at));
        if (placement->resume) {
          const int64_t resume = plan->base_step() + placement->resume->start_step;
          out["planned_resume_step"] = resume;
          out["planned_resume_time"] = IsoTime(StepStartUnix(state, frame(), resume));
        }
        out["message"] = out["message"].get<std::string>() + "; the plan preempts it at step " +
                         std::to_string(at);
      }
      break;
    }
    case JobState::kDone:
      out["start_step"] = record.start_step;
      out["start_time"] = IsoTime(StepStartUnix(state, frame(), record.start_step));
      out["finished_step"] = record.finished_step;
      out["finished_time"] = IsoTime(StepStartUnix(state, frame(), record.finished_step));
      out["first_gpu"] = record.first_gpu;
      out["gpus_used"] = record.shape.gpus;
      break;
    case JobState::kCancelled:
      out["cancelled_step"] = record.finished_step;
      out["cancelled_time"] = IsoTime(StepStartUnix(state, frame(), record.finished_step));
      break;
  }
  if (record.preemptions > 0) {
    // Its own history: a pending job here waits to resume, and planned_start_step is its resume.
    out["preemptions"] = record.preemptions;
    out["preempted_step"] = *record.preempted_step;
    out["preempted_time"] = IsoTime(StepStartUnix(state, frame(), *record.preempted_step));
    out["saved_steps"] = record.saved_steps;
    out["lost_gpu_steps"] = record.lost_gpu_steps;
  }
  return out;
}

// Explanations cost more than a plan on a long queue: they are computed (once per plan) before
// the state's lock is taken, so the writer is never held up behind them.
std::shared_ptr<const AdoptedPlan> Engine::ExplainedPlan() const {
  auto plan = CurrentPlan();
  if (plan) (void)plan->Explanations();
  return plan;
}

Result<Json> Engine::GetJob(const Principal& who, std::string_view given, double wait_for_plan_s) {
  const std::string id = ResolveJobId(who, given);
  uint64_t version = 0;
  {
    auto plan = ExplainedPlan();
    std::shared_lock lock(state_mutex_);
    const JobRecord* record = published_.FindJob(id);
    if (record == nullptr || !CanSee(who, *record)) {
      return Fail(Error{ErrorCode::kNotFound, "id", "no job \"" + std::string(given) + "\""});
    }
    const bool planned =
        plan && plan->base_step() == published_.next_step && plan->FindJob(id) != nullptr;
    if (record->state != JobState::kPending || planned) {
      const Redactor redact(who);
      Json view = JobView(*record, published_, plan.get(), redact);
      redact.Scrub(view);
      return view;
    }
    version = published_.version;
  }
  // The job is newer than the adopted plan (or a step was committed since): the next plan
  // (debounced) will include it.
  WaitForPlan(version, wait_for_plan_s);
  auto plan = ExplainedPlan();
  std::shared_lock lock(state_mutex_);
  const JobRecord* record = published_.FindJob(id);
  if (record == nullptr || !CanSee(who, *record)) {
    return Fail(Error{ErrorCode::kNotFound, "id", "no job \"" + std::string(given) + "\""});
  }
  const Redactor redact(who);
  Json view = JobView(*record, published_, plan.get(), redact);
  redact.Scrub(view);
  return view;
}

Result<Json> Engine::ListJobs(const Principal& who, const JobFilter& filter) {
  if (filter.limit < 1 || filter.limit > kMaxListLimit) {
    return FailInput("limit", "must be from 1 to " + std::to_string(kMaxListLimit));
  }
  auto plan = ExplainedPlan();
  std::shared_lock lock(state_mutex_);
  const Redactor redact(who);
  Json jobs = Json::array();
  std::optional<int64_t> next_cursor;
  for (auto it = published_.jobs.upper_bound(filter.after_seq); it != published_.jobs.end(); ++it) {
    const JobRecord& record = it->second;
    if (!CanSee(who, record)) continue;
    if (filter.state && record.state != *filter.state) continue;
    if (jobs.size() == filter.limit) {
      next_cursor = std::prev(it)->first;
      break;
    }
    Json view = JobView(record, published_, plan.get(), redact);
    view["seq"] = record.seq;
    jobs.push_back(std::move(view));
  }
  Json out = {{"jobs", std::move(jobs)}, {"next_step", published_.next_step}};
  out["next_cursor"] = next_cursor ? Json(*next_cursor) : Json(nullptr);
  redact.Scrub(out);
  return out;
}

Result<Json> Engine::GetService(const Principal& who, std::string_view id) {
  (void)who;  // every principal sees the services: they share the cluster with them
  std::shared_lock lock(state_mutex_);
  const ServiceRecord* record = published_.FindService(id);
  if (record == nullptr) {
    return Fail(Error{ErrorCode::kNotFound, "id", "no service \"" + std::string(id) + "\""});
  }
  Json out = ServiceSpecJson(record->service, record->traffic);
  Json demand = Json::array();
  for (int t = 0; t < config_.base.horizon_steps; ++t) {
    demand.push_back(record->DemandAt(published_.next_step + t));
  }
  out["demand_now"] = std::move(demand);
  out["demand_source"] = record->traffic && record->forecaster ? "forecast" : "profile";
  out["committed_gpus"] = record->committed_gpus ? Json(*record->committed_gpus) : Json(nullptr);
  out["traffic_samples"] = record->traffic_points;
  return out;
}

Result<Json> Engine::ListServices(const Principal& who) {
  std::vector<std::string> ids;
  {
    std::shared_lock lock(state_mutex_);
    for (const ServiceRecord& s : published_.services) ids.push_back(s.service.id);
  }
  Json services = Json::array();
  for (const std::string& id : ids) {
    if (auto view = GetService(who, id)) services.push_back(std::move(*view));
  }
  return Json{{"services", std::move(services)}};
}

Result<Json> Engine::PlanJson(const Principal& who) {
  // "The current plan": one made from the state as it is, so a client that just submitted sees
  // its job. The debounced planner usually delivers it within milliseconds; under a steady stream
  // of changes the newest plan after a short wait is answered (x-version says which).
  WaitForPlan(StateVersion(), 2.0);
  auto plan = ExplainedPlan();
  if (!plan) return Fail(Error{ErrorCode::kUnavailable, "", "no plan yet"});
  std::shared_lock lock(state_mutex_);
  const Redactor redact(who);
  Json doc = PlanDocument(plan->plan(), plan->Explanations(), redact);
  doc["x-step"] = plan->base_step();
  doc["x-mode"] = plan->mode();
  doc["x-version"] = plan->version();
  doc["x-created"] = IsoTime(plan->created_unix());
  return doc;
}

Result<Json> Engine::CommittedJson(const Principal& who) {
  std::shared_lock lock(state_mutex_);
  if (published_.recent.empty()) {
    return Fail(Error{ErrorCode::kNotFound, "", "no step has been committed yet"});
  }
  const CommittedStep& step = published_.recent.back();
  const Redactor redact(who);
  Json out = CommittedStepView(step, StepStartUnix(published_, frame(), step.step), redact);
  redact.Scrub(out);
  return out;
}

Result<Json> Engine::HistoryJson(const Principal& who, int64_t from, int64_t to) {
  if (to < from) return FailInput("to", "must be >= from");
  if (to - from > kMaxHistorySteps) {
    return FailInput("to", "at most " + std::to_string(kMaxHistorySteps) + " steps at a time");
  }
  auto steps = store_->ReadSteps(from, to, kMaxHistorySteps);
  if (!steps) return Fail(Error{ErrorCode::kInternal, "", steps.error().ToString()});
  std::shared_lock lock(state_mutex_);
  const Redactor redact(who);
  Json out = Json::array();
  for (const CommittedStep& step : *steps) {
    out.push_back(CommittedStepView(step, StepStartUnix(published_, frame(), step.step), redact));
  }
  Json doc = {{"steps", std::move(out)}};
  redact.Scrub(doc);
  return doc;
}

// The hypothetical world of a what-if: the state as it is, with the request's cancellations,
// services and added jobs; the planner's view of it; the added jobs' qualified ids.
struct Engine::WhatIfWorld {
  Scenario scenario;
  Scenario planned;
  int64_t base = 0;
  std::vector<std::string> added_ids;
};

Result<Json> Engine::WhatIf(const Principal& who, WhatIfRequest request) {
  const auto started = request.received;
  using io::internal::IndexPath;
  const std::string name = request.policy.value_or(options_.fast_policy);
  auto policy = MakePolicy(name);
  if (!policy) return FailInput("policy", policy.error().message);
  if (request.time_limit_s &&
      !(*request.time_limit_s > 0 && *request.time_limit_s <= options_.max_whatif_time_limit_s)) {
    return FailInput("time_limit_s", "must be above 0 and at most " +
                                         std::to_string(options_.max_whatif_time_limit_s));
  }
  for (size_t k = 0; k < request.jobs.size(); ++k) {
    ORDO_RETURN_IF_ERROR(
        CheckPriorityCap(who, request.jobs[k].job, IndexPath("jobs", k) + ".priority"));
  }
  if (!request.services.empty()) {
    ORDO_RETURN_IF_ERROR(Permit(who, AdminAction::kWhatIfServices));
  }
  if (whatif_running_.fetch_add(1) >= options_.max_concurrent_whatif) {
    whatif_running_.fetch_sub(1);
    return Fail(Error{ErrorCode::kResourceExhausted, "",
                      "too many what-if requests at once; retry shortly"});
  }
  struct Release {
    std::atomic<int>& n;
    ~Release() { n.fetch_sub(1); }
  } release{whatif_running_};
  ORDO_ASSIGN_OR_RETURN(WhatIfWorld world, MakeWhatIfWorld(who, request));

  const double limit_s = request.time_limit_s.value_or(
      name == options_.fast_policy
          ? options_.fast_time_limit_s
          : std::min(DefaultTimeLimitSeconds(name), options_.max_whatif_time_limit_s));
  PolicyOptions popts;
  popts.explain = false;
  popts.stop = &planning_stop_;
  popts.memory_budget_bytes = options_.whatif_memory_budget_bytes;
  // The limit is the answer's: reading the request so far, and checking, measuring and
  // explaining the plan after, come out of it.
  const double spent_s = SecondsSince(started);
  popts.time_limit_s =
      std::max(0.0, limit_s - spent_s - std::min(1.0, kWhatIfFinishShare * limit_s));
  auto checked = SolveChecked(**policy, nullptr, name == options_.fast_policy ? kModeFast : name,
                              world.planned, popts, &world.scenario);
  const double solved_s = SecondsSince(started);
  if (!checked) return Fail(Error{ErrorCode::kInternal, "", checked.error().ToString()});
  std::optional<Cut> cut = FindCut(*checked, popts, planning_stop_);
  // Stopped: the plan is legal but explaining it would hold the shutdown up.
  if (cut && cut->reason == "stopping") {
    whatifs_.Inc(Labels({{"cut", cut->reason}}));
    return Fail(
        Error{ErrorCode::kUnavailable, "", "the service is shutting down: " + cut->message});
  }
  // Explaining 10,000 waiting jobs can take longer than planning them: past the limit, less the
  // part kept for writing the answer, the jobs not yet explained are left out, and the cut says
  // so.
  const auto explain_deadline =
      started +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(
          limit_s - kWhatIfAnswerShare * std::min(1.0, kWhatIfFinishShare * limit_s)));
  const std::vector<JobExplanation> explanations = ExplainInBasePriorities(
      world.planned, world.scenario, checked->plan,
      {.deadline = explain_deadline, .max_holders = options_.whatif_max_explained_holders});
  const double explained_s = SecondsSince(started);
  Json answer = WhatIfAnswer(who, name, world, checked->plan, explanations,
                             std::chrono::steady_clock::now() >= explain_deadline, std::move(cut));
  // Where a what-if's time went, from the request's arrival: an operator's check on the limit.
  log_->Debug("whatif_timing", {{"read_s", spent_s},
                                {"plan_s", solved_s - spent_s},
                                {"explain_s", explained_s - solved_s},
                                {"answer_s", SecondsSince(started) - explained_s},
                                {"limit_s", limit_s}});
  return answer;
}

Result<Engine::WhatIfWorld> Engine::MakeWhatIfWorld(const Principal& who,
                                                    const WhatIfRequest& request) const {
  using io::internal::IndexPath;
  WhatIfWorld world;
  Scenario& scenario = world.scenario;
  {
    std::shared_lock lock(state_mutex_);
    world.base = published_.next_step;
    scenario = BuildScenario(published_, frame());
    for (size_t k = 0; k < request.cancel.size(); ++k) {
      const JobRecord* record = published_.FindJob(ResolveJobId(who, request.cancel[k]));
      if (record == nullptr || !CanSee(who, *record) || !record->active()) {
        return FailInput(IndexPath("cancel", k),
                         "no pending or running job \"" + request.cancel[k] + "\"");
      }
    }
    for (const ServiceBody& body : request.services) {
      Service service = body.service;
      if (const ServiceRecord* existing = published_.FindService(service.id)) {
        if (existing->committed_gpus) service.current_gpus = existing->committed_gpus;
      }
      auto it = std::find_if(scenario.services.begin(), scenario.services.end(),
                             [&](const Service& s) { return s.id == service.id; });
      if (it != scenario.services.end()) {
        *it = std::move(service);
      } else {
        scenario.services.push_back(std::move(service));
      }
    }
  }
  std::set<std::string> cancel_set;
  for (const std::string& id : request.cancel) cancel_set.insert(ResolveJobId(who, id));
  std::erase_if(scenario.jobs, [&](const Job& job) { return cancel_set.count(job.id) > 0; });
  std::unordered_set<std::string> ids;
  for (const Job& job : scenario.jobs) ids.insert(job.id);
  for (const Service& s : scenario.services) ids.insert(s.id);
  // The added jobs are the caller's: their ids are in its namespace, and only its own jobs can
  // already hold one.
  for (size_t k = 0; k < request.jobs.size(); ++k) {
    Job job = request.jobs[k].job;
    if (request.jobs[k].id_given) {
      const std::string local = job.id;
      job.id = QualifiedJobId(who.name, local);
      if (ids.count(job.id)) {
        return FailInput(IndexPath("jobs", k) + ".id",
                         "you already have a job with id \"" + local + "\"");
      }
    } else {
      int n = static_cast<int>(k) + 1;
      do {
        job.id = QualifiedJobId(who.name, "what-if-" + std::to_string(n++));
      } while (ids.count(job.id));
    }
    job.arrival_step = 0;
    ids.insert(job.id);
    world.added_ids.push_back(job.id);
    scenario.jobs.push_back(std::move(job));
  }
  ORDO_RETURN_IF_ERROR(CheckWhatIfScenario(scenario));
  // Planning priorities as the state has them now; an added job counts as submitted now.
  std::shared_lock lock(state_mutex_);
  world.planned = PlanningScenario(scenario, published_, frame());
  return world;
}

Result<void> Engine::CheckWhatIfScenario(const Scenario& scenario) const {
  size_t shapes = 0;
  for (const Job& job : scenario.jobs) shapes += job.shapes.size();
  if (shapes > options_.max_whatif_shapes) {
    return FailInput("jobs", "the hypothetical queue would hold " + std::to_string(shapes) +
                                 " job shapes; a what-if takes at most " +
                                 std::to_string(options_.max_whatif_shapes));
  }
  if (auto ok = ValidateScenario(scenario); !ok) {
    return FailInput(ok.error().field,
                     "the hypothetical cluster admits no legal plan: " + ok.error().message);
  }
  return {};
}

Json Engine::WhatIfAnswer(const Principal& who, const std::string& policy, const WhatIfWorld& world,
                          const Plan& plan, const std::vector<JobExplanation>& explanations,
                          bool explain_timed_out, std::optional<Cut> cut) {
  size_t waiting = 0;
  for (size_t j = 0; j < world.scenario.jobs.size() && j < plan.jobs.size(); ++j) {
    const JobPlacement& p = plan.jobs[j];
    if (!world.scenario.jobs[j].running && !(p.started() && *p.start_step == 0)) ++waiting;
  }
  const bool explained_all = explanations.size() >= waiting;
  if (!explained_all) {
    const std::string left_out = std::to_string(waiting - explanations.size()) + " of " +
                                 std::to_string(waiting) + " waiting jobs";
    const std::string ended_by = explain_timed_out
                                     ? "the time limit"
                                     : "the bound on the answer's size (" +
                                           std::to_string(options_.whatif_max_explained_holders) +
                                           " holders named)";
    if (cut) {
      cut->message += "; " + ended_by + " also ended the explanations before " + left_out;
    } else {
      cut = Cut{explain_timed_out ? "time_limit" : "answer_size",
                ended_by + " ended the explanations before " + left_out + ": they have no reason"};
    }
  }
  whatifs_.Inc(Labels({{"cut", cut ? cut->reason : "none"}}));
  std::shared_lock lock(state_mutex_);
  Redactor redact(who);
  Json out;
  out["committed"] = false;
  out["policy"] = policy;
  out["cut"] = cut.has_value();
  if (cut) out["cut_reason"] = {{"reason", cut->reason}, {"message", cut->message}};
  out["x-step"] = world.base;
  out["jobs"] = AddedJobViews(world, plan, explanations, explained_all, redact);
  out["plan"] = PlanDocument(plan, explanations, redact);
  if (auto current = CurrentPlan()) {
    const Metrics& m = current->plan().metrics;
    out["current"] = {{"objective", m.objective},
                      {"utilization", m.utilization},
                      {"allocated_utilization", m.allocated_utilization},
                      {"value", m.value},
                      {"realtime_unmet_gpu_steps", m.realtime_unmet_gpu_steps},
                      {"mode", current->mode()}};
    out["objective_delta"] = plan.metrics.objective - m.objective;
  }
  redact.Scrub(out);
  return out;
}

Json Engine::AddedJobViews(const WhatIfWorld& world, const Plan& plan,
                           const std::vector<JobExplanation>& explanations, bool explained_all,
                           const Redactor& redact) const {
  std::unordered_map<std::string, const JobExplanation*> why;
  for (const JobExplanation& e : explanations) why.emplace(e.id, &e);
  std::unordered_map<std::string, const JobPlacement*> placements;
  for (const JobPlacement& p : plan.jobs) placements.emplace(p.id, &p);
  Json jobs = Json::array();
  for (const std::string& id : world.added_ids) {
    const JobPlacement* p = placements.at(id);
    Json view = {{"id", id}, {"planned_start_step", nullptr}, {"reason", "none"}};
    if (p->started()) {
      const int64_t start = world.base + *p->start_step;
      view["planned_start_step"] = start;
      view["planned_start_time"] = IsoTime(StepStartUnix(published_, frame(), start));
      view["planned_start_in_steps"] = *p->start_step;
      view["first_gpu"] = p->first_gpu;
      view["gpus"] = p->gpus;
      view["duration_steps"] = p->duration_steps;
    }
    if (auto it = why.find(id); it == why.end() && p->start_step != 0 && !explained_all) {
      // Waiting, but the time limit ended the explanations first: no reason rather than "none".
      view.erase("reason");
    } else if (it != why.end()) {
      const JobExplanation shown = redact.Explanation(*it->second, plan.policy, world.base);
      view["reason"] = std::string(io::WaitReasonName(shown.reason));
      view["message"] = shown.message;
      if (!shown.blocking_id.empty()) view["blocking_id"] = shown.blocking_id;
    }
    jobs.push_back(std::move(view));
  }
  return jobs;
}

Result<Json> Engine::DashboardJson(const Principal& who, int history_steps) {
  if (history_steps < 0 || history_steps > static_cast<int>(kRecentSteps)) {
    return FailInput("history", "must be from 0 to " + std::to_string(kRecentSteps));
  }
  auto plan = ExplainedPlan();
  std::shared_lock lock(state_mutex_);
  const State& s = published_;
  const Cluster& cluster = config_.base.cluster;
  const int horizon = config_.base.horizon_steps;
  const Redactor redact(who);
  Json out;
  out["viewer"] = {{"name", who.name}, {"admin", who.admin}};
  out["step_minutes"] = config_.base.step_minutes;
  out["horizon_steps"] = horizon;
  out["gpus"] = cluster.total_gpus();
  AddClusterAxis(cluster, out);
  out["next_step"] = s.next_step;
  out["current_step"] = s.recent.empty() ? Json(nullptr) : Json(s.recent.back().step);
  out["current_time"] = s.recent.empty()
                            ? Json(nullptr)
                            : Json(IsoTime(StepStartUnix(s, frame(), s.recent.back().step)));
  out["next_step_time"] = IsoTime(StepStartUnix(s, frame(), s.next_step));
  out["now"] = IsoTime(Now());
  out["manual_clock"] = options_.manual_clock;

  // Blocks: committed history merged per job, then the plan from its step 0 on.
  DashboardCharts charts;
  charts.first_shown = s.next_step;
  AddCommittedHistory(s, s.next_step - history_steps, charts);
  out["plan"] = plan ? AddPlannedSteps(*plan, s, cluster.total_gpus(), horizon, charts) : nullptr;
  out["time_axis"] = TimeAxisJson(s, frame(), charts.first_shown, s.next_step + horizon,
                                  config_.base.step_minutes);
  out["blocks"] = BlocksJson(charts.blocks, s, frame(), redact);
  out["service_cells"] = std::move(charts.cells);
  out["utilization"] = std::move(charts.utilization);
  Json services = Json::array();
  for (const ServiceRecord& record : s.services) {
    services.push_back({{"id", record.service.id},
                        {"priority", record.service.priority},
                        {"min_gpus", record.service.min_gpus},
                        {"max_gpus", record.service.max_gpus},
                        {"source", record.traffic && record.forecaster ? "forecast" : "profile"},
                        {"series", charts.service_series[record.service.id]}});
  }
  out["services"] = std::move(services);

  // Jobs: every visible pending or running job, then the latest finished ones.
  Json jobs = Json::array();
  for (const int64_t seq : s.active) {
    const JobRecord& record = s.jobs.at(seq);
    if (CanSee(who, record)) jobs.push_back(JobView(record, s, plan.get(), redact));
  }
  int finished = 0;
  for (auto it = s.jobs.rbegin(); it != s.jobs.rend() && finished < 50; ++it) {
    if (it->second.active() || !CanSee(who, it->second)) continue;
    jobs.push_back(JobView(it->second, s, plan.get(), redact));
    ++finished;
  }
  out["jobs"] = std::move(jobs);
  redact.Scrub(out);
  return out;
}

Json Engine::HealthJson() {
  auto plan = CurrentPlan();
  std::shared_lock lock(state_mutex_);
  int pending = 0;
  int running = 0;
  for (const int64_t seq : published_.active) {
    (published_.jobs.at(seq).state == JobState::kRunning ? running : pending)++;
  }
  Json out = {
      {"status", "ok"},
      {"next_step", published_.next_step},
      {"current_step",
       published_.recent.empty() ? Json(nullptr) : Json(published_.recent.back().step)},
      {"state_version", published_.version},
      {"manual_clock", options_.manual_clock},
      {"schema_version", store::kSchemaVersion},
      {"jobs", {{"pending", pending}, {"running", running}, {"total", published_.jobs.size()}}},
      {"services", published_.services.size()},
      {"uptime_s", Now() - started_unix_}};
  if (plan) {
    out["plan"] = {{"version", plan->version()},
                   {"mode", plan->mode()},
                   {"age_s", Now() - plan->created_unix()},
                   {"up_to_date", plan->version() == published_.version}};
  }
  return out;
}

std::string Engine::MetricsText() {
  auto plan = CurrentPlan();
  std::string out;
  AppendSingle(out, "ordo_build_info", "gauge", "The running build (value 1)", 1,
               Labels({{"version", ORDO_VERSION}, {"cbc", solver::HasCbc() ? "true" : "false"}}));
  {
    std::shared_lock lock(state_mutex_);
    AppendStateMetrics(published_, out);
  }
  if (plan) AppendPlanMetrics(*plan, Now(), out);
  planning_latency_.Render(out, "ordo_planning_seconds", "Wall time of one plan, by mode");
  plans_.Render(out, "ordo_plans_total", "Plans made, by mode and outcome");
  commit_latency_.Render(out, "ordo_store_commit_seconds",
                         "Wall time of one group commit (durable on return)");
  batch_sizes_.Render(out, "ordo_store_batch_requests", "Requests per group commit");
  submissions_.Render(out, "ordo_jobs_submitted_total", "Jobs accepted, by tenant");
  whatifs_.Render(out, "ordo_whatifs_total",
                  "What-ifs answered, by what cut their search short (cut=\"none\": nothing)");
  {
    std::lock_guard lock(forecast_error_mutex_);
    AppendFamily(out, "ordo_forecast_error_ratio", "gauge",
                 "Demand forecast error: sum |actual - forecast p50| / sum actual over traffic "
                 "samples, each forecast made before the sample was posted");
    for (const auto& [id, e] : forecast_errors_) {
      AppendSample(out, "ordo_forecast_error_ratio", Labels({{"service", id}}),
                   e.actual > 0 ? e.abs_error / e.actual : 0);
    }
    AppendFamily(out, "ordo_forecast_samples_total", "counter",
                 "Traffic samples the demand forecast was scored on");
    for (const auto& [id, e] : forecast_errors_) {
      AppendSample(out, "ordo_forecast_samples_total", Labels({{"service", id}}),
                   static_cast<double>(e.samples));
    }
  }
  http_requests_.Render(out, "ordo_http_requests_total",
                        "HTTP requests, by route, method and code");
  http_latency_.Render(out, "ordo_http_request_seconds", "HTTP handling time, by route");
  return out;
}

}  // namespace ordo::service
