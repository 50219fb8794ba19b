#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace gpusched::web {

// Cuts the connections that have taken longer than `most` to be served, so that clients that
// send a request a byte at a time, or nothing, cannot hold the server's threads (each
// connection has one, and a read times out only when nothing at all comes for a while).
// Live pages' event streams are kept: they last as long as the page is open. At stop, every
// connection is cut, so that the server ends at once.
class ConnectionReaper {
public:
    ConnectionReaper(int port, std::chrono::seconds most);
    ~ConnectionReaper();
    ConnectionReaper(const ConnectionReaper&) = delete;
    ConnectionReaper& operator=(const ConnectionReaper&) = delete;

    void start();
    // Stops looking, and cuts every connection.
    void stop_and_cut_all();

    // The connection from `peer_port` is a live page's stream, from now until forget().
    void keep(int peer_port);
    void forget(int peer_port);

private:
    void watch();
    void look();

    int m_port;
    std::chrono::seconds m_most;
    std::mutex m_mutex;
    std::condition_variable m_stop;
    bool m_stopping = false;
    std::multiset<int> m_kept;                                                   // peer ports
    std::map<unsigned long, std::chrono::steady_clock::time_point> m_first_seen; // by inode
    std::thread m_thread;
};

} // namespace gpusched::web
