// Parsers for Slurm 22.05's outputs. Later Slurm versions wrap numbers as {"set","infinite",
// "number"} and states as lists; both spellings are accepted so an upgrade does not break ordo.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

#include "ordo/adapters/slurm/slurm_state.h"

namespace ordo::slurm {
namespace {

using nlohmann::json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}
std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t from = 0;
  while (true) {
    const size_t at = s.find(sep, from);
    parts.push_back(
        s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) break;
    from = at + 1;
  }
  return parts;
}

template <typename T>
bool ParseInt(std::string_view s, T& out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Typed accessors: a wrong type is an error naming the field, never an exception.
Result<std::string> GetString(const json& obj, const char* key, const std::string& where,
                              bool required = false) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return FailInput(where + "." + key, "missing");
    return std::string();
  }
  if (it->is_string()) return it->get<std::string>();
  // 23.x: job_state / state are lists of strings.
  if (it->is_array() && !it->empty() && (*it)[0].is_string()) return (*it)[0].get<std::string>();
  if (it->is_array() && it->empty()) return std::string();
  return FailInput(where + "." + key, "expected a string");
}

// Returns nullopt for null, absent, or an "infinite" / unset wrapped number.
Result<std::optional<int64_t>> GetNumber(const json& obj, const char* key,
                                         const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::optional<int64_t>();
  const json* value = &*it;
  if (value->is_object()) {
    const auto set = value->find("set");
    const auto inf = value->find("infinite");
    const auto num = value->find("number");
    if ((inf != value->end() && inf->is_boolean() && inf->get<bool>()) ||
        (set != value->end() && set->is_boolean() && !set->get<bool>())) {
      return std::optional<int64_t>();
    }
    if (num == value->end()) return FailInput(where + "." + key, "expected a number");
    value = &*num;
  }
  if (value->is_number_integer()) {
    if (value->is_number_unsigned()) {
      const uint64_t u = value->get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return FailInput(where + "." + key, "number out of range");
      }
      return std::optional<int64_t>(static_cast<int64_t>(u));
    }
    return std::optional<int64_t>(value->get<int64_t>());
  }
  if (value->is_number_float()) {
    const double d = value->get<double>();
    if (!(d >= -9.2e18 && d <= 9.2e18)) return FailInput(where + "." + key, "number out of range");
    return std::optional<int64_t>(static_cast<int64_t>(d));
  }
  return FailInput(where + "." + key, "expected a number");
}

// A boolean; `fallback` when absent or null.
Result<bool> GetBool(const json& obj, const char* key, const std::string& where, bool fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return FailInput(where + "." + key, "expected true or false");
  return it->get<bool>();
}

Result<std::vector<std::string>> GetStringList(const json& obj, const char* key,
                                               const std::string& where) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (it->is_string()) {
    // Comma-separated (features in 22.05 are a string).
    const std::string text = it->get<std::string>();
    for (std::string_view part : Split(text, ',')) {
      if (!Trim(part).empty()) out.emplace_back(Trim(part));
    }
    return out;
  }
  if (!it->is_array()) return FailInput(where + "." + key, "expected a list of strings");
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      return FailInput(where + "." + key + "[" + std::to_string(i) + "]", "expected a string");
    }
    out.push_back((*it)[i].get<std::string>());
  }
  return out;
}

Result<json> ParseTop(std::string_view text, const char* list_key, const char* command) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return FailInput("", std::string(command) + " printed text that is not JSON (" +
                             std::to_string(text.size()) + " bytes)");
  }
  if (!doc.is_object()) return FailInput("", std::string(command) + ": expected a JSON object");
  auto errors = doc.find("errors");
  if (errors != doc.end() && errors->is_array() && !errors->empty()) {
    const json& first = (*errors)[0];
    std::string message = "reported an error";
    if (first.is_object()) {
      for (const char* k : {"error", "description"}) {
        auto m = first.find(k);
        if (m != first.end() && m->is_string() && !m->get<std::string>().empty()) {
          message = m->get<std::string>();
          break;
        }
      }
    }
    return FailInput("errors[0]", std::string(command) + ": " + message);
  }
  auto list = doc.find(list_key);
  if (list == doc.end()) return FailInput(list_key, std::string(command) + ": missing");
  if (!list->is_array()) return FailInput(list_key, std::string(command) + ": expected a list");
  return std::move(*list);
}

