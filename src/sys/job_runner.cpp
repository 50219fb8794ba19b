#include <gpusched/sys/job_runner.hpp>

#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/line_assembler.hpp>
#include <gpusched/memory_size.hpp>
#include <gpusched/sys/process_tree.hpp>
#include <gpusched/wall_clock.hpp>

#include <spdlog/spdlog.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <span>
#include <system_error>

namespace gpusched::sys {
namespace {

// Errors of fork limits: the process table or memory is full for now, and a job started a
// little later may well run.
bool is_transient_spawn_error(int error)
{
    return error == EAGAIN || error == ENOMEM;
}

// Why a job's shell did not start: its directory (a queued job's submitter's), when that is
// what cannot be entered, else what the process table said (the shell, or a pipe).
std::string why_not_started(const Failure& failure, const JobContext* context)
{
    if (context != nullptr && access(context->directory.c_str(), X_OK) != 0) {
        return fmt::format("cannot enter directory {}: {}", context->directory,
                           std::strerror(errno));
    }
    return failure.message;
}

RunReportOptions report_options(const RunnerOptions& options)
{
    RunReportOptions report;
    report.progress = options.progress;
    report.joblog = options.joblog.has_value();
    if (options.joblog) {
        report.failed_jobs_hint = "see " + options.joblog->path();
    } else if (options.output_files) {
        report.failed_jobs_hint =
            "see the .info files in " + options.output_files->directory().string();
    }
    return report;
}

} // namespace

JobRunner::JobRunner(Scheduler& scheduler, CommandSource& source, RunnerRequests& requests,
                     JobEndSink& ends, RunnerSystem system, const JobEnvironment& environment,
                     RunnerOptions options)
    : m_scheduler(scheduler), m_source(source), m_requests(requests), m_ends(ends),
      m_signals(system.signals), m_processes(system.processes), m_launcher(system.launcher),
      m_clock(system.clock), m_environment(environment), m_options(std::move(options)),
      m_jobs(system.processes, m_options.kill_after, m_options.timeout),
      m_records(m_options.joblog ? &*m_options.joblog : nullptr,
                m_options.output_files ? &*m_options.output_files : nullptr),
      m_report(scheduler, report_options(m_options))
{
    // The Placement decides with what the leases and the looks tell; the runner waits on them.
    if (m_options.usage_probe) {
        m_usage_watch.emplace(*m_options.usage_probe, m_options.busy_rule, m_options.recheck,
                              m_options.memory_every, scheduler.pool().ids(),
                              m_signals.original_mask());
        scheduler.placement().use_samples(&*m_usage_watch);
    }
    if (m_options.leases) {
        scheduler.placement().use_leases(m_options.leases.get());
    }
    if (m_options.tag) {
        auto progress = m_options.progress;
        m_tagged.emplace([progress](bool writing) {
            if (progress) {
                writing ? progress->hide() : progress->restore();
            }
        });
    }
}

JobRunner::~JobRunner()
{
    m_scheduler.placement().use_samples(nullptr);
    m_scheduler.placement().use_leases(nullptr);
    if (m_options.progress) {
        m_options.progress->finish();
    }
}

int JobRunner::run()
{
    m_report.on_run_started(m_clock.now());
    try {
        tend_gpu_usage();      // no GPU is known to be free of others' work before the first look
        take_input_requests(); // a GPU paused before we started gets no first job
        take_input();
        m_source.end_turn();
        while (!finished()) {
            run_once();
        }
    } catch (...) {
        // The loop itself cannot go on (a second error while stopping): no job outlives us.
        m_scheduler.placement().use_samples(nullptr);
        m_usage_watch.reset(); // its look is killed and reaped before any child is taken below
        m_jobs.signal_all(SIGKILL, m_clock.now());
        m_processes.reap_all();
        try {
            report_unstarted(); // what came from a pipe is named and saved all the same
        } catch (...) {
        }
        throw;
    }
    count_unrecorded_jobs();
    m_scheduler.placement().cancel_lease_waits();
    if (m_tagged) {
        m_tagged->drain();
    }
    if (m_options.progress) {
        m_options.progress->finish();
    }
    report_unstarted();
    m_report.report_summary(m_clock.now(), m_processes.children().size(),
                            m_ends.interrupted_fate());
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
        take_input_requests();
        take_input();
        m_source.end_turn();
        if (m_scheduler.done() && m_jobs.empty()) {
            m_ends.on_jobs_over();
        }
        m_report.report_lingering_jobs(m_jobs);
        m_report.draw_progress(m_clock.now(), m_source.finished(),
                               m_scheduler.placement().waiting_for());
    } catch (const std::exception& error) {
        if (m_run_error) {
            throw;
        }
        m_run_error = true;
        spdlog::error("{}; stopping the run as on SIGTERM", error.what());
        stop_run(SIGTERM);
    }
}

