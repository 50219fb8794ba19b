#include <gpusched/lease_waiter_line.hpp>

#include <fmt/format.h>

#include <cmath>
#include <sstream>

namespace gpusched {
namespace {

constexpr std::string_view k_tag = "gpusched-waiter";

} // namespace

std::string format_waiter_line(const WaiterLine& line)
{
    return fmt::format("{} 1 {} {:.3f} {:.3f} {:g} {}\n", k_tag, line.lease, line.since, line.used,
                       line.weight, line.gpus);
}

std::optional<WaiterLine> parse_waiter_line(std::string_view text)
{
    std::istringstream fields{std::string(text)};
    std::string tag;
    int version = 0;
    WaiterLine line;
    if (!(fields >> tag >> version >> line.lease >> line.since >> line.used >> line.weight >>
          line.gpus) ||
        tag != k_tag || version != 1 || !std::isfinite(line.since) || !std::isfinite(line.used) ||
        !std::isfinite(line.weight) || line.weight < 0.01 || line.weight > 1000 ||
        line.used < 0 || line.gpus == 0) {
        return std::nullopt;
    }
    return line;
}

double wait_start(double now)
{
    // Through the line's own text: what the other side parses is exactly this number.
    return parse_waiter_line(format_waiter_line({"x", now, 0, 1, 1}))->since;
}

bool waited_first(double waiter_since, long waiter_pid, double our_since, long our_pid)
{
    return waiter_since < our_since || (waiter_since == our_since && waiter_pid < our_pid);
}

bool owed_the_gpu(const WaiterLine& waiter, double holder_used, double holder_weight)
{
    return waiter.used / waiter.weight <= holder_used / holder_weight;
}

} // namespace gpusched
