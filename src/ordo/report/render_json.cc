// The comparison as JSON, for scripts: fractions (not percentages), nulls where a figure does not
// exist.
#include <nlohmann/json.hpp>

#include "ordo/core/check_plan.h"
#include "ordo/report/render.h"

namespace ordo::report {
namespace {

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json RunJson(const PolicyRun& run) {
  nlohmann::json j;
  j["policy"] = run.policy;
  j["ok"] = run.ok();
  if (!run.plan) {
    j["error"] = run.error;
    return j;
  }
  const Metrics& m = run.metrics;
  j["metrics"] = {{"utilization", m.utilization},
                  {"allocated_utilization", m.allocated_utilization},
                  {"value", m.value},
                  {"batch_value", m.batch_value},
                  {"objective", m.objective},
                  {"realtime_unmet_gpu_steps", m.realtime_unmet_gpu_steps},
                  {"jobs_started", m.jobs_started},
                  {"jobs_completed", m.jobs_completed},
                  {"solve_ms", m.solve_ms}};
  if (m.solver) {
    j["metrics"]["status"] = m.solver->status;
    j["metrics"]["best_bound"] = m.solver->best_bound;
    j["metrics"]["gap"] = m.solver->gap;
  }
  j["value_gain_over_fifo"] = Optional(run.value_gain);
  j["objective_of_best_bound"] = Optional(run.of_bound);
  j["fragmentation"] = run.wait.fragmentation;
  j["fragmented_gpu_steps"] = run.wait.fragmented_gpu_steps;
  j["waiting_job_steps"] = run.wait.waiting_job_steps;
  j["shape_mismatch_job_steps"] = run.wait.shape_mismatch_job_steps;
  j["shape_mismatch_share"] = Optional(run.wait.shape_mismatch_share);
  auto wait_json = [](const WaitSummary& w) {
    return nlohmann::json{{"jobs", w.jobs},
                          {"never_started", w.never_started},
                          {"mean_hours", w.mean_hours},
                          {"p95_hours", w.p95_hours}};
  };
  j["waits"] = wait_json(run.waits.all);
  for (int c = 0; c < 3; ++c) {
    j["waits_by_priority"][kPriorityClassNames[c]] = wait_json(run.waits.by_class[c]);
  }
  nlohmann::json violations = nlohmann::json::array();
  for (const Violation& v : run.violations) violations.push_back(FormatViolation(v));
  j["violations"] = violations;
  return j;
}

}  // namespace

std::string RenderJson(const Comparison& comparison) {
  nlohmann::json out;
  out["policies"] = comparison.policies;
  out["problems"] = comparison.problems();
  out["scenarios"] = nlohmann::json::array();
  for (const ScenarioResult& s : comparison.scenarios) {
    nlohmann::json js;
    js["name"] = s.scenario.name;
    js["source"] = s.source;
    js["gpus"] = s.scenario.cluster.total_gpus();
    js["horizon_steps"] = s.scenario.horizon_steps;
    js["step_minutes"] = s.scenario.step_minutes;
    js["jobs"] = s.scenario.jobs.size();
    js["services"] = s.scenario.services.size();
    js["fifo_value"] = Optional(s.fifo_value);
    js["best_bound"] = Optional(s.best_bound);
    js["bound_source"] = s.best_bound ? nlohmann::json(s.bound_source) : nlohmann::json(nullptr);
    if (s.study) {
      js["study"] = {{"label", s.study->label},
                     {"fifo_utilization", s.study->fifo_utilization},
                     {"allocator_utilization", s.study->allocator_utilization},
                     {"fifo_value", s.study->fifo_value},
                     {"allocator_value", s.study->allocator_value},
                     {"value_gain", s.study->value_gain},
                     {"heuristic_latency_ms", s.study->heuristic_latency_ms}};
    } else {
      js["study"] = nullptr;
    }
    js["runs"] = nlohmann::json::array();
    for (const PolicyRun& run : s.runs) {
      if (run.shown) js["runs"].push_back(RunJson(run));
    }
    out["scenarios"].push_back(std::move(js));
  }
  // Ids and descriptions come from input files; replace rather than throw on invalid UTF-8.
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace ordo::report
