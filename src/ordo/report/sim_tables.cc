#include "ordo/report/sim_tables.h"

#include <algorithm>
#include <cstdio>

#include "ordo/report/format.h"

namespace ordo::report {
namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

Table SimTotalsTable(const PeriodRows& rows) {
  Table t;
  t.header = {"run",           "value",     "net value",    "util",        "alloc util",
              "unmet RT",      "started",   "completed",    "wait mean h", "wait p95 h",
              "never started", "decisions", "plan ms mean", "p95",         "max"};
  for (const auto& [name, m] : rows) {
    t.rows.push_back({name, Thousands(m->value), Thousands(m->net_value), Percent(m->utilization),
                      Percent(m->allocated_utilization),
                      std::to_string(m->realtime_unmet_gpu_steps), std::to_string(m->jobs_started),
                      std::to_string(m->jobs_completed), Fixed(m->wait_all.mean_hours, 2),
                      Fixed(m->wait_all.p95_hours, 2), std::to_string(m->wait_all.unstarted),
                      std::to_string(m->decisions), Fixed(m->plan_ms_mean, 2),
                      Fixed(m->plan_ms_p95, 2), Fixed(m->plan_ms_max, 1)});
  }
  // Preemption's columns only where some run preempted: without checkpoints they are all zero.
  const bool preempted = std::any_of(rows.begin(), rows.end(),
                                     [](const auto& row) { return row.second->preemptions > 0; });
  if (preempted) {
    t.header.insert(t.header.begin() + 6, {"preempted", "lost GPU-steps"});
    for (size_t r = 0; r < rows.size(); ++r) {
      const sim::PeriodMetrics& m = *rows[r].second;
      t.rows[r].insert(t.rows[r].begin() + 6,
                       {std::to_string(m.preemptions), std::to_string(m.lost_gpu_steps)});
    }
  }
  return t;
}

Table WaitClassTable(const PeriodRows& rows) {
  Table t;
  t.header = {"run"};
  for (int c = 0; c < sim::kPriorityClasses; ++c) {
    const std::string name = std::string("prio ") + sim::PriorityClassName(c);
    for (const char* what : {" jobs", " wait mean h", " p95 h", " never started"}) {
      t.header.push_back(name + what);
    }
  }
  for (const auto& [name, m] : rows) {
    std::vector<std::string> row = {name};
    for (const sim::WaitStats& w : m->wait_by_class) {
      row.push_back(std::to_string(w.jobs));
      row.push_back(Fixed(w.mean_hours, 2));
      row.push_back(Fixed(w.p95_hours, 2));
      row.push_back(std::to_string(w.unstarted));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table TenantTable(const sim::World& world, const sim::SimReport& report) {
  Table t;
  t.header = {"run",
              "tenant",
              "share GPUs",
              "period",
              "GPU-h",
              "demand GPU-h",
              "min(demand, share) GPU-h",
              "held / entitled"};
  const int total = world.cluster.total_gpus();
  auto add = [&](const std::string& period, const sim::PeriodMetrics& m) {
    for (size_t k = 0; k < m.tenants.size() && k < world.tenants.size(); ++k) {
      const sim::TenantUse& u = m.tenants[k];
      t.rows.push_back(
          {report.label, world.tenants[k].id,
           Fixed(world.tenants[k].ShareFraction(total) * total, 0), period, Fixed(u.gpu_hours, 0),
           Fixed(u.demand_gpu_hours, 0), Fixed(u.entitled_gpu_hours, 0),
           u.entitled_gpu_hours > 0
               ? Percent(std::min(u.gpu_hours, u.entitled_gpu_hours) / u.entitled_gpu_hours)
               : "-"});
    }
  };
  for (size_t d = 0; d < report.metrics.days.size(); ++d) {
    add("day " + std::to_string(d + 1), report.metrics.days[d]);
  }
  add("total", report.metrics.total);
  return t;
}

Table SweepTable(const std::vector<sim::SweepRow>& rows) {
  Table t;
  t.header = {"run",         "level",      "value",         "kept",       "min kept",
              "net value",   "kept (net)", "unmet RT",      "preempted",  "lost GPU-steps",
              "wait mean h", "wait p95 h", "never started", "8-10 p95 h", "plan ms mean"};
  for (const sim::SweepRow& r : rows) {
    t.rows.push_back({r.run, r.level, Thousands(r.value), Percent(r.kept), Percent(r.min_kept),
                      Thousands(r.net_value), Percent(r.kept_net), Fixed(r.unmet_gpu_steps, 1),
                      Fixed(r.preemptions, 1), Fixed(r.lost_gpu_steps, 0),
                      Fixed(r.wait_mean_hours, 2), Fixed(r.wait_p95_hours, 2),
                      Fixed(r.never_started, 1), Fixed(r.top_class_p95_hours, 2),
                      Fixed(r.plan_ms_mean, 2)});
  }
  return t;
}

std::pair<Table, Table> ByHourTables(const sim::World& world,
                                     const std::vector<const sim::SimReport*>& reports) {
  constexpr int kBlocks = 12;
  Table util;
  Table unmet;
  util.header = {"utilization by hour"};
  for (int b = 0; b < kBlocks; ++b) {
    char hour[16];
    std::snprintf(hour, sizeof hour, "%02dh", 2 * b);
    util.header.emplace_back(hour);
  }
  unmet.header = util.header;
  unmet.header[0] = "unmet RT by hour";
  for (const sim::SimReport* r : reports) {
    const sim::HourBlocks blocks = sim::ByBlockOfDay(world, r->run, kBlocks);
    std::vector<std::string> u = {r->label};
    std::vector<std::string> m = {r->label};
    for (int b = 0; b < kBlocks; ++b) {
      u.push_back(Percent(blocks.utilization[b], 0));
      m.push_back(Fixed(blocks.unmet_gpu_steps[b], 0));
    }
    util.rows.push_back(std::move(u));
    unmet.rows.push_back(std::move(m));
  }
  return {std::move(util), std::move(unmet)};
}

}  // namespace ordo::report
