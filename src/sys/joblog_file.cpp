#include <gpusched/sys/joblog_file.hpp>

#include <gpusched/errors.hpp>
#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gpusched::sys {

JoblogFile::JoblogFile(const std::string& path) : m_path(path)
{
    m_fd.reset(open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (!m_fd) {
        throw UsageError(fmt::format("cannot open --joblog '{}': {}", path, std::strerror(errno)));
    }
    struct stat info {};
    if (fstat(m_fd.get(), &info) == 0 && info.st_size == 0) {
        const auto header = joblog_header() + "\n";
        if (::write(m_fd.get(), header.data(), header.size()) < 0) {
            throw_errno(fmt::format("write {}", path));
        }
    }
}

void JoblogFile::append(const JoblogRecord& record)
{
    const auto line = format_joblog_line(record) + "\n";
    // O_APPEND makes one write land whole at the end, even with another writer.
    if (::write(m_fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
        throw_errno(fmt::format("write {}", m_path));
    }
}

bool read_joblog(const std::string& path, const std::function<void(JoblogRecord)>& visit)
{
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        if (errno == ENOENT) {
            return false;
        }
        throw UsageError(fmt::format("cannot read job log '{}': {}", path, std::strerror(errno)));
    }
    std::string line;
    for (std::size_t number = 1; std::getline(file, line); ++number) {
        if (line.empty() || is_joblog_header(line)) {
            continue;
        }
        auto record = parse_joblog_line(line);
        if (auto* error = std::get_if<ParseError>(&record)) {
            throw UsageError(
                fmt::format("{}:{}: not a job log record: {}", path, number, error->message));
        }
        visit(std::move(std::get<JoblogRecord>(record)));
    }
    return true;
}

void load_joblog(const std::string& path, ResumeState& state)
{
    read_joblog(path, [&state](const JoblogRecord& record) { state.add(record); });
}

} // namespace gpusched::sys
