#include <gpusched/job_context.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

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

namespace {

template <typename Number>
bool parse_whole(std::string_view text, Number& number, int base = 10)
{
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), number, base);
    return parsed.ec == std::errc{} && parsed.ptr == text.data() + text.size();
}

// The word a context adds to its request's when the environment is not whole.
constexpr std::string_view k_chosen_environment = " chosen_environment=1";

} // namespace

std::string encode_context(const JobContext& context)
{
    std::string encoded = context.directory;
    encoded += '\0';
    encoded += fmt::format("{:04o}", context.umask);
    encoded += encode_request(context.request);
    if (!context.whole_environment) {
        // A word earlier workers do not know: they refuse the job rather than run it in an
        // environment of nothing but the chosen variables.
        encoded += k_chosen_environment;
    }
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
    const auto field = encoded.substr(directory_end + 1, umask_end - directory_end - 1);
    const auto umask = field.substr(0, std::min(field.find(' '), field.size()));
    if (!parse_whole(umask, context.umask, 8) || context.umask > 0777) {
        return std::nullopt;
    }
    std::string words(field.substr(umask.size()));
    if (words.ends_with(k_chosen_environment)) {
        context.whole_environment = false;
        words.resize(words.size() - k_chosen_environment.size());
    }
    auto request = decode_request(words);
    if (!request) {
        return std::nullopt;
    }
    context.request = *request;
    context.environment = decode_environment(encoded.substr(umask_end + 1));
    return context;
}

} // namespace gpusched
