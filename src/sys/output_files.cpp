#include <gpusched/sys/output_files.hpp>

#include <gpusched/errors.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/write_all.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace gpusched::sys {

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
    const auto path = base(job, attempt).string();
    return fmt::format("{}.out, {}.err", path, path);
}

OutputFiles::Opened OutputFiles::open(JobId job, unsigned attempt) const
{
    const auto path = base(job, attempt);
    Opened opened;
    for (auto [file, suffix] : {std::pair{&opened.out, ".out"}, std::pair{&opened.err, ".err"}}) {
        const auto name = path.string() + suffix;
        file->reset(::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (!*file) {
            throw_errno(fmt::format("open {}", name));
        }
    }
    return opened;
}

std::optional<std::string> OutputFiles::write_info(const JoblogRecord& record,
                                                   unsigned attempt) const
{
    if (m_info == Info::left_out) {
        return std::nullopt;
    }
    const auto name = base(record.seq, attempt).string() + ".info";
    const auto text =
        fmt::format("job: {}\nattempt: {}\ncommand: {}\ngpu: {}\nstart: {:.3f}\n"
                    "runtime: {:.3f}\nexit: {}\nsignal: {}\nstopped: {}\n",
                    record.seq, attempt, record.command, record.gpu, record.start, record.runtime,
                    record.exit_code, record.signal, attempt_end_word(record.end));
    UniqueFd file(::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!file) {
        return fmt::format("open {}: {}", name, std::strerror(errno));
    }
    if (!write_all(file.get(), text)) {
        const int error = errno;
        ::unlink(name.c_str()); // never a silently empty or cut-short .info
        return fmt::format("write {}: {}", name, std::strerror(error));
    }
    return std::nullopt;
}

} // namespace gpusched::sys
