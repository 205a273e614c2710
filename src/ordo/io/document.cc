#include "ordo/io/document.h"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <istream>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <streambuf>
#include <vector>

#include "ordo/core/scenario.h"

namespace ordo::io {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// "byte offset 17 (line 2, column 5)": lines and columns from 1, columns in bytes.
std::string Where(std::string_view text, size_t offset) {
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "byte offset " + std::to_string(offset) + " (line " + std::to_string(line) + ", column " +
         std::to_string(offset - line_start + 1) + ")";
}

// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), or of a C0 control character other than tab, LF and CR
// (neither JSON nor YAML allows them raw); nullopt when the text is clean.
struct BadByte {
  size_t offset;
  bool control;
};
std::optional<BadByte> FindBadByte(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return BadByte{i, true};
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return BadByte{i, false};
    }
    if (i + len > n) return BadByte{i, false};
    if (s[i + 1] < lo || s[i + 1] > hi) return BadByte{i, false};
    for (size_t k = 2; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return BadByte{i, false};
    }
    i += len;
  }
  return std::nullopt;
}

Error DeepNesting(std::string_view text, size_t offset) {
  return InvalidInput("", "nesting deeper than " + std::to_string(Limits::kMaxNesting) +
                              " levels at " + Where(text, offset));
}

// JSON: the bracket depth outside strings. Malformed text is the parser's to report; this only
// guarantees that nothing deeper than the limit reaches a parser.
std::optional<size_t> FindJsonTooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > Limits::kMaxNesting) return i;
    } else if (c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
    }
  }
  return std::nullopt;
}

