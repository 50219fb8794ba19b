// What the runner tells the user about the run as a whole: the progress line, the commands
// a stop left unstarted, and the closing summary with the failed jobs to look at.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/counted.hpp>
#include <gpusched/failed_jobs.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/sys/process_tree.hpp>
#include <gpusched/sys/unstarted_file.hpp>

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <utility>

namespace gpusched::sys {
namespace {

// The status line is redrawn at most this often after a change, and this often anyway so
// its elapsed time keeps counting while jobs run.
constexpr auto k_progress_after_change = std::chrono::milliseconds(100);
constexpr auto k_progress_refresh = std::chrono::seconds(1);
// The failed jobs named after the summary; the job log has the rest.
constexpr std::size_t k_failed_jobs_named = 10;

// `command` as a line of a command file that reads back as the same command: reading drops
// one carriage return at the end of a line, so a command that ends with one gets another.
std::string command_file_line(const std::string& command)
{
    return !command.empty() && command.back() == '\r' ? command + '\r' : command;
}

} // namespace

std::optional<JobRunner::Clock::time_point> JobRunner::next_progress_draw() const
{
    if (!m_options.progress) {
        return std::nullopt;
    }
    return m_last_progress_draw + (m_progress_stale ? Clock::duration(k_progress_after_change)
                                                    : Clock::duration(k_progress_refresh));
}

void JobRunner::redraw_progress()
{
    const auto due = next_progress_draw();
    const auto now = m_clock.now();
    if (!due || now < *due) {
        return;
    }
    const auto& counts = m_scheduler.counts();
    m_options.progress->show(format_progress(ProgressSnapshot{
        counts.succeeded, counts.failed, counts.cancelled, m_scheduler.running_count(),
        m_scheduler.queued_count(), m_source.finished(), m_scheduler.pool().size(), now - m_started,
        m_busy, m_attempts, m_waiting_for}));
    m_last_progress_draw = now;
    m_progress_stale = false;
}

void JobRunner::report_unstarted()
{
    auto unstarted = m_scheduler.take_unstarted();
    m_ends.on_unstarted(unstarted);
    auto buffered = m_source.take_buffered();
    const auto total = unstarted.size() + buffered.size();
    if (total > 0) {
        spdlog::warn("{} read from the input {} not started", counted(total, "command"),
                     total == 1 ? "was" : "were");
    }
    // What came from a pipe cannot be read again: each command a stop interrupted or left
    // unstarted is saved to a file that can be given back to gpusched (the interrupted first,
    // as they came first), and each unstarted one is named (the summary names the
    // interrupted). What came from a file can be run again with --resume, and a queue's jobs
    // went back to the queue.
    std::vector<std::string> saved;
    std::size_t interrupted = 0;
    for (const auto& [id, job] : m_interrupted) {
        if (!job.replayable) {
            saved.push_back(
                fmt::format("# interrupted by the stop: job {} on GPU {}", id, job.gpu));
            saved.push_back(command_file_line(job.command));
            ++interrupted;
        }
    }
    for (const auto& command : unstarted) {
        if (!command.replayable) {
            spdlog::warn("not started: job {}: {}", command.id, command.text);
            saved.push_back(command_file_line(command.text));
        }
    }
    for (const auto& input : buffered) {
        if (input.replayable) {
            continue;
        }
        if (input.unfinished) {
            spdlog::warn("not started, unfinished (its writer had not ended it): {}:{}: {}",
                         input.source, input.line.first_line, input.line.text);
            saved.push_back("# unfinished (its writer had not ended it), not run: " +
                            input.line.text);
        } else {
            spdlog::warn("not started: {}:{}: {}", input.source, input.line.first_line,
                         input.line.text);
            saved.push_back(command_file_line(input.line.text));
        }
    }
    if (saved.empty()) {
        return;
    }
    saved.insert(saved.begin(),
                 fmt::format("# Commands that gpusched (process {}) read from a pipe or FIFO and "
                             "did not start or did not finish. Give this file to gpusched to run "
                             "them.",
                             getpid()));
    const auto what = interrupted == 0 ? std::string("not started")
                                       : fmt::format("{}the {} the stop interrupted",
                                                     total > 0 ? "not started, and " : "",
                                                     counted(interrupted, "job"));
    const auto file = save_unstarted_commands(saved);
    if (!file) {
        spdlog::error("the commands {} could not be saved ({}); this log names them", what,
                      file.message());
        return;
    }
    spdlog::warn("the commands from pipes and FIFOs {} are saved in {}: give that file to "
                 "gpusched to run them",
                 what, *file);
}

// Once the input has ended: the job log's jobs whose command is in no input line, which
// --resume therefore cannot have skipped (a changed input file, or the wrong log).
void JobRunner::report_unmatched_records()
{
    if (!m_options.resume || std::exchange(m_unmatched_reported, true)) {
        return;
    }
    const auto unmatched = m_options.resume->unmatched();
    if (unmatched.empty()) {
        return;
    }
    constexpr std::size_t k_named = 3;
    std::string named;
    for (std::size_t i = 0; i < std::min(unmatched.size(), k_named); ++i) {
        named +=
            fmt::format("{}job {}: {}", i == 0 ? "" : "; ", unmatched[i].seq, unmatched[i].command);
    }
    spdlog::warn(
        "the job log records {} {} whose command is in no input line: {}{}", unmatched.size(),
        unmatched.size() == 1 ? "job" : "jobs", named,
        unmatched.size() > k_named ? fmt::format("; and {} more", unmatched.size() - k_named) : "");
}

void JobRunner::report_summary()
{
    for (const auto& [id, job] : m_interrupted) {
        spdlog::warn("interrupted: job {} on GPU {}: {}", id, job.gpu,
                     shorten_command(job.command));
    }
    // What left its job's group and closed the job's token holds no GPU that gpusched knows
    // of; it is not waited for.
    if (const auto left = m_processes.children(); !left.empty() && !m_scheduler.stopping()) {
        spdlog::warn("processes that jobs left and that let go of their GPU are still running "
                     "({}); they are left to run",
                     left.size());
    }
    const auto& counts = m_scheduler.counts();
    std::string extra;
    if (counts.cancelled > 0) {
        extra += fmt::format(", {} cancelled", counts.cancelled);
    }
    if (counts.retries > 0) {
        extra += ", " + counted(counts.retries, "retry", "retries");
    }
    if (counts.interrupted > 0) {
        const auto fate = m_ends.interrupted_fate();
        extra += fmt::format(", {} interrupted{}", counts.interrupted,
                             !fate.empty()         ? " (" + fate + ")"
                             : m_options.joblog ? " (--resume runs them again)"
                                                : "");
    }
    if (counts.unrecorded > 0) {
        extra += fmt::format(", {} not recorded", counts.unrecorded);
    }
    if (m_deferred_for_processes > 0) {
        extra += fmt::format(", {} put off by a limit on processes",
                             counted(m_deferred_for_processes, "start"));
    }
    if (m_deferred_for_descriptors > 0) {
        extra += fmt::format(", {} put off by a limit on open files",
                             counted(m_deferred_for_descriptors, "start"));
    }
    if (m_skipped > 0) {
        extra += fmt::format(", {} skipped as done in the job log", m_skipped);
    }
    spdlog::info(
        "{}: {} succeeded, {} failed{}, in {}; GPU busy time {}",
        counted(counts.succeeded + counts.failed + counts.cancelled + counts.interrupted, "job"),
        counts.succeeded, counts.failed, extra, format_duration(m_clock.now() - m_started),
        format_duration(m_busy));
    report_failed_jobs();
}

// A job that ended failed for good (no retry follows), kept for the end of the run while
// fewer than are named there; only counted after that, so a run of a million failures keeps
// ten commands, each on one short line.
void JobRunner::note_failed_job(FailedJob job)
{
    if (++m_failed_in_all <= k_failed_jobs_named) {
        job.command = one_line_command(job.command);
        m_failed_named.push_back(std::move(job));
    }
}

// After the summary, what to look at: the failed jobs, the first few of them named, and
// where the others are recorded.
void JobRunner::report_failed_jobs()
{
    std::string rest_hint;
    if (m_options.joblog) {
        rest_hint = "see " + m_options.joblog->path();
    } else if (m_options.output_files) {
        rest_hint = "see the .info files in " + m_options.output_files->directory().string();
    } else {
        rest_hint = "--joblog FILE records every one";
    }
    for (const auto& line : describe_failed_jobs(m_failed_named, m_failed_in_all, rest_hint)) {
        spdlog::warn("{}", line);
    }
}

} // namespace gpusched::sys
