#include <gpusched/sys/dry_run.hpp>

#include <gpusched/exit_status.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <poll.h>

#include <deque>

namespace gpusched::sys {

int dry_run(Scheduler& scheduler, InputReader& input, std::optional<ResumeState>& resume)
{
    std::deque<JobId> running; // in start order: with equal lengths, the oldest ends first
    std::size_t rejected = 0;
    const auto take = [&](std::vector<Action> actions) {
        for (const auto& action : actions) {
            if (const auto* start = std::get_if<StartJob>(&action)) {
                fmt::print("job {} on GPU {}: {}\n", start->command.id,
                           scheduler.pool().ids_of(start->gpus), start->command.text);
                running.push_back(start->command.id);
            }
        }
    };
    JobId next = 1;
    while (!scheduler.done()) {
        if (scheduler.wants_input()) {
            if (auto line = input.next_line()) {
                const JobId id = next++;
                if (line->line.fault != LineFault::none) {
                    spdlog::error("{}:{}: job {} would not run: {}", line->source,
                                  line->line.first_line, id, describe_fault(line->line.fault));
                    ++rejected;
                } else if (resume && resume->should_skip(line->line.text)) {
                    spdlog::info("job {} skipped: the job log records it", id);
                } else {
                    take(scheduler.on_command(
                        Command{id, std::move(line->line.text), 1, {}, false, {}}));
                }
                continue;
            }
            if (input.finished()) {
                take(scheduler.on_input_end());
                continue;
            }
            pollfd readable{input.fd_to_poll(), POLLIN, 0};
            poll(&readable, 1, -1);
            input.read_some();
            continue;
        }
        if (running.empty()) {
            break;
        }
        const JobId oldest = running.front();
        running.pop_front();
        take(scheduler.on_job_exit(oldest, JobOutcome{}));
    }
    std::fflush(stdout);
    return exit_status_for_failures(rejected);
}

} // namespace gpusched::sys
