// Loading JSON/YAML text into a JSON document safely: size, UTF-8 and nesting checked before any
// parser sees the text, YAML converted to the same JSON model so one strict reader serves both.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ordo/core/error.h"

namespace ordo::io {

/// Parses `text` as JSON (or YAML when `yaml`). Rejects: empty input, invalid UTF-8, nesting deeper
/// than Limits::kMaxNesting, non-finite numbers, duplicate keys (YAML), more than
/// Limits::kMaxFileBytes. Never throws.
[[nodiscard]] Result<nlohmann::json> ParseDocument(std::string_view text, bool yaml);

/// Reads a whole file (bounded by Limits::kMaxFileBytes).
[[nodiscard]] Result<std::string> ReadFileText(const std::string& path);

/// True when the path ends in .yaml or .yml, or the text does not start (after white space) with
/// `{` or `[`.
bool LooksLikeYaml(const std::string& path, std::string_view text);

}  // namespace ordo::io
