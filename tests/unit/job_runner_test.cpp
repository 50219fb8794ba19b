// The runner's timing rules, run in-process against a fake process table, fake signals and a
// fake clock: --timeout and --kill-after, leftovers, stops, Ctrl-Z, cancels and pauses,
// retries, the back-off after a fork limit. An hour of them passes in a millisecond, and no
// loaded machine makes one late. What only the kernel can show (setsid chains, the terminal,
// FIFOs) stays in tests/integration.
#include <gpusched/sys/job_runner.hpp>

#include <gpusched/exit_status.hpp>
#include <gpusched/joblog.hpp>

#include "fake_runner_parts.hpp"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpusched {
namespace {

using namespace std::chrono_literals;
using testing::FakeClock;
using testing::FakeInput;
using testing::FakeProcessTable;
using testing::FakeSignals;
using Signal = FakeProcessTable::Signal;
using Seconds = std::chrono::duration<double>;

// What a fake job does, from the words of its command:
//   ends=S     its shell exits S seconds after its start (else it runs until signalled)
//   code=C     with status C
//   stubborn   it ignores SIGTERM (and SIGINT, SIGHUP)
//   leaves=S   it starts a process in its group, holding its token, that ends S seconds after
//              the start; setsid=S the same in a group of its own; a stubborn-leftover
//              ignores SIGTERM
struct FakeJob {
    std::optional<double> ends;
    int code = 0;
    bool stubborn = false;
    std::optional<double> leaves;
    bool leftover_in_own_group = false;
    bool stubborn_leftover = false;

    static FakeJob parse(const std::string& command)
    {
        FakeJob job;
        std::istringstream words(command);
        std::string word;
        while (words >> word) {
            const auto equals = word.find('=');
            const auto key = word.substr(0, equals);
            const auto value =
                equals == std::string::npos ? 0.0 : std::stod(word.substr(equals + 1));
            if (key == "ends") {
                job.ends = value;
            } else if (key == "code") {
                job.code = static_cast<int>(value);
            } else if (key == "stubborn") {
                job.stubborn = true;
            } else if (key == "leaves" || key == "setsid") {
                job.leaves = value;
                job.leftover_in_own_group = key == "setsid";
            } else if (key == "stubborn-leftover") {
                job.stubborn_leftover = true;
            }
        }
        return job;
    }
};

class JobRunnerRules : public ::testing::Test {
protected:
    JobRunnerRules()
    {
        table.fd_ready = [this](int fd) { return fd == FakeSignals::k_fd && signals.pending(); };
        table.on_spawn = [this](ProcessId pid, const std::string& command) {
            start_fake_job(pid, command);
        };
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(m_log);
        sink->set_pattern("%l: %v");
        m_previous_logger = spdlog::default_logger();
        spdlog::set_default_logger(std::make_shared<spdlog::logger>("runner", sink));
        spdlog::set_level(spdlog::level::debug);
    }
    ~JobRunnerRules() override
    {
        spdlog::set_default_logger(m_previous_logger);
        spdlog::set_level(spdlog::level::info);
        std::filesystem::remove(m_joblog);
    }

    // The records of a job log the runner was given with with_joblog.
    sys::RunnerOptions with_joblog(sys::RunnerOptions options)
    {
        options.joblog.emplace(m_joblog.string());
        return options;
    }
    std::vector<JoblogRecord> joblog_records() const
    {
        std::vector<JoblogRecord> records;
        std::ifstream file(m_joblog);
        std::string line;
        std::getline(file, line); // the header
        while (std::getline(file, line)) {
            records.push_back(parse_joblog_line(line).value());
        }
        return records;
    }

    // Runs the commands added to `input` on `gpus`; returns the exit status.
    int run(sys::RunnerOptions options = {}, SchedulerOptions scheduling = {},
            std::vector<std::string> gpus = {"0"})
    {
        Scheduler scheduler(GpuPool(std::move(gpus)), scheduling);
        const char* const no_variables[] = {nullptr};
        const JobEnvironment environment(no_variables);
        LocalLauncher local(table);
        JobLauncher& used = launcher != nullptr ? *launcher : local;
        sys::JobRunner runner(scheduler, input, input, input, {table, used, signals, clock},
                              environment, std::move(options));
        return runner.run();
    }

