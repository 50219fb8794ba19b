#include <gpusched/web_page.hpp>

namespace gpusched {

std::string script_safe_json(std::string_view json)
{
    std::string safe;
    safe.reserve(json.size());
    for (const char c : json) {
        switch (c) {
        case '<':
            safe += "\\u003c";
            break;
        case '>':
            safe += "\\u003e";
            break;
        case '&':
            safe += "\\u0026";
            break;
        default:
            safe += c;
        }
    }
    return safe;
}

std::string page_with_state(std::string_view html, std::string_view state_json)
{
    const auto at = html.find(k_page_state_marker);
    if (state_json.empty() || at == std::string_view::npos) {
        return std::string(html);
    }
    std::string page(html.substr(0, at));
    page += R"(<script type="application/json" id="initial-state">)";
    page += script_safe_json(state_json);
    page += "</script>";
    page += html.substr(at + k_page_state_marker.size());
    return page;
}

} // namespace gpusched
