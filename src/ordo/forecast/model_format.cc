#include "ordo/forecast/model_format.h"

#include <limits>
#include <string>

#include "ordo/forecast/forecaster.h"
#include "ordo/forecast/time_series.h"

namespace ordo::forecast::internal {

using io::internal::Describe;

Result<Json> ParseModelText(std::string_view text) {
  auto doc = io::internal::ParseJsonText(text, "");
  if (!doc && doc.error().field.empty()) doc.error().field = "model";
  return doc;
}

Result<ObjectReader> ReadModelHeader(const Json& doc, std::string_view kind) {
  if (!doc.is_object()) {
    return FailInput("model", "must be a saved model, a JSON object (got " + Describe(doc) + ")");
  }
  ORDO_ASSIGN_OR_RETURN(ObjectReader model, ObjectReader::Make(doc, "", "a saved model"));
  // The kind first: a model of another forecaster is the likely mistake, and says so.
  ORDO_ASSIGN_OR_RETURN(const std::string found, model.String("kind", 64, false));
  if (found != kind) {
    return FailInput("kind", "expected \"" + std::string(kind) + "\", got \"" + found + "\"");
  }
  ORDO_ASSIGN_OR_RETURN(const int64_t version,
                        model.Int("version", 0, std::numeric_limits<int>::max()));
  if (version != kModelFormatVersion) {
    return FailInput("version", "this build reads model version " +
                                    std::to_string(kModelFormatVersion) + " (got " +
                                    std::to_string(version) + ")");
  }
  ORDO_RETURN_IF_ERROR(model.AllowOnly({"kind", "version", "options", "history", "fitted"}));
  return model;
}

Result<Json> ParseHistoryText(std::string_view text) {
  // Entries are `history[i]` whether the file is the list or an object holding it.
  auto doc = io::internal::ParseJsonText(text, "");
  if (!doc) {
    std::string& field = doc.error().field;
    if (field.empty() || field.front() == '[') field.insert(0, "history");
  }
  return doc;
}

Result<const Json*> HistoryList(const Json& doc, std::string_view kind) {
  if (doc.is_array()) {
    ORDO_RETURN_IF_ERROR(io::internal::CheckList(doc, "history", kMaxHistoryEntries));
    return &doc;
  }
  if (!doc.is_object()) {
    return FailInput("history",
                     "must be a list of observations, or an object whose `history` is "
                     "one (got " +
                         Describe(doc) + ")");
  }
  ORDO_ASSIGN_OR_RETURN(const ObjectReader top, ObjectReader::Make(doc, "", "a history"));
  if (!top.Has("history")) return Fail(top.Missing("history", "a list of observations"));
  if (top.Has("kind")) {
    ORDO_RETURN_IF_ERROR(ReadModelHeader(doc, kind));
  } else {
    ORDO_RETURN_IF_ERROR(top.AllowOnly({"history"}));
  }
  return top.List("history", kMaxHistoryEntries);
}

Result<std::optional<double>> ReadObservationTime(const ObjectReader& entry) {
  const Json* time = entry.Find("time");
  if (time == nullptr) return std::optional<double>();
  if (time->is_string()) {
    ORDO_ASSIGN_OR_RETURN(const double t,
                          ParseTimestamp(time->get_ref<const std::string&>(), entry.Path("time")));
    return std::optional<double>(t);
  }
  if (!time->is_number()) {
    return FailInput(entry.Path("time"),
                     "must be an ISO 8601 string or Unix seconds (got " + Describe(*time) + ")");
  }
  ORDO_ASSIGN_OR_RETURN(
      const double t,
      io::internal::ToNumber(*time, entry.Path("time"), std::numeric_limits<double>::lowest(),
                             std::numeric_limits<double>::max()));
  return std::optional<double>(t);
}

}  // namespace ordo::forecast::internal
