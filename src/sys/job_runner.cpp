#include <gpusched/sys/job_runner.hpp>

#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/wall_clock.hpp>
#include <gpusched/sys/process_tree.hpp>
#include <gpusched/sys/system_error.hpp>

#include <spdlog/spdlog.h>

#include <poll.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace gpusched::sys {
namespace {

JobOutcome outcome_of(int wait_status)
{
    if (WIFSIGNALED(wait_status)) {
        return {0, WTERMSIG(wait_status)};
    }
    return {WEXITSTATUS(wait_status), 0};
}

} // namespace

JobRunner::JobRunner(Scheduler& scheduler, CommandInput& input, SignalChannel& signals,
                     const JobSpawner& spawner, const JobEnvironment& environment,
                     RunnerOptions options)
    : m_scheduler(scheduler), m_input(input), m_signals(signals), m_spawner(spawner),
      m_environment(environment), m_options(std::move(options)),
      m_busy_reasons(scheduler.pool().size()), m_lease_holders(scheduler.pool().size()),
      m_lease_record_stale(scheduler.pool().size(), false)
{
    if (m_options.tag) {
        auto progress = m_options.progress;
        m_tagged.emplace([progress](bool writing) {
            if (progress) {
                writing ? progress->hide() : progress->restore();
            }
        });
    }
}

int JobRunner::run()
{
    m_started = Clock::now();
    become_child_subreaper();
    try {
        if (m_options.usage_probe) {
            check_busy_gpus();
        }
        take_input();
        while (!finished()) {
            run_once();
        }
    } catch (...) {
        // The loop itself cannot go on (a second error while stopping): no job outlives us.
        signal_jobs(SIGKILL);
        while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
        }
        try {
            report_unstarted(); // what came from a pipe is named and saved all the same
        } catch (...) {
        }
        throw;
    }
    retry_unwritten_records(true);
    count_unrecorded_jobs();
    if (m_options.leases) {
        m_options.leases->cancel_waits();
    }
    if (m_tagged) {
        m_tagged->drain();
    }
    if (m_options.progress) {
        m_options.progress->finish();
    }
    report_unstarted();
    report_summary();
    return m_run_error ? k_exit_fatal : m_scheduler.exit_status();
}

// One turn of the loop. An error that concerns one job is handled where it happens; one
// that escapes to here (the input cannot be read, say) makes the rest of the run
// meaningless, so the run stops as on SIGTERM: the running jobs get the stop rules, not an
// unwinding exception. A second error while stopping ends the loop.
void JobRunner::run_once()
{
    try {
        tend_leases();
        wait_for_events();
        take_input();
        redraw_progress();
    } catch (const std::exception& error) {
        if (m_run_error) {
            throw;
        }
        m_run_error = true;
        spdlog::error("{}; stopping the run as on SIGTERM", error.what());
        stop_run(SIGTERM);
    }
}

// After a stop, gpusched also waits for what the jobs left behind (their background
// processes come back to it as a subreaper), so nothing it started outlives it.
bool JobRunner::finished() const
{
    return m_scheduler.done() && !(m_scheduler.stopping() && m_has_children) && m_input.settled();
}

std::optional<JobRunner::Clock::time_point> JobRunner::next_deadline() const
{
    std::optional<Clock::time_point> next = m_kill_deadline;
    const auto earlier = [&next](Clock::time_point candidate) {
        if (!next || candidate < *next) {
            next = candidate;
        }
    };
    if (!m_job_timers.empty()) {
        earlier(m_job_timers.begin()->first);
    }
    if (const auto draw = next_progress_draw()) {
        earlier(*draw);
    }
    if (const auto check = next_busy_check()) {
        earlier(*check);
    }
    if (const auto input = m_input.next_deadline()) {
        earlier(*input);
    }
    return next;
}

void JobRunner::wait_for_events()
{
    auto& fds = m_poll_fds; // reused: this runs once per event
    fds.clear();
    fds.push_back({m_signals.fd(), POLLIN, 0});
    m_input.add_poll_fds(fds, m_scheduler.wants_input());
    if (m_tagged) {
        m_tagged->add_poll_fds(fds);
    }
    add_lease_poll_fds(fds);
    int timeout_ms = -1;
    if (const auto deadline = next_deadline()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
        timeout_ms = static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0));
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
        if (errno == EINTR) {
            return;
        }
        throw_errno("poll");
    }
    for (const auto& fd : fds) {
        if (fd.revents == 0) {
            continue;
        }
        if (fd.fd == m_signals.fd()) {
            handle_signals();
        } else if (on_lease_ready(fd)) {
            continue;
        } else if (!m_input.on_ready(fd) && m_tagged) {
            m_tagged->on_readable(fd.fd);
        }
    }
    fire_due_timers();
}

