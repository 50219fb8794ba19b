#include <gpusched/sys/output_files.hpp>

#include <gpusched/errors.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/write_all.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace gpusched::sys {

void make_own_directory(const std::filesystem::path& trusted,
                        const std::filesystem::path& directory, mode_t mode)
{
    const auto target = std::filesystem::absolute(directory).lexically_normal();
    const auto top = std::filesystem::absolute(trusted).lexically_normal();
    const auto below = target.lexically_relative(top);
    if (below.empty() || *below.begin() == "..") {
        throw std::logic_error(fmt::format("{} is not below {}", target.string(), top.string()));
    }
    std::error_code error;
    std::filesystem::create_directories(top, error); // ours by name: the state directory, say
    auto path = top;
    for (const auto& part : below) {
        path /= part;
        if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
            throw_errno(fmt::format("mkdir {}", path.string()));
        }
        struct stat status {};
        if (::lstat(path.c_str(), &status) != 0) {
            throw_errno(fmt::format("lstat {}", path.string()));
        }
        const bool ours = status.st_uid == ::geteuid();
        if (S_ISDIR(status.st_mode) && ours && (status.st_mode & 07777) != mode) {
            // Ours, with another mode: made writable by a umask of 002 or readable by every
            // user (as earlier versions left it), or the queue's database was shared or made
            // private since. What others may have put there is never written through
            // (O_NOFOLLOW).
            if (::chmod(path.c_str(), mode) != 0) {
                throw_errno(fmt::format("chmod {:04o} {}", mode, path.string()));
            }
            status.st_mode = (status.st_mode & ~static_cast<mode_t>(07777)) | mode;
        }
        const char* wrong = !S_ISDIR(status.st_mode) ? "is not a directory (a link?)"
                            : !ours && status.st_uid != 0 ? "belongs to another user"
                            : (status.st_mode & (S_IWGRP | S_IWOTH)) != 0
                                ? "is writable by other users"
                                : nullptr;
        if (wrong != nullptr) {
            throw std::runtime_error(fmt::format(
                "{} {}: the output of jobs run as you would go where another user can plant "
                "links; remove it, or give --output-dir a directory of your own",
                path.string(), wrong));
        }
    }
}

OutputFiles::OutputFiles(std::filesystem::path directory, Info info)
    : m_directory(std::move(directory)), m_info(info)
{
    std::error_code error;
    std::filesystem::create_directories(m_directory, error);
    if (error || !std::filesystem::is_directory(m_directory)) {
        throw UsageError(fmt::format("cannot use --output-dir '{}': {}", m_directory.string(),
                                     error ? error.message() : "not a directory"));
    }
}

std::filesystem::path output_base(const std::filesystem::path& directory, JobId job,
                                  unsigned attempt)
{
    return directory /
           (attempt == 1 ? fmt::format("{}", job) : fmt::format("{}.{}", job, attempt));
}

OutputPaths last_output_of(const std::filesystem::path& directory, JobId job)
{
    // Attempts are few (--retries): look for the next one until it is missing.
    auto base = output_base(directory, job, 1);
    for (unsigned attempt = 2;; ++attempt) {
        auto next = output_base(directory, job, attempt);
        std::error_code error;
        if (!std::filesystem::exists(next.string() + ".out", error)) {
            return {base.string() + ".out", base.string() + ".err"};
        }
        base = std::move(next);
    }
}

void remove_output_of(const std::filesystem::path& directory, JobId job)
{
    for (unsigned attempt = 1;; ++attempt) {
        const auto base = output_base(directory, job, attempt).string();
        std::error_code error;
        const bool had_output = std::filesystem::remove(base + ".out", error);
        std::filesystem::remove(base + ".err", error);
        std::filesystem::remove(base + ".info", error);
        if (!had_output) {
            return;
        }
    }
}

std::filesystem::path OutputFiles::base(JobId job, unsigned attempt) const
{
    return output_base(m_directory, job, attempt);
}

std::string OutputFiles::describe(JobId job, unsigned attempt) const
{
    if (m_info == Info::left_out) {
        // A queue worker's own directory, which the Redis worker empties as it sends each
        // result: the queue is where the output is.
        return fmt::format("its output: gpusched logs {}", job);
    }
    const auto path = base(job, attempt).string();
    return fmt::format("output in {}.out, {}.err", path, path);
}

// The job may have put anything in its files' place: only a regular file is read, and never
// waited for (a FIFO would block).
std::string OutputFiles::tail(JobId job, unsigned attempt, std::size_t bytes) const
{
    std::string text;
    for (const auto* suffix : {".err", ".out"}) {
        const auto name = base(job, attempt).string() + suffix;
        const UniqueFd fd(::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
        struct stat status {};
        if (!fd || fstat(fd.get(), &status) != 0 || !S_ISREG(status.st_mode)) {
            continue;
        }
        const auto size = static_cast<std::size_t>(status.st_size);
        const auto from = size > bytes ? size - bytes : 0;
        std::string part(size - from, '\0');
        const auto got = pread(fd.get(), part.data(), part.size(), static_cast<off_t>(from));
        part.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
        text += part;
    }
    return text;
}

OutputFiles::Opened OutputFiles::open(JobId job, unsigned attempt) const
{
    const auto path = base(job, attempt);
    Opened opened;
    for (auto [file, suffix] : {std::pair{&opened.out, ".out"}, std::pair{&opened.err, ".err"}}) {
        const auto name = path.string() + suffix;
        file->reset(::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
        if (!*file) {
            throw_errno(fmt::format("open {}", name));
        }
    }
    return opened;
}

Result<void> OutputFiles::write_info(const JoblogRecord& record, unsigned attempt) const
{
    if (m_info == Info::left_out) {
        return {};
    }
    const auto name = base(record.seq, attempt).string() + ".info";
    auto text =
        fmt::format("job: {}\nattempt: {}\ncommand: {}\ngpu: {}\nstart: {:.3f}\n"
                    "runtime: {:.3f}\nexit: {}\nsignal: {}\nstopped: {}\n",
                    record.seq, attempt, record.command, record.gpu, record.start, record.runtime,
                    record.exit_code, record.signal, attempt_end_word(record.end));
    // Only where GPU memory was watched (--mem): the most its processes used on one GPU.
    if (record.peak_memory > 0) {
        text += fmt::format("gpu_memory_peak_bytes: {}\n", record.peak_memory);
    }
    if (record.out_of_memory) {
        text += "out_of_gpu_memory: yes\n";
    }
    UniqueFd file(::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!file) {
        return Failure{fmt::format("open {}: {}", name, std::strerror(errno))};
    }
    if (!write_all(file.get(), text)) {
        const int error = errno;
        ::unlink(name.c_str()); // never a silently empty or cut-short .info
        return Failure{fmt::format("write {}: {}", name, std::strerror(error))};
    }
    return {};
}

} // namespace gpusched::sys
