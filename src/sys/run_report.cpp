// What the runner tells the user about the run as a whole: the progress line, the commands
// a stop left unstarted, the wait for leftovers, and the closing summary with the failed jobs
// to look at.
#include <gpusched/sys/run_report.hpp>

#include <gpusched/counted.hpp>
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

RunReport::RunReport(const Scheduler& scheduler, RunReportOptions options)
    : m_scheduler(scheduler), m_options(std::move(options))
{
}

void RunReport::on_interrupted(JobId id, std::string gpu, std::string command, bool replayable)
{
    m_interrupted.emplace(id, Interrupted{std::move(gpu), std::move(command), replayable});
}

std::optional<RunReport::Clock::time_point> RunReport::next_progress_draw() const
{
    if (!m_options.progress) {
        return std::nullopt;
    }
    return m_last_progress_draw + (m_progress_stale ? Clock::duration(k_progress_after_change)
                                                    : Clock::duration(k_progress_refresh));
}

std::string RunReport::progress_text(Clock::time_point now, bool input_finished,
                                     const std::string& waiting_for) const
{
    const auto& counts = m_scheduler.counts();
    return format_progress(ProgressSnapshot{counts.succeeded, counts.failed, counts.cancelled,
                                            m_scheduler.running_count(), m_scheduler.queued_count(),
                                            input_finished, m_scheduler.pool().size(),
                                            now - m_started, m_busy, m_attempts, waiting_for});
}

void RunReport::draw_progress(Clock::time_point now, bool input_finished,
                              const std::string& waiting_for)
{
    const auto due = next_progress_draw();
    if (!due || now < *due) {
        return;
    }
    m_options.progress->show(progress_text(now, input_finished, waiting_for));
    m_last_progress_draw = now;
    m_progress_stale = false;
}

void RunReport::report_unstarted(const std::vector<Command>& unstarted,
                                 const std::vector<InputLine>& buffered)
{
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

// The job log's jobs whose command is in no input line, which --resume therefore cannot have
// skipped (a changed input file, or the wrong log).
void RunReport::report_unmatched_records(const ResumeState& resume)
{
    if (std::exchange(m_unmatched_reported, true)) {
        return;
    }
    const auto unmatched = resume.unmatched();
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

// Once no job is left to start or running, the run waits for what ended jobs left behind;
// they are named once, with the way to stop them.
void RunReport::report_lingering_jobs(RunningJobs& jobs)
{
    if (m_lingering_reported || jobs.empty() || m_scheduler.running_count() > 0 ||
        m_scheduler.wants_gpus() || m_scheduler.interrupting()) {
        return;
    }
    m_lingering_reported = true;
    for (auto& job : jobs.jobs()) {
        spdlog::warn("waiting for what job {} left running on GPU {}: {} (Ctrl-C stops it)", job.id,
                     job.gpu, describe_processes(jobs.leftovers(job)));
        job.report_at.reset(); // named here
    }
}

void RunReport::report_summary(Clock::time_point now, std::size_t children_left,
                               const std::string& interrupted_fate)
{
    for (const auto& [id, job] : m_interrupted) {
        spdlog::warn("interrupted: job {} on GPU {}: {}", id, job.gpu,
                     shorten_command(job.command));
    }
    // What left its job's group and closed the job's token holds no GPU that gpusched knows
    // of; it is not waited for.
    if (children_left > 0 && !m_scheduler.stopping()) {
        spdlog::warn("processes that jobs left and that let go of their GPU are still running "
                     "({}); they are left to run",
                     children_left);
    }
    const auto& counts = m_scheduler.counts();
    std::string extra;
    if (counts.cancelled > 0) {
        extra += fmt::format(", {} cancelled", counts.cancelled);
    }
    if (counts.retries > 0) {
        extra += ", " + counted(counts.retries, "retry", "retries");
    }
    if (counts.memory_reruns > 0) {
        extra += fmt::format(", {} run again after running out of GPU memory beside others",
                             counted(counts.memory_reruns, "attempt"));
    }
    if (counts.interrupted > 0) {
        extra += fmt::format(", {} interrupted{}", counts.interrupted,
                             !interrupted_fate.empty() ? " (" + interrupted_fate + ")"
                             : m_options.joblog        ? " (--resume runs them again)"
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
        counts.succeeded, counts.failed, extra, format_duration(now - m_started),
        format_duration(m_busy));
    report_failed_jobs();
}

// Kept for the end of the run while fewer than are named there; only counted after that, so
// a run of a million failures keeps ten commands, each on one short line.
void RunReport::note_failed_job(FailedJob job)
{
    if (++m_failed_in_all <= k_failed_jobs_named) {
        job.command = one_line_command(job.command);
        m_failed_named.push_back(std::move(job));
    }
}

// After the summary, what to look at: the failed jobs, the first few of them named, and
// where the others are recorded.
void RunReport::report_failed_jobs() const
{
    for (const auto& line :
         describe_failed_jobs(m_failed_named, m_failed_in_all, m_options.failed_jobs_hint)) {
        spdlog::warn("{}", line);
    }
}

} // namespace gpusched::sys
