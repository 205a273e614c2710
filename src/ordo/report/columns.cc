#include "ordo/report/columns.h"

#include "ordo/report/format.h"

namespace ordo::report {

std::vector<Column> MetricColumns(bool with_study) {
  std::vector<Column> columns = {
      {"policy", false}, {"utilization"},   {"allocated"},           {"value"},
      {"gain vs fifo"},  {"started"},       {"completed"},           {"unmet RT GPU-steps"},
      {"planning ms"},   {"fragmentation"}, {"shape-mismatch wait"}, {"objective"},
      {"of best bound"}, {"wait mean h"},   {"wait p95 h"},          {"never started"},
      {"p95 wait prio 1-3 h"}, {"p95 wait prio 4-7 h"}, {"p95 wait prio 8-10 h"},
  };
  if (with_study) {
    columns.insert(columns.end(),
                   {{"study utilization"}, {"study value"}, {"study gain"}, {"study latency ms"}});
  }
  return columns;
}

std::vector<std::string> MetricCells(const ScenarioResult& result, const PolicyRun& run,
                                     bool with_study) {
  std::vector<std::string> cells;
  if (!run.plan) {
    cells = {run.policy + " (failed)", "-", "-", "-", "-", "-", "-", "-", "-", "-",
             "-", "-", "-", "-", "-", "-", "-", "-", "-"};
  } else {
    const Metrics& m = run.metrics;
    std::string name = run.policy;
    if (!run.violations.empty()) name += " (ILLEGAL)";
    cells = {name,
             Percent(m.utilization),
             Percent(m.allocated_utilization),
             Thousands(m.value),
             SignedPercent(run.value_gain),
             std::to_string(m.jobs_started),
             std::to_string(m.jobs_completed),
             std::to_string(m.realtime_unmet_gpu_steps),
             Millis(m.solve_ms),
             Percent(run.wait.fragmentation),
             run.wait.shape_mismatch_share ? Percent(*run.wait.shape_mismatch_share) : "-",
             Thousands(m.objective),
             run.of_bound ? Percent(*run.of_bound) : "-",
             Hours(run.waits.all.mean_hours),
             Hours(run.waits.all.p95_hours),
             std::to_string(run.waits.all.never_started)};
    for (const WaitSummary& c : run.waits.by_class) {
      cells.push_back(c.jobs > 0 ? Hours(c.p95_hours) : "-");
    }
  }
  if (with_study) {
    const std::optional<StudyFigures>& study = result.study;
    if (study && run.policy == "fifo") {
      cells.insert(cells.end(),
                   {Percent(study->fifo_utilization), Thousands(study->fifo_value), "", ""});
    } else if (study && run.policy == "ordo") {
      cells.insert(cells.end(),
                   {Percent(study->allocator_utilization), Thousands(study->allocator_value),
                    SignedPercent(study->value_gain), Thousands(study->heuristic_latency_ms)});
    } else {
      cells.insert(cells.end(), {"", "", "", ""});
    }
  }
  return cells;
}

std::string ScenarioSummary(const Scenario& s) {
  std::string nodes;
  for (size_t g = 0; g < s.cluster.groups.size(); ++g) {
    const NodeGroup& group = s.cluster.groups[g];
    nodes += (g ? " + " : "") + std::to_string(group.nodes) +
             (group.nodes == 1 ? " node" : " nodes") + " x " + std::to_string(group.gpus_per_node) +
             " " + group.gpu_type;
  }
  return std::to_string(s.cluster.total_gpus()) + " GPUs (" + nodes + "), " +
         std::to_string(s.horizon_steps) + " steps of " + std::to_string(s.step_minutes) +
         " min, " + std::to_string(s.jobs.size()) + (s.jobs.size() == 1 ? " job, " : " jobs, ") +
         std::to_string(s.services.size()) + (s.services.size() == 1 ? " service" : " services");
}

}  // namespace ordo::report