    static sys::RunnerOptions with_timeout(std::chrono::milliseconds timeout,
                                           std::chrono::milliseconds kill_after = 10s)
    {
        sys::RunnerOptions options;
        options.timeout = timeout;
        options.kill_after = kill_after;
        return options;
    }

    // Runs `event` at `seconds` into the run.
    void at(double seconds, FakeProcessTable::Event event)
    {
        table.at(FakeClock::k_start +
                     std::chrono::duration_cast<FakeClock::Duration>(Seconds(seconds)),
                 std::move(event));
    }

    // The signals `target` got (a pid, or minus a group), each with its time into the run.
    std::vector<std::pair<int, double>> signals_to(ProcessId target) const
    {
        std::vector<std::pair<int, double>> got;
        for (std::size_t i = 0; i < table.sent.size(); ++i) {
            if (table.sent[i].target == target) {
                got.emplace_back(table.sent[i].signal, seconds_at(table.sent_at[i]));
            }
        }
        return got;
    }
    static double seconds_at(std::chrono::steady_clock::time_point time)
    {
        return Seconds(time - FakeClock::k_start).count();
    }
    std::string log() const { return m_log.str(); }
    bool logged(const std::string& text) const { return log().find(text) != std::string::npos; }

    FakeClock clock;
    FakeProcessTable table{&clock};
    FakeSignals signals{clock};
    FakeInput input;
    JobLauncher* launcher = nullptr; // none: the process table's own
    // The pid of each job's shell and, for those that leave one, of its leftover, in start
    // order; and when each started, in seconds.
    std::vector<ProcessId> shells;
    std::vector<ProcessId> leftovers;
    std::vector<double> started_at;

private:
    void start_fake_job(ProcessId pid, const std::string& command)
    {
        const auto job = FakeJob::parse(command);
        shells.push_back(pid);
        started_at.push_back(seconds_at(clock.now()));
        if (job.stubborn) {
            table.ignore_term(pid);
        }
        const auto after = [](double seconds) {
            return std::chrono::duration_cast<FakeClock::Duration>(Seconds(seconds));
        };
        if (job.leaves) {
            const ProcessId leftover = pid + 1000;
            table.add({leftover, job.leftover_in_own_group ? leftover : pid, table.token_of(pid),
                       pid, job.stubborn_leftover});
            leftovers.push_back(leftover);
            table.after(after(*job.leaves), [this, leftover] { table.exit(leftover, 0); });
        }
        if (job.ends) {
            table.after(after(*job.ends), [this, pid, code = job.code] { table.exit(pid, code); });
        }
    }

    std::ostringstream m_log;
    std::shared_ptr<spdlog::logger> m_previous_logger;
    const std::filesystem::path m_joblog =
        std::filesystem::temp_directory_path() /
        ("gpusched-runner-test-" + std::to_string(getpid()) + ".joblog");
};

TEST_F(JobRunnerRules, AJobPastItsTimeoutGetsSigtermThenSigkillAfterKillAfter)
{
    input.add("stubborn");
    EXPECT_EQ(run(with_timeout(10s, 5s)), exit_status_for_failures(1));
    EXPECT_EQ(signals_to(-shells[0]), (std::vector<std::pair<int, double>>{
                                          {SIGTERM, 10.0}, {SIGCONT, 10.0}, {SIGKILL, 15.0}}));
    ASSERT_EQ(input.ended.size(), 1u);
    EXPECT_EQ(input.ended[0].outcome.signal, SIGKILL);
    EXPECT_DOUBLE_EQ(input.ended[0].runtime, 15.0);
    EXPECT_TRUE(logged("job 1 on GPU 0 passed --timeout: SIGTERM, SIGKILL in 5.000 s")) << log();
    EXPECT_TRUE(logged("failed on GPU 0: killed by SIGKILL (timed out)")) << log();
}

TEST_F(JobRunnerRules, AJobThatEndsOnSigtermIsNotKilledAndTheNextStartsAtOnce)
{
    input.add("ends=60");
    input.add("ends=1");
    EXPECT_EQ(run(with_timeout(10s)), exit_status_for_failures(1));
    EXPECT_EQ(signals_to(-shells[0]),
              (std::vector<std::pair<int, double>>{{SIGTERM, 10.0}, {SIGCONT, 10.0}}));
    EXPECT_EQ(started_at, (std::vector<double>{0.0, 10.0}));
    EXPECT_EQ(clock.elapsed(), 11s);
}

// As --help says, a timeout counts as failed: a job that catches SIGTERM and exits 0 too, in
// the run's count, its retries and its record.
TEST_F(JobRunnerRules, AJobThatExitsZeroAfterItsTimeoutStillFailed)
{
    input.add("stubborn");
    at(11, [this] { table.exit(shells[0], 0); });
    EXPECT_EQ(run(with_joblog(with_timeout(10s, 5s))), exit_status_for_failures(1)) << log();
    ASSERT_EQ(input.ended.size(), 1u);
    EXPECT_FALSE(input.ended[0].outcome.succeeded());
    EXPECT_TRUE(logged("failed on GPU 0: exit 0 (timed out)")) << log();
    const auto records = joblog_records();
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].end, AttemptEnd::timeout);
    EXPECT_FALSE(records[0].succeeded());
}

