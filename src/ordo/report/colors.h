// The report's palette, shared by the SVG charts and the HTML legend so they cannot disagree.
#pragma once

#include <string_view>

#include "ordo/core/scenario.h"

namespace ordo::report {

inline constexpr std::string_view kIdleColor = "#e6e9ee";
inline constexpr std::string_view kUnmetColor = "#d32f2f";

inline std::string_view KindColor(JobKind kind) {
  switch (kind) {
    case JobKind::kTraining:
      return "#3e7cd6";
    case JobKind::kBatchInference:
      return "#2e9e68";
    case JobKind::kQuantization:
      return "#e0962a";
  }
  return "#777777";
}

/// Services cycle through colours that no job kind uses.
inline std::string_view ServiceColor(size_t service) {
  static constexpr std::string_view kColors[] = {"#8e44ad", "#c2185b", "#00838f",
                                                 "#6d4c41", "#5e35b1", "#827717"};
  return kColors[service % (sizeof kColors / sizeof kColors[0])];
}

}  // namespace ordo::report
