#include "ordo/io/json_fields.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "ordo/io/document.h"

namespace ordo::io::internal {
namespace {

constexpr size_t kMaxDescribedChars = 40;
// Lines of pretty output are kept within this width where a container fits on one line.
constexpr size_t kInlineWidth = 120;

void AppendScalar(const OrderedJson& value, std::string& out) {
  // Integers are the bulk of a plan or a demand curve: format them without a serializer.
  if (value.is_number_integer()) {
    char buffer[24];
    const auto [end, ec] =
        value.is_number_unsigned()
            ? std::to_chars(buffer, buffer + sizeof buffer, value.get<uint64_t>())
            : std::to_chars(buffer, buffer + sizeof buffer, value.get<int64_t>());
    out.append(buffer, end);
    return;
  }
  out += value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string FormatLimit(double limit) {
  // Limits are round numbers: print 1e9 as 1000000000, 0.5 as 0.5.
  if (std::abs(limit) < 1e15 && limit == std::floor(limit)) {
    return std::to_string(static_cast<long long>(limit));
  }
  return Json(limit).dump();
}

bool AllScalars(const OrderedJson& value) {
  return std::all_of(value.begin(), value.end(),
                     [](const OrderedJson& v) { return v.is_primitive(); });
}

// Appends the one-line text of `value`; gives up (returns false) once `out` is longer than `limit`,
// so deciding whether a large container fits costs no more than the width.
bool DumpInline(const OrderedJson& value, std::string& out, size_t limit) {
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : value.items()) {
      if (!first) out += ", ";
      first = false;
      AppendScalar(OrderedJson(key), out);
      out += ": ";
      if (!DumpInline(item, out, limit)) return false;
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& item : value) {
      if (!first) out += ", ";
      first = false;
      if (!DumpInline(item, out, limit)) return false;
    }
    out += ']';
  } else {
    AppendScalar(value, out);
  }
  return out.size() <= limit;
}

void DumpPretty(const OrderedJson& value, int indent, int level, std::string& out) {
  const size_t column = static_cast<size_t>(indent) * static_cast<size_t>(level);
  if (value.is_primitive() || value.empty() || (value.is_array() && AllScalars(value))) {
    DumpInline(value, out, std::numeric_limits<size_t>::max());
    return;
  }
  std::string inline_text;
  if (column < kInlineWidth && DumpInline(value, inline_text, kInlineWidth - column)) {
    out += inline_text;
    return;
  }
  const std::string inner(column + static_cast<size_t>(indent), ' ');
  const bool object = value.is_object();
  out += object ? "{\n" : "[\n";
  bool first = true;
  for (const auto& [key, item] : value.items()) {
    if (!first) out += ",\n";
    first = false;
    out += inner;
    if (object) {
      AppendScalar(OrderedJson(key), out);
      out += ": ";
    }
    DumpPretty(item, indent, level + 1, out);
  }
  out += '\n';
  out += std::string(column, ' ');
  out += object ? '}' : ']';
}

// The entries of the list at `key`, each converted by `convert(item, path)` (a Result) to a T.
template <typename T, typename Convert>
Result<std::vector<T>> CollectList(const ObjectReader& reader, std::string_view key,
                                   size_t max_items, Convert convert) {
  std::vector<T> out;
  ORDO_RETURN_IF_ERROR(reader.ForEachItem(
      key, max_items, [&](const Json& item, const LazyPath& path) -> Result<void> {
        ORDO_ASSIGN_OR_RETURN(const auto x, convert(item, path));
        out.push_back(static_cast<T>(x));
        return {};
      }));
  return out;
}

}  // namespace

Result<Json> ParseJsonText(std::string_view text, std::string_view root) {
  auto doc = ParseDocument(text, /*yaml=*/false);
  if (doc) return doc;
  Error error = std::move(doc).error();
  if (error.field.empty()) {
    error.field = root;
  } else if (!root.empty()) {
    // The document's own paths start at its top: `[2].time` for an array, `params_b` for an object.
    error.field =
        error.field.front() == '[' ? std::string(root) + error.field : FieldPath(root, error.field);
  }
  return Fail(std::move(error));
}