TEST_F(JobRunnerRules, ABackgroundProcessKeepsItsGpuFromTheNextJob)
{
    input.add("ends=1 leaves=30");
    input.add("ends=1");
    EXPECT_EQ(run(), 0) << log();
    EXPECT_EQ(started_at, (std::vector<double>{0.0, 30.0}));
    EXPECT_TRUE(logged("GPU 0 is free again: what job 1 left behind has ended")) << log();
}

TEST_F(JobRunnerRules, OtherGpusGoOnWhileOneIsHeld)
{
    input.add("ends=1 leaves=30");
    for (int i = 0; i < 3; ++i) {
        input.add("ends=1");
    }
    EXPECT_EQ(run({}, {}, {"0", "1"}), 0) << log();
    EXPECT_EQ(started_at, (std::vector<double>{0.0, 0.0, 1.0, 2.0}));
    for (std::size_t i = 1; i < input.started.size(); ++i) {
        EXPECT_EQ(input.started[i].second, "1") << "job " << input.started[i].first;
    }
    EXPECT_EQ(clock.elapsed(), 30s) << "the run ends with what job 1 left";
}

TEST_F(JobRunnerRules, TheEndOfARunWaitsForLeftoversAndNamesThemOnce)
{
    input.add("ends=1 leaves=30");
    EXPECT_EQ(run(), 0);
    EXPECT_EQ(clock.elapsed(), 30s);
    const auto named = log().find("waiting for what job 1 left running on GPU 0: pid 1100");
    ASSERT_NE(named, std::string::npos) << log();
    EXPECT_EQ(log().find("waiting for what job", named + 1), std::string::npos) << log();
}

TEST_F(JobRunnerRules, TimeoutReachesWhatAFinishedJobLeftAndTheGpuIsFreeOnceItIsKilled)
{
    input.add("ends=1 setsid=300 stubborn-leftover");
    input.add("ends=1");
    EXPECT_EQ(run(with_timeout(10s, 5s)), 0) << "the job itself succeeded\n" << log();
    EXPECT_EQ(signals_to(leftovers[0]), (std::vector<std::pair<int, double>>{
                                            {SIGTERM, 10.0}, {SIGCONT, 10.0}, {SIGKILL, 15.0}}));
    EXPECT_TRUE(logged("what job 1 left running on GPU 0 passed --timeout")) << log();
    EXPECT_EQ(started_at, (std::vector<double>{0.0, 15.0}));
}

TEST_F(JobRunnerRules, ARetryWhileTheFailedAttemptsLeftoversRunKeepsEachGpuApart)
{
    input.add("ends=1 code=3 leaves=30"); // both attempts fail, each leaving a process
    input.add("ends=2");
    input.add("ends=2");
    SchedulerOptions retrying;
    retrying.retries = 1;
    EXPECT_EQ(run({}, retrying, {"0", "1"}), exit_status_for_failures(1)) << log();
    EXPECT_FALSE(logged("stopping the run")) << log();
    // Attempt 1 holds GPU 0 until 30 s; job 2 runs on GPU 1, then attempt 2 there, which
    // holds it until 32 s; job 3 waits for GPU 0.
    EXPECT_EQ(input.started,
              (std::vector<std::pair<JobId, std::string>>{{1, "0"}, {2, "1"}, {1, "1"}, {3, "0"}}));
    EXPECT_EQ(started_at, (std::vector<double>{0.0, 0.0, 2.0, 30.0}));
    EXPECT_EQ(shells.size(), 4u) << "jobs 2 and 3 ran once each";
}

