#include <gpusched/probe_protocol.hpp>

#include <fmt/format.h>

namespace gpusched {
namespace {

constexpr std::string_view k_error_prefix = "error: ";

} // namespace

std::string probe_error_line(std::string_view why)
{
    return fmt::format("{}{}\n", k_error_prefix, why);
}

std::optional<std::string> probe_error(std::string_view answer)
{
    if (answer.substr(0, k_error_prefix.size()) != k_error_prefix) {
        return std::nullopt;
    }
    const auto why = answer.substr(k_error_prefix.size());
    return std::string(why.substr(0, why.find('\n')));
}

} // namespace gpusched