void JobRunner::take_input()
{
    while (m_scheduler.wants_input()) {
        auto input = m_input.next_line();
        if (!input) {
            if (m_input.finished()) {
                apply(m_scheduler.on_input_end());
                report_unmatched_records();
                m_progress_stale = true;
            }
            return;
        }
        const JobId id = input->id.value_or(m_next_job++);
        if (input->line.fault != LineFault::none) {
            spdlog::error("{}:{}: job {} not run: {}", input->source, input->line.first_line, id,
                          describe_fault(input->line.fault));
            m_scheduler.on_rejected_command();
            continue;
        }
        if (m_options.resume && m_options.resume->should_skip(input->line.text)) {
            spdlog::debug("job {} skipped: the job log records it: {}", id,
                          shorten_command(input->line.text));
            ++m_skipped;
            continue;
        }
        m_input.on_accepted(id);
        apply(m_scheduler.on_command(
            Command{id, std::move(input->line.text), 1, {}, input->replayable}));
    }
}

void JobRunner::apply(std::vector<Action> actions)
{
    m_progress_stale = true;
    for (auto& action : actions) {
        if (auto* job = std::get_if<StartJob>(&action)) {
            start(*job);
        } else if (auto* signal = std::get_if<SignalRunningJobs>(&action)) {
            signal_jobs(signal->signal);
        } else if (std::holds_alternative<ArmKillTimer>(action)) {
            m_kill_deadline = Clock::now() + m_options.kill_after;
        } else if (auto* retry = std::get_if<RetryScheduled>(&action)) {
            spdlog::info("job {} will be tried again (attempt {})", retry->job, retry->attempt);
        } else if (auto* halt = std::get_if<HaltStarted>(&action)) {
            m_input.stop_reading();
            spdlog::warn("--halt condition reached: starting no more jobs{}",
                         halt->when == HaltPolicy::When::now ? " and stopping the running ones"
                                                             : "");
        }
    }
}

void JobRunner::start(StartJob& job)
{
    const auto gpu = m_scheduler.pool().ids_of(job.gpus);
    RunningJob running{job.command.id,
                       job.command.attempt,
                       job.gpus,
                       gpu,
                       std::move(job.command.text),
                       Clock::now(),
                       std::chrono::system_clock::now(),
                       false};
    // What a job needs besides its process (a lease, output files, pipes) can fail for
    // that job alone: too many open files, a removed directory. The job then fails to start
    // and the others go on.
    std::vector<int> lease_fds;
    std::optional<OutputFiles::Opened> files;
    std::optional<TaggedOutput::WriteEnds> pipes;
    JobStreams streams;
    try {
        if (m_options.leases && !take_leases(job, lease_fds)) {
            return;
        }
        if (m_options.output_files) {
            files = m_options.output_files->open(running.id, running.attempt);
            streams = {files->out.get(), files->err.get()};
        } else if (m_tagged) {
            pipes = m_tagged->open(fmt::format("[job {}, GPU {}] ", running.id, gpu));
            streams = {pipes->out.get(), pipes->err.get()};
        }
    } catch (const std::exception& error) {
        fail_to_start(running, error.what());
        return;
    }
    JobEnvironment::JobVariables variables;
    const auto envp = m_environment.for_job(running.id, gpu, variables);
    const SpawnResult spawned = m_spawner.spawn(running.command, envp.data(), streams, lease_fds);
    if (spawned.error != 0) {
        fail_to_start(running,
                      fmt::format("{}: {}", m_spawner.shell(), std::strerror(spawned.error)));
        return;
    }
    spdlog::info("job {} started on GPU {}{}: {}", running.id, gpu,
                 running.attempt > 1 ? fmt::format(" (attempt {})", running.attempt) : "",
                 shorten_command(running.command));
    spdlog::debug("job {} is process group {}", running.id, spawned.pid);
    m_has_children = true;
    if (m_options.timeout) {
        m_job_timers.emplace(running.started + *m_options.timeout,
                             JobTimer{running.id, running.attempt, SIGTERM});
    }
    m_pid_of[running.id] = spawned.pid;
    note_lease_holder(running, spawned.pid);
    m_input.on_started(running.id, running.gpu);
    m_running.emplace(spawned.pid, std::move(running));
}

void JobRunner::fail_to_start(const RunningJob& job, const std::string& why)
{
    spdlog::error("job {} could not start on GPU {}: {}: {}", job.id, job.gpu, why,
                  shorten_command(job.command));
    const JobOutcome failed{k_exit_spawn_failed, 0};
    record_attempt(job, failed, AttemptEnd::by_itself);
    after_attempt(job, failed, m_scheduler.on_spawn_failure(job.id));
}

