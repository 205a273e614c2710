// Internal to forecast/: what the forecasters' histories and JSON files have in common. The files
// are read with io's strict kit (io/json_fields.h): a saved model's header (`{"kind", "version",
// "options", "history", "fitted"}`), a history file's list, its observations. The training and
// quantization forecasters check, trim and weigh their observations alike.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"
#include "ordo/io/json_fields.h"

namespace ordo::forecast::internal {

using io::internal::Json;
using io::internal::ObjectReader;

/// The most observations a history may list, and the largest `max_history` a model may keep.
inline constexpr size_t kMaxHistoryEntries = 10'000'000;
/// Half-lives and windows in days: at most about 2,700 years, far past any use, and finite.
inline constexpr double kMaxDays = 1e6;
/// An observed run's duration: at most a thousand years, past any real job and finite in every sum.
inline constexpr double kMaxDurationS = 1000 * 365.25 * 86400;

/// Parses a saved model's text; an error about the text as a whole names `model`.
[[nodiscard]] Result<Json> ParseModelText(std::string_view text);

/// The saved model `doc`, once its `kind` is `kind` and its `version` kModelFormatVersion, and it
/// has no fields besides `options`, `history` and `fitted` (written for people, never read) and
/// `x-` extensions. Paths start at the top (`options.max_history`). `doc` must outlive the reader.
[[nodiscard]] Result<ObjectReader> ReadModelHeader(const Json& doc, std::string_view kind);

/// Parses a history file's text; entries are named `history[i]`.
[[nodiscard]] Result<Json> ParseHistoryText(std::string_view text);

/// The observations of a parsed history: `doc` itself when it is a list; else an object
/// `{"history": [...]}`, or a saved model of `kind` whose history is such a list.
[[nodiscard]] Result<const Json*> HistoryList(const Json& doc, std::string_view kind);

/// An observation's optional `time`: ISO 8601 text or Unix seconds.
[[nodiscard]] Result<std::optional<double>> ReadObservationTime(const ObjectReader& entry);

/// The observations of a history `list` (none when it is null), named `history[i]`: objects with
/// the fields `known` (besides `x-` extensions), of which `duration_s` (> 0) is required and
/// `time` optional; `read_rest(entry, observation)`, a Result<void>, reads the others.
template <typename Observation, typename ReadRest>
[[nodiscard]] Result<std::vector<Observation>> ReadObservations(
    const Json* list, std::initializer_list<std::string_view> known, ReadRest read_rest) {
  std::vector<Observation> out;
  if (list == nullptr) return out;
  out.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    ORDO_ASSIGN_OR_RETURN(
        const ObjectReader entry,
        ObjectReader::Make((*list)[i], io::internal::IndexPath("history", i), "an observation"));
    ORDO_RETURN_IF_ERROR(entry.AllowOnly(known));
    Observation o;
    ORDO_RETURN_IF_ERROR(read_rest(entry, o));
    ORDO_ASSIGN_OR_RETURN(o.duration_s, entry.Number("duration_s", 0, kMaxDurationS, true));
    ORDO_ASSIGN_OR_RETURN(o.time_s, ReadObservationTime(entry));
    out.push_back(std::move(o));
  }
  return out;
}

/// Fails unless every observation has a duration in (0, kMaxDurationS] and a finite time, naming
/// the first bad one (`history[3].duration_s`).
template <typename Observation>
[[nodiscard]] Result<void> CheckObservations(std::span<const Observation> history) {
  for (size_t i = 0; i < history.size(); ++i) {
    const Observation& o = history[i];
    if (!(o.duration_s > 0 && o.duration_s <= kMaxDurationS)) {
      return FailInput(io::internal::IndexPath("history", i) + ".duration_s",
                       "must be a number of seconds > 0 and at most 1000 years");
    }
    if (o.time_s && !std::isfinite(*o.time_s)) {
      return FailInput(io::internal::IndexPath("history", i) + ".time", "not a finite time");
    }
  }
  return {};
}

/// The last `max_history` observations of `history` (those kept for Refit).
template <typename Observation>
std::vector<Observation> MostRecent(std::span<const Observation> history, int max_history) {
  const size_t keep = std::min(history.size(), static_cast<size_t>(max_history));
  return std::vector<Observation>(history.end() - static_cast<std::ptrdiff_t>(keep), history.end());
}

/// The newest time among the observations, if any has one.
template <typename Observation>
std::optional<double> LatestTime(const std::vector<Observation>& history) {
  std::optional<double> latest;
  for (const Observation& o : history) {
    if (o.time_s && (!latest || *o.time_s > *latest)) latest = o.time_s;
  }
  return latest;
}

/// An observation's weight in a fit: halved every `half_life_days` of age before `latest`; 1 for an
/// observation without a time; never below 1e-6.
inline double RecencyWeight(std::optional<double> time_s, std::optional<double> latest,
                            double half_life_days) {
  if (!time_s || !latest) return 1.0;
  const double age_days = std::max(0.0, *latest - *time_s) / 86400;
  return std::max(1e-6, std::pow(0.5, age_days / half_life_days));
}

}  // namespace ordo::forecast::internal
