#include <gpusched/sys/proc_files.hpp>

#include <gpusched/sys/unique_fd.hpp>

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gpusched::sys {

std::optional<ProcessStat> read_process_stat(pid_t pid)
{
    UniqueFd file(open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
    std::array<char, 1024> text{};
    const auto length = file ? read(file.get(), text.data(), text.size() - 1) : -1;
    if (length <= 0) {
        return std::nullopt;
    }
    // "PID (COMMAND) STATE PPID PGRP ...": the command may hold spaces and parentheses.
    const std::string_view line(text.data(), static_cast<std::size_t>(length));
    const auto after_command = line.rfind(')');
    if (after_command == std::string_view::npos) {
        return std::nullopt;
    }
    ProcessStat stat;
    long parent = 0;
    long group = 0;
    // Fields 3 (the state), 4, 5, then 22 (the start), past the 16 between.
    const int read_fields = std::sscanf(
        text.data() + after_command + 1,
        " %c %ld %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
        &stat.state, &parent, &group, &stat.started);
    if (read_fields < 3) {
        return std::nullopt;
    }
    stat.parent = static_cast<pid_t>(parent);
    stat.group = static_cast<pid_t>(group);
    return stat;
}

std::string process_name(pid_t pid)
{
    UniqueFd file(open(("/proc/" + std::to_string(pid) + "/comm").c_str(), O_RDONLY | O_CLOEXEC));
    std::array<char, 64> text{};
    const auto length = file ? read(file.get(), text.data(), text.size()) : -1;
    if (length <= 0) {
        return {};
    }
    std::string name(text.data(), static_cast<std::size_t>(length));
    if (name.ends_with('\n')) {
        name.pop_back();
    }
    return name;
}

namespace {

std::vector<pid_t> processes(bool own_only)
{
    std::vector<pid_t> found;
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
        struct stat owner {};
        if (!own_only ||
            (fstatat(dirfd(proc), entry->d_name, &owner, 0) == 0 && owner.st_uid == uid)) {
            found.push_back(static_cast<pid_t>(number));
        }
    }
    closedir(proc);
    return found;
}

} // namespace

std::vector<pid_t> own_processes()
{
    return processes(true);
}

std::vector<pid_t> every_process()
{
    return processes(false);
}

bool has_descriptor(pid_t pid, const std::function<bool(std::string_view)>& wanted)
{
    DIR* fds = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
    if (fds == nullptr) {
        return false;
    }
    std::array<char, 256> target{};
    bool found = false;
    while (const dirent* fd = readdir(fds)) {
        const auto length = readlinkat(dirfd(fds), fd->d_name, target.data(), target.size());
        if (length > 0 &&
            wanted(std::string_view(target.data(), static_cast<std::size_t>(length)))) {
            found = true;
            break;
        }
    }
    closedir(fds);
    return found;
}

bool in_another_network_namespace(pid_t pid)
{
    std::error_code error;
    const auto theirs =
        std::filesystem::read_symlink(fmt::format("/proc/{}/ns/net", pid), error);
    if (error) {
        return false; // gone, or not ours to look into: nothing says it is hidden
    }
    const auto ours = std::filesystem::read_symlink("/proc/self/ns/net", error);
    return !error && theirs != ours;
}

std::optional<double> process_start_time(pid_t pid)
{
    const auto stat = read_process_stat(pid);
    if (!stat || stat->started == 0) {
        return std::nullopt;
    }
    // The boot's time is `btime` in /proc/stat.
    std::ifstream system_stat("/proc/stat");
    std::string line;
    long long boot = -1;
    while (std::getline(system_stat, line)) {
        if (line.starts_with("btime ")) {
            boot = std::atoll(line.c_str() + 6);
            break;
        }
    }
    const long ticks_per_second = sysconf(_SC_CLK_TCK);
    if (boot < 0 || ticks_per_second <= 0) {
        return std::nullopt;
    }
    return static_cast<double>(boot) +
           static_cast<double>(stat->started) / static_cast<double>(ticks_per_second);
}

} // namespace gpusched::sys
