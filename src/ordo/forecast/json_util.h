// Internal to forecast/: strict reading of the forecasters' JSON (models, features, histories)
// with errors that name the field path. nlohmann::json throws; everything here catches.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "ordo/core/error.h"

namespace ordo::forecast::internal {

using Json = nlohmann::json;

inline std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
inline std::string Index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

/// Parses JSON text; the error names `what` (e.g. "features") and the parser's position.
inline Result<Json> ParseJson(std::string_view text, const std::string& what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return FailInput(what, std::string("not valid JSON: ") + e.what());
  }
}

/// A required or optional finite number at obj[key].
inline Result<std::optional<double>> OptNumber(const Json& obj, std::string_view key,
                                               const std::string& path) {
  const auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return std::optional<double>();
  if (!it->is_number()) return FailInput(Join(path, key), "must be a number");
  const double v = it->get<double>();
  if (!std::isfinite(v)) return FailInput(Join(path, key), "must be a finite number");
  return std::optional<double>(v);
}

inline Result<double> ReqNumber(const Json& obj, std::string_view key, const std::string& path) {
  auto v = OptNumber(obj, key, path);
  if (!v) return tl::unexpected(v.error());
  if (!*v) return FailInput(Join(path, key), "missing (required)");
  return **v;
}

inline Result<std::optional<std::string>> OptString(const Json& obj, std::string_view key,
                                                    const std::string& path) {
  const auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return FailInput(Join(path, key), "must be a string");
  return std::optional<std::string>(it->get<std::string>());
}

inline Result<std::optional<bool>> OptBool(const Json& obj, std::string_view key,
                                           const std::string& path) {
  const auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return std::optional<bool>();
  if (!it->is_boolean()) return FailInput(Join(path, key), "must be true or false");
  return std::optional<bool>(it->get<bool>());
}

/// Checks `kind` and `version` of a saved model.
inline Result<void> CheckHeader(const Json& doc, std::string_view kind, int version) {
  if (!doc.is_object()) return FailInput("model", "must be a JSON object");
  auto k = OptString(doc, "kind", "");
  if (!k) return tl::unexpected(k.error());
  if (!*k || **k != kind) {
    return FailInput("kind", "expected \"" + std::string(kind) + "\", got " +
                                 (*k ? "\"" + **k + "\"" : std::string("nothing")));
  }
  auto v = OptNumber(doc, "version", "");
  if (!v) return tl::unexpected(v.error());
  if (!*v || **v != version) {
    return FailInput("version", "this build reads model version " + std::to_string(version));
  }
  return {};
}

}  // namespace ordo::forecast::internal