// A run ends when nothing of its jobs holds their presence tokens; after a stop, gpusched
// also waits for what left a job's group and closed its token (it comes back to us as its
// subreaper), so that nothing it started outlives it.
bool JobRunner::finished() const
{
    return m_scheduler.done() && m_jobs.empty() && m_ends.settled() &&
           !(m_scheduler.stopping() && !m_processes.children().empty());
}

std::optional<JobRunner::Clock::time_point> JobRunner::next_deadline() const
{
    std::optional<Clock::time_point> next = m_jobs.next_deadline();
    const auto earlier = [&next](Clock::time_point candidate) {
        if (!next || candidate < *next) {
            next = candidate;
        }
    };
    if (const auto retry = m_spawn_backoff.retry_at()) {
        earlier(*retry);
    }
    if (const auto draw = m_report.next_progress_draw()) {
        earlier(*draw);
    }
    if (const auto check = next_usage_look()) {
        earlier(*check);
    }
    if (const auto input = m_source.next_deadline()) {
        earlier(*input);
    }
    if (const auto held = next_held_end()) {
        earlier(*held);
    }
    return next;
}

void JobRunner::wait_for_events()
{
    auto& fds = m_poll_fds; // reused: this runs once per event
    fds.clear();
    fds.push_back({m_signals.fd(), POLLIN, 0}); // first: see below
    m_source.add_poll_fds(fds, m_scheduler.wants_input());
    if (m_tagged) {
        m_tagged->add_poll_fds(fds);
    }
    if (m_usage_watch) {
        m_usage_watch->add_poll_fds(fds);
    }
    add_lease_poll_fds(fds);
    std::optional<std::chrono::milliseconds> timeout;
    if (const auto deadline = next_deadline()) {
        timeout = std::chrono::ceil<std::chrono::milliseconds>(*deadline - m_clock.now());
    }
    // Released tokens first: a job that ended takes its place in the pool before what
    // follows runs. Then signals, before any child is reaped: a stop signals the groups of
    // the jobs whose shells are not reaped yet, and a reaped leader's id may be anybody's.
    const auto released = m_processes.wait(fds, timeout);
    // Whether the last look at the GPUs' memory is still to be trusted is as of now, before
    // anything this wait brought starts a job on it (what the look found starts jobs below).
    if (m_usage_watch) {
        m_scheduler.placement().take_memory_look(job_owners());
    }
    for (const int token : released) {
        on_token_released(token);
    }
    if (fds.front().revents != 0) {
        handle_signals();
    }
    reap_children();
    for (const auto& fd : std::span(fds).subspan(1)) {
        if (fd.revents == 0) {
            continue;
        }
        if (m_usage_watch && m_usage_watch->on_ready(fd)) {
            continue;
        } else if (on_lease_ready(fd)) {
            continue;
        } else if (!m_source.on_ready(fd) && m_tagged) {
            m_tagged->on_readable(fd.fd);
        }
    }
    fire_due_timers();
    tend_gpu_usage();
}