// YAML: an upper bound of the nesting depth, line by line: block levels (a stack of indentation
// columns; each `- ` or `? ` entry marker opens one more) plus flow brackets outside quoted scalars
// and comments. It may overestimate on odd layouts (a plain scalar continued on a deeper line
// counts one level), never underestimates a real collection. Block scalars (`|`, `>`) are skipped.
std::optional<size_t> FindYamlTooDeep(std::string_view text) {
  std::vector<size_t> block;  // indentation columns of the open block levels
  int flow = 0;               // open flow brackets
  size_t flow_base = 0;       // block levels around the outermost open flow collection
  char quote = 0;             // the open quote, when inside a quoted scalar
  // Lines indented deeper than this belong to a block scalar (npos: not in one).
  size_t block_scalar_parent = std::string_view::npos;
  size_t line_start = 0;
  while (line_start <= text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t indent = 0;
    while (indent < line.size() && line[indent] == ' ') ++indent;
    const bool blank = indent == line.size();

    if (block_scalar_parent != std::string_view::npos && quote == 0 && flow == 0) {
      if (blank || indent > block_scalar_parent) {
        line_start = line_end + 1;
        continue;
      }
      block_scalar_parent = std::string_view::npos;
    }

    size_t pos = 0;
    bool scalar_start = true;  // a quote here opens a quoted scalar; a bracket opens a collection
    size_t after_markers = indent;      // where the node after `- ` markers starts
    std::optional<size_t> last_marker;  // column of the last `- ` marker
    if (quote == 0 && flow == 0) {
      if (blank || line[indent] == '#' || (indent == 0 && line[0] == '%')) {
        line_start = line_end + 1;
        continue;
      }
      if (indent == 0 && (line.rfind("---", 0) == 0 || line.rfind("...", 0) == 0) &&
          (line.size() == 3 || line[3] == ' ' || line[3] == '\t')) {
        block.clear();  // a new document
        pos = 3;
      } else {
        while (!block.empty() && block.back() > indent) block.pop_back();
        if (block.empty() || block.back() < indent) block.push_back(indent);
        pos = indent;
        // Entry markers: `- - a` opens a sequence inside a sequence on one line.
        while (pos < line.size() && (line[pos] == '-' || line[pos] == '?' || line[pos] == ':') &&
               (pos + 1 == line.size() || line[pos + 1] == ' ')) {
          last_marker = pos;
          ++pos;
          while (pos < line.size() && line[pos] == ' ') ++pos;
          block.push_back(pos);
        }
        after_markers = pos;
        if (block.size() > static_cast<size_t>(Limits::kMaxNesting)) return line_start + indent;
      }
    } else {
      scalar_start = flow > 0;
    }

    bool block_scalar_candidate = false;
    size_t block_scalar_column = 0;  // the column of the node that owns the block scalar
    for (; pos < line.size(); ++pos) {
      const char c = line[pos];
      if (quote == '\'') {
        if (c == '\'') {
          if (pos + 1 < line.size() && line[pos + 1] == '\'') {
            ++pos;  // '' is an escaped quote
          } else {
            quote = 0;
          }
        }
        continue;
      }
      if (quote == '"') {
        if (c == '\\') {
          ++pos;
        } else if (c == '"') {
          quote = 0;
        }
        continue;
      }
      if (c == '#' && (pos == 0 || line[pos - 1] == ' ' || line[pos - 1] == '\t')) break;
      if (c == ' ' || c == '\t') continue;
      block_scalar_candidate = false;
      if ((c == '\'' || c == '"') && scalar_start) {
        quote = c;
        scalar_start = false;
        continue;
      }
      if ((c == '[' || c == '{') && (scalar_start || flow > 0)) {
        if (flow == 0) {
          // `key: [` sits in the key's mapping; a line that starts with `[` (`- [`, or the root)
          // pushed a block level for this very node, which is not a collection of its own.
          flow_base = block.size();
          if (pos == after_markers && flow_base > 0) --flow_base;
        }
        ++flow;
        const size_t depth = flow_base + static_cast<size_t>(flow);
        if (depth > static_cast<size_t>(Limits::kMaxNesting)) return line_start + pos;
        scalar_start = true;
        continue;
      }
      if ((c == ']' || c == '}') && flow > 0) {
        --flow;
        scalar_start = false;
        continue;
      }
      if (c == ',' && flow > 0) {
        scalar_start = true;
        continue;
      }
      if (c == ':' && (pos + 1 == line.size() || line[pos + 1] == ' ' || flow > 0)) {
        scalar_start = true;
        continue;
      }
      if ((c == '|' || c == '>') && scalar_start && flow == 0) {
        // A block scalar header (`|`, `>-`, `|2`): the following deeper lines are its text.
        block_scalar_candidate = true;
        // `- |`: owned by the sequence entry; `key: |` or `- key: |`: by the key's mapping.
        block_scalar_column = (pos == after_markers && last_marker) ? *last_marker : after_markers;
        size_t k = pos + 1;
        while (k < line.size() && (std::isdigit(static_cast<unsigned char>(line[k])) ||
                                   line[k] == '+' || line[k] == '-')) {
          ++k;
        }
        pos = k - 1;
        // Stays a candidate only if nothing but a comment follows.
        continue;
      }
      if ((c == '&' || c == '!') && scalar_start) {
        // An anchor or tag before a node: skip its name (which ends at white space or a flow
        // indicator); the node starts after it.
        while (pos + 1 < line.size() &&
               std::string_view(" \t[]{},").find(line[pos + 1]) == std::string_view::npos) {
          ++pos;
        }
        continue;
      }
      scalar_start = false;
    }
    if (block_scalar_candidate && quote == 0 && flow == 0) {
      block_scalar_parent = block_scalar_column;
    }
    if (line_end == text.size()) break;
    line_start = line_end + 1;
  }
  return std::nullopt;
}

// Builds the document from nlohmann's SAX events, rejecting what the DOM parser would silently
// accept: duplicate keys (it keeps the last), and nesting past the limit (defence in depth: the
// pre-scan already bounds it). Paths are tracked so a duplicate key is named like any field.
class StrictJsonBuilder {
 public:
  explicit StrictJsonBuilder(Json& root) : root_(root) {}

