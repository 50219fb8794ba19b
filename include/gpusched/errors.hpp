#pragma once

#include <gpusched/result.hpp>

#include <stdexcept>
#include <string>

namespace gpusched {

// Bad input from the user that stops the run before it starts: printed once at the top as
// "gpusched: error: ..." (the name gpusched was called by) with exit status 255.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// SIGINT, SIGTERM or SIGHUP before a run has started (while a probe child was waited for):
// nothing was started that needs stopping, so the command ends at once, with the status of
// a process stopped by that signal (128 + signal), as a stopped run does.
class Interrupted : public std::runtime_error {
public:
    explicit Interrupted(int signal) : std::runtime_error("interrupted"), m_signal(signal) {}
    int signal() const { return m_signal; }

private:
    int m_signal;
};

// Returns the value of a Result<T> or throws UsageError with its message: for what the user
// gave, checked before anything starts.
template <class T>
T value_or_usage_error(Result<T> result)
{
    if (!result) {
        throw UsageError(result.message());
    }
    return std::move(result).value();
}

} // namespace gpusched
