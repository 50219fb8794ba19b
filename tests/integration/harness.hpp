#pragma once

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::testing {

namespace fs = std::filesystem;

std::filesystem::path binary();
std::filesystem::path script(const std::string& name);
// `path` where every account can run it: itself when every directory above it lets others
// through, else a copy (made once per test process, removed at its exit) in a directory of
// the temporary one that every user may enter. A clone in /root (0700 on Debian) is out of a
// second account's reach.
std::filesystem::path reachable_by_others(const std::filesystem::path& path);

// A fresh directory, removed with everything in it at the end of the test.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return m_path; }
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

private:
    std::filesystem::path m_path;
};

void write_file(const std::filesystem::path& path, const std::string& contents);
// The lines of `text`, without their newlines; and the reverse, each line ended by a newline.
std::vector<std::string> split_lines(const std::string& text);
std::string join_lines(const std::vector<std::string>& lines);
// The test's environment with `changes` made over it (a variable set, or unset with
// nullopt), as the NAME=VALUE strings a child's envp points into.
std::vector<std::string>
environment_with(const std::map<std::string, std::optional<std::string>>& changes);
// Whether `text` holds `part` anywhere: what most checks of a command's output ask.
bool has(std::string_view text, std::string_view part);
// How many lines of `text` hold `needle`: a log line counted as evidence that something happened.
std::size_t count_lines_with(const std::string& text, std::string_view needle);
std::string read_file(const std::filesystem::path& path);
// How often each line of the file at `path` occurs (none where there is no such file): the
// jobs that ran, where each notes its name in a file.
std::map<std::string, int> line_counts(const std::filesystem::path& path);
// Field `field` of the JSON document a `--json` printed (the GPUs of `status --json`, say);
// a discarded value when the output is no such document.
nlohmann::json json_field(const std::string& out, const std::string& field);

struct Finished {
    int exit_status = -1; // -1 when killed by a signal
    int signal = 0;
    bool timed_out = false;
    std::string out;
    std::string err;
    long max_rss_kib = 0; // the process's peak resident memory (wait4)
};

struct LaunchOptions {
    std::vector<std::string> args;
    std::optional<std::string> stdin_data;                 // default: /dev/null
    std::optional<std::filesystem::path> stdin_path;       // e.g. a FIFO
    std::map<std::string, std::optional<std::string>> env; // set, or unset with nullopt
    std::optional<std::filesystem::path> program;          // default: the gpusched binary
    std::optional<std::filesystem::path> cwd;              // default: the test's
    bool close_stdin = false;                              // start with fd 0 closed
    std::optional<int> stderr_fd = std::nullopt;           // fd 2 (default: a file read into err)
};

// A running gpusched, its stdout and stderr captured in files of `dir`.
class Process {
public:
    Process(const TempDir& dir, LaunchOptions options);
    ~Process();
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    pid_t pid() const { return m_pid; }
    bool running() const { return !m_reaped; }
    void signal(int signal) const;
    std::string err_so_far() const;
    // Waits for the exit; kills the process and reports timed_out after `timeout`.
    Finished wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));
    // The exit, if it has come; never blocks.
    std::optional<Finished> try_wait();

private:
    Finished finish(int wait_status, const struct rusage& usage);

    std::optional<Finished> m_finished;

    pid_t m_pid = -1;
    bool m_reaped = false;
    std::filesystem::path m_out;
    std::filesystem::path m_err;
};

Finished run(const TempDir& dir, LaunchOptions options,
             std::chrono::milliseconds timeout = std::chrono::seconds(60));

// A loopback port no one listens on now (another may take it before it is used).
int free_port();

// Polls `condition` every 10 ms for up to `timeout`.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(20));

// The records of a job log (its header skipped), each split into its tab-separated fields.
std::vector<std::vector<std::string>> joblog_records(const std::filesystem::path& path);

// One line of runs.log written by scripts/record_job.sh.
struct JobRecord {
    std::string tag;
    int job_id = 0;
    std::string gpu;
    double start = 0;
    double end = 0;
};
std::vector<JobRecord> read_records(const std::filesystem::path& runs_log);

// A command line that runs record_job.sh for `seconds` with `tag`.
std::string record_command(const TempDir& dir, double seconds, const std::string& tag);

// Pairs of records on the same GPU whose run times overlap, as readable text; empty if none.
std::string overlaps(const std::vector<JobRecord>& records);

// Makes the test process the reaper of orphans, so processes that gpusched leaves behind
// come back here and can be found; returns the pids of such leftovers still alive, after
// reaping those that have exited.
void adopt_orphans();
std::vector<pid_t> leftover_processes();
// Kills what the test started and still runs, but `keep`: the jobs that killed workers left
// behind, adopted here (adopt_orphans), with their own children; until none is left.
void stop_leftovers(pid_t keep = -1);

bool process_exists(pid_t pid);
// True while `pid` runs: a zombie has ended, whoever has yet to reap it.
bool process_alive(pid_t pid);

// A second account for tests of users who share a machine, created (useradd) where missing;
// nothing when the tests do not run as root.
std::optional<std::string> second_user();
// `options` for gpusched run as `user` (runuser), which waits for it and returns its status.
LaunchOptions as_user(const std::string& user, LaunchOptions options);
// Lets every user write into `path`, as a second user's jobs must.
void open_to_everyone(const std::filesystem::path& path);

} // namespace gpusched::testing