// The digits at the end of a GRES type ("g12" -> 12), or -1.
int TrailingIndex(std::string_view type) {
  size_t digits = 0;
  while (digits < type.size() &&
         std::isdigit(static_cast<unsigned char>(type[type.size() - 1 - digits]))) {
    ++digits;
  }
  if (digits == 0 || digits == type.size() || digits > 6) return -1;
  int value = -1;
  if (!ParseInt(type.substr(type.size() - digits), value)) return -1;
  return value;
}

}  // namespace

bool SlurmNode::usable() const {
  static const std::vector<std::string> kBadStates = {
      "down",    "drained", "draining", "fail",         "failing",      "future",
      "unknown", "inval",   "maint",    "powered_down", "reboot_issued"};
  static const std::vector<std::string> kBadFlags = {
      "DRAIN",         "DRAINED",      "DRAINING",      "FAIL",       "NOT_RESPONDING",
      "MAINTENANCE",   "POWERED_DOWN", "POWERING_DOWN", "POWER_DOWN", "REBOOT_REQUESTED",
      "REBOOT_ISSUED", "INVALID_REG",  "FUTURE"};
  // 22.05 spells a drained node "drained" or "idle+drain"-like compounds; check each part.
  for (std::string_view part : Split(state, '+')) {
    if (std::find(kBadStates.begin(), kBadStates.end(), Lower(part)) != kBadStates.end())
      return false;
    if (std::find(kBadFlags.begin(), kBadFlags.end(), Upper(part)) != kBadFlags.end()) return false;
  }
  for (const std::string& f : flags) {
    if (std::find(kBadFlags.begin(), kBadFlags.end(), Upper(f)) != kBadFlags.end()) return false;
  }
  return true;
}

bool SlurmJob::held() const {
  return pending() && priority == 0 &&
         (reason == "JobHeldUser" || reason == "JobHeldAdmin" || reason.rfind("JobHeld", 0) == 0 ||
          reason == "job_requeued_in_held_state");
}

namespace {
// A duration that may be zero ("0", "0m"): a restart that costs nothing, nothing saved yet.
Result<int> ParseMinutesOrZero(std::string_view text) {
  const std::string_view t = Trim(text);
  if (t == "0" || t == "0m") return 0;
  return ParseDurationMinutes(t);
}
}  // namespace

bool SlurmJob::deferred_by_ordo() const {
  if (!pending()) return false;
  const std::optional<OrdoMark> mark = ParseOrdoMark(admin_comment);
  return mark && mark->deferred;
}

std::optional<OrdoMark> ParseOrdoMark(std::string_view admin_comment) {
  const std::string_view c = Trim(admin_comment);
  if (c.rfind("ordo:", 0) != 0) return std::nullopt;
  OrdoMark mark;
  for (std::string_view item : Split(c.substr(5), ',')) {
    item = Trim(item);
    if (item == "deferred") {
      mark.deferred = true;
    } else if (item.rfind("saved=", 0) == 0) {
      auto minutes = ParseMinutesOrZero(item.substr(6));
      if (!minutes) return std::nullopt;
      mark.saved_minutes = *minutes;
    } else {
      return std::nullopt;
    }
  }
  return mark;
}

std::string FormatOrdoMark(const OrdoMark& mark) {
  std::string items;
  if (mark.deferred) items = "deferred";
  if (mark.saved_minutes) {
    items += (items.empty() ? "saved=" : ",saved=") + std::to_string(*mark.saved_minutes) + "m";
  }
  return items.empty() ? std::string() : "ordo:" + items;
}

bool SlurmJob::running() const {
  return state == "RUNNING" || state == "COMPLETING" || state == "SUSPENDED" ||
         state == "CONFIGURING" || state == "STAGE_OUT";
}

Result<std::vector<int>> ParseIndexList(std::string_view text) {
  std::vector<int> out;
  text = Trim(text);
  if (text.empty() || text == "N/A") return out;
  for (std::string_view part : Split(text, ',')) {
    part = Trim(part);
    const size_t dash = part.find('-');
    int lo = 0;
    int hi = 0;
    if (dash == std::string_view::npos) {
      if (!ParseInt(part, lo) || lo < 0)
        return FailInput("", "bad index \"" + std::string(part) + "\"");
      hi = lo;
    } else if (!ParseInt(part.substr(0, dash), lo) || !ParseInt(part.substr(dash + 1), hi) ||
               lo < 0 || hi < lo || hi - lo > 1'000'000) {
      return FailInput("", "bad index range \"" + std::string(part) + "\"");
    }
    for (int i = lo; i <= hi; ++i) out.push_back(i);
  }
  return out;
}

