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

OutputFiles::OutputFiles(std::filesystem::path directory) : m_directory(std::move(directory))
{
    std::error_code error;
    std::filesystem::create_directories(m_directory, error);
    if (error || !std::filesystem::is_directory(m_directory)) {
        throw UsageError(fmt::format("cannot use --output-dir '{}': {}", m_directory.string(),
                                     error ? error.message() : "not a directory"));
    }
}

std::filesystem::path OutputFiles::base(JobId job, unsigned attempt) const
{
    return m_directory /
           (attempt == 1 ? fmt::format("{}", job) : fmt::format("{}.{}", job, attempt));
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
