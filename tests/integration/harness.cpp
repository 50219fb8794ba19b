#include "harness.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace gpusched::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path binary()
{
    return GPUSCHED_BINARY;
}
fs::path script(const std::string& name)
{
    return reachable_by_others(fs::path(GPUSCHED_TEST_SCRIPTS) / name);
}

namespace {

bool others_can_reach(const fs::path& path)
{
    for (auto directory = fs::absolute(path).parent_path();; directory = directory.parent_path()) {
        struct stat status {};
        if (::stat(directory.c_str(), &status) != 0 || (status.st_mode & S_IXOTH) == 0) {
            return false;
        }
        if (directory == directory.root_path()) {
            return true;
        }
    }
}

// The directory of this test process's copies, made on first use and removed at its exit (by
// the destructor of a static: an atexit handler registered while the static is being made
// would run after the static's destructor, and find its path gone).
struct CopiesDirectory {
    fs::path path;
    CopiesDirectory()
    {
        std::string pattern = (fs::temp_directory_path() / "gpusched-reachable-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr || ::chmod(pattern.c_str(), 0755) != 0) {
            throw std::runtime_error("cannot make a directory for copies other accounts reach");
        }
        path = pattern;
    }
    CopiesDirectory(const CopiesDirectory&) = delete;
    CopiesDirectory& operator=(const CopiesDirectory&) = delete;
    ~CopiesDirectory()
    {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

const fs::path& copies_directory()
{
    static const CopiesDirectory directory;
    return directory.path;
}

} // namespace

fs::path reachable_by_others(const fs::path& path)
{
    if (others_can_reach(path)) {
        return path;
    }
    const auto copy = copies_directory() / path.filename();
    if (!fs::exists(copy)) {
        fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
        fs::permissions(copy, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
    }
    return copy;
}

TempDir::TempDir()
{
    std::string pattern = (fs::temp_directory_path() / "gpusched-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    m_path = pattern;
}

TempDir::~TempDir()
{
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
}

void write_file(const fs::path& path, const std::string& contents)
{
    std::ofstream file(path, std::ios::binary);
    file << contents;
}

std::vector<std::string>
environment_with(const std::map<std::string, std::optional<std::string>>& changes)
{
    std::vector<std::string> variables;
    for (char** entry = environ; *entry != nullptr; ++entry) {
        const std::string variable = *entry;
        if (changes.count(variable.substr(0, variable.find('='))) == 0) {
            variables.push_back(variable);
        }
    }
    for (const auto& [name, value] : changes) {
        if (value) {
            variables.push_back(name + "=" + *value);
        }
    }
    return variables;
}

bool has(std::string_view text, std::string_view part)
{
    return text.find(part) != std::string_view::npos;
}

std::vector<std::string> split_lines(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream stream(text);
    std::string line;
    while (std::getline(stream, line)) {
        lines.push_back(line);
    }
    return lines;
}

nlohmann::json json_field(const std::string& out, const std::string& field)
{
    const auto document = nlohmann::json::parse(out, nullptr, false);
    if (!document.is_object() || !document.contains(field)) {
        return nlohmann::json(nlohmann::json::value_t::discarded);
    }
    return document.at(field);
}

std::size_t count_lines_with(const std::string& text, std::string_view needle)
{
    const auto lines = split_lines(text);
    return static_cast<std::size_t>(
        std::count_if(lines.begin(), lines.end(), [needle](const std::string& line) {
            return line.find(needle) != std::string::npos;
        }));
}

std::string join_lines(const std::vector<std::string>& lines)
{
    std::string text;
    for (const auto& line : lines) {
        text += line + "\n";
    }
    return text;
}

std::string read_file(const fs::path& path)
{
    std::ifstream file(path, std::ios::binary);
    std::ostringstream contents;
    contents << file.rdbuf();
    return contents.str();
}

std::map<std::string, int> line_counts(const fs::path& path)
{
    std::map<std::string, int> counts;
    for (const auto& line : split_lines(read_file(path))) {
        ++counts[line];
    }
    return counts;
}

std::vector<std::vector<std::string>> joblog_records(const fs::path& path)
{
    std::vector<std::vector<std::string>> records;
    for (const auto& line : split_lines(read_file(path))) {
        if (line.rfind("Seq\t", 0) == 0) {
            continue;
        }
        std::vector<std::string> fields;
        std::istringstream stream(line);
        for (std::string field; std::getline(stream, field, '\t');) {
            fields.push_back(field);
        }
        records.push_back(std::move(fields));
    }
    return records;
}

Process::Process(const TempDir& dir, LaunchOptions options)
    : m_out(dir / "gpusched.out"), m_err(dir / "gpusched.err")
{
    fs::path stdin_path = "/dev/null";
    if (options.stdin_data) {
        stdin_path = dir / "gpusched.in";
        write_file(stdin_path, *options.stdin_data);
    } else if (options.stdin_path) {
        stdin_path = *options.stdin_path;
    }

    // Leases are host-wide: each test keeps its own in its directory, so tests running side by
    // side with the same GPU ids do not wait for one another.
    options.env.try_emplace("GPUSCHED_LOCK_DIR", (dir / "leases").string());
    auto env_strings = environment_with(options.env);
    std::vector<char*> envp;
    for (auto& variable : env_strings) {
        envp.push_back(variable.data());
    }
    envp.push_back(nullptr);

    std::vector<std::string> args = {options.program.value_or(binary()).string()};
    args.insert(args.end(), options.args.begin(), options.args.end());
    std::vector<char*> argv;
    for (auto& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // A FIFO given as stdin would block this open until a writer comes: open it in the child.
    if (options.close_stdin) {
        posix_spawn_file_actions_addclose(&actions, 0);
    } else {
        posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
    }
    posix_spawn_file_actions_addopen(&actions, 1, m_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    if (options.stderr_fd) {
        posix_spawn_file_actions_adddup2(&actions, *options.stderr_fd, 2);
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, m_err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                         0644);
    }
    if (options.cwd) {
        posix_spawn_file_actions_addchdir_np(&actions, options.cwd->c_str());
    }
    const int error = posix_spawn(&m_pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) {
        throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(error)));
    }
}

Process::~Process()
{
    if (!m_reaped) {
        kill(m_pid, SIGKILL);
        waitpid(m_pid, nullptr, 0);
    }
}

void Process::signal(int signal) const
{
    if (!m_reaped) { // a reaped pid may belong to someone else by now
        kill(m_pid, signal);
    }
}

std::string Process::err_so_far() const
{
    return read_file(m_err);
}

Finished Process::wait(std::chrono::milliseconds timeout)
{
    if (m_finished) {
        return *m_finished;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool timed_out = false;
    int status = 0;
    struct rusage usage {};
    while (wait4(m_pid, &status, WNOHANG, &usage) != m_pid) {
        if (std::chrono::steady_clock::now() > deadline) {
            timed_out = true;
            kill(m_pid, SIGKILL);
            wait4(m_pid, &status, 0, &usage);
            break;
        }
        std::this_thread::sleep_for(5ms);
    }
    Finished finished = finish(status, usage);
    finished.timed_out = timed_out;
    m_finished = finished;
    return finished;
}

std::optional<Finished> Process::try_wait()
{
    int status = 0;
    struct rusage usage {};
    if (m_reaped || wait4(m_pid, &status, WNOHANG, &usage) != m_pid) {
        return std::nullopt;
    }
    return finish(status, usage);
}

Finished Process::finish(int wait_status, const struct rusage& usage)
{
    m_reaped = true;
    Finished finished;
    finished.max_rss_kib = usage.ru_maxrss;
    if (WIFEXITED(wait_status)) {
        finished.exit_status = WEXITSTATUS(wait_status);
    } else if (WIFSIGNALED(wait_status)) {
        finished.signal = WTERMSIG(wait_status);
    }
    finished.out = read_file(m_out);
    finished.err = read_file(m_err);
    m_finished = finished;
    return finished;
}

Finished run(const TempDir& dir, LaunchOptions options, std::chrono::milliseconds timeout)
{
    Process process(dir, std::move(options));
    return process.wait(timeout);
}

int free_port()
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    const bool found = fd >= 0 &&
                       bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                       getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
    if (fd >= 0) {
        close(fd);
    }
    if (!found) {
        throw std::runtime_error("cannot find a free port");
    }
    return ntohs(address.sin_port);
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) {
            return true;
        }
        std::this_thread::sleep_for(10ms);
    }
    return condition();
}

std::vector<JobRecord> read_records(const fs::path& runs_log)
{
    std::vector<JobRecord> records;
    std::istringstream lines(read_file(runs_log));
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        JobRecord record;
        if (fields >> record.tag >> record.job_id >> record.gpu >> record.start >> record.end) {
            records.push_back(record);
        } else {
            ADD_FAILURE() << "malformed record: " << line;
        }
    }
    return records;
}

