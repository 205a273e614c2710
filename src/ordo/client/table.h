// What the client commands print: squeue-like tables of jobs and of a plan, and one job in
// detail (as `scontrol show job`). Built from the server's JSON as it is: steps are the absolute
// steps the API gives, times its ISO 8601 UTC strings; a field the server left out prints "-".
//
//   JOBID   KIND      PRIO  GPUS  STATE    START  START_TIME            END  END_TIME  REASON
//   train-a training  5     8     running  3      2026-12-01T03:00:00Z  9    ...       none
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ordo::client {

/// Columns padded to their widest cell, two spaces apart; the last column is not padded.
[[nodiscard]] std::string RenderTable(const std::vector<std::string>& header,
                                      const std::vector<std::vector<std::string>>& rows);

/// The job list of GET /v1/jobs (`{"jobs": [...]}`): JOBID KIND PRIO GPUS STATE START
/// START_TIME END END_TIME REASON, one row per job in the server's order. START is the planned
/// start of a pending job (or "-" when not in the horizon), the start of a running or done job;
/// END its end (a pending job's planned start plus its planned duration: the API gives no time
/// for it). GPUS is the block planned or held, else the shapes asked for ("4|8").
[[nodiscard]] std::string RenderJobTable(const nlohmann::json& list);

/// One job of GET /v1/jobs/{id}, a "Key: value" line per field the server sent, the usual ones
/// first.
[[nodiscard]] std::string RenderJobDetail(const nlohmann::json& job);

/// The plan of GET /v1/plan: a heading (version, mode, first step, policy), then JOBID GPUS
/// FIRST_GPU START END in absolute steps (x-step + the plan's own steps), started jobs by start,
/// then those not started in the horizon; then each service's GPUs at the plan's first step and
/// its least and most over the horizon.
[[nodiscard]] std::string RenderPlan(const nlohmann::json& plan);

}  // namespace ordo::client
