#include <gpusched/sys/run_processes.hpp>

#include <gpusched/sys/proc_files.hpp>
#include <gpusched/sys/unique_fd.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <string_view>

namespace gpusched::sys {
namespace {

bool has_environment_entry(const std::string& pid, const std::string& entry)
{
    UniqueFd file(open(("/proc/" + pid + "/environ").c_str(), O_RDONLY | O_CLOEXEC));
    if (!file) {
        return false;
    }
    std::string environment;
    std::array<char, 16 * 1024> chunk{};
    ssize_t got = 0;
    while ((got = read(file.get(), chunk.data(), chunk.size())) > 0) {
        environment.append(chunk.data(), static_cast<std::size_t>(got));
    }
    std::string_view rest = environment;
    while (!rest.empty()) {
        const auto end = rest.find('\0');
        if (rest.substr(0, end) == entry) {
            return true;
        }
        rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    }
    return false;
}

} // namespace

std::vector<RunProcess> find_run_processes(RunSigns& signs)
{
    std::vector<RunProcess> found;
    for (const pid_t pid : own_processes()) {
        const auto stat = read_process_stat(pid);
        if (!stat || stat->dead()) {
            continue;
        }
        if (signs.groups.contains(stat->group) ||
            has_descriptor(pid, [&](std::string_view target) { return target == signs.marker; }) ||
            has_environment_entry(std::to_string(pid), signs.environment_entry)) {
            found.push_back({pid, stat->group});
        }
    }
    for (const auto& process : found) {
        if (process.group > 1 && !signs.foreign_groups.contains(process.group)) {
            signs.groups.insert(process.group);
        }
    }
    return found;
}

} // namespace gpusched::sys
