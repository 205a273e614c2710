// ordo's one kit for reading JSON strictly: field access on a parsed document with error paths
// (`jobs[3].gpus`), unknown fields rejected with "did you mean", values type- and range-checked;
// and the writer's JSON formatting. io's scenario and plan readers use it, and so do the layers
// above that read JSON of their own (the forecasters' files, the world format, the service's
// requests), so every reader names fields, describes wrong values and formats numbers alike.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"

namespace ordo::io::internal {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

/// `parent.key`, or `key` at the top level.
std::string FieldPath(std::string_view parent, std::string_view key);
/// `parent[index]`.
std::string IndexPath(std::string_view parent, size_t index);

/// A field path that is spelled out only when an error needs it, so reading a valid document
/// builds no path strings. Refers to its parts; use it within the full expression that makes it.
class LazyPath {
 public:
  LazyPath(const std::string& path) : parent_(path) {}  // NOLINT(google-explicit-constructor)
  LazyPath(const char* path) : parent_(path) {}         // NOLINT(google-explicit-constructor)
  LazyPath(std::string_view parent, std::string_view key)
      : parent_(parent), key_(key), kind_(kKey) {}
  LazyPath(std::string_view parent, size_t index) : parent_(parent), index_(index), kind_(kIndex) {}
  [[nodiscard]] std::string str() const;

 private:
  enum Kind { kWhole, kKey, kIndex };
  std::string_view parent_;
  std::string_view key_;
  size_t index_ = 0;
  Kind kind_ = kWhole;
};

/// Parses JSON text with ParseDocument's checks (size, UTF-8, nesting, duplicate keys). `root` is
/// the path of the document's top (empty for a top without a name): an error inside the document
/// names its field under `root` (`features.params_b`, `history[2]`), one about the text as a
/// whole names `root`.
[[nodiscard]] Result<Json> ParseJsonText(std::string_view text, std::string_view root);

/// The name in `known` closest to `name` (at most two edits away: a typo), or empty; for "did you
/// mean" on unknown fields and options.
std::string_view ClosestName(std::string_view name, std::span<const std::string_view> known);

/// A short description of a value for messages: `string "4"`, `true`, `4.5`, `an array`, `null`.
std::string Describe(const Json& value);

/// Strict conversions of one value; `path` names it in the error.
/// Integers: a JSON integer, or a number with an integral value (4.0); never a string or boolean.
[[nodiscard]] Result<int64_t> ToInt(const Json& value, const LazyPath& path, int64_t min,
                                    int64_t max);
/// Numbers: any finite JSON number within [min, max] (or (min, max] when min_exclusive).
[[nodiscard]] Result<double> ToNumber(const Json& value, const LazyPath& path, double min,
                                      double max, bool min_exclusive = false);
/// Strings of 1..max_bytes bytes (0..max_bytes when allow_empty).
[[nodiscard]] Result<std::string> ToString(const Json& value, const LazyPath& path,
                                           size_t max_bytes, bool allow_empty);
/// Booleans: `true` or `false`, never 0, 1 or a string.
[[nodiscard]] Result<bool> ToBool(const Json& value, const LazyPath& path);

/// Fails unless `value` is an array of at most max_items entries.
[[nodiscard]] Result<void> CheckList(const Json& value, const LazyPath& path, size_t max_items);

/// A JSON object being read: rejects unknown fields (those not listed and not starting with `x-`)
/// and reads fields by name with paths relative to the object's own path.
class ObjectReader {
 public:
  /// Fails unless `value` is an object. `what` names the thing in the message ("a job").
  static Result<ObjectReader> Make(const Json& value, std::string path, std::string_view what);

  /// Fails on the first field (in key order) that is neither listed nor an `x-` extension.
  [[nodiscard]] Result<void> AllowOnly(std::initializer_list<std::string_view> known) const;