std::string_view ClosestName(std::string_view name, std::span<const std::string_view> known) {
  // Levenshtein distance; both strings are short.
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  std::string_view best;
  size_t best_distance = 3;  // suggest only close matches (typos)
  for (std::string_view candidate : known) {
    const size_t d = distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string FieldPath(std::string_view parent, std::string_view key) {
  std::string path(parent);
  if (!path.empty()) path += '.';
  path += key;
  return path;
}

std::string IndexPath(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

std::string Describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return value.get<bool>() ? "boolean true" : "boolean false";
    case Json::value_t::string: {
      std::string text = value.get<std::string>();
      bool cut = false;
      if (text.size() > kMaxDescribedChars) {
        size_t end = kMaxDescribedChars;
        // Cut on a character boundary (not inside a UTF-8 sequence).
        while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
        text.resize(end);
        cut = true;
      }
      return "string " + Json(text).dump(-1, ' ', false, Json::error_handler_t::replace) +
             (cut ? "..." : "");
    }
    case Json::value_t::array:
      return "an array of " + std::to_string(value.size());
    case Json::value_t::object:
      return "an object";
    case Json::value_t::binary:
    case Json::value_t::discarded:
      return "an unsupported value";
    default:
      return value.dump();
  }
}

std::string LazyPath::str() const {
  switch (kind_) {
    case kKey:
      return FieldPath(parent_, key_);
    case kIndex:
      return IndexPath(parent_, index_);
    case kWhole:
      break;
  }
  return std::string(parent_);
}

Result<int64_t> ToInt(const Json& value, const LazyPath& path, int64_t min, int64_t max) {
  auto out_of_range = [&] {
    return FailInput(path.str(), "must be an integer from " + std::to_string(min) + " to " +
                                     std::to_string(max) + " (got " + value.dump() + ")");
  };
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    const int64_t n = value.get<int64_t>();
    if (n < min || n > max) return out_of_range();
    return n;
  }
  if (value.is_number_unsigned()) {
    const uint64_t n = value.get<uint64_t>();
    if (max < 0 || n > static_cast<uint64_t>(max) || (min > 0 && n < static_cast<uint64_t>(min))) {
      return out_of_range();
    }
    return static_cast<int64_t>(n);
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) {
      return FailInput(path.str(), "must be an integer (got " + value.dump() + ")");
    }
    // Compare as doubles first: casting 1e30 to int64 would overflow.
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) return out_of_range();
    const auto n = static_cast<int64_t>(d);
    if (n < min || n > max) return out_of_range();
    return n;
  }
  return FailInput(path.str(), "must be an integer (got " + Describe(value) + ")");
}

Result<double> ToNumber(const Json& value, const LazyPath& path, double min, double max,
                        bool min_exclusive) {
  if (!value.is_number()) {
    return FailInput(path.str(), "must be a number (got " + Describe(value) + ")");
  }
  const double d = value.get<double>();
  if (!std::isfinite(d)) return FailInput(path.str(), "must be a finite number");
  if ((min_exclusive ? d <= min : d < min) || d > max) {
    return FailInput(path.str(), std::string("must be a number ") + (min_exclusive ? "> " : ">= ") +
                                     FormatLimit(min) + " and <= " + FormatLimit(max) + " (got " +
                                     value.dump() + ")");
  }
  return d;
}

Result<std::string> ToString(const Json& value, const LazyPath& path, size_t max_bytes,
                             bool allow_empty) {
  if (!value.is_string()) {
    return FailInput(path.str(), "must be a string (got " + Describe(value) + ")");
  }
  const auto& text = value.get_ref<const std::string&>();
  if (text.empty() && !allow_empty) return FailInput(path.str(), "must not be empty");
  if (text.size() > max_bytes) {
    return FailInput(path.str(), "is too long: at most " + std::to_string(max_bytes) +
                                     " bytes (got " + std::to_string(text.size()) + ")");
  }
  return text;
}

Result<bool> ToBool(const Json& value, const LazyPath& path) {
  if (!value.is_boolean()) {
    return FailInput(path.str(), "must be true or false (got " + Describe(value) + ")");
  }
  return value.get<bool>();
}

Result<void> CheckList(const Json& value, const LazyPath& path, size_t max_items) {
  if (!value.is_array()) {
    return FailInput(path.str(), "must be a list (got " + Describe(value) + ")");
  }
  if (value.size() > max_items) {
    return FailInput(path.str(), "has too many entries: at most " + std::to_string(max_items) +
                                     " (got " + std::to_string(value.size()) + ")");
  }
  return {};
}

Result<ObjectReader> ObjectReader::Make(const Json& value, std::string path,
                                        std::string_view what) {
  if (!value.is_object()) {
    return FailInput(std::move(path), std::string("must be ") + std::string(what) +
                                          ", a JSON object (got " + Describe(value) + ")");
  }
  return ObjectReader(value, std::move(path));
}

Result<void> ObjectReader::AllowOnly(std::initializer_list<std::string_view> known) const {
  for (const auto& [key, unused] : object_->items()) {
    if (key.rfind("x-", 0) == 0) continue;  // extension fields are ignored by the spec
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string message = "unknown field";
    const std::string_view best = ClosestName(key, {known.begin(), known.size()});
    if (!best.empty()) message += " (did you mean \"" + std::string(best) + "\"?)";
    message += "; extension fields must start with \"x-\"";
    return FailInput(Path(key), message);
  }
  return {};
}

const Json* ObjectReader::Find(std::string_view key) const {
  auto it = object_->find(key);
  return it == object_->end() ? nullptr : &*it;
}

Error ObjectReader::Missing(std::string_view key, std::string_view hint) const {
  std::string message = "missing required field";
  if (!hint.empty()) message += " (" + std::string(hint) + ")";
  return InvalidInput(Path(key), message);
}

