#include <gpusched/job_messages.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace gpusched {
namespace {

constexpr std::size_t k_longest_logged_command = 240;

} // namespace

std::string describe_outcome(const JobOutcome& outcome)
{
    if (outcome.signal == 0) {
        return fmt::format("exit {}", outcome.exit_code);
    }
    return "killed by " + signal_name(outcome.signal);
}

std::string signal_name(int signal)
{
    const char* name = sigabbrev_np(signal);
    return name != nullptr ? fmt::format("SIG{}", name) : fmt::format("signal {}", signal);
}

std::string shorten_command(std::string_view command)
{
    if (command.size() <= k_longest_logged_command) {
        return std::string(command);
    }
    return fmt::format("{}... ({} more bytes)", command.substr(0, k_longest_logged_command),
                       command.size() - k_longest_logged_command);
}

std::string describe_processes(const std::vector<ProcessInfo>& processes)
{
    if (processes.empty()) {
        return "processes that are gone or cannot be seen";
    }
    constexpr std::size_t k_named = 4;
    std::string named;
    for (std::size_t i = 0; i < std::min(processes.size(), k_named); ++i) {
        named += fmt::format("{}pid {} ({})", i == 0 ? "" : ", ", processes[i].pid,
                             processes[i].name.empty() ? "?" : processes[i].name);
    }
    if (processes.size() > k_named) {
        named += fmt::format(" and {} more", processes.size() - k_named);
    }
    return named;
}

std::string format_duration(std::chrono::steady_clock::duration elapsed)
{
    using namespace std::chrono;
    const double seconds = duration_cast<duration<double>>(elapsed).count();
    if (seconds < 60) {
        return fmt::format("{:.3f} s", seconds);
    }
    const auto whole = duration_cast<std::chrono::seconds>(elapsed).count();
    if (whole < 3600) {
        return fmt::format("{} min {:02} s", whole / 60, whole % 60);
    }
    return fmt::format("{} h {:02} min", whole / 3600, (whole % 3600) / 60);
}

std::string format_progress(const ProgressSnapshot& progress)
{
    std::string text =
        fmt::format("{} done", progress.succeeded + progress.failed + progress.cancelled);
    if (progress.failed > 0 && progress.cancelled > 0) {
        text += fmt::format(" ({} failed, {} cancelled)", progress.failed, progress.cancelled);
    } else if (progress.failed > 0 || progress.cancelled > 0) {
        text += progress.failed > 0 ? fmt::format(" ({} failed)", progress.failed)
                                    : fmt::format(" ({} cancelled)", progress.cancelled);
    }
    text += fmt::format(", {} running, {}{} queued, {} elapsed", progress.running, progress.queued,
                        progress.input_ended ? "" : "+", format_duration(progress.elapsed));
    if (progress.input_ended && progress.attempts > 0) {
        const auto mean = progress.busy / static_cast<long>(progress.attempts);
        const auto left = static_cast<long>(progress.queued + progress.running);
        const auto slots = static_cast<long>(std::max<std::size_t>(progress.slots, 1));
        text += fmt::format(", ETA {}", format_duration(mean * ((left + slots - 1) / slots)));
    }
    if (!progress.waiting.empty()) {
        text += "; " + progress.waiting;
    }
    return text;
}

} // namespace gpusched
