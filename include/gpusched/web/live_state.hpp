#pragma once

#include <gpusched/gpu_discovery.hpp>
#include <gpusched/gpu_history.hpp>
#include <gpusched/gpu_usage.hpp>
#include <gpusched/json_output.hpp>
#include <gpusched/queue/queue_backend.hpp>
#include <gpusched/sys/lease_overview.hpp>
#include <gpusched/time_source.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gpusched::web {

// What `gpusched serve` shows, and where it reads it.
struct LiveSources {
    std::filesystem::path lock_dir;             // the lease space
    std::vector<sys::ShownGpu> gpus;            // the GPUs to show first
    bool add_others = true;                     // and every other GPU leased
    GpuInventory inventory;                     // what CUDA and NVML told of them, once
    // Opens the queue shown (none: no queue is shown): once for the requests, again after an
    // error (a Redis server that went away and came back, a database made anew), and once for
    // the change watch. Only the first opening may make a missing database: a later one finds
    // it removed, and says so.
    std::function<std::unique_ptr<queue::QueueBackend>(queue::WhenMissing)> open_queue;
    std::string queue_name;
    std::string host; // this machine's name
    std::string user; // who serves
    unsigned uid = 0;
    bool allow_actions = false;
};

// The server's picture of the machine, kept by two threads: one reads the leases (who holds
// and who waits for each GPU) twice a second, and keeps what ran on each GPU since the server
// started (GpuHistory); the other reads the queue when it may have changed. Apart, so that a
// queue whose store stalls (Redis stopped) leaves the GPUs live. Pages are served from the
// last looks, so that two dozen open pages cost what one does, and a look that finds nothing
// new wakes no page.
class LiveState {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::size_t k_queue_page = 50; // queued and ended jobs in a look

    explicit LiveState(LiveSources sources);
    ~LiveState();
    LiveState(const LiveState&) = delete;
    LiveState& operator=(const LiveState&) = delete;

    // Looks once, then starts the threads that look again.
    void start();
    // Ends the threads, and every wait in wait_newer.
    void stop();
    bool stopping() const { return m_stopping; }

    // The last look as the API serves it: /api/status and /api/queue (its first page), each
    // a JSON document, and a number that grows with each look that saw a change.
    struct Snapshot {
        std::uint64_t version = 0;
        std::string status;
        std::string queue;
    };
    Snapshot current() const;
    // The first look newer than `seen`; the current one when `most` passes first, or stop().
    Snapshot wait_newer(std::uint64_t seen, std::chrono::milliseconds most) const;

    // A sample of NVML (taken by the caller, which runs the probe child).
    void note_usage(const UsageReport& report);

    // The queue, one request at a time (its connection is not shared between threads). A
    // call that fails drops the connection: the next one opens it again. A store found gone
    // (QueueGone: its database removed or replaced) also drops what was made of it.
    template <typename Use>
    auto with_queue(Use&& use)
    {
        std::lock_guard lock(m_queue_mutex);
        if (!m_sources.open_queue) {
            throw std::logic_error("no queue is served");
        }
        try {
            if (!m_queue) {
                m_queue = m_sources.open_queue(std::exchange(m_queue_opened, true)
                                                   ? queue::WhenMissing::gone
                                                   : queue::WhenMissing::make);
            }
            return use(*m_queue);
        } catch (const queue::QueueGone&) {
            m_queue.reset();
            ++m_queue_generation;
            throw;
        } catch (...) {
            m_queue.reset();
            throw;
        }
    }
    bool has_queue() const { return static_cast<bool>(m_sources.open_queue); }
    const LiveSources& sources() const { return m_sources; }

    // What ran on each GPU over the last `hours` up to `time`'s wall clock: what the server
    // saw under the leases, and the queue's latest jobs; made at most once a second (of
    // `time`), however many pages ask.
    std::string timeline_document(unsigned hours, const TimeSource& time);

private:
    void watch_leases();
    void watch_queue();
    void look_at_leases();
    void look_at_queue();
    // Takes a new document for one part of the snapshot; a new version when it differs.
    void publish(std::string Snapshot::*part, std::string document);
    std::string status_document(const sys::LeaseOverview& overview) const;
    std::string queue_document();
    Json timeline(double from, double now);

    LiveSources m_sources;
    mutable std::mutex m_mutex; // guards what follows, down to m_history
    mutable std::condition_variable m_changed;
    Snapshot m_snapshot;
    UsageReport m_usage;
    GpuHistory m_history{24 * 3600.0};
    std::mutex m_queue_mutex;
    std::unique_ptr<queue::QueueBackend> m_queue; // under m_queue_mutex; none until opened
    bool m_queue_opened = false;                  // under m_queue_mutex: once, ever
    // How many times the store was found gone: what was made of it before is not shown.
    std::atomic<std::uint64_t> m_queue_generation{0};
    std::string m_queue_where;                    // the queue's describe(), for the page
    std::mutex m_timeline_mutex; // guards the made timelines, by hours
    struct MadeTimeline {
        Clock::time_point made;
        std::uint64_t queue_generation = 0;
        std::string document;
    };
    std::map<unsigned, MadeTimeline> m_timelines;
    std::atomic<bool> m_stopping{false};
    std::thread m_leases_thread;
    std::thread m_queue_thread;
    double m_started = 0;
    std::string m_lease_problem; // the last look's, said once (the leases thread's)
};

} // namespace gpusched::web