void JobRunner::after_attempt(const RunningJob& job, JobOutcome outcome,
                              std::vector<Action> actions)
{
    const bool retried = std::any_of(actions.begin(), actions.end(), [&](const Action& action) {
        const auto* retry = std::get_if<RetryScheduled>(&action);
        return retry != nullptr && retry->job == job.id;
    });
    if (!retried) {
        if (m_interrupted_jobs.contains(job.id)) {
            // counted apart: neither failed nor succeeded
        } else if (!outcome.succeeded() &&
                   (m_unrecorded_jobs.contains(job.id) || !m_unwritten_records.empty())) {
            // Its record is lost or may be: it already counts among the failures.
            m_failed_jobs.insert(job.id);
        }
        m_input.on_ended(JobEnd{job.id, outcome, job.gpu, seconds_since_epoch(job.started_wall),
                                std::chrono::duration<double>(Clock::now() - job.started).count(),
                                m_scheduler.stopping()});
    }
    apply(std::move(actions));
}

void JobRunner::reap_children()
{
    while (true) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid == 0) {
            kill_adopted();
            return;
        }
        if (pid < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == ECHILD) {
                m_has_children = false;
                return;
            }
            throw_errno("waitpid");
        }
        // A group whose leader is reaped is never signalled again: its id may be reused.
        m_stopping_groups.erase(pid);
        const auto found = m_running.find(pid);
        if (found == m_running.end()) {
            spdlog::debug("reaped process {}, left behind by a job", pid);
            continue;
        }
        RunningJob job = std::move(found->second);
        m_running.erase(found);
        m_pid_of.erase(job.id);
        forget_lease_holder(job, pid);
        const JobOutcome outcome = outcome_of(status);
        const AttemptEnd end = job.timed_out                ? AttemptEnd::timeout
                               : m_scheduler.interrupting() ? AttemptEnd::interrupted
                                                            : AttemptEnd::by_itself;
        if (end == AttemptEnd::interrupted) {
            m_interrupted.push_back({job.id, job.gpu, shorten_command(job.command)});
            m_interrupted_jobs.insert(job.id);
        }
        record_attempt(job, outcome, end);
        const auto took = format_duration(Clock::now() - job.started);
        const auto& gpu = job.gpu;
        if (end == AttemptEnd::interrupted) {
            spdlog::warn("job {} interrupted on GPU {}: {} after {}: {}", job.id, gpu,
                         describe_outcome(outcome), took, shorten_command(job.command));
        } else if (outcome.succeeded()) {
            spdlog::info("job {} finished on GPU {}: {} after {}: {}", job.id, gpu,
                         describe_outcome(outcome), took, shorten_command(job.command));
        } else {
            spdlog::warn("job {} failed on GPU {}: {}{} after {}: {}", job.id, gpu,
                         describe_outcome(outcome), job.timed_out ? " (timed out)" : "", took,
                         shorten_command(job.command));
        }
        after_attempt(job, outcome, m_scheduler.on_job_exit(job.id, outcome));
    }
}

// GPUs busy with work gpusched did not start are looked at again only while jobs wait for a
// GPU, every --recheck seconds: no polling while there is nothing to gain.
std::optional<JobRunner::Clock::time_point> JobRunner::next_busy_check() const
{
    const bool any_busy = std::any_of(m_busy_reasons.begin(), m_busy_reasons.end(),
                                      [](const auto& reason) { return reason.has_value(); });
    if (!m_options.usage_probe || !any_busy || m_scheduler.queued_count() == 0) {
        return std::nullopt;
    }
    return m_last_busy_check + m_options.recheck;
}

void JobRunner::check_busy_gpus()
{
    m_last_busy_check = Clock::now();
    const auto& ids = m_scheduler.pool().ids();
    const auto report = m_options.usage_probe->usage(ids);
    if (!report.problem.empty()) {
        spdlog::warn("--skip-busy cannot tell which GPUs are busy ({}); every GPU is used",
                     report.problem);
        m_options.usage_probe.reset();
        for (GpuSlot slot = 0; slot < ids.size(); ++slot) {
            if (std::exchange(m_busy_reasons[slot], std::nullopt)) {
                apply(m_scheduler.on_gpu_usable(slot, true));
            }
        }
        return;
    }
    for (GpuSlot slot = 0; slot < ids.size(); ++slot) {
        const auto found = report.gpus.find(ids[slot]);
        if (found == report.gpus.end()) {
            continue;
        }
        std::vector<int> foreign;
        for (const int pid : found->second.compute_pids) {
            if (!descends_from(pid, getpid())) {
                foreign.push_back(pid);
            }
        }
        auto reason = m_options.busy_rule.busy_reason(found->second, foreign,
                                                      m_scheduler.pool().load(slot) > 0);
        if (reason == m_busy_reasons[slot]) {
            continue; // logged once per change
        }
        if (reason) {
            spdlog::warn("GPU {} skipped: {}", ids[slot], *reason);
        } else {
            spdlog::info("GPU {} is free again", ids[slot]);
        }
        const bool usable = !reason;
        m_busy_reasons[slot] = std::move(reason);
        apply(m_scheduler.on_gpu_usable(slot, usable));
    }
}

} // namespace gpusched::sys
