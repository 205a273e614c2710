// Internal to sim/: strict reading of nlohmann JSON with error paths (`services[2].rate[40]`), for
// the world reader and the generators' options. Nothing here throws: values are checked before
// they are converted.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ordo/core/error.h"

// ORDO_SIM_TRY(lhs, expr): assigns the value of a Result-returning expr, or returns its error.
#define ORDO_SIM_CONCAT_INNER(a, b) a##b
#define ORDO_SIM_CONCAT(a, b) ORDO_SIM_CONCAT_INNER(a, b)
#define ORDO_SIM_TRY_IMPL(tmp, lhs, expr)     \
  auto tmp = (expr);                          \
  if (!tmp) return ::ordo::Fail(tmp.error()); \
  lhs = std::move(*tmp)
#define ORDO_SIM_TRY(lhs, ...) ORDO_SIM_TRY_IMPL(ORDO_SIM_CONCAT(sim_r_, __LINE__), lhs, (__VA_ARGS__))
#define ORDO_SIM_CHECK(...)                                                    \
  do {                                                                         \
    if (auto sim_c_ = (__VA_ARGS__); !sim_c_) return ::ordo::Fail(sim_c_.error()); \
  } while (false)

namespace ordo::sim::internal {

using Json = nlohmann::json;

std::string Join(std::string_view parent, std::string_view key);  // parent.key
std::string Index(std::string_view parent, size_t i);             // parent[i]

/// One JSON object being read: unknown keys are errors unless they start with `x-`.
class Fields {
 public:
  static Result<Fields> Of(const Json& value, std::string path);
  [[nodiscard]] Result<void> AllowOnly(std::initializer_list<std::string_view> known) const;
  [[nodiscard]] const Json* Find(std::string_view key) const;
  [[nodiscard]] bool Has(std::string_view key) const { return Find(key) != nullptr; }
  [[nodiscard]] std::string Path(std::string_view key) const { return Join(path_, key); }

  [[nodiscard]] Result<int64_t> Int(std::string_view key, int64_t min, int64_t max) const;
  [[nodiscard]] Result<std::optional<int64_t>> MaybeInt(std::string_view key, int64_t min,
                                                        int64_t max) const;
  [[nodiscard]] Result<double> Number(std::string_view key, double min, double max) const;
  [[nodiscard]] Result<std::optional<double>> MaybeNumber(std::string_view key, double min,
                                                          double max) const;
  [[nodiscard]] Result<std::string> String(std::string_view key, size_t max_bytes) const;
  [[nodiscard]] Result<std::optional<std::string>> MaybeString(std::string_view key,
                                                               size_t max_bytes) const;
  [[nodiscard]] Result<std::optional<uint64_t>> MaybeSeed(std::string_view key) const;
  /// Absent: empty. Present: an array of integers in [min, max] (at most max_items).
  [[nodiscard]] Result<std::vector<int>> IntList(std::string_view key, int min, int max,
                                                 size_t max_items) const;
  [[nodiscard]] Result<std::vector<double>> NumberList(std::string_view key, double min, double max,
                                                       size_t max_items) const;

 private:
  Fields(const Json& object, std::string path) : object_(&object), path_(std::move(path)) {}
  const Json* object_;
  std::string path_;
};

Result<int64_t> ToInt(const Json& v, const std::string& path, int64_t min, int64_t max);
Result<double> ToNumber(const Json& v, const std::string& path, double min, double max);

}  // namespace ordo::sim::internal
