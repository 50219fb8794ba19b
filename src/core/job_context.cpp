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

std::string encode_context(const JobContext& context)
{
    std::string encoded = context.directory;
    encoded += '\0';
    encoded += fmt::format("{:04o}", context.umask);
    const auto& options = context.request;
    if (options.gpus) {
        encoded += fmt::format(" gpus={}", *options.gpus);
    }
    if (options.timeout) {
        encoded += fmt::format(" timeout={}", options.timeout->count());
    }
    if (options.retries) {
        encoded += fmt::format(" retries={}", *options.retries);
    }
    if (!context.whole_environment) {
        // A word earlier workers do not know: they refuse the job rather than run it in an
        // environment of nothing but the chosen variables.
        encoded += " chosen_environment=1";
    }
    encoded += '\0';
    return encoded + encode_environment(context.environment);
}

namespace {

template <typename Number>
bool parse_whole(std::string_view text, Number& number, int base = 10)
{
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), number, base);
    return parsed.ec == std::errc{} && parsed.ptr == text.data() + text.size();
}

// " gpus=2 timeout=5000": the options after the umask. False on a word it does not know: a
// later version's option, which this worker cannot honour.
bool decode_options(std::string_view text, JobRequest& options, bool& whole_environment)
{
    while (!text.empty()) {
        if (text.front() != ' ') {
            return false;
        }
        text.remove_prefix(1);
        const auto end = std::min(text.find(' '), text.size());
        const auto word = text.substr(0, end);
        text.remove_prefix(end);
        const auto equals = word.find('=');
        if (equals == std::string_view::npos) {
            return false;
        }
        const auto name = word.substr(0, equals);
        const auto value = word.substr(equals + 1);
        std::uint64_t number = 0;
        if (!parse_whole(value, number)) {
            return false;
        }
        if (name == "gpus" && number > 0) {
            options.gpus = number;
        } else if (name == "timeout" && number > 0) {
            options.timeout = std::chrono::milliseconds(number);
        } else if (name == "retries" && number <= 1'000'000) {
            options.retries = static_cast<unsigned>(number);
        } else if (name == "chosen_environment" && number == 1) {
            whole_environment = false;
        } else {
            return false;
        }
    }
    return true;
}

} // namespace

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
    if (!parse_whole(umask, context.umask, 8) || context.umask > 0777 ||
        !decode_options(field.substr(umask.size()), context.request, context.whole_environment)) {
        return std::nullopt;
    }
    context.environment = decode_environment(encoded.substr(umask_end + 1));
    return context;
}

} // namespace gpusched
