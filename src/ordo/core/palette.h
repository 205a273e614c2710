// The one palette of every page ordo draws: the report (`ordo compare --report-dir`), the
// simulator's HTML (`ordo simulate --html`) and the service's dashboard. A kind of work has one
// colour everywhere, so a reader who learnt "blue is training" on one page can trust it on the
// next. It lives in core because the three pages live in three layers (sim, report, service) and
// core is the one below them all.
//
// The dashboard gets it as CSS custom properties (`--training: #3e7cd6;`) written by PaletteCss()
// in front of its stylesheet; its script reads them back, so no colour is typed twice.
//
//   svg += "<rect fill=\"" + std::string(KindColor(job.kind)) + "\" .../>";
//   svg += "<line stroke=\"" + std::string(Color(Swatch::kBoundary)) + "\" .../>";
//   css = PaletteCss() + page_css;  // ":root { --training: #3e7cd6; ... }"
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "ordo/core/scenario.h"

namespace ordo {

/// What a colour means on a page. The first four are the kinds of work; the rest are the marks
/// and the neutral ink around them. The order is kPalette's.
enum class Swatch : int {
  kTraining = 0,
  kBatchInference,
  kQuantization,
  kService,   // a real-time (inference) service's GPUs
  kIdle,      // a GPU-step nobody holds
  kUnmet,     // real-time demand no GPU serves
  kHidden,    // another tenant's job, on a tenant's dashboard
  kNow,       // the dashboard's current step and plan start
  kAlert,     // an error, an illegal plan, a re-plan forced by a job outliving its forecast
  kInk,       // text, a demand line
  kMuted,     // axis labels, secondary text, a forecast line
  kBoundary,  // node and group boundaries, plot frames
  kRule,      // table rules, grid lines
  kPanel,     // page and table-header backgrounds
  kPaper,     // cards, text on a coloured block
  kStudy,     // the report's columns quoted from the study
};

struct PaletteEntry {
  Swatch swatch;
  std::string_view name;  // the CSS custom property (without "--"); a kind's is its JSON name
  std::string_view hex;   // "#rrggbb"
  std::string_view meaning;
};

inline constexpr std::array<PaletteEntry, 16> kPalette = {{
    {Swatch::kTraining, "training", "#3e7cd6", "training job"},
    {Swatch::kBatchInference, "batch_inference", "#2e9e68", "batch inference job"},
    {Swatch::kQuantization, "quantization", "#e0962a", "quantization job"},
    {Swatch::kService, "service", "#8e44ad", "real-time service"},
    {Swatch::kIdle, "idle", "#e6e9ee", "idle GPU"},
    {Swatch::kUnmet, "unmet", "#d32f2f", "unmet real-time demand"},
    {Swatch::kHidden, "hidden", "#9aa2ae", "another tenant's job"},
    {Swatch::kNow, "now", "#c2185b", "current step / plan start"},
    {Swatch::kAlert, "alert", "#b00020", "error or forced re-plan"},
    {Swatch::kInk, "ink", "#1d2430", "text"},
    {Swatch::kMuted, "muted", "#5d6675", "secondary text and axes"},
    {Swatch::kBoundary, "boundary", "#555b66", "node boundary, plot frame"},
    {Swatch::kRule, "rule", "#d8dce3", "rules and grid lines"},
    {Swatch::kPanel, "panel", "#f4f5f7", "page background"},
    {Swatch::kPaper, "paper", "#ffffff", "card, text on a block"},
    {Swatch::kStudy, "study", "#fbf7e9", "figures quoted from the study"},
}};

// kPalette[i] describes Swatch i: Color() indexes the table by the enum.
constexpr bool PaletteInSwatchOrder() {
  for (size_t i = 0; i < kPalette.size(); ++i) {
    if (static_cast<size_t>(kPalette[i].swatch) != i) return false;
  }
  return true;
}
static_assert(PaletteInSwatchOrder(), "kPalette must list the swatches in their enum order");

constexpr const PaletteEntry& PaletteOf(Swatch swatch) {
  return kPalette[static_cast<size_t>(swatch)];
}
constexpr std::string_view Color(Swatch swatch) { return PaletteOf(swatch).hex; }

constexpr Swatch KindSwatch(JobKind kind) {
  switch (kind) {
    case JobKind::kTraining:
      return Swatch::kTraining;
    case JobKind::kBatchInference:
      return Swatch::kBatchInference;
    case JobKind::kQuantization:
      return Swatch::kQuantization;
  }
  return Swatch::kHidden;
}
constexpr std::string_view KindColor(JobKind kind) { return Color(KindSwatch(kind)); }

/// `:root { --training: #3e7cd6; ... }`: the palette for a stylesheet, one property per entry.
inline std::string PaletteCss() {
  std::string css = ":root {";
  for (const PaletteEntry& e : kPalette) {
    css += " --" + std::string(e.name) + ": " + std::string(e.hex) + ";";
  }
  return css + " }\n";
}

}  // namespace ordo