Result<int64_t> ObjectReader::Int(std::string_view key, int64_t min, int64_t max) const {
  const Json* value = Find(key);
  if (value == nullptr) return Fail(Missing(key));
  return ToInt(*value, LazyPath(path_, key), min, max);
}

Result<std::optional<int64_t>> ObjectReader::OptionalInt(std::string_view key, int64_t min,
                                                         int64_t max) const {
  const Json* value = Find(key);
  if (value == nullptr) return std::optional<int64_t>();
  auto n = ToInt(*value, LazyPath(path_, key), min, max);
  if (!n) return Fail(n.error());
  return std::optional<int64_t>(*n);
}

Result<double> ObjectReader::Number(std::string_view key, double min, double max,
                                    bool min_exclusive) const {
  const Json* value = Find(key);
  if (value == nullptr) return Fail(Missing(key));
  return ToNumber(*value, LazyPath(path_, key), min, max, min_exclusive);
}

Result<std::optional<double>> ObjectReader::OptionalNumber(std::string_view key, double min,
                                                           double max, bool min_exclusive) const {
  const Json* value = Find(key);
  if (value == nullptr) return std::optional<double>();
  auto d = ToNumber(*value, LazyPath(path_, key), min, max, min_exclusive);
  if (!d) return Fail(d.error());
  return std::optional<double>(*d);
}

Result<std::optional<uint64_t>> ObjectReader::OptionalSeed(std::string_view key) const {
  const Json* value = Find(key);
  if (value == nullptr) return std::optional<uint64_t>();
  if (value->is_number_unsigned()) return std::optional<uint64_t>(value->get<uint64_t>());
  if (value->is_number_integer() && value->get<int64_t>() >= 0) {
    return std::optional<uint64_t>(static_cast<uint64_t>(value->get<int64_t>()));
  }
  return FailInput(Path(key), "must be a non-negative integer (got " + Describe(*value) + ")");
}

Result<std::optional<bool>> ObjectReader::OptionalBool(std::string_view key) const {
  const Json* value = Find(key);
  if (value == nullptr) return std::optional<bool>();
  ORDO_ASSIGN_OR_RETURN(const bool b, ToBool(*value, LazyPath(path_, key)));
  return std::optional<bool>(b);
}

Result<std::vector<int>> ObjectReader::IntList(std::string_view key, int min, int max,
                                               size_t max_items) const {
  return CollectList<int>(*this, key, max_items, [&](const Json& item, const LazyPath& path) {
    return ToInt(item, path, min, max);
  });
}

Result<std::vector<double>> ObjectReader::NumberList(std::string_view key, double min, double max,
                                                     size_t max_items) const {
  return CollectList<double>(*this, key, max_items, [&](const Json& item, const LazyPath& path) {
    return ToNumber(item, path, min, max);
  });
}

Result<std::string> ObjectReader::String(std::string_view key, size_t max_bytes,
                                         bool allow_empty) const {
  const Json* value = Find(key);
  if (value == nullptr) return Fail(Missing(key));
  return ToString(*value, LazyPath(path_, key), max_bytes, allow_empty);
}

Result<std::optional<std::string>> ObjectReader::OptionalString(std::string_view key,
                                                                size_t max_bytes,
                                                                bool allow_empty) const {
  const Json* value = Find(key);
  if (value == nullptr) return std::optional<std::string>();
  auto s = ToString(*value, LazyPath(path_, key), max_bytes, allow_empty);
  if (!s) return Fail(s.error());
  return std::optional<std::string>(std::move(*s));
}

Result<const Json*> ObjectReader::List(std::string_view key, size_t max_items) const {
  const Json* value = Find(key);
  if (value == nullptr) return Fail(Missing(key));
  if (auto ok = CheckList(*value, LazyPath(path_, key), max_items); !ok) return Fail(ok.error());
  return value;
}

Result<const Json*> ObjectReader::OptionalList(std::string_view key, size_t max_items) const {
  const Json* value = Find(key);
  if (value == nullptr) return static_cast<const Json*>(nullptr);
  if (auto ok = CheckList(*value, LazyPath(path_, key), max_items); !ok) return Fail(ok.error());
  return value;
}

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

OrderedJson NumberJson(double value) {
  // 2^53: every integer up to it is exact in a double, so the integer text reads back the same.
  constexpr double kExact = 9007199254740992.0;
  if (std::isfinite(value) && value == std::floor(value) && std::abs(value) <= kExact) {
    // NOLINTNEXTLINE(modernize-return-braced-init-list): braces would make a JSON array
    return OrderedJson(static_cast<int64_t>(value));
  }
  // nlohmann writes the shortest decimal that reads back to the same double.
  // NOLINTNEXTLINE(modernize-return-braced-init-list): braces would make a JSON array
  return OrderedJson(value);
}

std::string Dump(const OrderedJson& value, int indent) {
  if (indent < 0) return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  DumpPretty(value, indent, 0, out);
  out += '\n';
  return out;
}

}  // namespace ordo::io::internal
