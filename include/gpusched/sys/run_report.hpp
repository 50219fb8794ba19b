#pragma once

#include <gpusched/failed_jobs.hpp>
#include <gpusched/job.hpp>
#include <gpusched/resume_state.hpp>
#include <gpusched/running_jobs.hpp>
#include <gpusched/scheduler.hpp>
#include <gpusched/sys/command_input.hpp>
#include <gpusched/sys/progress_line.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::sys {

struct RunReportOptions {
    // The status line, when one is drawn.
    std::shared_ptr<ProgressLine> progress;
    // Where the failed jobs not named after the summary are recorded ("see FILE"), or how
    // to record them.
    std::string failed_jobs_hint = "--joblog FILE records every one";
    // A job log is kept: --resume runs what a stop interrupted.
    bool joblog = false;
};

// What the user is told about the run as a whole: the status line, the commands a stop left
// unstarted, the wait for what ended jobs left running, and the closing summary with the
// failed jobs to look at. The runner feeds it what happens (an attempt's run time, a failed
// job, an interruption, a start put off) and says when to tell; it keeps its own counts, and
// reads the scheduler's.
class RunReport {
public:
    using Clock = std::chrono::steady_clock;

    RunReport(const Scheduler& scheduler, RunReportOptions options);

    // What the runner feeds it.
    void on_run_started(Clock::time_point now) { m_started = now; }
    void on_attempt(Clock::duration runtime)
    {
        m_busy += runtime;
        ++m_attempts;
    }
    void on_skipped() { ++m_skipped; }
    // A start put off by a limit on open files (`descriptors`) or on processes.
    void on_start_deferred(bool descriptors)
    {
        ++(descriptors ? m_deferred_for_descriptors : m_deferred_for_processes);
    }
    // An attempt a stop of the run cut short.
    void on_interrupted(JobId id, std::string gpu, std::string command, bool replayable);
    bool interrupted(JobId id) const { return m_interrupted.contains(id); }
    // A job that ended failed for good (no retry follows).
    void note_failed_job(FailedJob job);
    // Something the status line shows changed: it is drawn again soon.
    void changed() { m_progress_stale = true; }

    // The status line: when it is due next (nothing: none is drawn), what it says, and
    // drawing it when due. `waiting_for` is what a GPU we want waits for ("" when none).
    std::optional<Clock::time_point> next_progress_draw() const;
    std::string progress_text(Clock::time_point now, bool input_finished,
                              const std::string& waiting_for) const;
    void draw_progress(Clock::time_point now, bool input_finished, const std::string& waiting_for);
    Clock::duration busy() const { return m_busy; }

    // The commands that never started: `unstarted` from the scheduler, `buffered` read from
    // the input and never taken. What came from a pipe is named and saved to a file.
    void report_unstarted(const std::vector<Command>& unstarted,
                          const std::vector<InputLine>& buffered);
    // Once the input has ended: the job log's jobs whose command is in no input line.
    void report_unmatched_records(const ResumeState& resume);
    // Once no job is left to start or run, what ended jobs left running is named, once.
    void report_lingering_jobs(RunningJobs& jobs);
    // The summary line and the failed jobs. `children_left`: processes that jobs left and
    // that let go of their GPU; `interrupted_fate`: what the input does with interrupted jobs.
    void report_summary(Clock::time_point now, std::size_t children_left,
                        const std::string& interrupted_fate);

private:
    struct Interrupted {
        std::string gpu;
        std::string command; // whole
        bool replayable = false;
    };

    void report_failed_jobs() const;

    const Scheduler& m_scheduler;
    RunReportOptions m_options;
    Clock::time_point m_started;
    Clock::duration m_busy{};
    std::size_t m_attempts = 0;
    std::size_t m_skipped = 0;
    // Starts put off, by the limit that put them off.
    std::size_t m_deferred_for_processes = 0;
    std::size_t m_deferred_for_descriptors = 0;
    std::map<JobId, Interrupted> m_interrupted; // attempts a stop of the run cut short
    // The first failed jobs, in the order they ended, named after the summary; and how many
    // failed in all.
    std::vector<FailedJob> m_failed_named;
    std::size_t m_failed_in_all = 0;
    bool m_unmatched_reported = false;
    bool m_lingering_reported = false;
    Clock::time_point m_last_progress_draw{};
    bool m_progress_stale = false; // something changed since the line was drawn
};

} // namespace gpusched::sys
