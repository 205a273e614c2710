// Number and text formatting shared by the renderers, so every output shows a figure the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ordo::report {

/// 0.724 -> "72.4%".
std::string Percent(double fraction, int decimals = 1);
/// 0.548 -> "+54.8%", -0.1 -> "-10.0%"; empty -> "n/a".
std::string SignedPercent(std::optional<double> fraction);
/// 10980.4 -> "10,980"; keeps one decimal below 100 ("12.5").
std::string Thousands(double value);
/// Planning time in ms: "0.031", "1.24", "15.3", "10012".
std::string Millis(double ms);
/// Hours with one decimal: 17.5 -> "17.5".
std::string Hours(double hours);
/// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string HtmlEscape(std::string_view text);
/// Escapes | so text can sit in a Markdown table cell.
std::string MarkdownCell(std::string_view text);

}  // namespace ordo::report