  bool null() { return Value(Json(nullptr)); }
  bool boolean(bool v) { return Value(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return Value(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return Value(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string& text) {
    if (!std::isfinite(v)) return Fail(CurrentPath(), "must be a finite number (got " + text + ")");
    return Value(Json(v));
  }
  bool string(std::string& v) { return Value(Json(std::move(v))); }
  bool binary(Json::binary_t& /*unused*/) { return Fail("", "binary values are not JSON"); }
  bool start_object(size_t /*unused*/) { return Open(Json::object()); }
  bool start_array(size_t /*unused*/) { return Open(Json::array()); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k) {
    Frame& frame = stack_.back();
    if (frame.node->contains(k)) {
      return Fail(PathOf(stack_.size(), &k), "duplicate key \"" + k + "\"");
    }
    frame.key = k;
    frame.slot = &(*frame.node)[k];
    return true;
  }
  bool parse_error(size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> from "parse
    // error".
    std::string message = ex.what();
    if (const size_t at = message.find("] "); at != std::string::npos) message.erase(0, at + 2);
    return Fail("", message);
  }

  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

 private:
  struct Frame {
    Json* node;
    std::string key;       // objects: the key being filled
    Json* slot = nullptr;  // objects: where the next value goes
  };

  bool Fail(std::string field, std::string message) {
    if (!error_) error_ = InvalidInput(std::move(field), std::move(message));
    return false;
  }

  Json* Place(Json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& frame = stack_.back();
    if (frame.node->is_array()) {
      frame.node->push_back(std::move(value));
      return &frame.node->back();
    }
    *frame.slot = std::move(value);
    return frame.slot;
  }

  bool Value(Json value) {
    Place(std::move(value));
    return true;
  }

  bool Open(Json container) {
    if (stack_.size() >= static_cast<size_t>(Limits::kMaxNesting)) {
      return Fail(CurrentPath(),
                  "nesting deeper than " + std::to_string(Limits::kMaxNesting) + " levels");
    }
    Json* node = Place(std::move(container));
    stack_.push_back(Frame{node, {}, nullptr});
    return true;
  }

  bool Close() {
    stack_.pop_back();
    return true;
  }

  // Path of the value being read inside the first `levels` frames; `key` overrides the innermost
  // object's current key.
  std::string PathOf(size_t levels, const std::string* key) const {
    std::string path;
    for (size_t i = 0; i < levels; ++i) {
      const Frame& frame = stack_[i];
      if (frame.node->is_array()) {
        // An outer array's current element is its last; the innermost one's is the next.
        const size_t size = frame.node->size();
        path += '[';
        path += std::to_string(i + 1 < levels ? size - 1 : size);
        path += ']';
      } else {
        if (!path.empty()) path += '.';
        path += (i + 1 == levels && key != nullptr) ? *key : frame.key;
      }
    }
    return path;
  }
  std::string CurrentPath() const { return PathOf(stack_.size(), nullptr); }

  Json& root_;
  std::vector<Frame> stack_;
  std::optional<Error> error_;
};

Result<Json> ParseJson(std::string_view text) {
  Json root;
  StrictJsonBuilder builder(root);
  const bool ok = Json::sax_parse(text, &builder, Json::input_format_t::json, /*strict=*/true);
  if (builder.error()) return Fail(*builder.error());
  if (!ok) return FailInput("", "not a valid JSON document");
  return root;
}

// ---- YAML -> JSON, by the YAML 1.2 core schema ----------------------------------------------

std::string YamlWhere(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return " (line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) +
         ")";
}

bool AllOf(std::string_view s, size_t from, bool (*pred)(char)) {
  return from < s.size() &&
         std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(), pred);
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsOctal(char c) { return c >= '0' && c <= '7'; }
bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

bool IsCoreNull(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}
std::optional<bool> CoreBool(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}
bool IsCoreNonFinite(std::string_view s) {
  std::string_view body = s;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) body.remove_prefix(1);
  if (body == ".inf" || body == ".Inf" || body == ".INF") return true;
  return s == ".nan" || s == ".NaN" || s == ".NAN";
}
// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool IsCoreFloat(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t int_digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++int_digits;
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && IsDigit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

enum class ScalarKind { kAny, kInt, kFloat, kBool, kNull };

// Thrown by the event handler to stop yaml-cpp's parser at the first error; caught in ParseYaml.
struct YamlBuildError {
  Error error;
};

[[noreturn]] void ThrowInput(std::string field, std::string message) {
  throw YamlBuildError{InvalidInput(std::move(field), std::move(message))};
}

// Decimal integers beyond 64 bits become doubles, as in JSON, so a range check names them.
Json ParseFloat(const std::string& text, const std::string& path, const YAML::Mark& mark) {
  std::string_view s = text;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) {
    // Too small to represent (1e-400) reads as zero, as strtod does; too large is an error.
    const size_t e = s.find_first_of("eE");
    if (e != std::string_view::npos && e + 1 < s.size() && s[e + 1] == '-') return 0.0;
  } else if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(value)) {
    return value;
  }
  ThrowInput(path, "must be a finite number (got " + text + ")" + YamlWhere(mark));
}