Result<std::vector<std::string>> ExpandHostlist(std::string_view text) {
  std::vector<std::string> out;
  text = Trim(text);
  if (text.empty() || text == "(null)" || text == "None assigned") return out;
  // Split on commas outside brackets.
  std::vector<std::string_view> items;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      items.push_back(text.substr(from, i - from));
      from = i + 1;
    } else if (text[i] == '[') {
      if (++depth > 1)
        return FailInput("", "nested brackets in hostlist \"" + std::string(text) + "\"");
    } else if (text[i] == ']') {
      if (--depth < 0)
        return FailInput("", "unbalanced ']' in hostlist \"" + std::string(text) + "\"");
    }
  }
  if (depth != 0) return FailInput("", "unbalanced '[' in hostlist \"" + std::string(text) + "\"");
  for (std::string_view item : items) {
    item = Trim(item);
    if (item.empty()) return FailInput("", "empty name in hostlist \"" + std::string(text) + "\"");
    const size_t open = item.find('[');
    if (open == std::string_view::npos) {
      out.emplace_back(item);
      continue;
    }
    const size_t close = item.find(']', open);
    const std::string prefix(item.substr(0, open));
    const std::string suffix(item.substr(close + 1));
    for (std::string_view range : Split(item.substr(open + 1, close - open - 1), ',')) {
      range = Trim(range);
      const size_t dash = range.find('-');
      const std::string_view lo_text = range.substr(0, dash);
      const std::string_view hi_text =
          dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
      long lo = 0;
      long hi = 0;
      if (!ParseInt(lo_text, lo) || !ParseInt(hi_text, hi) || lo < 0 || hi < lo ||
          hi - lo > 100'000) {
        return FailInput("", "bad range \"" + std::string(range) + "\" in hostlist \"" +
                                 std::string(text) + "\"");
      }
      const size_t width = lo_text.size();
      for (long n = lo; n <= hi; ++n) {
        std::string digits = std::to_string(n);
        if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
        std::string name = prefix;
        name += digits;
        name += suffix;
        out.push_back(std::move(name));
      }
    }
  }
  return out;
}

Result<std::vector<GresItem>> ParseGres(std::string_view text) {
  std::vector<GresItem> out;
  text = Trim(text);
  if (text.empty() || text == "(null)" || text == "N/A") return out;
  // Commas also appear inside "(IDX:0,2)": split outside parentheses.
  std::vector<std::string_view> items;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      items.push_back(text.substr(from, i - from));
      from = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  for (std::string_view item : items) {
    item = Trim(item);
    GresItem g;
    const size_t paren = item.find('(');
    std::string_view head = item.substr(0, paren);
    if (paren != std::string_view::npos) {
      if (item.back() != ')')
        return FailInput("", "unclosed '(' in GRES \"" + std::string(item) + "\"");
      const std::string_view inner = item.substr(paren + 1, item.size() - paren - 2);
      if (inner.rfind("IDX:", 0) == 0) {
        auto idx = ParseIndexList(inner.substr(4));
        if (!idx)
          return FailInput("", "GRES \"" + std::string(item) + "\": " + idx.error().message);
        g.indices = std::move(*idx);
      }
      // "(S:0-1)" (sockets) says nothing ordo needs.
    }
    if (head.rfind("gres:", 0) == 0) head.remove_prefix(5);
    if (head.rfind("gres/", 0) == 0) head.remove_prefix(5);
    const std::vector<std::string_view> parts = Split(head, ':');
    if (parts.empty() || parts[0].empty() || parts.size() > 3) {
      return FailInput("", "cannot read GRES \"" + std::string(item) + "\"");
    }
    g.name = std::string(parts[0]);
    g.count = 1;
    if (parts.size() == 2) {
      // "gpu:4" or "gpu:h100" (type, count 1)
      if (!ParseInt(parts[1], g.count)) {
        g.type = std::string(parts[1]);
        g.count = 1;
      }
    } else if (parts.size() == 3) {
      g.type = std::string(parts[1]);
      if (!ParseInt(parts[2], g.count)) {
        return FailInput("", "bad count in GRES \"" + std::string(item) + "\"");
      }
    }
    if (g.count < 0) return FailInput("", "negative count in GRES \"" + std::string(item) + "\"");
    out.push_back(std::move(g));
  }
  return out;
}

