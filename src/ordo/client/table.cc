#include "ordo/client/table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>

namespace ordo::client {
namespace {

using Json = nlohmann::json;

std::string Cell(const Json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    const double x = value.get<double>();
    // Priorities are numbers; 5.0 reads as 5, 2.5 as 2.5.
    if (std::isfinite(x) && std::floor(x) == x && std::abs(x) < 1e15) {
      return std::to_string(static_cast<int64_t>(x));
    }
  }
  return value.dump();
}

// The field `key` of `object` as a cell; "-" when absent.
std::string Field(const Json& object, const char* key) {
  if (!object.is_object()) return "-";
  auto it = object.find(key);
  return it == object.end() ? "-" : Cell(*it);
}

const Json* Find(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string Gpus(const Json& job) {
  for (const char* key : {"gpus_used", "planned_gpus", "gpus"}) {
    if (const Json* v = Find(job, key)) return Cell(*v);
  }
  const Json* shapes = Find(job, "shapes");
  if (shapes == nullptr || !shapes->is_array()) return "-";
  std::string out;
  for (const Json& shape : *shapes) out += (out.empty() ? "" : "|") + Field(shape, "gpus");
  return out;
}

// START and END as steps and times: what the API gives for each state.
std::vector<std::string> StartEnd(const Json& job) {
  const std::string state = Field(job, "state");
  if (state == "done") {
    return {Field(job, "start_step"), Field(job, "start_time"), Field(job, "finished_step"),
            Field(job, "finished_time")};
  }
  if (state == "cancelled") {
    return {"-", "-", Field(job, "cancelled_step"), Field(job, "cancelled_time")};
  }
  std::string end = Field(job, "end_step");
  const Json* start = Find(job, "planned_start_step");
  const Json* duration = Find(job, "planned_duration_steps");
  if (state == "pending" && start != nullptr && duration != nullptr && start->is_number_integer() &&
      duration->is_number_integer()) {
    end = std::to_string(start->get<int64_t>() + duration->get<int64_t>());
  }
  return {Field(job, "planned_start_step"), Field(job, "planned_start_time"), end,
          Field(job, "end_time")};
}

}  // namespace

std::string RenderTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  };
  widen(header);
  for (const auto& row : rows) widen(row);
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) {
      out += row[c];
      if (c + 1 < row.size()) out += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out += '\n';
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

std::string RenderJobTable(const Json& list) {
  std::vector<std::vector<std::string>> rows;
  if (const Json* jobs = Find(list, "jobs"); jobs != nullptr && jobs->is_array()) {
    for (const Json& job : *jobs) {
      std::vector<std::string> row = {Field(job, "id"), Field(job, "kind"), Field(job, "priority"),
                                      Gpus(job), Field(job, "state")};
      for (std::string& cell : StartEnd(job)) row.push_back(std::move(cell));
      row.push_back(Field(job, "reason"));
      rows.push_back(std::move(row));
    }
  }
  return RenderTable({"JOBID", "KIND", "PRIO", "GPUS", "STATE", "START", "START_TIME", "END",
                      "END_TIME", "REASON"},
                     rows);
}

std::string RenderJobDetail(const Json& job) {
  static constexpr const char* kFirst[] = {"id",
                                           "tenant",
                                           "kind",
                                           "priority",
                                           "state",
                                           "gpus",
                                           "duration_steps",
                                           "shapes",
                                           "planned_start_step",
                                           "planned_start_time",
                                           "planned_start_in_steps",
                                           "planned_first_gpu",
                                           "planned_gpus",
                                           "planned_duration_steps",
                                           "first_gpu",
                                           "gpus_used",
                                           "start_step",
                                           "start_time",
                                           "end_step",
                                           "end_time",
                                           "finished_step",
                                           "finished_time",
                                           "cancelled_step",
                                           "cancelled_time",
                                           "submitted_step",
                                           "submitted_time",
                                           "reason",
                                           "blocking_id",
                                           "message"};
  std::vector<std::vector<std::string>> rows;
  if (!job.is_object()) return {};
  for (const char* key : kFirst) {
    if (job.contains(key)) rows.push_back({std::string(key) + ":", Field(job, key)});
  }
  for (const auto& [key, value] : job.items()) {
    const bool shown =
        std::any_of(std::begin(kFirst), std::end(kFirst), [&](const char* k) { return key == k; });
    if (!shown) rows.push_back({key + ":", Cell(value)});
  }
  std::string out;
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row[0].size());
  for (const auto& row : rows)
    out += row[0] + std::string(width - row[0].size() + 1, ' ') + row[1] + "\n";
  return out;
}

std::string RenderPlan(const Json& plan) {
  const Json* base_json = Find(plan, "x-step");
  const int64_t base =
      base_json != nullptr && base_json->is_number_integer() ? base_json->get<int64_t>() : 0;
  std::ostringstream out;
  out << "plan version " << Field(plan, "x-version") << " (" << Field(plan, "x-mode") << ", policy "
      << Field(plan, "policy") << "), made " << Field(plan, "x-created")
      << "; its first step is step " << base << "\n\n";

  struct Row {
    std::optional<int64_t> start;
    std::vector<std::string> cells;
  };
  std::vector<Row> rows;
  if (const Json* jobs = Find(plan, "jobs"); jobs != nullptr && jobs->is_array()) {
    for (const Json& job : *jobs) {
      const Json* start = Find(job, "start_step");
      const Json* duration = Find(job, "duration_steps");
      Row row;
      if (start != nullptr && start->is_number_integer()) {
        row.start = base + start->get<int64_t>();
        const std::string end = duration != nullptr && duration->is_number_integer()
                                    ? std::to_string(*row.start + duration->get<int64_t>())
                                    : "-";
        row.cells = {Field(job, "id"), Field(job, "gpus"), Field(job, "first_gpu"),
                     std::to_string(*row.start), end};
      } else {
        row.cells = {Field(job, "id"), "-", "-", "not in the horizon", "-"};
      }
      rows.push_back(std::move(row));
    }
  }
  // Started jobs by start (then id); those without a start keep the plan's order, last.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.start.has_value() != b.start.has_value()) return a.start.has_value();
    if (!a.start) return false;
    return *a.start != *b.start ? *a.start < *b.start : a.cells[0] < b.cells[0];
  });
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size());
  for (Row& row : rows) cells.push_back(std::move(row.cells));
  out << RenderTable({"JOBID", "GPUS", "FIRST_GPU", "START", "END"}, cells);

  const Json* services = Find(plan, "services");
  if (services != nullptr && services->is_array() && !services->empty()) {
    std::vector<std::vector<std::string>> service_rows;
    for (const Json& service : *services) {
      const Json* steps = Find(service, "gpus");
      if (steps == nullptr || !steps->is_array() || steps->empty()) {
        service_rows.push_back({Field(service, "id"), "-", "-", "-"});
        continue;
      }
      size_t least = SIZE_MAX, most = 0;
      for (const Json& step : *steps) {
        const size_t n = step.is_array() ? step.size() : 0;
        least = std::min(least, n);
        most = std::max(most, n);
      }
      const size_t first = (*steps)[0].is_array() ? (*steps)[0].size() : 0;
      service_rows.push_back({Field(service, "id"), std::to_string(first), std::to_string(least),
                              std::to_string(most)});
    }
    out << "\n"
        << RenderTable({"SERVICE", "GPUS_AT_" + std::to_string(base), "MIN", "MAX"}, service_rows);
  }
  return out.str();
}

}  // namespace ordo::client