// Core-schema integers: [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+. nullopt when not an integer.
std::optional<Json> CoreInt(const std::string& text, const std::string& path,
                            const YAML::Mark& mark) {
  std::string_view s = text;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    const bool hex = s[1] == 'x';
    if (!AllOf(s, 2, hex ? IsHex : IsOctal)) return std::nullopt;
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), value, hex ? 16 : 8);
    if (ec != std::errc() || end != s.data() + s.size()) {
      ThrowInput(path, "integer out of range (got " + text + ")" + YamlWhere(mark));
    }
    if (value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Json(static_cast<int64_t>(value));
    }
    return Json(value);
  }
  const bool negative = !s.empty() && s[0] == '-';
  const size_t digits_from = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if (!AllOf(s, digits_from, IsDigit)) return std::nullopt;
  const std::string_view digits = s.substr(digits_from);
  if (negative) {
    int64_t value = 0;
    const std::string signed_text = "-" + std::string(digits);
    const auto [end, ec] =
        std::from_chars(signed_text.data(), signed_text.data() + signed_text.size(), value);
    if (ec == std::errc() && end == signed_text.data() + signed_text.size()) return Json(value);
  } else {
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc() && end == digits.data() + digits.size()) {
      if (value <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Json(static_cast<int64_t>(value));
      }
      return Json(value);
    }
  }
  return ParseFloat(text, path, mark);
}

// A scalar by the YAML 1.2 core schema. `tag` is yaml-cpp's: "?" for a plain scalar, "!" for a
// quoted or block scalar (always a string), or a resolved explicit tag.
Json ConvertScalar(const std::string& text, const std::string& tag, const std::string& path,
                   const YAML::Mark& mark) {
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return text;
  ScalarKind kind = ScalarKind::kAny;
  if (tag == "tag:yaml.org,2002:int") {
    kind = ScalarKind::kInt;
  } else if (tag == "tag:yaml.org,2002:float") {
    kind = ScalarKind::kFloat;
  } else if (tag == "tag:yaml.org,2002:bool") {
    kind = ScalarKind::kBool;
  } else if (tag == "tag:yaml.org,2002:null") {
    kind = ScalarKind::kNull;
  } else if (!tag.empty() && tag != "?") {
    ThrowInput(path, "unsupported YAML tag \"" + tag + "\"" + YamlWhere(mark));
  }
  auto wrong = [&](std::string_view what) {
    ThrowInput(path,
               "is tagged " + std::string(what) + " but is \"" + text + "\"" + YamlWhere(mark));
  };
  if (kind == ScalarKind::kAny || kind == ScalarKind::kNull) {
    if (IsCoreNull(text)) return nullptr;
    if (kind == ScalarKind::kNull) wrong("!!null");
  }
  if (kind == ScalarKind::kAny || kind == ScalarKind::kBool) {
    if (auto b = CoreBool(text)) return *b;
    if (kind == ScalarKind::kBool) wrong("!!bool");
  }
  if (IsCoreNonFinite(text)) {
    if (kind == ScalarKind::kAny || kind == ScalarKind::kFloat) {
      ThrowInput(path, "must be a finite number (got " + text + ")" + YamlWhere(mark));
    }
  }
  if (kind == ScalarKind::kAny || kind == ScalarKind::kInt || kind == ScalarKind::kFloat) {
    if (auto n = CoreInt(text, path, mark)) {
      if (kind == ScalarKind::kFloat) return n->get<double>();
      return std::move(*n);
    }
    if (kind == ScalarKind::kInt) wrong("!!int");
  }
  if (kind == ScalarKind::kAny || kind == ScalarKind::kFloat) {
    if (IsCoreFloat(text)) return ParseFloat(text, path, mark);
    if (kind == ScalarKind::kFloat) wrong("!!float");
  }
  return text;
}

