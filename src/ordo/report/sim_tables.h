// The tables `ordo simulate` prints: totals per run, waits by priority class, tenants' GPU-hours
// against their shares, a noise sweep's value kept, and capacity by time of day. Each returns a
// Table the caller renders as text or Markdown.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ordo/report/table.h"
#include "ordo/sim/experiment.h"

namespace ordo::report {

/// A row label with the metrics of one run or one day.
using PeriodRows = std::vector<std::pair<std::string, const sim::PeriodMetrics*>>;

/// value, net value, utilization, unmet real-time, starts, completions, waits, planning time.
Table SimTotalsTable(const PeriodRows& rows);
/// Per priority class (1-3, 4-7, 8-10): jobs, mean and p95 wait, never started.
Table WaitClassTable(const PeriodRows& rows);
/// Per tenant and day: GPU-hours held against min(demand, share).
Table TenantTable(const sim::World& world, const sim::SimReport& report);
/// A noise sweep: per run and level, value and net value kept against the first level.
Table SweepTable(const std::vector<sim::SweepRow>& rows);
/// Utilization and unmet real-time GPU-steps by 2-hour block of the day, one row per run.
std::pair<Table, Table> ByHourTables(const sim::World& world,
                                     const std::vector<const sim::SimReport*>& reports);

}  // namespace ordo::report
