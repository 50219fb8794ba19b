#include "worker_autostart.hpp"

#include <gpusched/sys/default_signals.hpp>
#include <gpusched/sys/spawn_actions.hpp>
#include <gpusched/sys/state_directory.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <string_view>
#include <thread>

extern char** environ;

namespace gpusched::cli {
namespace {

using namespace std::chrono_literals;

// How long the submitter waits to see the worker it started listed (or ended).
constexpr auto k_start_wait = 5s;
constexpr auto k_start_round = 50ms;

std::filesystem::path log_path_of(const std::filesystem::path& beside, const std::string& name)
{
    // The user's own state directory, even for a database several users share: each user's
    // worker writes a log of its own.
    const auto file = fmt::format("worker-{}.log", name);
    if (const auto state = sys::state_directory()) {
        std::error_code error;
        if (std::filesystem::create_directories(*state, error)) {
            std::filesystem::permissions(*state, std::filesystem::perms::owner_all, error);
        }
        if (std::filesystem::is_directory(*state, error)) {
            return *state / file;
        }
    }
    return beside / file;
}

pid_t spawn_worker(const std::vector<std::string>& arguments, const std::filesystem::path& log)
{
    sys::SpawnFileActions files;
    files.open(STDIN_FILENO, "/dev/null", O_RDONLY)
        .open(STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600)
        .dup2(STDOUT_FILENO, STDERR_FILENO)
        .close_from(3);
    sys::SpawnAttributes attributes;
    attributes.new_session().signal_mask(sys::no_signals()).default_signals(sys::all_signals());
    std::vector<std::string> args = {"gpusched", "worker"};
    args.insert(args.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (auto& arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int error = posix_spawn(&pid, "/proc/self/exe", files.get(), attributes.get(),
                                      argv.data(), environ);
        error != 0) {
        throw std::system_error(error, std::generic_category(), "posix_spawn");
    }
    return pid;
}

} // namespace

void start_worker(const queue::WorkerToStart& worker)
{
    // Inside a job, CUDA_VISIBLE_DEVICES names that job's GPUs: a worker started from here
    // would keep them, and only them, for good.
    const char* job = std::getenv("GPUSCHED_JOB_ID");
    const char* job_gpu = std::getenv("GPUSCHED_GPU");
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (job != nullptr && job_gpu != nullptr && visible != nullptr &&
        std::string_view(job_gpu) == visible) {
        spdlog::warn("no worker serves queue {}, and none is started from inside job {}: it "
                     "would run every job on that job's GPU {} alone; the jobs wait for "
                     "`gpusched worker` (started with the GPUs it should use)",
                     worker.queue, job, job_gpu);
        return;
    }
    const auto log = log_path_of(worker.beside, worker.queue);
    const pid_t pid = spawn_worker(worker.arguments, log);
    const auto give_up = std::chrono::steady_clock::now() + k_start_wait;
    while (std::chrono::steady_clock::now() < give_up) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            spdlog::error("no worker serves queue {}, and the one started for it ended at once "
                          "({}): see {}; the jobs wait for `gpusched worker --gpus ID,...`",
                          worker.queue,
                          WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                            : fmt::format("signal {}", WTERMSIG(status)),
                          log.string());
            return;
        }
        if (worker.serving()) {
            spdlog::info("started a worker for queue {} (pid {}, log {}); --no-start starts none",
                         worker.queue, pid, log.string());
            return;
        }
        std::this_thread::sleep_for(k_start_round);
    }
    spdlog::warn("started a worker for queue {} (pid {}), not serving it yet: see {}",
                 worker.queue, pid, log.string());
}

} // namespace gpusched::cli