TEST_F(JobRunnerRules, AFailedJobIsTriedAgainUpToItsRetries)
{
    input.add("ends=1 code=3");
    SchedulerOptions retrying;
    retrying.retries = 2;
    EXPECT_EQ(run({}, retrying), exit_status_for_failures(1));
    EXPECT_EQ(started_at, (std::vector<double>{0.0, 1.0, 2.0}));
    EXPECT_TRUE(logged("job 1 will be tried again (attempt 3)")) << log();
    EXPECT_TRUE(logged("1 failed, 2 retries,")) << log();
    ASSERT_EQ(input.ended.size(), 1u) << "one end, after the last attempt";
    EXPECT_EQ(input.ended[0].outcome.exit_code, 3);
}

TEST_F(JobRunnerRules, TheSummaryCountsRetriesAsAPersonWrites)
{
    input.add("ends=1 code=3");
    SchedulerOptions retrying;
    retrying.retries = 1;
    EXPECT_EQ(run({}, retrying), exit_status_for_failures(1));
    EXPECT_TRUE(logged("1 job: 0 succeeded, 1 failed, 1 retry, in 2.000 s")) << log();
}

TEST_F(JobRunnerRules, ASigtermStopsEveryJobAndKillsWhatIgnoresItAfterKillAfter)
{
    input.add("stubborn");
    input.add("ends=1000");
    input.add("ends=1");
    at(5, [this] { signals.raise(SIGTERM); });
    EXPECT_EQ(run({}, {}, {"0", "1"}), exit_status_for_signal(SIGTERM));
    EXPECT_EQ(signals_to(-shells[0]), (std::vector<std::pair<int, double>>{
                                          {SIGTERM, 5.0}, {SIGCONT, 5.0}, {SIGKILL, 15.0}}));
    EXPECT_EQ(signals_to(-shells[1]),
              (std::vector<std::pair<int, double>>{{SIGTERM, 5.0}, {SIGCONT, 5.0}}));
    EXPECT_EQ(shells.size(), 2u) << "the third job never starts";
    EXPECT_TRUE(logged("interrupted on GPU 0: killed by SIGKILL after 15.000 s")) << log();
    EXPECT_TRUE(logged("SIGTERM: starting no more jobs; passing it on to 2 running jobs, "
                       "SIGKILL in 10.000 s"))
        << log();
}

TEST_F(JobRunnerRules, AStopSavesWhatItInterruptedFromAPipeWithWhatItDidNotStart)
{
    const auto state = std::filesystem::temp_directory_path() /
                       ("gpusched-runner-state-" + std::to_string(getpid()));
    const char* before_state = std::getenv("XDG_STATE_HOME");
    const std::optional<std::string> user_state =
        before_state ? std::optional<std::string>(before_state) : std::nullopt;
    setenv("XDG_STATE_HOME", state.c_str(), 1);
    input.from_pipe = true;
    input.add("ends=100 # first");
    input.add("ends=100 # second");
    at(5, [this] { signals.raise(SIGTERM); });
    EXPECT_EQ(run(), exit_status_for_signal(SIGTERM));
    if (user_state) {
        setenv("XDG_STATE_HOME", user_state->c_str(), 1);
    } else {
        unsetenv("XDG_STATE_HOME");
    }
    const std::string before = "from pipes and FIFOs not started, and the 1 job the stop "
                               "interrupted are saved in ";
    const auto at = log().find(before);
    ASSERT_NE(at, std::string::npos) << log();
    const auto from = at + before.size();
    const auto file = log().substr(from, log().find(": give", from) - from);
    std::ifstream saved(file);
    std::vector<std::string> lines;
    for (std::string line; std::getline(saved, line);) {
        lines.push_back(line);
    }
    std::filesystem::remove_all(state);
    ASSERT_EQ(lines.size(), 4u) << log();
    EXPECT_EQ(lines[1], "# interrupted by the stop: job 1 on GPU 0");
    EXPECT_EQ(lines[2], "ends=100 # first");
    EXPECT_EQ(lines[3], "ends=100 # second");
    EXPECT_TRUE(logged("not started: job 2: ends=100 # second")) << log();
}

