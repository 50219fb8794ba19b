#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

// What a waiter tells the holder of a lease.
struct WaiterLine {
    std::string lease;   // the socket name it waits for
    double since = 0;    // when it began to wait, seconds since the epoch
    double used = 0;     // GPU-seconds its jobs have used
    double weight = 1;   // its --share
    std::size_t gpus = 1; // how many GPUs it waits for in all
};

std::string format_waiter_line(const WaiterLine& line); // ends in '\n'
std::optional<WaiterLine> parse_waiter_line(std::string_view line);

// When a wait that begins at `now` (seconds since the epoch) began, as a waiter line carries it:
// to the millisecond, so that a holder and a waiter compare the same numbers.
double wait_start(double now);

// True when the waiter of `waiter_since` (process `waiter_pid`) began to wait before us
// (`our_since`, `our_pid`), both from wait_start: the older waiter is served first. Waits that
// began in the same millisecond are ordered by process id, which both sides see alike, so that
// of two processes each holding a GPU the other waits for, exactly one hands its GPU over.
bool waited_first(double waiter_since, long waiter_pid, double our_since, long our_pid);

// The fair-share rule, decided at a job boundary: the GPU goes to a waiter whose GPU time,
// divided by its weight, is not above the holder's.
bool owed_the_gpu(const WaiterLine& waiter, double holder_used, double holder_weight);

} // namespace gpusched
