#include "ordo/report/table.h"

#include <algorithm>

#include "ordo/report/format.h"

namespace ordo::report {

std::string Table::Text() const {
  std::vector<size_t> width(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(c < width.size() ? width[c] - std::min(width[c], row[c].size()) : 0,
                            ' ');
      out += c == 0 ? row[c] + pad : pad + row[c];
      out += c + 1 < row.size() ? "  " : "\n";
    }
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

std::string Table::Markdown() const {
  std::string out = "|";
  for (const auto& h : header) out += " " + MarkdownCell(h) + " |";
  out += "\n|";
  for (size_t c = 0; c < header.size(); ++c) out += c == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : rows) {
    out += "|";
    for (const auto& cell : row) out += " " + MarkdownCell(cell) + " |";
    out += "\n";
  }
  return out;
}

}  // namespace ordo::report
