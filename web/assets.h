// The dashboard's page, script and style sheet, bundled at build time:
// web/frontend/build.mjs runs esbuild over frontend/ (ECharts included) and
// writes them into a generated source file of the build tree.
#pragma once

#include <span>
#include <string_view>

namespace tf::web {

struct Asset {
  std::string_view path;  // served at, e.g. "/app.js"
  std::string_view content_type;
  std::string_view body;
};

std::span<const Asset> DashboardAssets();

}  // namespace tf::web
