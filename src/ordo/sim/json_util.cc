#include "ordo/sim/json_util.h"

#include <cmath>

namespace ordo::sim::internal {
namespace {

std::string Describe(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return v.dump();
}

}  // namespace

std::string Join(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
}
std::string Index(std::string_view parent, size_t i) {
  return std::string(parent) + "[" + std::to_string(i) + "]";
}

Result<int64_t> ToInt(const Json& v, const std::string& path, int64_t min, int64_t max) {
  double d = 0;
  if (v.is_number_integer()) {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(max)) {
        return FailInput(path, "must be an integer from " + std::to_string(min) + " to " +
                                   std::to_string(max) + " (got " + v.dump() + ")");
      }
      d = static_cast<double>(u);
    } else {
      const int64_t i = v.get<int64_t>();
      if (i < min || i > max) {
        return FailInput(path, "must be an integer from " + std::to_string(min) + " to " +
                                   std::to_string(max) + " (got " + v.dump() + ")");
      }
      return i;
    }
  } else if (v.is_number_float()) {
    d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) {
      return FailInput(path, "must be an integer (got " + v.dump() + ")");
    }
  } else {
    return FailInput(path, "must be an integer (got " + Describe(v) + ")");
  }
  if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
    return FailInput(path, "must be an integer from " + std::to_string(min) + " to " +
                               std::to_string(max) + " (got " + v.dump() + ")");
  }
  return static_cast<int64_t>(d);
}

Result<double> ToNumber(const Json& v, const std::string& path, double min, double max) {
  if (!v.is_number()) return FailInput(path, "must be a number (got " + Describe(v) + ")");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    return FailInput(path, "must be a number from " + Json(min).dump() + " to " + Json(max).dump() +
                               " (got " + v.dump() + ")");
  }
  return d;
}

Result<Fields> Fields::Of(const Json& value, std::string path) {
  if (!value.is_object()) {
    return FailInput(path.empty() ? "(top level)" : path, "must be an object (got " +
                                                            Describe(value) + ")");
  }
  return Fields(value, std::move(path));
}

Result<void> Fields::AllowOnly(std::initializer_list<std::string_view> known) const {
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    const std::string& key = it.key();
    if (key.rfind("x-", 0) == 0) continue;
    bool ok = false;
    for (std::string_view k : known) ok = ok || k == key;
    if (!ok) return FailInput(Path(key), "unknown field (extension fields start with x-)");
  }
  return {};
}

const Json* Fields::Find(std::string_view key) const {
  auto it = object_->find(key);
  return it == object_->end() ? nullptr : &*it;
}

Result<int64_t> Fields::Int(std::string_view key, int64_t min, int64_t max) const {
  const Json* v = Find(key);
  if (!v) return FailInput(Path(key), "is required");
  return ToInt(*v, Path(key), min, max);
}

Result<std::optional<int64_t>> Fields::MaybeInt(std::string_view key, int64_t min,
                                                int64_t max) const {
  const Json* v = Find(key);
  if (!v) return std::optional<int64_t>();
  ORDO_SIM_TRY(int64_t i, ToInt(*v, Path(key), min, max));
  return std::optional<int64_t>(i);
}

Result<double> Fields::Number(std::string_view key, double min, double max) const {
  const Json* v = Find(key);
  if (!v) return FailInput(Path(key), "is required");
  return ToNumber(*v, Path(key), min, max);
}

Result<std::optional<double>> Fields::MaybeNumber(std::string_view key, double min,
                                                  double max) const {
  const Json* v = Find(key);
  if (!v) return std::optional<double>();
  ORDO_SIM_TRY(double d, ToNumber(*v, Path(key), min, max));
  return std::optional<double>(d);
}

Result<std::string> Fields::String(std::string_view key, size_t max_bytes) const {
  const Json* v = Find(key);
  if (!v) return FailInput(Path(key), "is required");
  if (!v->is_string()) return FailInput(Path(key), "must be a string (got " + Describe(*v) + ")");
  const std::string& s = v->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    return FailInput(Path(key), "is longer than " + std::to_string(max_bytes) + " bytes");
  }
  return s;
}

Result<std::optional<std::string>> Fields::MaybeString(std::string_view key,
                                                       size_t max_bytes) const {
  if (!Has(key)) return std::optional<std::string>();
  ORDO_SIM_TRY(std::string s, String(key, max_bytes));
  return std::optional<std::string>(std::move(s));
}

Result<std::optional<uint64_t>> Fields::MaybeSeed(std::string_view key) const {
  const Json* v = Find(key);
  if (!v) return std::optional<uint64_t>();
  if (v->is_number_unsigned()) return std::optional<uint64_t>(v->get<uint64_t>());
  if (v->is_number_integer() && v->get<int64_t>() >= 0) {
    return std::optional<uint64_t>(static_cast<uint64_t>(v->get<int64_t>()));
  }
  return FailInput(Path(key), "must be a non-negative integer (got " + Describe(*v) + ")");
}

Result<std::vector<int>> Fields::IntList(std::string_view key, int min, int max,
                                         size_t max_items) const {
  std::vector<int> out;
  const Json* v = Find(key);
  if (!v) return out;
  if (!v->is_array()) return FailInput(Path(key), "must be an array (got " + Describe(*v) + ")");
  if (v->size() > max_items) {
    return FailInput(Path(key), "has more than " + std::to_string(max_items) + " entries");
  }
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    ORDO_SIM_TRY(int64_t x, ToInt((*v)[i], Index(Path(key), i), min, max));
    out.push_back(static_cast<int>(x));
  }
  return out;
}

Result<std::vector<double>> Fields::NumberList(std::string_view key, double min, double max,
                                               size_t max_items) const {
  std::vector<double> out;
  const Json* v = Find(key);
  if (!v) return out;
  if (!v->is_array()) return FailInput(Path(key), "must be an array (got " + Describe(*v) + ")");
  if (v->size() > max_items) {
    return FailInput(Path(key), "has more than " + std::to_string(max_items) + " entries");
  }
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    ORDO_SIM_TRY(double x, ToNumber((*v)[i], Index(Path(key), i), min, max));
    out.push_back(x);
  }
  return out;
}

}  // namespace ordo::sim::internal