// Builds the JSON value straight from yaml-cpp's parser events (no YAML::Node tree): keys must be
// scalars and unique, nesting is bounded (aliases included), and aliases may not expand the
// document past a node budget (the "billion laughs"). An alias may only name a complete node, so
// a node cannot contain itself.
class YamlJsonBuilder final : public YAML::EventHandler {
 public:
  explicit YamlJsonBuilder(size_t node_budget) : budget_(node_budget) {}

  void OnDocumentStart(const YAML::Mark& /*mark*/) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (ExpectingKey()) ThrowInput(frames_.back().path, "a mapping key is empty" + YamlWhere(mark));
    Count(1, mark);
    Add(Json(nullptr), anchor, 1, 0);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (ExpectingKey()) {
      ThrowInput(frames_.back().path, "mapping keys must be plain strings" + YamlWhere(mark));
    }
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      ThrowInput(ChildPath(), "an alias names a node that contains it" + YamlWhere(mark));
    }
    const Anchored& target = it->second;
    if (frames_.size() + target.depth > static_cast<size_t>(Limits::kMaxNesting)) {
      ThrowInput(ChildPath(), "nesting deeper than " + std::to_string(Limits::kMaxNesting) +
                                  " levels (through an alias)" + YamlWhere(mark));
    }
    Count(target.nodes, mark);
    Add(Json(target.value), 0, target.nodes, target.depth);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (ExpectingKey()) {
      Frame& map = frames_.back();
      const std::string child = FieldPathOf(map.path, value);
      if (map.value.contains(value)) {
        ThrowInput(child, "duplicate key \"" + value + "\"" + YamlWhere(mark));
      }
      map.key = value;
      map.has_key = true;
      return;
    }
    Count(1, mark);
    Add(ConvertScalar(value, tag, ChildPath(), mark), anchor, 1, 0);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    Open(Json::array(), mark, tag, anchor, "tag:yaml.org,2002:seq");
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    Open(Json::object(), mark, tag, anchor, "tag:yaml.org,2002:map");
  }
  void OnMapEnd() override { Close(); }

  [[nodiscard]] bool has_root() const { return has_root_; }
  Json TakeRoot() { return std::move(root_); }

 private:
  struct Frame {
    Json value;
    std::string path;
    YAML::anchor_t anchor = 0;
    size_t nodes = 1;        // in this subtree, itself included
    size_t child_depth = 0;  // deepest collection nesting below this one
    std::string key;         // maps: the key whose value comes next
    bool has_key = false;
  };
  struct Anchored {
    Json value;
    size_t nodes;
    size_t depth;  // collection levels, 0 for a scalar
  };

  static std::string FieldPathOf(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
  }

  bool ExpectingKey() const {
    return !frames_.empty() && frames_.back().value.is_object() && !frames_.back().has_key;
  }

  std::string ChildPath() const {
    if (frames_.empty()) return "";
    const Frame& top = frames_.back();
    if (top.value.is_array()) return top.path + "[" + std::to_string(top.value.size()) + "]";
    return FieldPathOf(top.path, top.key);
  }

  void Count(size_t nodes, const YAML::Mark& mark) {
    count_ += nodes;
    if (count_ > budget_) {
      ThrowInput(ChildPath(), "the document expands to more than " + std::to_string(budget_) +
                                  " values (through YAML aliases)" + YamlWhere(mark));
    }
  }

  void Open(Json container, const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
            std::string_view own_tag) {
    if (ExpectingKey()) {
      ThrowInput(frames_.back().path, "mapping keys must be plain strings" + YamlWhere(mark));
    }
    if (!tag.empty() && tag != "?" && tag != "!" && tag != own_tag) {
      ThrowInput(ChildPath(), "unsupported YAML tag \"" + tag + "\"" + YamlWhere(mark));
    }
    if (frames_.size() >= static_cast<size_t>(Limits::kMaxNesting)) {
      ThrowInput(ChildPath(), "nesting deeper than " + std::to_string(Limits::kMaxNesting) +
                                  " levels" + YamlWhere(mark));
    }
    Count(1, mark);
    Frame frame;
    frame.value = std::move(container);
    frame.path = ChildPath();
    frame.anchor = anchor;
    frames_.push_back(std::move(frame));
  }

  void Close() {
    Frame frame = std::move(frames_.back());
    frames_.pop_back();
    Add(std::move(frame.value), frame.anchor, frame.nodes, frame.child_depth + 1);
  }

  // Places a finished value in its parent (or as the root) and remembers it under its anchor.
  void Add(Json value, YAML::anchor_t anchor, size_t nodes, size_t depth) {
    if (anchor != 0) anchors_[anchor] = Anchored{value, nodes, depth};
    if (frames_.empty()) {
      root_ = std::move(value);
      has_root_ = true;
      return;
    }
    Frame& parent = frames_.back();
    parent.nodes += nodes;
    parent.child_depth = std::max(parent.child_depth, depth);
    if (parent.value.is_array()) {
      parent.value.push_back(std::move(value));
    } else {
      parent.value[parent.key] = std::move(value);
      parent.has_key = false;
    }
  }

  size_t budget_;
  size_t count_ = 0;
  std::vector<Frame> frames_;
  std::map<YAML::anchor_t, Anchored> anchors_;
  Json root_;
  bool has_root_ = false;
};

