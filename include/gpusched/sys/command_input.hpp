#pragma once

#include <gpusched/line_assembler.hpp>
#include <gpusched/job.hpp>

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpusched::sys {

// A command read from an input, with where it came from for messages.
struct InputLine {
    LogicalLine line;
    std::string source; // "stdin", a path, or a queue
    // The job's number when the input has one (a queue's job id); else the next in order.
    std::optional<JobId> id;
    // The input can give it again (a regular file, with --resume; a queue, to another
    // worker): a drain need not run it, and a stop need not save it.
    bool replayable = false;
    // Read at a stop without its end: its writer was still writing it. Never run.
    bool unfinished = false;
    // Where and with what it runs, when not as the run's own jobs do (a queued job).
    SharedJobContext context;
};

// How a job ended for good (after its last attempt), as the runner tells its input.
struct JobEnd {
    JobId id = 0;
    JobOutcome outcome;
    std::string gpu;
    double started = 0;   // seconds since the epoch
    double runtime = 0;   // seconds
    bool stopped = false; // ended by a stop of the run (a signal), not on its own
    bool cancelled = false; // stopped because the input asked (see InputRequests)
    std::uint64_t peak_memory = 0; // GPU memory, bytes: the most seen on one GPU (0: unseen)
    // Attempts run again before this end after running out of GPU memory beside other jobs.
    unsigned memory_reruns = 0;
};

// What a queue asks of the runner, gathered since it was last asked.
struct InputRequests {
    // Running jobs to stop for good (`gpusched cancel`): SIGTERM, SIGKILL --kill-after later,
    // never tried again; their ends come back with `cancelled` set.
    std::vector<JobId> cancel;
    // The GPU ids on which no new job may start (`gpusched pause --gpu`), when that changed:
    // jobs running there go on.
    std::optional<std::set<std::string>> paused_gpus;
    // The worker was asked to stop (`gpusched worker --stop`): false to finish the running
    // jobs and start none (as SIGUSR1 does), true to stop now (as SIGTERM does).
    std::optional<bool> stop;
};

// Where the runner's commands come from: the files and pipes of a run (InputReader), or a
// queue (a worker). The runner drives it from its one poll. Each turn of the runner's loop
// waits on the poll, then takes commands: begin_turn() says how many it can start, next_line()
// hands them out, end_turn() closes the turn before the runner sleeps again.
class CommandSource {
public:
    using Clock = std::chrono::steady_clock;
    virtual ~CommandSource() = default;

    // Adds what to wait on; `wants_commands` is false while the scheduler holds all it may.
    virtual void add_poll_fds(std::vector<pollfd>& fds, bool wants_commands) = 0;
    // Handles a ready descriptor; false when it is not one of this input's.
    virtual bool on_ready(const pollfd& ready) = 0;
    // When on_time wants to run next (heartbeats, reconnections), if ever.
    virtual std::optional<Clock::time_point> next_deadline() const { return std::nullopt; }
    virtual void on_time(Clock::time_point /*now*/) {}

    // A turn begins: the runner can start `count` commands now (0: none) and asks for them
    // with next_line() next. An input that pays for each read (a queue's take) reads them
    // here, in one go.
    virtual void begin_turn(std::size_t /*count*/) {}
    // The next command among those already read, or nothing until more is read.
    virtual std::optional<InputLine> next_line() = 0;
    // The turn is over and the runner will sleep: what was read for it and not taken is
    // the input's to keep or give back.
    virtual void end_turn() {}
    // True when no command will come any more.
    virtual bool finished() const = 0;
    // True when what was read cannot be read again, so unstarted commands must be listed.
    virtual bool has_unrepeatable_input() const = 0;
    // Reads no more from now on (a drain, a stop, a halt, or the end of the run), after
    // taking in, without waiting, everything already written to pipes and FIFOs, so that none
    // of it is lost: next_line() then hands out what was read, and finished() follows.
    virtual void stop_reading() = 0;
    // Stops reading, and returns every command read but not yet taken, and the lines a stop
    // found unfinished.
    virtual std::vector<InputLine> take_buffered() = 0;

    // Descriptors that must stay open while any job of this run still runs, even after
    // gpusched is killed: the run's guard (RunGuard) holds them until it has stopped the jobs.
    // A queue worker's presence, say: while it is held, no one takes the worker for gone and
    // starts its jobs again elsewhere.
    virtual std::vector<int> held_while_jobs_run() const { return {}; }
    // True when a job that finds no descriptor free (EMFILE, ENFILE) waits and starts later,
    // as on a process limit, rather than failing: a queue worker's jobs are not its own to
    // fail, and would all fail in a moment, every one the queue holds.
    virtual bool starts_wait_for_descriptors() const { return false; }
};

// What the input asks of the runner (a queue's cancels and pauses), gathered since it was
// last asked.
class RunnerRequests {
public:
    virtual ~RunnerRequests() = default;
    // Asked after each turn of the poll, before the next command is taken.
    virtual InputRequests take_requests() { return {}; }
};

// Where what becomes of each command goes: nowhere for a run's files (its job log and
// records are the runner's own), the queue for a worker.
class JobEndSink {
public:
    virtual ~JobEndSink() = default;
    // The line next_line() returned last became job `id`.
    virtual void on_accepted(JobId /*id*/) {}
    virtual void on_started(JobId /*id*/, const std::string& /*gpu*/) {}
    virtual void on_ended(const JobEnd& /*end*/) {}
    // Jobs accepted but never started, at the end of a run.
    virtual void on_unstarted(const std::vector<Command>& /*commands*/) {}
    // Job `id`, accepted, cannot start now after all (its GPU's lease is held elsewhere): the
    // input takes it back, for others to run (only an input of replayable commands that the
    // scheduler takes only when they can start: a queue).
    virtual void on_returned(JobId /*id*/) {}
    // Where on_returned puts a job, for the log.
    virtual std::string returned_to() const { return "its input"; }
    // What becomes of jobs a stop interrupted, for the run's summary ("" when nothing does).
    virtual std::string interrupted_fate() const { return {}; }
    // No job is left to run or running: the run ends once settled(). Called on every turn
    // of the loop from then on.
    virtual void on_jobs_over() {}
    // True once everything it still had to send (results) is sent; the runner waits for it.
    virtual bool settled() const { return true; }
};

} // namespace gpusched::sys
