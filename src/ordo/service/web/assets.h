// The dashboard's files, compiled into the binary (web/*.inc are the files themselves, wrapped in
// a raw string literal): the service needs no files and no network at run time, and a page never
// loads anything from elsewhere. The stylesheet starts with the palette (core/palette.h) as CSS
// custom properties; the script reads its colours from them.
#pragma once

#include <string_view>

namespace ordo::service::web {

std::string_view IndexHtml();
std::string_view DashboardJs();
std::string_view DashboardCss();

}  // namespace ordo::service::web