std::string record_command(const TempDir& dir, double seconds, const std::string& tag)
{
    return fmt::format("{} {} {} {}", script("record_job.sh").string(), dir.path().string(),
                       seconds, tag);
}

std::string overlaps(const std::vector<JobRecord>& records)
{
    std::map<std::string, std::vector<JobRecord>> by_gpu;
    for (const auto& record : records) {
        by_gpu[record.gpu].push_back(record);
    }
    std::string found;
    for (auto& [gpu, runs] : by_gpu) {
        std::sort(runs.begin(), runs.end(),
                  [](const auto& a, const auto& b) { return a.start < b.start; });
        for (std::size_t i = 1; i < runs.size(); ++i) {
            if (runs[i].start < runs[i - 1].end) {
                found += fmt::format(
                    "GPU {}: job {} [{:.3f}, {:.3f}] overlaps job {} [{:.3f}, {:.3f}]\n", gpu,
                    runs[i - 1].job_id, runs[i - 1].start, runs[i - 1].end, runs[i].job_id,
                    runs[i].start, runs[i].end);
            }
        }
    }
    return found;
}

void adopt_orphans()
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        throw std::runtime_error("prctl PR_SET_CHILD_SUBREAPER failed");
    }
}

void stop_leftovers(pid_t keep)
{
    for (int round = 0; round < 100; ++round) {
        std::vector<pid_t> children;
        std::ifstream list(fmt::format("/proc/{0}/task/{0}/children", getpid()));
        for (pid_t pid = 0; list >> pid;) {
            if (pid != keep) {
                children.push_back(pid);
            }
        }
        if (children.empty()) {
            return;
        }
        for (const pid_t pid : children) {
            kill(-pid, SIGKILL); // a job leads its own process group
            kill(pid, SIGKILL);
        }
        for (const pid_t pid : children) {
            waitpid(pid, nullptr, 0);
        }
    }
}