TEST_F(JobRunnerRules, AJobTheTerminalStoppedIsNamedAtOnceAndAStopEndsIt)
{
    input.add("");
    at(2, [this] { table.stop_by_terminal(shells[0], SIGTTIN); });
    at(5, [this] { signals.raise(SIGINT); });
    EXPECT_EQ(run(), exit_status_for_signal(SIGINT));
    EXPECT_TRUE(logged("job 1 on GPU 0 is stopped by SIGTTIN, as it used the terminal")) << log();
    EXPECT_EQ(clock.elapsed(), 5s) << "the stop waited for --kill-after\n" << log();
    ASSERT_EQ(input.ended.size(), 1u);
    EXPECT_EQ(input.ended[0].outcome.signal, SIGINT);
}

TEST_F(JobRunnerRules, ASecondInterruptKillsAtOnce)
{
    input.add("stubborn");
    at(5, [this] { signals.raise(SIGINT); });
    at(6, [this] { signals.raise(SIGINT); });
    sys::RunnerOptions options;
    options.kill_after = 600s;
    EXPECT_EQ(run(std::move(options)), exit_status_for_signal(SIGINT));
    EXPECT_EQ(signals_to(-shells[0]),
              (std::vector<std::pair<int, double>>{{SIGINT, 5.0}, {SIGCONT, 5.0}, {SIGKILL, 6.0}}));
    EXPECT_TRUE(logged("SIGINT again: killing every job now")) << log();
}

TEST_F(JobRunnerRules, Usr1DrainsTheRunningJobsAndStartsNoMore)
{
    input.add("ends=10");
    input.add("ends=1");
    at(5, [this] { signals.raise(SIGUSR1); });
    EXPECT_EQ(run(), 0) << log();
    EXPECT_EQ(shells.size(), 1u);
    EXPECT_TRUE(signals_to(-shells[0]).empty()) << "the running job finishes undisturbed";
    EXPECT_EQ(clock.elapsed(), 10s);
}

TEST_F(JobRunnerRules, TimeStoppedByCtrlZCountsNeitherAgainstTheTimeoutNorInTheRunTime)
{
    input.add("");
    signals.stopped_for = 30min;
    at(4, [this] { signals.raise(SIGTSTP); });
    EXPECT_EQ(run(with_timeout(10s)), exit_status_for_failures(1));
    EXPECT_EQ(signals.stops, 1);
    // Stopped at 4 s with it, continued 30 minutes later, stopped by --timeout once it has
    // run 10 s of its own.
    EXPECT_EQ(signals_to(-shells[0]),
              (std::vector<std::pair<int, double>>{
                  {SIGSTOP, 4.0}, {SIGCONT, 1804.0}, {SIGTERM, 1810.0}, {SIGCONT, 1810.0}}));
    ASSERT_EQ(input.ended.size(), 1u);
    EXPECT_DOUBLE_EQ(input.ended[0].runtime, 10.0);
}

TEST_F(JobRunnerRules, AJobThatEndsAfterCtrlZHasTheRunTimeItRan)
{
    input.add("");
    signals.stopped_for = 30min;
    at(4, [this] { signals.raise(SIGTSTP); });
    at(1806, [this] { table.exit(shells[0], 0); });
    EXPECT_EQ(run(with_joblog(with_timeout(10s))), 0) << log();
    ASSERT_EQ(input.ended.size(), 1u);
    EXPECT_DOUBLE_EQ(input.ended[0].runtime, 6.0);
    EXPECT_FALSE(logged("--timeout")) << log();
    const auto records = joblog_records();
    ASSERT_EQ(records.size(), 1u);
    EXPECT_TRUE(records[0].succeeded());
    EXPECT_NEAR(records[0].runtime, 6.0, 0.001) << "JobRuntime leaves out the 30 minutes stopped";
    EXPECT_NEAR(records[0].start,
                std::chrono::duration<double>(FakeClock::k_wall_start.time_since_epoch()).count(),
                0.001);
}

TEST_F(JobRunnerRules, ACancelledJobGetsSigtermThenSigkillAndIsNotTriedAgain)
{
    input.add("stubborn");
    at(2, [this] { input.requests.cancel.push_back(1); });
    SchedulerOptions retrying;
    retrying.retries = 3;
    sys::RunnerOptions options;
    options.kill_after = 5s;
    run(std::move(options), retrying);
    EXPECT_EQ(signals_to(-shells[0]), (std::vector<std::pair<int, double>>{
                                          {SIGTERM, 2.0}, {SIGCONT, 2.0}, {SIGKILL, 7.0}}));
    EXPECT_EQ(shells.size(), 1u);
    ASSERT_EQ(input.ended.size(), 1u);
    EXPECT_TRUE(input.ended[0].cancelled);
}