void JobRunner::take_input()
{
    m_source.begin_turn(m_scheduler.commands_wanted());
    while (m_scheduler.wants_input()) {
        auto input = m_source.next_line();
        if (!input) {
            if (m_source.finished()) {
                apply(m_scheduler.on_input_end());
                if (m_options.resume) {
                    m_report.report_unmatched_records(*m_options.resume);
                }
                m_report.changed();
            }
            return;
        }
        const JobId id = input->id.value_or(m_next_job++);
        if (input->line.fault != LineFault::none) {
            spdlog::error("{}:{}: job {} not run: {}", input->source, input->line.first_line, id,
                          describe_fault(input->line.fault));
            m_scheduler.on_rejected_command();
            m_report.note_failed_job(
                FailedJob{id,
                          fmt::format("not run ({}:{}: {})", input->source, input->line.first_line,
                                      describe_fault(input->line.fault)),
                          0, input->line.text, ""});
            continue;
        }
        if (m_options.resume && m_options.resume->should_skip(input->line.text)) {
            spdlog::debug("job {} skipped: the job log records it: {}", id,
                          shorten_command(input->line.text));
            m_report.on_skipped();
            continue;
        }
        m_ends.on_accepted(id);
        apply(m_scheduler.on_command(
            Command{id, std::move(input->line.text), 1, {}, input->replayable,
                    std::move(input->context)}));
    }
}

void JobRunner::apply(std::vector<Action> actions)
{
    m_report.changed();
    for (auto& action : actions) {
        if (auto* job = std::get_if<StartJob>(&action)) {
            start(*job);
        } else if (auto* signal = std::get_if<SignalRunningJobs>(&action)) {
            m_jobs.signal_all(signal->signal, m_clock.now());
        } else if (std::holds_alternative<ArmKillTimer>(action)) {
            m_jobs.arm_kill_deadline(m_clock.now());
        } else if (auto* retry = std::get_if<RetryScheduled>(&action)) {
            if (retry->out_of_memory) {
                spdlog::warn("job {} ran out of GPU memory beside other jobs: it runs again "
                             "(attempt {}, not counted as a retry), {}",
                             retry->job, retry->attempt,
                             retry->alone ? "alone on its GPU"
                                          : "asking " + format_memory_size(retry->memory));
            } else {
                spdlog::info("job {} will be tried again (attempt {})", retry->job, retry->attempt);
            }
        } else if (auto* returned = std::get_if<ReturnCommand>(&action)) {
            spdlog::info("job {} goes back to {}: it cannot start here now", returned->command.id,
                         m_ends.returned_to());
            m_ends.on_returned(returned->command.id);
        } else if (auto* halt = std::get_if<HaltStarted>(&action)) {
            m_source.stop_reading();
            spdlog::warn("--halt condition reached: starting no more jobs{}",
                         halt->when == HaltPolicy::When::now ? " and stopping the running ones"
                                                             : "");
        }
    }
}