std::vector<pid_t> leftover_processes()
{
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    std::vector<pid_t> children;
    std::ifstream list(fmt::format("/proc/self/task/{}/children", getpid()));
    pid_t pid = 0;
    while (list >> pid) {
        children.push_back(pid);
    }
    return children;
}

bool process_exists(pid_t pid)
{
    return kill(pid, 0) == 0 || errno != ESRCH;
}

bool process_alive(pid_t pid)
{
    std::string state;
    try {
        const auto stat = read_file(fmt::format("/proc/{}/stat", pid));
        std::istringstream fields(stat.substr(stat.rfind(')') + 1));
        fields >> state;
    } catch (const std::exception&) {
        return false;
    }
    return !state.empty() && state != "Z";
}

std::optional<std::string> second_user()
{
    constexpr const char* k_user = "gpusched-test";
    if (geteuid() != 0) {
        return std::nullopt;
    }
    // Tests running side by side may both add it: one wins, and the other finds it.
    for (int turn = 0; turn < 20 && getpwnam(k_user) == nullptr; ++turn) {
        const int status = std::system(fmt::format("useradd --system --no-create-home --shell "
                                                   "/usr/sbin/nologin {} 2>/dev/null",
                                                   k_user)
                                           .c_str());
        if (status != 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    if (getpwnam(k_user) == nullptr) {
        throw std::runtime_error(fmt::format("cannot create the user {}", k_user));
    }
    return k_user;
}

LaunchOptions as_user(const std::string& user, LaunchOptions options)
{
    options.args.insert(options.args.begin(),
                        {"-u", user, "--", reachable_by_others(binary()).string()});
    // posix_spawn does not search PATH.
    options.program = fs::exists("/usr/sbin/runuser") ? "/usr/sbin/runuser" : "/sbin/runuser";
    return options;
}

void open_to_everyone(const std::filesystem::path& path)
{
    fs::permissions(path, fs::perms::all);
}

} // namespace gpusched::testing
