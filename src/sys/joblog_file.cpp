#include <gpusched/sys/joblog_file.hpp>

#include <gpusched/errors.hpp>
#include <gpusched/sys/lease_lock.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/write_all.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>

namespace gpusched::sys {

JoblogFile::JoblogFile(const std::string& path) : m_path(path)
{
    m_fd.reset(open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (!m_fd) {
        throw UsageError(fmt::format("cannot open --joblog '{}': {}", path, std::strerror(errno)));
    }
    struct stat info {};
    if (fstat(m_fd.get(), &info) != 0) {
        throw_errno(fmt::format("fstat {}", path));
    }
    if (!S_ISREG(info.st_mode)) {
        throw UsageError(fmt::format("--joblog '{}' is not a regular file", path));
    }
    look_at_end();
    // A file that does not start like a job log is probably something else given by mistake
    // (`--joblog commands.txt`): appending records to it would spoil it.
    const auto first_line = read_first_line();
    if (!first_line.empty() && !is_joblog_header(first_line) &&
        !looks_like_torn_record(first_line)) {
        throw UsageError(fmt::format("--joblog '{}' is not a job log: its first line is not "
                                     "the header (Seq, Host, Starttime, ...); give a new file "
                                     "or an earlier job log",
                                     path));
    }
}

std::string JoblogFile::read_first_line() const
{
    std::array<char, 512> start{};
    const auto got = pread(m_fd.get(), start.data(), start.size(), 0);
    const std::string_view first(start.data(), got > 0 ? static_cast<std::size_t>(got) : 0);
    return std::string(first.substr(0, first.find('\n')));
}

// Whether the next record needs the header before it, or a newline that ends a torn line.
void JoblogFile::look_at_end()
{
    struct stat info {};
    if (fstat(m_fd.get(), &info) != 0) {
        throw_errno(fmt::format("fstat {}", m_path));
    }
    m_needs_header = info.st_size == 0;
    // Records go in the layout the file's header names: GNU parallel's for a new file.
    m_layout = joblog_layout_of_header(read_first_line()).value_or(JoblogLayout::parallel);
    char last = '\n';
    m_needs_newline =
        info.st_size > 0 && pread(m_fd.get(), &last, 1, info.st_size - 1) == 1 && last != '\n';
}

std::optional<int> JoblogFile::lock(SignalChannel& signals)
{
    if (try_lock_exclusive(m_fd.get())) {
        look_at_end(); // another run may have written to it since we opened it
        return std::nullopt;
    }
    spdlog::warn("the job log {} is in use by another gpusched run, or by what the jobs of a "
                 "killed one left running; waiting for it to end",
                 m_path);
    const pid_t waiter = start_lock_waiter(m_fd.get());
    while (true) {
        pollfd ready{signals.fd(), POLLIN, 0};
        if (poll(&ready, 1, -1) < 0 && errno != EINTR) {
            throw_errno("poll");
        }
        for (const int signal : signals.take_pending()) {
            if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) {
                kill(waiter, SIGKILL);
                waitpid(waiter, nullptr, 0);
                return signal;
            }
            if (signal == SIGTSTP) {
                SignalChannel::stop_as_sigtstp(); // no job runs yet to stop with it
            }
        }
        int status = 0;
        if (waitpid(waiter, &status, WNOHANG) == waiter) {
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !try_lock_exclusive(m_fd.get())) {
                throw std::runtime_error(fmt::format("cannot lock the job log {}", m_path));
            }
            spdlog::info("the job log {} is free now", m_path);
            look_at_end();
            return std::nullopt;
        }
    }
}

Result<void> JoblogFile::append(const JoblogRecord& record)
{
    std::string line;
    if (m_needs_header) {
        line = joblog_header(m_layout) + "\n";
    } else if (m_needs_newline) {
        line = "\n"; // ends the torn line, so this record is not glued to it
    }
    line += format_joblog_line(record, m_layout);
    line += '\n';
    auto written = write_line(line);
    if (written) {
        m_needs_header = false;
        m_needs_newline = false;
    }
    return written;
}

// O_APPEND makes one write land whole at the end. When the disk fills up half-way, the part
// that was written is cut off again, so the log never holds half a record of ours.
Result<void> JoblogFile::write_line(const std::string& line)
{
    const off_t size_before = lseek(m_fd.get(), 0, SEEK_END);
    if (write_all(m_fd.get(), line)) {
        return {};
    }
    const int error = errno;
    if (size_before >= 0) {
        (void)!ftruncate(m_fd.get(), size_before); // best effort: the error said is the write's
    }
    return Failure{fmt::format("write {}: {}", m_path, std::strerror(error))};
}

bool read_joblog(const std::string& path, const std::function<void(JoblogRecord)>& visit)
{
    // A directory, a device (/dev/zero) or a FIFO is no job log, and reading one would
    // never end or fill the memory.
    struct stat info {};
    if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
        throw UsageError(fmt::format("cannot read job log '{}': not a regular file", path));
    }
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        if (errno == ENOENT) {
            return false;
        }
        throw UsageError(fmt::format("cannot read job log '{}': {}", path, std::strerror(errno)));
    }
    std::string line;
    // The layout the latest header names; a line that does not end with a Stopped word
    // under a header that has the column was cut short.
    auto layout = JoblogLayout::parallel;
    bool has_stopped_column = false;
    for (std::size_t number = 1; std::getline(file, line); ++number) {
        if (line.empty()) {
            continue;
        }
        if (const auto named = joblog_layout_of_header(line)) {
            layout = *named;
            has_stopped_column = line.ends_with("\tStopped");
            continue;
        }
        auto record = parse_joblog_line(line, layout);
        // A record cut short: fewer fields than any record has, no Stopped word where the
        // header promises one, or a last line without its newline. A whole line with a bad
        // field is no torn record but a bad one.
        const auto tabs = std::count(line.begin(), line.end(), '\t');
        const bool cut_short =
            looks_like_torn_record(line) && (tabs < 8 || file.eof() ||
                                             (has_stopped_column && tabs > 8 &&
                                              !attempt_end_of(line.substr(line.rfind('\t') + 1))));
        if (record.ok() && cut_short) {
            record = Failure{"cut short"};
        }
        if (!record) {
            if (!cut_short) {
                throw UsageError(
                    fmt::format("{}:{}: not a job log record: {}", path, number, record.message()));
            }
            spdlog::warn("{}:{}: skipping a torn record ({}); its job is not taken as done", path,
                         number, record.message());
            continue;
        }
        visit(std::move(*record));
    }
    return true;
}

} // namespace gpusched::sys
