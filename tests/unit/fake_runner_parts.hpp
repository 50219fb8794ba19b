#pragma once

#include "fake_process_table.hpp"

#include <gpusched/sys/command_input.hpp>
#include <gpusched/sys/signal_channel.hpp>

#include <csignal>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace gpusched::testing {

// Signals sent to gpusched by the test. Its descriptor is only a number the FakeProcessTable
// reports ready while a signal is pending; a stop (Ctrl-Z) lasts `stopped_for` on the clock.
class FakeSignals final : public sys::SignalSource {
public:
    static constexpr int k_fd = 1'000'000;

    explicit FakeSignals(FakeClock& clock) : m_clock(clock) { sigemptyset(&m_mask); }

    int fd() const override { return k_fd; }
    std::vector<int> take_pending() override { return std::exchange(m_pending, {}); }
    void stop_self() override
    {
        ++stops;
        m_clock.advance(stopped_for);
    }
    const sigset_t& original_mask() const override { return m_mask; }

    void raise(int signal) { m_pending.push_back(signal); }
    bool pending() const { return !m_pending.empty(); }

    FakeClock::Duration stopped_for{};
    int stops = 0;

private:
    FakeClock& m_clock;
    std::vector<int> m_pending;
    sigset_t m_mask{};
};

// Commands from the test, replayable as a regular file's (a stop saves none of them) unless
// from_pipe, and
// what the runner tells its input back: a queue's part, with its cancels and pauses, as much
// as a file's.
class FakeInput final : public sys::CommandSource,
                        public sys::RunnerRequests,
                        public sys::JobEndSink {
public:
    // Commands given up front, the input then ended; or more added by the script, and
    // close() when no more come.
    explicit FakeInput(std::vector<std::string> commands = {}, bool closed = true)
        : m_commands(commands.begin(), commands.end()), m_closed(closed)
    {
    }

    void add(std::string command) { m_commands.push_back(std::move(command)); }
    void close() { m_closed = true; }

    void add_poll_fds(std::vector<pollfd>&, bool) override {}
    bool on_ready(const pollfd&) override { return false; }
    std::optional<sys::InputLine> next_line() override
    {
        if (m_commands.empty()) {
            return std::nullopt;
        }
        sys::InputLine line;
        line.line.text = std::move(m_commands.front());
        line.line.first_line = ++m_read;
        line.source = "test";
        line.replayable = !from_pipe;
        m_commands.pop_front();
        return line;
    }
    bool finished() const override { return (m_closed || m_stopped) && m_commands.empty(); }
    bool has_unrepeatable_input() const override { return false; }
    void stop_reading() override { m_stopped = true; }
    std::vector<sys::InputLine> take_buffered() override
    {
        std::vector<sys::InputLine> left;
        while (auto line = next_line()) {
            left.push_back(std::move(*line));
        }
        return left;
    }
    bool starts_wait_for_descriptors() const override { return waits_for_descriptors; }
    sys::InputRequests take_requests() override { return std::exchange(requests, {}); }
    void on_started(JobId id, const std::string& gpu) override { started.emplace_back(id, gpu); }
    void on_ended(const sys::JobEnd& end) override { ended.push_back(end); }
    void on_unstarted(const std::vector<Command>& commands) override
    {
        unstarted += commands.size();
    }

    sys::InputRequests requests; // handed to the runner at its next turn
    bool waits_for_descriptors = false; // a queue worker's: EMFILE defers a start
    bool from_pipe = false;             // what it gave cannot be read again
    std::vector<std::pair<JobId, std::string>> started;
    std::vector<sys::JobEnd> ended;
    std::size_t unstarted = 0;

private:
    std::deque<std::string> m_commands;
    std::size_t m_read = 0;
    bool m_closed;
    bool m_stopped = false;
};

} // namespace gpusched::testing
