#include <gpusched/web/connection_reaper.hpp>

#include <gpusched/sys/accepted_connections.hpp>

namespace gpusched::web {
namespace {

// How often connections are looked at: a slow client is cut within `most` and this.
constexpr auto k_reap_every = std::chrono::seconds(2);

} // namespace

ConnectionReaper::ConnectionReaper(int port, std::chrono::seconds most) : m_port(port), m_most(most)
{
}

ConnectionReaper::~ConnectionReaper()
{
    stop_and_cut_all();
}

void ConnectionReaper::start()
{
    m_thread = std::thread([this] { watch(); });
}

void ConnectionReaper::stop_and_cut_all()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_stop.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    for (const auto& connection : sys::accepted_connections(m_port)) {
        sys::shut_down(connection);
    }
}

void ConnectionReaper::keep(int peer_port)
{
    std::lock_guard lock(m_mutex);
    m_kept.insert(peer_port);
}

void ConnectionReaper::forget(int peer_port)
{
    std::lock_guard lock(m_mutex);
    if (const auto found = m_kept.find(peer_port); found != m_kept.end()) {
        m_kept.erase(found);
    }
}

void ConnectionReaper::watch()
{
    std::unique_lock lock(m_mutex);
    while (!m_stop.wait_for(lock, k_reap_every, [&] { return m_stopping; })) {
        lock.unlock();
        look();
        lock.lock();
    }
}

void ConnectionReaper::look()
{
    const auto now = std::chrono::steady_clock::now();
    const auto connections = sys::accepted_connections(m_port);
    std::lock_guard lock(m_mutex);
    std::map<unsigned long, std::chrono::steady_clock::time_point> seen;
    for (const auto& connection : connections) {
        const auto found = m_first_seen.find(connection.inode);
        const auto first = found != m_first_seen.end() ? found->second : now;
        seen.emplace(connection.inode, first);
        if (now - first >= m_most && !m_kept.contains(connection.peer_port)) {
            sys::shut_down(connection);
        }
    }
    m_first_seen = std::move(seen); // what is gone is forgotten
}

} // namespace gpusched::web