void JobRunner::start(StartJob& job)
{
    RunningJob running;
    running.id = job.command.id;
    running.attempt = job.command.attempt;
    running.memory_reruns = job.command.memory_reruns;
    running.slots = job.gpus;
    running.allocation = job.allocation;
    running.memory = job.memory;
    running.gpu = m_scheduler.pool().ids_of(job.gpus);
    running.command = std::move(job.command.text);
    running.replayable = job.command.replayable;
    running.started = m_clock.now();
    running.started_wall = m_clock.wall_now();
    if (job.command.context) {
        running.timeout = job.command.context->request.timeout;
    }
    const auto& gpu = running.gpu;
    // What a job needs besides its process (a lease, output files, pipes) can fail for
    // that job alone: too many open files, a removed directory. The job then fails to start
    // and the others go on.
    std::vector<int> lease_fds;
    std::optional<OutputFiles::Opened> files;
    std::optional<TaggedOutput::WriteEnds> pipes;
    SpawnRequest request{running.command, nullptr, -1, -1, {}};
    try {
        if (m_options.leases) {
            auto taken = take_leases(job);
            if (!taken) {
                return;
            }
            lease_fds = std::move(*taken);
        }
        if (m_options.output_files) {
            files = m_options.output_files->open(running.id, running.attempt);
            request.out = files->out.get();
            request.err = files->err.get();
        } else if (m_tagged) {
            pipes = m_tagged->open(fmt::format("[job {}, GPU {}] ", running.id, gpu));
            request.out = pipes->out.get();
            request.err = pipes->err.get();
        }
    } catch (const std::system_error& error) {
        if (waits_for_descriptors(error.code().value())) {
            defer_start(running, Failure{error.what(), error.code().value()});
        } else {
            fail_to_start(running, error.what());
        }
        return;
    } catch (const std::exception& error) {
        fail_to_start(running, error.what());
        return;
    }
    JobEnvironment::JobVariables variables;
    // A queued job runs in its submitter's directory, environment and umask, at the
    // niceness it asked for.
    const auto& context = job.command.context;
    request.nice = m_options.nice;
    if (context) {
        request.directory = &context->directory;
        request.umask = static_cast<int>(context->umask);
        request.nice = context->request.nice.value_or(m_options.nice);
    }
    const auto envp = environment_of(context).for_job(running.id, gpu, variables);
    request.environment = envp.data();
    request.inherited = lease_fds;
    const auto spawned = m_launcher.launch(LaunchRequest{running.id, running.gpu, request});
    if (!spawned) {
        const int error = spawned.failure().error;
        if (is_transient_spawn_error(error) || waits_for_descriptors(error)) {
            defer_start(running, spawned.failure());
        } else {
            fail_to_start(running, why_not_started(spawned.failure(), context.get()));
        }
        return;
    }
    if (m_spawn_backoff.started()) {
        spdlog::debug("jobs start again");
    }
    spdlog::info("job {} started on GPU {}{}: {}", running.id, gpu,
                 running.attempt > 1 ? fmt::format(" (attempt {})", running.attempt) : "",
                 shorten_command(running.command));
    spdlog::debug("job {} is process group {}", running.id, spawned->pid);
    running.leader = spawned->pid;
    running.token = spawned->token;
    m_ends.on_started(running.id, running.gpu);
    lease_holders_changed(running.slots);
    running.gpus_held = m_scheduler.placement().gpus_held(running.slots, running.allocation);
    m_scheduler.placement().on_job_started(running.gpus_held, running.started);
    m_jobs.add(std::move(running));
}

// The jobs of one submission share its context: its environment is built once for them all.
const JobEnvironment& JobRunner::environment_of(const SharedJobContext& context)
{
    if (!context) {
        return m_environment;
    }
    if (context != m_submitted_context) {
        m_submitted_environment =
            m_environment.for_submitted(context->environment, context->whole_environment);
        m_submitted_context = context;
    }
    return *m_submitted_environment;
}

void JobRunner::fail_to_start(const RunningJob& job, const std::string& why)
{
    spdlog::error("job {} could not start on GPU {}: {}: {}", job.id, job.gpu, why,
                  shorten_command(job.command));
    const JobOutcome failed{k_exit_spawn_failed, 0};
    record_attempt(job, failed, AttemptEnd::by_itself);
    after_attempt(job, failed, m_scheduler.on_spawn_failure(job.id));
}

bool JobRunner::waits_for_descriptors(int error) const
{
    return (error == EMFILE || error == ENFILE) && m_source.starts_wait_for_descriptors();
}

// A fork limit (EAGAIN) or a lack of memory would fail every job started now: the job goes
// back to the queue, not counted as an attempt, and nothing starts until the back-off's wait
// is over.
void JobRunner::defer_start(const RunningJob& job, const Failure& why)
{
    m_scheduler.on_spawn_deferred(job.id);
    const bool descriptors = why.error == EMFILE || why.error == ENFILE;
    m_report.on_start_deferred(descriptors);
    if (!m_spawn_backoff.refused(m_clock.now())) {
        return; // another job of the same batch: the wait is set
    }
    // Said once: under a tight limit it happens again and again, and the summary counts it.
    const auto level = m_spawn_backoff.deferred() == 1 ? spdlog::level::warn : spdlog::level::debug;
    spdlog::log(level, "job {} cannot start yet: {} ({}); jobs wait and start as {} end", job.id,
                why.message,
                descriptors ? "a limit on open files, such as ulimit -n"
                            : "a limit on processes, such as ulimit -u",
                descriptors ? "other jobs" : "processes");
}

