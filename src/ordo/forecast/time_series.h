// Timestamps and rate histories: parsing ISO 8601 or Unix seconds, writing ISO 8601, and reading a
// `time,rate` CSV from text (the caller reads the file). Every error names the row and column.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ordo/core/error.h"

namespace ordo::forecast {

/// One observation of a request rate: `time_s` in Unix seconds (UTC), `rate` >= 0 in whatever unit
/// the history uses (requests per second for ServeGen).
struct RatePoint {
  double time_s = 0;
  double rate = 0;
};

/// Unix seconds from "2024-05-06T14:00:00Z", "2024-05-06 14:00", "2024-05-06T14:00:00.5+02:00",
/// "2024-05-06" (midnight UTC), or a plain number of seconds ("1714996800", "1.7e9"). A time
/// without an offset is UTC. `field` names the value in the error.
[[nodiscard]] Result<double> ParseTimestamp(std::string_view text, const std::string& field);

/// "2024-05-06T14:00:00Z" (whole seconds, UTC).
std::string FormatTimestamp(double time_s);

/// A finite number from the whole of `text` (surrounding blanks allowed); `field` names it.
[[nodiscard]] Result<double> ParseNumber(std::string_view text, const std::string& field);

/// The fields of one CSV line; a field may be quoted, with "" for a quote inside it.
std::vector<std::string> SplitCsvLine(std::string_view line);

/// Parses CSV text with a header naming a `time` column and a `rate` column (other columns are
/// ignored; names are matched without regard to case or surrounding blanks). Rows must have
/// strictly increasing times. Errors: missing column (field `time`/`rate`), a row too short, a
/// value that is not a number or is negative, unsorted or duplicate times, no data rows. The field
/// of a row error is `rows[i].rate` (i counts data rows from 0) and the message gives the line.
[[nodiscard]] Result<std::vector<RatePoint>> ParseRateCsv(std::string_view text);

/// Checks a history built in code: finite times strictly increasing, finite rates >= 0, at least
/// one point. Field paths are `history[i].time` / `history[i].rate`.
[[nodiscard]] Result<void> ValidateRateHistory(const std::vector<RatePoint>& history);

}  // namespace ordo::forecast
