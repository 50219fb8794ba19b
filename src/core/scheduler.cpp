#include <gpusched/scheduler.hpp>

#include <gpusched/exit_status.hpp>

#include <fmt/format.h>

#include <csignal>
#include <stdexcept>

namespace gpusched {

Scheduler::Scheduler(GpuPool pool, std::size_t read_ahead)
    : m_pool(std::move(pool)), m_read_ahead(read_ahead == 0 ? 1 : read_ahead)
{
}

bool Scheduler::wants_input() const
{
    return m_phase == Phase::running && !m_input_ended && m_queue.size() < m_read_ahead;
}

std::vector<Action> Scheduler::on_command(Command command)
{
    m_queue.push_back(std::move(command));
    return start_what_fits();
}

void Scheduler::on_rejected_command()
{
    ++m_counts.failed;
}

std::vector<Action> Scheduler::on_input_end()
{
    m_input_ended = true;
    return {};
}

std::vector<Action> Scheduler::on_job_exit(JobId job, JobOutcome outcome)
{
    return finish_job(job, outcome.succeeded());
}

std::vector<Action> Scheduler::on_spawn_failure(JobId job)
{
    return finish_job(job, false);
}

std::vector<Action> Scheduler::finish_job(JobId job, bool succeeded)
{
    const auto running = m_running.find(job);
    if (running == m_running.end()) {
        throw std::logic_error(fmt::format("job {} ended but was not running", job));
    }
    m_pool.release(running->second);
    m_running.erase(running);
    ++(succeeded ? m_counts.succeeded : m_counts.failed);
    return start_what_fits();
}

std::vector<Action> Scheduler::on_signal(int signal)
{
    if (signal == SIGUSR1) {
        if (m_phase == Phase::running) {
            m_phase = Phase::draining;
        }
        return {};
    }
    if (signal != SIGINT && signal != SIGTERM && signal != SIGHUP) {
        return {};
    }
    if (m_phase == Phase::stopping) {
        // A second request to stop means now.
        return {SignalRunningJobs{SIGKILL}};
    }
    m_phase = Phase::stopping;
    m_stop_signal = signal;
    if (m_running.empty()) {
        return {};
    }
    return {SignalRunningJobs{signal}, ArmKillTimer{}};
}

std::vector<Action> Scheduler::on_kill_timer()
{
    if (m_running.empty()) {
        return {};
    }
    return {SignalRunningJobs{SIGKILL}};
}

std::vector<Action> Scheduler::start_what_fits()
{
    std::vector<Action> actions;
    while (m_phase == Phase::running && !m_queue.empty()) {
        const auto gpu = m_pool.acquire();
        if (!gpu) {
            break;
        }
        Command command = std::move(m_queue.front());
        m_queue.pop_front();
        m_running.emplace(command.id, *gpu);
        actions.emplace_back(StartJob{std::move(command), *gpu});
    }
    return actions;
}

bool Scheduler::done() const
{
    if (!m_running.empty()) {
        return false;
    }
    return m_phase != Phase::running || (m_input_ended && m_queue.empty());
}

int Scheduler::exit_status() const
{
    if (m_phase == Phase::stopping) {
        return exit_status_for_signal(m_stop_signal);
    }
    return exit_status_for_failures(m_counts.failed);
}

std::vector<Command> Scheduler::take_unstarted()
{
    std::vector<Command> unstarted(std::make_move_iterator(m_queue.begin()),
                                   std::make_move_iterator(m_queue.end()));
    m_queue.clear();
    return unstarted;
}

} // namespace gpusched