// An input stream over the text itself: yaml-cpp wants a std::istream, and a file near the size
// limit should not be copied twice to get one.
class ViewStreamBuf : public std::streambuf {
 public:
  explicit ViewStreamBuf(std::string_view text) {
    // The get area is read-only in practice: istream never writes through it.
    char* begin = const_cast<char*>(text.data());
    setg(begin, begin, begin + text.size());
  }
};

Result<Json> ParseYaml(std::string_view text) {
  // Aliases may repeat a subtree; allow about the text's own size again, no exponential blow-up.
  YamlJsonBuilder builder(2 * text.size() + 1'000'000);
  try {
    ViewStreamBuf buffer(text);
    std::istream stream(&buffer);
    YAML::Parser parser(stream);
    // Not YAML::LoadAll: yaml-cpp 0.7 loops forever in it on a stray `,` (jbeder/yaml-cpp#1040).
    // One document is wanted; asking for a second only tells whether there is one.
    if (!parser.HandleNextDocument(builder) || !builder.has_root()) {
      return FailInput("", "the file holds no document (only comments?)");
    }
    YamlJsonBuilder rest(1'000'000);
    if (parser.HandleNextDocument(rest)) {
      return FailInput("", "the file holds more than one YAML document; expected one");
    }
  } catch (const YamlBuildError& ex) {
    return Fail(ex.error);
  } catch (const YAML::Exception& ex) {
    // "yaml-cpp: error at line 2, column 1: illegal flow end" -> without the library's prefix.
    std::string message = ex.what();
    if (message.rfind("yaml-cpp: ", 0) == 0) message.erase(0, 10);
    return FailInput("", "not a valid YAML document: " + message);
  }
  return builder.TakeRoot();
}

}  // namespace

