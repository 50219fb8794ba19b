#include <gpusched/job_context.hpp>

#include <fmt/format.h>

#include <charconv>

namespace gpusched {

std::string encode_environment(const std::vector<std::string>& environment)
{
    std::string encoded;
    for (const auto& variable : environment) {
        encoded += variable;
        encoded += '\0';
    }
    return encoded;
}

std::vector<std::string> decode_environment(std::string_view encoded)
{
    std::vector<std::string> environment;
    while (!encoded.empty()) {
        const auto end = encoded.find('\0');
        const auto variable = encoded.substr(0, end);
        if (!variable.empty()) {
            environment.emplace_back(variable);
        }
        if (end == std::string_view::npos) {
            break;
        }
        encoded.remove_prefix(end + 1);
    }
    return environment;
}

std::string encode_context(const JobContext& context)
{
    std::string encoded = context.directory;
    encoded += '\0';
    encoded += fmt::format("{:04o}", context.umask);
    encoded += '\0';
    return encoded + encode_environment(context.environment);
}

std::optional<JobContext> decode_context(std::string_view encoded)
{
    const auto directory_end = encoded.find('\0');
    if (directory_end == std::string_view::npos || directory_end == 0 || encoded.front() != '/') {
        return std::nullopt;
    }
    const auto umask_end = encoded.find('\0', directory_end + 1);
    if (umask_end == std::string_view::npos) {
        return std::nullopt;
    }
    JobContext context;
    context.directory = std::string(encoded.substr(0, directory_end));
    const auto umask = encoded.substr(directory_end + 1, umask_end - directory_end - 1);
    const auto parsed =
        std::from_chars(umask.data(), umask.data() + umask.size(), context.umask, 8);
    if (parsed.ec != std::errc{} || parsed.ptr != umask.data() + umask.size() ||
        context.umask > 0777) {
        return std::nullopt;
    }
    context.environment = decode_environment(encoded.substr(umask_end + 1));
    return context;
}

} // namespace gpusched
