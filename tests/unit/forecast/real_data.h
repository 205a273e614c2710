// Access to the real data in ../shared/data (relative to the repo root) for the forecast tests.
// Tests that need it call RealDataDir() and skip, saying why, when it is absent.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ordo::forecast::testing {

/// The data folder, or nothing when ORDO_SOURCE_DIR is unset or ../shared/data does not exist.
inline std::optional<std::filesystem::path> RealDataDir() {
  const char* src = std::getenv("ORDO_SOURCE_DIR");
  if (src == nullptr) return std::nullopt;
  const auto dir = std::filesystem::path(src) / ".." / "shared" / "data";
  if (!std::filesystem::exists(dir / "MANIFEST.csv")) return std::nullopt;
  return dir;
}

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Rows of a plain CSV (no quoted commas in the files used), header first.
inline std::vector<std::vector<std::string>> ReadCsv(const std::filesystem::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(std::move(cells));
  }
  return rows;
}

inline int Column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace ordo::forecast::testing