Result<Json> ParseDocument(std::string_view text, bool yaml) {
  try {
    if (static_cast<int64_t>(text.size()) > Limits::kMaxFileBytes) {
      return FailInput("", "the input is larger than " + std::to_string(Limits::kMaxFileBytes) +
                               " bytes (" + std::to_string(text.size()) + ")");
    }
    // A UTF-8 byte-order mark is tolerated (editors on Windows write one) and dropped. Offsets in
    // messages still count it, so they match what a hex editor shows.
    const std::string_view file = text;
    const size_t bom = text.substr(0, kBom.size()) == kBom ? kBom.size() : 0;
    text.remove_prefix(bom);
    if (auto bad = FindBadByte(text)) {
      if (bad->control) {
        char code[8];
        std::snprintf(code, sizeof code, "0x%02X", static_cast<unsigned>(text[bad->offset]));
        return FailInput(
            "", std::string("control character ") + code + " at " + Where(file, bom + bad->offset));
      }
      return FailInput("", "invalid UTF-8 at " + Where(file, bom + bad->offset));
    }
    const bool blank = std::all_of(text.begin(), text.end(), [](char c) {
      return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    });
    if (blank) return FailInput("", "the file is empty");
    if (auto at = yaml ? FindYamlTooDeep(text) : FindJsonTooDeep(text)) {
      return Fail(DeepNesting(file, bom + *at));
    }
    return yaml ? ParseYaml(text) : ParseJson(text);
  } catch (const std::bad_alloc&) {
    return Fail(Error{ErrorCode::kInternal, "", "out of memory while parsing"});
  } catch (const std::exception& ex) {
    return Fail(Error{ErrorCode::kInternal, "", std::string("parser failure: ") + ex.what()});
  } catch (...) {
    return Fail(Error{ErrorCode::kInternal, "", "parser failure"});
  }
}

Result<std::string> ReadFileText(const std::string& path) {
  try {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
      return Fail(Error{ErrorCode::kNotFound, "", "no such file"});
    }
    if (std::filesystem::is_directory(status)) {
      return Fail(Error{ErrorCode::kIo, "", "is a directory, not a file"});
    }
    if (std::filesystem::is_regular_file(status)) {
      // Refuse a large regular file before reading a byte of it.
      const auto size = std::filesystem::file_size(path, ec);
      if (!ec && size > static_cast<uintmax_t>(Limits::kMaxFileBytes)) {
        return FailInput("", "the file is larger than " + std::to_string(Limits::kMaxFileBytes) +
                                 " bytes (" + std::to_string(size) + ")");
      }
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                         &std::fclose);
    if (!file) {
      return Fail(Error{ErrorCode::kIo, "", std::string("cannot open: ") + std::strerror(errno)});
    }
    // Read in chunks rather than trusting the size: pipes and /dev files have none.
    std::string text;
    std::vector<char> chunk(1 << 16);
    while (true) {
      const size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
      text.append(chunk.data(), got);
      if (static_cast<int64_t>(text.size()) > Limits::kMaxFileBytes) {
        return FailInput(
            "", "the file is larger than " + std::to_string(Limits::kMaxFileBytes) + " bytes");
      }
      if (got < chunk.size()) break;
    }
    if (std::ferror(file.get()) != 0) {
      return Fail(Error{ErrorCode::kIo, "", "read error"});
    }
    return text;
  } catch (const std::bad_alloc&) {
    return Fail(Error{ErrorCode::kInternal, "", "out of memory while reading"});
  } catch (const std::exception& ex) {
    return Fail(Error{ErrorCode::kIo, "", ex.what()});
  }
}

bool LooksLikeYaml(const std::string& path, std::string_view text) {
  auto ends_with = [&](std::string_view suffix) {
    if (path.size() < suffix.size()) return false;
    return std::equal(suffix.rbegin(), suffix.rend(), path.rbegin(), [](char a, char b) {
      return a == std::tolower(static_cast<unsigned char>(b));
    });
  };
  if (ends_with(".yaml") || ends_with(".yml")) return true;
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first == std::string_view::npos || (text[first] != '{' && text[first] != '[');
}

}  // namespace ordo::io
