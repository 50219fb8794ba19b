#include <gpusched/job_request.hpp>

#include <gpusched/memory_size.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace gpusched {

std::size_t gpus_wanted(const JobRequest& request, const RunnerDefaults& defaults)
{
    return request.gpus.value_or(defaults.gpus);
}

std::optional<std::uint64_t> memory_wanted(const JobRequest& request,
                                           const RunnerDefaults& defaults)
{
    return request.memory ? request.memory : defaults.memory;
}

bool can_ever_run(const JobRequest& request, std::size_t gpus, const RunnerDefaults& defaults)
{
    return gpus_wanted(request, defaults) <= gpus;
}

std::string encode_request(const JobRequest& request)
{
    std::string words;
    if (request.gpus) {
        words += fmt::format(" gpus={}", *request.gpus);
    }
    if (request.timeout) {
        words += fmt::format(" timeout={}", request.timeout->count());
    }
    if (request.retries) {
        words += fmt::format(" retries={}", *request.retries);
    }
    if (request.nice) {
        words += fmt::format(" nice={}", *request.nice);
    }
    if (request.memory == k_learned_memory) {
        words += " mem=auto";
    } else if (request.memory) {
        words += fmt::format(" mem={}", *request.memory);
    }
    return words;
}

namespace {

template <typename Number>
bool read_number(std::string_view text, Number& number)
{
    const auto parsed = std::from_chars(text.data(), text.data() + text.size(), number);
    return parsed.ec == std::errc{} && parsed.ptr == text.data() + text.size();
}

// Sets the field `name` names from `value`; false when the word is not one of a request's,
// or its value is not one the field can take.
bool apply_word(std::string_view name, std::string_view value, JobRequest& request)
{
    if (name == "nice") {
        int nice = 0;
        if (!read_number(value, nice) || nice < k_least_nice || nice > k_most_nice) {
            return false;
        }
        request.nice = nice;
        return true;
    }
    if (name == "mem" && value == "auto") {
        request.memory = k_learned_memory;
        return true;
    }
    std::uint64_t number = 0;
    if (!read_number(value, number)) {
        return false;
    }
    if (name == "gpus" && number > 0) {
        request.gpus = number;
    } else if (name == "timeout" && number > 0 &&
               number <= static_cast<std::uint64_t>(std::chrono::milliseconds::max().count())) {
        request.timeout = std::chrono::milliseconds(number);
    } else if (name == "retries" && number <= k_most_request_retries) {
        request.retries = static_cast<unsigned>(number);
    } else if (name == "mem" && number > 0 && number <= k_most_job_memory) {
        request.memory = number;
    } else {
        return false;
    }
    return true;
}

} // namespace

Result<JobRequest> decode_request(std::string_view words)
{
    JobRequest request;
    const auto whole = words;
    while (!words.empty()) {
        if (words.front() != ' ' || words.size() < 2 || words[1] == ' ') {
            return Failure{
                fmt::format("a job request is words each after one space, not \"{}\"", whole)};
        }
        words.remove_prefix(1);
        const auto end = std::min(words.find(' '), words.size());
        const auto word = words.substr(0, end);
        words.remove_prefix(end);
        const auto equals = word.find('=');
        if (equals == std::string_view::npos ||
            !apply_word(word.substr(0, equals), word.substr(equals + 1), request)) {
            return Failure{fmt::format("a job request this version of gpusched cannot honour: "
                                       "\"{}\"",
                                       word)};
        }
    }
    return request;
}

} // namespace gpusched
