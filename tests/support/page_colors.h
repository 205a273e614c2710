// Reading colours back out of a rendered page (the report, the simulator's HTML, the dashboard),
// for the tests that every page draws each kind in the palette's colour (core/palette.h):
//
//   EXPECT_EQ(FillOf(svg, "train-1 ("), KindColor(JobKind::kTraining));
//   for (const std::string& c : HexColors(html)) EXPECT_TRUE(InPalette(c)) << c;
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <string_view>

#include "ordo/core/palette.h"

namespace ordo::testing {

/// Every `#rrggbb` and `#rgb` in `page`, lower-cased. Character references (`&#39;`) and anchors
/// (`href="#s1-mixed"`: not 3 or 6 hex digits ending a word) are left out.
inline std::set<std::string> HexColors(std::string_view page) {
  std::set<std::string> out;
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (size_t at = page.find('#'); at != std::string_view::npos; at = page.find('#', at + 1)) {
    if (at > 0 && page[at - 1] == '&') continue;  // "&#39;": a character reference
    size_t n = 0;
    while (at + 1 + n < page.size() && hex(page[at + 1 + n])) ++n;
    const bool word_goes_on = at + 1 + n < page.size() &&
                              (std::isalnum(static_cast<unsigned char>(page[at + 1 + n])) != 0 ||
                               page[at + 1 + n] == '-' || page[at + 1 + n] == '_');
    if ((n != 6 && n != 3) || word_goes_on) continue;
    std::string c(page.substr(at, n + 1));
    for (char& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out.insert(c);
  }
  return out;
}

/// Whether `hex` ("#rrggbb") is one of the palette's colours.
inline bool InPalette(std::string_view hex) {
  for (const PaletteEntry& e : kPalette) {
    if (e.hex == hex) return true;
  }
  return false;
}

/// The `fill` attribute of the element whose `<title>` starts with `title`: the last `fill=` in
/// the tag that opens right before that title (`<rect ... fill="#3e7cd6" ...><title>t (`), or ""
/// when there is no such title or tag.
inline std::string FillOf(std::string_view page, std::string_view title) {
  const size_t at = page.find("<title>" + std::string(title));
  if (at == std::string_view::npos) return "";
  const size_t open = page.rfind('<', at - 1);
  if (open == std::string_view::npos) return "";
  const std::string_view tag = page.substr(open, at - open);
  const size_t fill = tag.rfind(" fill=");
  if (fill == std::string_view::npos || fill + 7 >= tag.size()) return "";
  const char quote = tag[fill + 6];
  const size_t end = tag.find(quote, fill + 7);
  if (end == std::string_view::npos) return "";
  return std::string(tag.substr(fill + 7, end - fill - 7));
}

}  // namespace ordo::testing