Result<int> ParseDurationMinutes(std::string_view text) {
  const std::string_view t = Trim(text);
  if (t.empty()) return FailInput("", "empty duration");
  int total = 0;
  size_t i = 0;
  bool any_unit = false;
  while (i < t.size()) {
    size_t j = i;
    while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) ++j;
    int value = 0;
    if (j == i || !ParseInt(t.substr(i, j - i), value)) {
      return FailInput(
          "", "bad duration \"" + std::string(t) + "\" (use minutes, 90m, 6h, 1h30m or 2d)");
    }
    int scale = 1;
    if (j < t.size()) {
      switch (t[j]) {
        case 'm':
          scale = 1;
          break;
        case 'h':
          scale = 60;
          break;
        case 'd':
          scale = 24 * 60;
          break;
        default:
          return FailInput("", "bad unit in duration \"" + std::string(t) + "\" (m, h or d)");
      }
      any_unit = true;
      ++j;
    } else if (any_unit) {
      return FailInput("", "duration \"" + std::string(t) + "\" mixes a unit and a bare number");
    }
    if (value > 1'000'000'000 / scale || total > 1'000'000'000 - value * scale) {
      return FailInput("", "duration \"" + std::string(t) + "\" is too long");
    }
    total += value * scale;
    i = j;
  }
  if (total <= 0)
    return FailInput("", "duration must be positive (got \"" + std::string(t) + "\")");
  return total;
}

