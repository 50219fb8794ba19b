#include <gpusched/json_output.hpp>

#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace gpusched {

Json json_document(std::string_view command)
{
    return {{"schema_version", k_json_schema_version}, {"command", command}};
}

Json json_seconds(double seconds)
{
    if (!std::isfinite(seconds)) {
        return nullptr;
    }
    // Rounded to the millisecond, the shortest decimal that reads back as the double is
    // what nlohmann prints: 2.217.
    return std::round(seconds * 1000) / 1000;
}

Json json_instant(double epoch_seconds)
{
    // Before the epoch, or past the year 5000 (a record file anyone may write says 1e300):
    // no instant gpusched ever noted.
    constexpr double k_latest = 1e11;
    return epoch_seconds > 0 && epoch_seconds < k_latest ? json_seconds(epoch_seconds)
                                                         : Json(nullptr);
}

Json json_gpu_ids(std::string_view ids)
{
    auto array = Json::array();
    if (!ids.empty()) {
        for (const auto& id : split(ids, ',')) {
            array.push_back(std::string(id));
        }
    }
    return array;
}

Json json_signal(int signal)
{
    if (signal <= 0) {
        return nullptr;
    }
    const char* name = sigabbrev_np(signal);
    return name != nullptr ? Json(fmt::format("SIG{}", name)) : Json(fmt::format("{}", signal));
}

std::string format_json(const Json& document)
{
    return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace gpusched
