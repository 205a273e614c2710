#include "ordo/service/web/assets.h"

#include <string>

#include "ordo/core/palette.h"

namespace ordo::service::web {
namespace {

// Each .inc file is `R"ordo_asset(` + the file + `)ordo_asset"`: edit them as HTML, JS and CSS.
constexpr std::string_view kIndexHtml =
#include "ordo/service/web/index.html.inc"
    ;
constexpr std::string_view kDashboardJs =
#include "ordo/service/web/dashboard.js.inc"
    ;
constexpr std::string_view kDashboardCss =
#include "ordo/service/web/dashboard.css.inc"
    ;

}  // namespace

std::string_view IndexHtml() { return kIndexHtml; }
std::string_view DashboardJs() { return kDashboardJs; }
std::string_view DashboardCss() {
  // The palette's custom properties first: the stylesheet and the script take every colour from
  // them. Built once, on first use, and never changed after (thread-safe static init).
  static const std::string kCss = PaletteCss() + std::string(kDashboardCss);
  return kCss;
}

}  // namespace ordo::service::web
