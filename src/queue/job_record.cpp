#include <gpusched/queue/job_record.hpp>

#include <gpusched/job_request.hpp>
#include <gpusched/memory_size.hpp>
#include <gpusched/parse_number.hpp>

#include <array>
#include <cctype>

namespace gpusched::queue {
namespace {

// As both stores write them, and as --json and listings show them.
constexpr std::array<std::string_view, 8> k_state_names = {
    "queued", "running", "succeeded", "failed", "cancelled", "refused", "waiting", "skipped"};

// More re-runs than any worker makes (Scheduler's k_most_memory_reruns is 2): a hand-edited
// record's.
constexpr unsigned k_most_memory_reruns_kept = 100;

} // namespace

std::uint64_t peak_memory_of(std::string_view text)
{
    const auto peak = parse_number<std::uint64_t>(text);
    return peak && *peak <= k_most_job_memory ? *peak : 0;
}

std::string memory_asked_field(std::optional<std::uint64_t> memory)
{
    if (!memory) {
        return {};
    }
    return *memory == k_learned_memory ? std::string("auto") : std::to_string(*memory);
}

std::optional<std::uint64_t> memory_asked_of(std::string_view text)
{
    if (text == "auto") {
        return k_learned_memory;
    }
    const auto bytes = parse_number<std::uint64_t>(text);
    if (bytes && *bytes > 0 && *bytes <= k_most_job_memory) {
        return bytes;
    }
    return std::nullopt;
}

unsigned memory_reruns_of(std::string_view text)
{
    const auto count = parse_number<unsigned>(text);
    return count && *count <= k_most_memory_reruns_kept ? *count : 0;
}

std::string_view to_string(JobState state)
{
    return k_state_names.at(static_cast<std::size_t>(state));
}

std::optional<JobState> job_state_named(std::string_view name)
{
    for (std::size_t i = 0; i < k_state_names.size(); ++i) {
        if (k_state_names[i] == name) {
            return static_cast<JobState>(i);
        }
    }
    return std::nullopt;
}

std::string describe_end(JobState state, std::string_view note)
{
    const auto name = to_string(state);
    if (note.empty()) {
        return std::string(name);
    }
    // A note that starts with the state's own word already says it: "cancelled before it
    // started", "skipped: job 11 failed" (not "cancelled, cancelled before it started").
    if (note.starts_with(name) &&
        (note.size() == name.size() ||
         std::isalpha(static_cast<unsigned char>(note[name.size()])) == 0)) {
        return std::string(note);
    }
    return std::string(name) + ": " + std::string(note);
}

} // namespace gpusched::queue
