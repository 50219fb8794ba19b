#include <gpusched/sys/unstarted_file.hpp>

#include <gpusched/sys/state_directory.hpp>
#include <gpusched/sys/unique_fd.hpp>
#include <gpusched/sys/write_all.hpp>
#include <gpusched/wall_clock.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gpusched::sys {
namespace {

namespace fs = std::filesystem;

// Where to try, in order, with the file's name prefix there.
std::vector<std::pair<fs::path, std::string>> places()
{
    std::vector<std::pair<fs::path, std::string>> found;
    if (auto state = state_directory()) {
        found.emplace_back(std::move(*state), "unstarted");
    }
    found.emplace_back(temporary_directory(), "gpusched-unstarted");
    return found;
}

Result<void> write_new_file(const fs::path& path, const std::string& text)
{
    const UniqueFd file(
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file) {
        return Failure{fmt::format("open {}: {}", path.string(), std::strerror(errno))};
    }
    if (!write_all(file.get(), text)) {
        Failure why{fmt::format("write {}: {}", path.string(), std::strerror(errno))};
        ::unlink(path.c_str());
        return why;
    }
    return {};
}

} // namespace

Result<std::string> save_unstarted_commands(const std::vector<std::string>& lines)
{
    std::string text;
    for (const auto& line : lines) {
        text += line;
        text += '\n';
    }
    const auto stamp =
        fmt::format("{:%Y%m%d-%H%M%S}-{}", local_time_of(seconds_since_epoch()), getpid());
    std::string errors;
    for (const auto& [directory, prefix] : places()) {
        std::error_code error;
        fs::create_directories(directory, error);
        const auto path = directory / fmt::format("{}-{}.txt", prefix, stamp);
        if (error) {
            errors += fmt::format("{}create {}: {}", errors.empty() ? "" : "; ", directory.string(),
                                  error.message());
            continue;
        }
        if (auto written = write_new_file(path, text); !written) {
            errors += (errors.empty() ? "" : "; ") + written.message();
            continue;
        }
        return path.string();
    }
    return Failure{errors};
}

} // namespace gpusched::sys
