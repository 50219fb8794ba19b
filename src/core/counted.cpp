#include <gpusched/counted.hpp>

#include <fmt/format.h>

namespace gpusched {

std::string counted(std::size_t count, std::string_view singular, std::string_view plural)
{
    if (count == 1) {
        return fmt::format("1 {}", singular);
    }
    if (plural.empty()) {
        return fmt::format("{} {}s", count, singular);
    }
    return fmt::format("{} {}", count, plural);
}

} // namespace gpusched
