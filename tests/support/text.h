// Small helpers over rendered text (reports, charts, command output) shared by the tests.
#pragma once

#include <cstddef>
#include <string_view>

namespace ordo::testing {

/// How many times `what` occurs in `text`, overlapping occurrences included.
inline size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace ordo::testing
