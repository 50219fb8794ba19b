#include <gpusched/failed_jobs.hpp>

#include <fmt/format.h>

namespace gpusched {

std::string one_line_command(std::string_view command, std::size_t longest)
{
    std::string line;
    bool cut = false;
    for (std::size_t i = 0; i < command.size(); ++i) {
        const auto byte = static_cast<unsigned char>(command[i]);
        // A UTF-8 character starts at a byte that is not a continuation byte (10xxxxxx).
        if (line.size() >= longest && (byte & 0xC0) != 0x80) {
            cut = true;
            break;
        }
        line += byte < 0x20 || byte == 0x7F ? ' ' : static_cast<char>(byte);
    }
    while (!line.empty() && line.back() == ' ') {
        line.pop_back();
    }
    return cut ? line + "..." : line;
}

std::vector<std::string> describe_failed_jobs(const std::vector<FailedJob>& named,
                                              std::size_t failed_in_all, std::string_view rest_hint)
{
    std::vector<std::string> lines;
    for (const auto& job : named) {
        std::string line = fmt::format("failed job {}: {}", job.id, job.outcome);
        if (job.attempts > 1) {
            line += fmt::format(" after {} attempts", job.attempts);
        }
        line += ": " + one_line_command(job.command);
        if (!job.output.empty()) {
            line += "; " + job.output;
        }
        lines.push_back(std::move(line));
    }
    if (failed_in_all > named.size()) {
        const auto rest = failed_in_all - named.size();
        lines.push_back(fmt::format("and {} more failed {}{}{}", rest, rest == 1 ? "job" : "jobs",
                                    rest_hint.empty() ? "" : ": ", rest_hint));
    }
    return lines;
}

} // namespace gpusched