  /// The field, or nullptr when absent. A present `null` is returned (it is not "absent").
  [[nodiscard]] const Json* Find(std::string_view key) const;
  [[nodiscard]] bool Has(std::string_view key) const { return Find(key) != nullptr; }
  [[nodiscard]] std::string Path(std::string_view key) const { return FieldPath(path_, key); }
  [[nodiscard]] const std::string& path() const { return path_; }

  /// An error for a required field that is absent.
  [[nodiscard]] Error Missing(std::string_view key, std::string_view hint = {}) const;

  [[nodiscard]] Result<int64_t> Int(std::string_view key, int64_t min, int64_t max) const;
  [[nodiscard]] Result<std::optional<int64_t>> OptionalInt(std::string_view key, int64_t min,
                                                           int64_t max) const;
  [[nodiscard]] Result<double> Number(std::string_view key, double min, double max,
                                      bool min_exclusive = false) const;
  [[nodiscard]] Result<std::optional<double>> OptionalNumber(std::string_view key, double min,
                                                             double max,
                                                             bool min_exclusive = false) const;
  [[nodiscard]] Result<std::string> String(std::string_view key, size_t max_bytes,
                                           bool allow_empty) const;
  [[nodiscard]] Result<std::optional<std::string>> OptionalString(std::string_view key,
                                                                  size_t max_bytes,
                                                                  bool allow_empty) const;
  [[nodiscard]] Result<std::optional<bool>> OptionalBool(std::string_view key) const;
  /// A seed: absent, or an integer from 0 to 2^64 - 1.
  [[nodiscard]] Result<std::optional<uint64_t>> OptionalSeed(std::string_view key) const;
  /// Absent: empty. Present: an array of at most max_items integers in [min, max].
  [[nodiscard]] Result<std::vector<int>> IntList(std::string_view key, int min, int max,
                                                 size_t max_items) const;
  /// Absent: empty. Present: an array of at most max_items finite numbers in [min, max].
  [[nodiscard]] Result<std::vector<double>> NumberList(std::string_view key, double min, double max,
                                                       size_t max_items) const;
  /// Absent: nothing. Present: fails unless it is an array of at most max_items entries, then
  /// calls `read(item, item_path)` (returning Result<void>) on each entry in order, stopping at
  /// the first error. For lists whose entries are more than one scalar type (a number or null).
  template <typename Read>
  [[nodiscard]] Result<void> ForEachItem(std::string_view key, size_t max_items, Read&& read) const;
  /// A required list; fails unless it is an array of at most max_items entries.
  [[nodiscard]] Result<const Json*> List(std::string_view key, size_t max_items) const;
  [[nodiscard]] Result<const Json*> OptionalList(std::string_view key, size_t max_items) const;

 private:
  ObjectReader(const Json& object, std::string path) : object_(&object), path_(std::move(path)) {}
  const Json* object_;
  std::string path_;
};

template <typename Read>
Result<void> ObjectReader::ForEachItem(std::string_view key, size_t max_items, Read&& read) const {
  const Json* value = Find(key);
  if (value == nullptr) return {};
  ORDO_RETURN_IF_ERROR(CheckList(*value, LazyPath(path_, key), max_items));
  const std::string path = Path(key);
  for (size_t i = 0; i < value->size(); ++i) {
    ORDO_RETURN_IF_ERROR(read((*value)[i], LazyPath(path, i)));
  }
  return {};
}

bool IsPowerOfTwo(int64_t n);

/// A double as JSON: an integer when it is integral and exactly representable (so priority 5 is
/// written `5`), else the shortest text that reads back to the same double.
OrderedJson NumberJson(double value);

/// Text of `value`: compact when indent < 0; else pretty, with short containers and lists of
/// scalars on one line (a demand curve or a job is one line, not one line per number). Invalid
/// UTF-8 in strings is replaced, never thrown about.
std::string Dump(const OrderedJson& value, int indent);

}  // namespace ordo::io::internal
