#pragma once

#include <string_view>

namespace gpusched::web {

// The page and its assets (src/web/assets/), built into the binary (cmake/EmbedAssets.cmake):
// nothing is read from disk or fetched from elsewhere when a page is served.
extern const std::string_view k_index_html;
extern const std::string_view k_app_js;
extern const std::string_view k_style_css;
extern const std::string_view k_icon_svg;

} // namespace gpusched::web