void JobRunner::after_attempt(const RunningJob& job, JobOutcome outcome,
                              std::vector<Action> actions)
{
    const bool retried = std::any_of(actions.begin(), actions.end(), [&](const Action& action) {
        const auto* retry = std::get_if<RetryScheduled>(&action);
        return retry != nullptr && retry->job == job.id;
    });
    if (!retried) {
        if (m_report.interrupted(job.id) || job.cancelled) {
            // counted apart: neither failed nor succeeded
        } else if (!outcome.succeeded()) {
            m_report.note_failed_job(FailedJob{
                job.id, describe_outcome(outcome) + (job.timed_out ? " (timed out)" : ""),
                job.attempt, job.command,
                m_options.output_files ? m_options.output_files->describe(job.id, job.attempt)
                                       : ""});
            if (m_records.may_be_lost(job.id)) {
                // Its record is lost or may be: it already counts among the failures.
                m_failed_jobs.insert(job.id);
            }
        }
        m_ends.on_ended(JobEnd{job.id, outcome, job.gpu, seconds_since_epoch(job.started_wall),
                               std::chrono::duration<double>(m_clock.now() - job.started).count(),
                               m_scheduler.stopping(), job.cancelled, job.peak_memory,
                               job.memory_reruns});
    }
    apply(std::move(actions));
}

// A process is a job's when it descends from the job's shell; one that has left it (a daemon
// it started) is counted as anyone's.
GpuSamples::OwnerOf JobRunner::job_owners() const
{
    return [this](int pid) -> std::optional<AllocationId> {
        for (const auto& job : m_jobs.jobs()) {
            if (job.shell_running() && job.leader > 0 && descends_from(pid, job.leader)) {
                return job.allocation;
            }
        }
        return std::nullopt;
    };
}

std::optional<JobRunner::Clock::time_point> JobRunner::next_usage_look() const
{
    if (!m_usage_watch) {
        return std::nullopt;
    }
    // Memory is read while a job that asks for it runs, queued jobs or not: its peak is
    // recorded and teaches --mem auto.
    const bool memory = m_scheduler.placement().memory_wanted(m_scheduler.memory_job_waits());
    if (!m_scheduler.wants_gpus() && !memory) {
        return std::nullopt;
    }
    return m_usage_watch->next_deadline(m_scheduler.queued_count() > 0, memory);
}

void JobRunner::check_gpu_usage()
{
    m_usage_watch->on_time(m_clock.now());
}

// Hands what a look learnt to the Placement (the GPUs' memory, what our jobs use of it) and
// to the scheduler (GPUs --skip-busy skips or frees, jobs that fit now); a look no GPU would
// get a job from is stopped.
void JobRunner::tend_gpu_usage()
{
    if (!m_usage_watch) {
        return;
    }
    const auto changes =
        m_scheduler.placement().take_sample_changes(m_scheduler.wants_gpus(), job_owners());
    for (const auto& [slot, usable] : changes) {
        apply(m_scheduler.on_gpu_usable(slot, usable));
    }
    if (m_scheduler.memory_job_waits()) {
        apply(m_scheduler.on_memory_read());
    }
}

// What came from a pipe is named and saved; the input hears of the rest.
void JobRunner::report_unstarted()
{
    const auto unstarted = m_scheduler.take_unstarted();
    m_ends.on_unstarted(unstarted);
    m_report.report_unstarted(unstarted, m_source.take_buffered());
}

} // namespace gpusched::sys
