#include <gpusched/sys/run_processes.hpp>

#include <gpusched/sys/unique_fd.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

namespace gpusched::sys {
namespace {

// The state and process group in /proc/PID/stat: "PID (COMMAND) STATE PPID PGRP ...", where
// the command may hold spaces and parentheses.
std::optional<std::pair<char, pid_t>> state_and_group(const std::string& pid)
{
    UniqueFd file(open(("/proc/" + pid + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
    std::array<char, 1024> text{};
    const auto length = file ? read(file.get(), text.data(), text.size() - 1) : -1;
    if (length <= 0) {
        return std::nullopt;
    }
    const std::string_view line(text.data(), static_cast<std::size_t>(length));
    const auto after_command = line.rfind(')');
    if (after_command == std::string_view::npos) {
        return std::nullopt;
    }
    char state = 0;
    long parent = 0;
    long group = 0;
    if (std::sscanf(text.data() + after_command + 1, " %c %ld %ld", &state, &parent, &group) != 3) {
        return std::nullopt;
    }
    return std::pair{state, static_cast<pid_t>(group)};
}

bool holds_marker(const std::string& pid, const std::string& marker)
{
    DIR* fds = opendir(("/proc/" + pid + "/fd").c_str());
    if (fds == nullptr) {
        return false;
    }
    std::array<char, 64> target{};
    bool found = false;
    while (const dirent* fd = readdir(fds)) {
        const auto length = readlinkat(dirfd(fds), fd->d_name, target.data(), target.size());
        if (length > 0 &&
            std::string_view(target.data(), static_cast<std::size_t>(length)) == marker) {
            found = true;
            break;
        }
    }
    closedir(fds);
    return found;
}

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
    DIR* proc = opendir("/proc");
    if (proc == nullptr) {
        return found;
    }
    const pid_t self = getpid();
    const uid_t uid = getuid();
    while (const dirent* entry = readdir(proc)) {
        char* end = nullptr;
        const long number = std::strtol(entry->d_name, &end, 10);
        if (*end != '\0' || number <= 0 || number == self) {
            continue;
        }
        const std::string pid = entry->d_name;
        struct stat owner {};
        if (stat(("/proc/" + pid).c_str(), &owner) != 0 || owner.st_uid != uid) {
            continue;
        }
        const auto state = state_and_group(pid);
        if (!state || state->first == 'Z' || state->first == 'X') {
            continue;
        }
        const pid_t group = state->second;
        if (signs.groups.contains(group) || holds_marker(pid, signs.marker) ||
            has_environment_entry(pid, signs.environment_entry)) {
            found.push_back({static_cast<pid_t>(number), group});
        }
    }
    closedir(proc);
    for (const auto& process : found) {
        if (process.group > 1 && !signs.foreign_groups.contains(process.group)) {
            signs.groups.insert(process.group);
        }
    }
    return found;
}

} // namespace gpusched::sys
