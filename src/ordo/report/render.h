// Renderers of a Comparison: the terminal table, the Markdown report, JSON, and the self-contained
// HTML report with a GPU x time chart per scenario and policy. Pure functions: text in, text out;
// the caller writes files.
#pragma once

#include <string>

#include "ordo/core/plan.h"
#include "ordo/core/scenario.h"
#include "ordo/report/comparison.h"

namespace ordo::report {

/// One aligned table per scenario (valid Markdown too), the study's figures on a line below each
/// scenario that re-creates it, and every problem (failed run, broken rule) at the end.
std::string RenderTable(const Comparison& comparison);

/// report.md: a summary against the study, then per scenario its table with the study's figures
/// as extra columns, and the problems.
std::string RenderMarkdown(const Comparison& comparison);

/// Every figure of every run as JSON (fractions, not percentages), the study's figures included.
std::string RenderJson(const Comparison& comparison);

/// report.html: one self-contained file (inline CSS and SVG, no script, no network).
std::string RenderHtml(const Comparison& comparison);

/// The GPU x time chart of one plan as an <svg class="chart"> element: GPUs down, steps across,
/// jobs as blocks coloured by kind, services in their own colours (held but beyond demand drawn
/// faint), idle GPU-steps light grey, unmet real-time demand as a red strip below.
std::string RenderPlanSvg(const Scenario& scenario, const Plan& plan);

}  // namespace ordo::report