Result<std::optional<OrdoMetadata>> ParseOrdoComment(std::string_view comment) {
  const std::string_view c = Trim(comment);
  if (c.rfind("ordo:", 0) != 0) return std::optional<OrdoMetadata>();
  OrdoMetadata meta;
  bool has_kind = false;
  bool has_priority = false;
  bool has_restart = false;
  for (std::string_view pair : Split(c.substr(5), ',')) {
    pair = Trim(pair);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      return FailInput("comment", "expected key=value, got \"" + std::string(pair) + "\"");
    }
    const std::string key(Trim(pair.substr(0, eq)));
    const std::string_view value = Trim(pair.substr(eq + 1));
    const std::string field = "comment." + key;
    if (value.empty()) return FailInput(field, "empty value");
    if (key == "kind") {
      auto kind = ParseJobKind(value);
      if (!kind) {
        return FailInput(field, "unknown kind \"" + std::string(value) +
                                    "\" (training, batch_inference or quantization)");
      }
      meta.kind = *kind;
      has_kind = true;
    } else if (key == "priority") {
      const std::string v(value);
      char* end = nullptr;
      const double p = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(p > 0) || p > Limits::kMaxPriority) {
        return FailInput(field, "must be a number > 0 (got \"" + v + "\")");
      }
      meta.priority = p;
      has_priority = true;
    } else if (key == "duration") {
      auto d = ParseDurationMinutes(value);
      if (!d) return FailInput(field, d.error().message);
      meta.duration_minutes = *d;
    } else if (key == "shapes") {
      for (std::string_view shape : Split(value, '|')) {
        shape = Trim(shape);
        const size_t x = shape.find('x');
        OrdoMetadata::ShapeMinutes s;
        if (x == std::string_view::npos || !ParseInt(shape.substr(0, x), s.gpus) || s.gpus <= 0) {
          return FailInput(
              field, "expected GPUSxDURATION such as 4x6h, got \"" + std::string(shape) + "\"");
        }
        auto d = ParseDurationMinutes(shape.substr(x + 1));
        if (!d) return FailInput(field, "\"" + std::string(shape) + "\": " + d.error().message);
        s.minutes = *d;
        meta.shapes.push_back(s);
      }
      if (meta.shapes.empty()) return FailInput(field, "no shapes");
      if (meta.shapes.size() > static_cast<size_t>(Limits::kMaxShapes)) {
        return FailInput(field, "more than " + std::to_string(Limits::kMaxShapes) + " shapes");
      }
    } else if (key == "gpu_type") {
      meta.gpu_type = std::string(value);
    } else if (key == "checkpoint") {
      auto d = ParseDurationMinutes(value);
      if (!d) return FailInput(field, d.error().message);
      meta.checkpoint_minutes = *d;
    } else if (key == "restart") {
      auto d = ParseMinutesOrZero(value);  // a restart may cost nothing
      if (!d) return FailInput(field, d.error().message);
      meta.restart_minutes = *d;
      has_restart = true;
    } else {
      return FailInput(field,
                       "unknown key (kind, priority, duration, shapes, gpu_type, checkpoint, "
                       "restart)");
    }
  }
  if (!has_kind) return FailInput("comment.kind", "missing");
  if (!has_priority) return FailInput("comment.priority", "missing");
  if (!meta.duration_minutes && meta.shapes.empty()) {
    return FailInput("comment.duration", "missing (give duration or shapes)");
  }
  if (has_restart && !meta.checkpoint_minutes) {
    return FailInput("comment.restart", "only with checkpoint (how often the job saves)");
  }
  return std::optional<OrdoMetadata>(std::move(meta));
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      size_t ie = i;
      size_t je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string_view na = a.substr(i, ie - i);
      std::string_view nb = b.substr(j, je - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text) {
  auto list = ParseTop(text, "nodes", "sinfo --json");
  if (!list) return Fail(list.error());
  std::vector<SlurmNode> nodes;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& n = (*list)[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (!n.is_object()) return FailInput(where, "expected an object");
    SlurmNode node;
    auto name = GetString(n, "name", where, true);
    if (!name) return Fail(name.error());
    if (name->empty()) return FailInput(where + ".name", "empty");
    node.name = *name;
    auto state = GetString(n, "state", where);
    if (!state) return Fail(state.error());
    node.state = Lower(*state);
    auto flags = GetStringList(n, "state_flags", where);
    if (!flags) return Fail(flags.error());
    for (auto& f : *flags) node.flags.push_back(Upper(f));
    if (auto list_state = n.find("state"); list_state != n.end() && list_state->is_array()) {
      // 23.x: ["IDLE", "DRAIN"]: the first is the state, the rest flags.
      for (size_t k = 1; k < list_state->size(); ++k) {
        if ((*list_state)[k].is_string())
          node.flags.push_back(Upper((*list_state)[k].get<std::string>()));
      }
    }
    auto partitions = GetStringList(n, "partitions", where);
    if (!partitions) return Fail(partitions.error());
    node.partitions = std::move(*partitions);
    auto gres_text = GetString(n, "gres", where);
    if (!gres_text) return Fail(gres_text.error());
    auto gres = ParseGres(*gres_text);
    if (!gres) return FailInput(where + ".gres", gres.error().message);
    std::vector<std::string> types;
    bool all_single = true;
    for (const GresItem& g : *gres) {
      if (g.name != "gpu") continue;
      node.gpus += g.count;
      types.push_back(g.type);
      if (g.count != 1 || g.type.empty()) all_single = false;
    }
    // Index-typed: every GPU its own type, the types' trailing numbers exactly 0..n-1.
    if (all_single && node.gpus > 1) {
      std::vector<std::string> by_index(types.size());
      bool ok = true;
      for (const std::string& t : types) {
        const int idx = TrailingIndex(t);
        if (idx < 0 || idx >= static_cast<int>(types.size()) || !by_index[idx].empty()) {
          ok = false;
          break;
        }
        by_index[idx] = t;
      }
      if (ok) node.index_types = std::move(by_index);
    }
    if (!node.index_typed() && !types.empty() &&
        std::all_of(types.begin(), types.end(),
                    [&](const std::string& t) { return t == types[0]; }) &&
        !types[0].empty()) {
      node.gpu_type = types[0];
    } else {
      auto features = GetStringList(n, "active_features", where);
      if (!features) return Fail(features.error());
      for (const std::string& f : *features) {
        if (f.rfind("gpu_", 0) == 0 && f.size() > 4) {
          node.gpu_type = f.substr(4);
          break;
        }
      }
    }
    // sinfo lists a node once per partition in some versions: keep the first.
    if (std::none_of(nodes.begin(), nodes.end(),
                     [&](const SlurmNode& o) { return o.name == node.name; })) {
      nodes.push_back(std::move(node));
    }
  }
  return nodes;
}

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  auto list = ParseTop(text, "jobs", "squeue --json");
  if (!list) return Fail(list.error());
  std::vector<SlurmJob> jobs;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& j = (*list)[i];
    const std::string where = "jobs[" + std::to_string(i) + "]";
    if (!j.is_object()) return FailInput(where, "expected an object");
    SlurmJob job;
    auto id = GetNumber(j, "job_id", where);
    if (!id) return Fail(id.error());
    if (!*id || **id <= 0) return FailInput(where + ".job_id", "missing or not positive");
    job.id = **id;
    for (auto [key, target] :
         {std::pair{"name", &job.name}, std::pair{"job_state", &job.state},
          std::pair{"state_reason", &job.reason}, std::pair{"comment", &job.comment},
          std::pair{"admin_comment", &job.admin_comment}, std::pair{"partition", &job.partition},
          std::pair{"account", &job.account}}) {
      auto value = GetString(j, key, where, std::string_view(key) == "job_state");
      if (!value) return Fail(value.error());
      *target = std::move(*value);
    }
    job.state = Upper(job.state);
    auto priority = GetNumber(j, "priority", where);
    if (!priority) return Fail(priority.error());
    job.priority = priority->value_or(0);
    for (auto [key, target] :
         {std::pair{"nodes", &job.nodes}, std::pair{"required_nodes", &job.required_nodes}}) {
      auto text_value = GetString(j, key, where);
      if (!text_value) return Fail(text_value.error());
      auto expanded = ExpandHostlist(*text_value);
      if (!expanded) return FailInput(where + "." + key, expanded.error().message);
      *target = std::move(*expanded);
    }
    auto node_count = GetNumber(j, "node_count", where);
    if (!node_count) return Fail(node_count.error());
    job.node_count = static_cast<int>(std::clamp<int64_t>(node_count->value_or(1), 1, 1'000'000));
    auto tres = GetString(j, "tres_per_node", where);
    if (!tres) return Fail(tres.error());
    auto gres = ParseGres(*tres);
    if (!gres) return FailInput(where + ".tres_per_node", gres.error().message);
    bool typed_ok = true;
    for (const GresItem& g : *gres) {
      if (g.name != "gpu") continue;
      job.gpus_per_node += g.count;
      if (g.count == 0) continue;
      const int idx = g.type.empty() || g.count != 1 ? -1 : TrailingIndex(g.type);
      if (idx < 0)
        typed_ok = false;
      else
        job.requested_indices.push_back(idx);
    }
    if (!typed_ok) job.requested_indices.clear();
    std::sort(job.requested_indices.begin(), job.requested_indices.end());
    if (auto detail = j.find("gres_detail"); detail != j.end() && !detail->is_null()) {
      if (!detail->is_array()) return FailInput(where + ".gres_detail", "expected a list");
      for (size_t k = 0; k < detail->size(); ++k) {
        const std::string field = where + ".gres_detail[" + std::to_string(k) + "]";
        if (!(*detail)[k].is_string()) return FailInput(field, "expected a string");
        auto items = ParseGres((*detail)[k].get<std::string>());
        if (!items) return FailInput(field, items.error().message);
        std::vector<int> indices;
        for (const GresItem& g : *items) {
          if (g.name == "gpu" && g.indices)
            indices.insert(indices.end(), g.indices->begin(), g.indices->end());
        }
        std::sort(indices.begin(), indices.end());
        indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
        job.gpu_indices.push_back(std::move(indices));
      }
    }
    for (auto [key, target] :
         {std::pair{"submit_time", &job.submit_time}, std::pair{"start_time", &job.start_time},
          std::pair{"eligible_time", &job.eligible_time}}) {
      auto t = GetNumber(j, key, where);
      if (!t) return Fail(t.error());
      *target = t->value_or(0);
    }
    for (auto [key, target] :
         {std::pair{"requeue", &job.requeue}, std::pair{"batch_flag", &job.batch}}) {
      auto flag = GetBool(j, key, where, *target);
      if (!flag) return Fail(flag.error());
      *target = *flag;
    }
    auto limit = GetNumber(j, "time_limit", where);
    if (!limit) return Fail(limit.error());
    // 22.05 prints UNLIMITED as null; some versions use 0xFFFFFFFE / 0xFFFFFFFF.
    if (*limit && **limit > 0 && **limit < 0xFFFFFFFELL)
      job.time_limit_minutes = static_cast<int>(std::min<int64_t>(**limit, 1'000'000'000));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace ordo::slurm
