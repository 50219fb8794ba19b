#include <gpusched/scheduler.hpp>

#include <gpusched/exit_status.hpp>
#include <gpusched/memory_size.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <stdexcept>
#include <utility>

namespace gpusched {

Scheduler::Scheduler(GpuPool pool, SchedulerOptions options)
    : Scheduler(Placement(std::move(pool)), std::move(options))
{
}

Scheduler::Scheduler(Placement placement, SchedulerOptions options)
    : m_placement(std::move(placement)), m_options(std::move(options))
{
    if (m_options.read_ahead == 0) {
        m_options.read_ahead = 1;
    }
    if (m_options.gpus_per_job == 0 || m_options.gpus_per_job > m_placement.pool().size()) {
        throw std::invalid_argument(fmt::format("{} GPUs per job from a pool of {}",
                                                m_options.gpus_per_job, m_placement.pool().size()));
    }
}

bool Scheduler::wants_input() const
{
    if (!starts_jobs() || m_input_ended) {
        return false;
    }
    if (m_options.only_when_free) {
        return m_queue.empty() &&
               (m_placement.can_take(default_need()) || m_placement.has_memory_room());
    }
    return m_queue.size() < m_options.read_ahead;
}

std::size_t Scheduler::commands_wanted() const
{
    if (!wants_input()) {
        return 0;
    }
    if (m_options.only_when_free) {
        return std::max<std::size_t>(m_placement.room_for(default_need()),
                                     m_placement.has_memory_room() ? 1 : 0);
    }
    return m_options.read_ahead - m_queue.size();
}

GpuNeed Scheduler::need_of(const Command& command) const
{
    const auto& context = command.context;
    const auto& request = context ? context->request : JobRequest{};
    auto memory = memory_wanted(request, {m_options.gpus_per_job, m_options.memory});
    if (memory == k_learned_memory) {
        // Nothing learnt of its kind yet: more than any GPU has, so it runs alone.
        memory = m_estimates.estimate(command.text).value_or(k_most_job_memory);
    }
    if (command.memory_floor > 0) {
        memory = std::max(memory.value_or(0), command.memory_floor);
    }
    return {gpus_wanted(request, {m_options.gpus_per_job}), memory};
}

void Scheduler::learn_memory(const Command& command, const Allocation& allocation)
{
    const auto& context = command.context;
    const auto& request = context ? context->request : JobRequest{};
    if (memory_wanted(request, {m_options.gpus_per_job, m_options.memory}) == k_learned_memory) {
        m_estimates.learn(command.text, m_placement.memory().peak(allocation.id));
    }
}

unsigned Scheduler::retries_of(const Command& command) const
{
    const auto& context = command.context;
    return context && context->request.retries ? *context->request.retries : m_options.retries;
}

std::vector<Action> Scheduler::on_command(Command command)
{
    const auto& context = command.context;
    if (!m_placement.can_ever_start(context ? context->request : JobRequest{},
                                    {m_options.gpus_per_job})) {
        // A queued job asking for more GPUs than this worker has: another may have them.
        return {ReturnCommand{std::move(command)}};
    }
    if (m_phase == Phase::draining && command.replayable) {
        m_left_by_drain.push_back(std::move(command));
        return {};
    }
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

std::vector<Action> Scheduler::on_spawn_failure(JobId job)
{
    return on_job_exit(job, JobOutcome{k_exit_spawn_failed, 0});
}

void Scheduler::on_spawn_deferred(JobId job)
{
    Running deferred = take_running(job, "could not start");
    // Jobs of one batch are refused one after another: each goes behind the ones before it.
    m_queue.insert(m_queue.begin() + static_cast<std::ptrdiff_t>(m_deferred_in_a_row),
                   std::move(deferred.command));
    ++m_deferred_in_a_row;
    m_spawn_deferred = true;
}

std::vector<Action> Scheduler::on_spawn_retry()
{
    m_spawn_deferred = false;
    m_deferred_in_a_row = 0;
    return start_what_fits();
}

Scheduler::Running Scheduler::take_running(JobId job, const char* event, bool release_gpus)
{
    const auto found = m_running.find(job);
    if (found == m_running.end()) {
        throw std::logic_error(fmt::format("job {} {} but was not running", job, event));
    }
    Running taken = std::move(found->second);
    m_running.erase(found);
    taken.peak = m_placement.memory().peak(taken.allocation.id);
    taken.shared = m_placement.memory().shared(taken.allocation.id);
    learn_memory(taken.command, taken.allocation);
    if (release_gpus) {
        m_placement.release(taken.allocation);
    }
    return taken;
}

std::vector<Action> Scheduler::on_job_released(JobId job, unsigned attempt)
{
    const auto found = m_lingering.find({job, attempt});
    if (found == m_lingering.end()) {
        throw std::logic_error(fmt::format("job {} let its GPUs go but held none", job));
    }
    m_placement.release(found->second);
    m_lingering.erase(found);
    return start_what_fits();
}

std::vector<Action> Scheduler::on_job_exit(JobId job, JobOutcome outcome, bool gpus_held)
{
    Running ended = take_running(job, "ended", !gpus_held);
    if (gpus_held) {
        m_lingering.emplace(std::pair{job, ended.command.attempt}, ended.allocation);
    }

    std::vector<Action> actions;
    if (ended.cancelled) {
        ++m_counts.cancelled;
    } else if (interrupting()) {
        ++m_counts.interrupted;
    } else if (outcome.succeeded()) {
        ++m_counts.succeeded;
        check_halt(actions);
    } else if (outcome.out_of_gpu_memory && ended.shared && starts_jobs() &&
               ended.command.memory_reruns < k_most_memory_reruns) {
        // Beside other jobs, an out-of-memory may be theirs as much as its own: it runs again,
        // not counted, asking half as much again as it asked or used; then alone.
        Command again = std::move(ended.command);
        const auto known = std::max(need_of(again).memory.value_or(0), ended.peak);
        ++again.attempt;
        ++again.memory_reruns;
        // Alone the second time, or at once when neither its need nor its use is known.
        const bool alone = again.memory_reruns > 1 || known == 0;
        again.memory_floor =
            alone ? k_most_job_memory : std::min(known + known / 2, k_most_job_memory);
        again.avoid_gpus = ended.allocation.gpus;
        ++m_counts.memory_reruns;
        actions.emplace_back(RetryScheduled{job, again.attempt, true, again.memory_floor, alone});
        m_queue.push_front(std::move(again));
    } else if (starts_jobs() &&
               ended.command.attempt - ended.command.memory_reruns <= retries_of(ended.command)) {
        Command retry = std::move(ended.command);
        ++retry.attempt;
        retry.avoid_gpus = ended.allocation.gpus;
        ++m_counts.retries;
        actions.emplace_back(RetryScheduled{job, retry.attempt});
        m_queue.push_front(std::move(retry));
    } else {
        ++m_counts.failed;
        check_halt(actions);
    }
    for (auto& action : start_what_fits()) {
        actions.push_back(std::move(action));
    }
    return actions;
}

void Scheduler::check_halt(std::vector<Action>& actions)
{
    if (!starts_jobs() || !m_options.halt.reached(m_counts.succeeded, m_counts.failed)) {
        return;
    }
    actions.emplace_back(HaltStarted{m_options.halt.when});
    if (m_options.halt.when == HaltPolicy::When::soon) {
        m_phase = Phase::halting_soon;
        return;
    }
    m_phase = Phase::halting_now;
    if (has_processes()) {
        actions.emplace_back(SignalRunningJobs{SIGTERM});
        actions.emplace_back(ArmKillTimer{});
    }
}

std::vector<Action> Scheduler::on_signal(int signal)
{
    if (signal == SIGUSR1) {
        if (m_phase != Phase::running) {
            return {};
        }
        m_phase = Phase::draining;
        std::deque<Command> kept;
        for (auto& command : m_queue) {
            if (command.replayable) {
                m_left_by_drain.push_back(std::move(command));
            } else {
                kept.push_back(std::move(command));
            }
        }
        m_queue = std::move(kept);
        return start_what_fits();
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
    if (!has_processes()) {
        return {};
    }
    return {SignalRunningJobs{signal}, ArmKillTimer{}};
}

std::vector<Action> Scheduler::on_gpu_usable(GpuSlot gpu, bool usable)
{
    m_placement.set_usable(gpu, usable);
    return start_what_fits();
}

std::vector<Action> Scheduler::on_gpu_paused(GpuSlot gpu, bool paused)
{
    m_placement.set_paused(gpu, paused);
    return start_what_fits();
}

void Scheduler::on_job_cancelled(JobId job)
{
    if (const auto found = m_running.find(job); found != m_running.end()) {
        found->second.cancelled = true;
    }
}

std::vector<Action> Scheduler::on_lease_refused(JobId job, const GpuSlots& refused)
{
    Running refused_job = take_running(job, "was refused a lease");
    for (const auto slot : refused) {
        m_placement.set_leased_elsewhere(slot, true);
    }
    // It was at the head of the queue a moment ago. Jobs started in the same batch may now
    // start before it: they hold GPUs it could not have had then.
    m_queue.push_front(std::move(refused_job.command));
    auto actions = start_what_fits();
    // A worker took it to start it at once: when no other GPU of ours can take it now, it
    // goes back to the queue, where a cancel or a pause still reaches it and another worker
    // may run it, rather than wait here for the lease.
    if (m_options.only_when_free && !m_queue.empty() && m_queue.front().id == job &&
        m_queue.front().replayable && m_queue.front().attempt == 1) {
        actions.emplace_back(ReturnCommand{std::move(m_queue.front())});
        m_queue.pop_front();
    }
    return actions;
}

std::vector<Action> Scheduler::on_lease_available(GpuSlot gpu)
{
    m_placement.set_leased_elsewhere(gpu, false);
    return start_what_fits();
}

std::vector<Action> Scheduler::on_memory_read()
{
    return start_what_fits();
}

bool Scheduler::memory_job_waits() const
{
    return starts_jobs() && !m_queue.empty() && need_of(m_queue.front()).memory.has_value();
}

bool Scheduler::wants_gpus() const
{
    return starts_jobs() && !(m_input_ended && m_queue.empty());
}

std::vector<Action> Scheduler::start_what_fits()
{
    std::vector<Action> actions;
    while (starts_jobs() && !m_spawn_deferred && !m_queue.empty()) {
        auto allocation = m_placement.acquire(need_of(m_queue.front()), m_queue.front().avoid_gpus);
        if (!allocation) {
            break; // the head of the queue waits, and nothing overtakes it
        }
        Command command = std::move(m_queue.front());
        m_queue.pop_front();
        // A job to run alone (nothing learnt of its kind, or out of memory before) is shown as
        // asking for no particular amount.
        const auto promised =
            allocation->memory < k_most_job_memory ? allocation->memory : std::nullopt;
        actions.emplace_back(StartJob{command, allocation->gpus, allocation->id, promised});
        m_running.emplace(command.id, Running{std::move(*allocation), std::move(command), false});
    }
    return actions;
}

bool Scheduler::done() const
{
    if (has_processes()) {
        return false;
    }
    return !starts_jobs() || (m_input_ended && m_queue.empty());
}

int Scheduler::exit_status() const
{
    if (m_phase == Phase::stopping) {
        return exit_status_for_signal(m_stop_signal);
    }
    return exit_status_for_failures(m_counts.failed + m_counts.unrecorded);
}

std::vector<Command> Scheduler::take_unstarted()
{
    std::vector<Command> unstarted = std::exchange(m_left_by_drain, {});
    unstarted.insert(unstarted.end(), std::make_move_iterator(m_queue.begin()),
                     std::make_move_iterator(m_queue.end()));
    m_queue.clear();
    std::stable_sort(unstarted.begin(), unstarted.end(),
                     [](const Command& a, const Command& b) { return a.id < b.id; });
    return unstarted;
}

} // namespace gpusched
