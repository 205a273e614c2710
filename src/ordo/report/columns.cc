#include "ordo/report/columns.h"

#include "ordo/report/format.h"

namespace ordo::report {

std::vector<Column> MetricColumns(bool with_study) {
  std::vector<Column> columns = {
      {"policy", false},
      {"utilization"},
      {"allocated"},
      {"value"},
      {"gain vs fifo"},
      {"started"},
      {"completed"},
      {"unmet RT GPU-steps"},
      {"planning ms"},
      {"fragmentation"},
      {"shape-mismatch wait"},
      {"objective"},
      {"of best bound"},
      {"wait mean h"},
      {"wait p95 h"},
      {"never started"},
      {"p95 wait prio 1-3 h"},
      {"p95 wait prio 4-7 h"},
      {"p95 wait prio 8-10 h"},
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
    cells = {run.policy + " (failed)",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-",
             "-"};
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

std::vector<StudyColumn> StudySummaryColumns() {
  return {{{"scenario", false}, false},
          {{"study FIFO util"}, true},
          {{"fifo util"}, false},
          {{"study allocator util"}, true},
          {{"ordo util"}, false},
          {{"study gain"}, true},
          {{"ordo gain"}, false},
          {{"wait mean / p95 h, fifo"}, false},
          {{"ordo"}, false},
          {{"never started, fifo"}, false},
          {{"ordo"}, false},
          {{"ordo planning ms"}, false},
          {{"study ms"}, true}};
}

std::vector<std::string> StudySummaryCells(const ScenarioResult& s) {
  if (!s.study) return {};
  const PolicyRun* fifo = s.Find("fifo");
  const PolicyRun* ordo = s.Find("ordo");
  const bool fifo_ok = fifo != nullptr && fifo->plan.has_value();
  const bool ordo_ok = ordo != nullptr && ordo->plan.has_value();
  auto util = [](const PolicyRun& r) { return Percent(r.metrics.utilization); };
  auto waits = [](const PolicyRun& r) {
    return Hours(r.waits.all.mean_hours) + " / " + Hours(r.waits.all.p95_hours);
  };
  auto never = [](const PolicyRun& r) {
    return std::to_string(r.waits.all.never_started) + " of " + std::to_string(r.waits.all.jobs);
  };
  return {s.study->label,
          Percent(s.study->fifo_utilization),
          fifo_ok ? util(*fifo) : "-",
          Percent(s.study->allocator_utilization),
          ordo_ok ? util(*ordo) : "-",
          SignedPercent(s.study->value_gain),
          ordo_ok ? SignedPercent(ordo->value_gain) : "-",
          fifo_ok ? waits(*fifo) : "-",
          ordo_ok ? waits(*ordo) : "-",
          fifo_ok ? never(*fifo) : "-",
          ordo_ok ? never(*ordo) : "-",
          ordo_ok ? Millis(ordo->metrics.solve_ms) : "-",
          Thousands(s.study->heuristic_latency_ms)};
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