// A second way to launch a job is one more JobLauncher: it gets the job's id, its GPUs and
// what to run, and the runner's rules apply to what it started.
TEST_F(JobRunnerRules, AJobStartsThroughTheLauncherTheRunIsGiven)
{
    class RecordingLauncher final : public JobLauncher {
    public:
        explicit RecordingLauncher(ProcessTable& processes) : m_local(processes) {}
        Result<Spawned> launch(const LaunchRequest& request) override
        {
            launched.push_back(
                fmt::format("job {} on {}: {}", request.id, request.gpus, request.spawn.command));
            return m_local.launch(request);
        }
        std::vector<std::string> launched;

    private:
        LocalLauncher m_local;
    } recording(table);
    launcher = &recording;
    input.add("ends=1 code=3");
    input.add("ends=0.5");
    SchedulerOptions scheduling;
    scheduling.retries = 1;
    EXPECT_EQ(run({}, scheduling, {"0", "1"}), 1) << log();
    EXPECT_EQ(recording.launched,
              (std::vector<std::string>{"job 1 on 0: ends=1 code=3", "job 2 on 1: ends=0.5",
                                        "job 1 on 1: ends=1 code=3"}));
}

TEST_F(JobRunnerRules, APausedGpuStartsNothingNewWhileTheOthersGoOn)
{
    for (int i = 0; i < 3; ++i) {
        input.add("ends=10");
    }
    input.requests.paused_gpus = std::set<std::string>{"0"};
    EXPECT_EQ(run({}, {}, {"0", "1"}), 0) << log();
    for (const auto& [job, gpu] : input.started) {
        EXPECT_EQ(gpu, "1") << "job " << job;
    }
    EXPECT_EQ(started_at, (std::vector<double>{0.0, 10.0, 20.0}));
}

TEST_F(JobRunnerRules, AForkLimitDefersJobsWithADoublingWaitAndFailsNone)
{
    input.add("ends=1");
    input.add("ends=1");
    table.refuse_spawns(3, EAGAIN);
    EXPECT_EQ(run(), 0) << log();
    EXPECT_EQ(table.refused, 3);
    // Refused at 0, then after 100, 200 and 400 ms.
    ASSERT_EQ(started_at.size(), 2u);
    EXPECT_DOUBLE_EQ(started_at[0], 0.7);
    EXPECT_DOUBLE_EQ(started_at[1], 1.7);
    EXPECT_TRUE(logged("job 1 cannot start yet: /bin/sh: Resource temporarily unavailable "
                       "(a limit on processes, such as ulimit -u)"))
        << log();
    EXPECT_TRUE(logged(", 3 starts put off by a limit on processes,")) << log();
}

TEST_F(JobRunnerRules, AQueuesJobShortOfDescriptorsWaitsNamingWhatRanOut)
{
    input.waits_for_descriptors = true;
    input.add("ends=1");
    table.refuse_spawns(2, EMFILE, "pipe2");
    EXPECT_EQ(run(), 0) << log();
    EXPECT_DOUBLE_EQ(started_at.at(0), 0.3);
    EXPECT_TRUE(logged("job 1 cannot start yet: pipe2: Too many open files (a limit on open "
                       "files, such as ulimit -n); jobs wait and start as other jobs end"))
        << log();
    EXPECT_TRUE(logged(", 2 starts put off by a limit on open files,")) << log();
    EXPECT_FALSE(logged("limit on processes")) << log();
}

TEST_F(JobRunnerRules, AShellThatCannotStartFailsItsJobAndTheRunGoesOn)
{
    input.add("ends=1");
    input.add("ends=1");
    table.refuse_spawns(1, ENOENT);
    EXPECT_EQ(run(), exit_status_for_failures(1)) << log();
    EXPECT_EQ(shells.size(), 1u);
    EXPECT_TRUE(logged("job 1 could not start on GPU 0: /bin/sh: No such file or directory"))
        << log();
}

} // namespace
} // namespace gpusched
