// A plain table of text cells, rendered aligned for a terminal or as a Markdown pipe table: the
// first column left-aligned (names), the others right-aligned (figures).
#pragma once

#include <string>
#include <vector>

namespace ordo::report {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  /// Columns padded to their widest cell, two spaces apart.
  [[nodiscard]] std::string Text() const;
  /// A Markdown pipe table; `|` in cells escaped.
  [[nodiscard]] std::string Markdown() const;
};

}  // namespace ordo::report
