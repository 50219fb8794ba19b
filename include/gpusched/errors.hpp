#pragma once

#include <stdexcept>
#include <string>
#include <variant>

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

// An expected failure returned as a value: the message names what was wrong and where.
struct ParseError {
    std::string message;
};

template <class T>
using Parsed = std::variant<T, ParseError>;

// Returns the value of a Parsed<T> or throws UsageError with its message.
template <class T>
T value_or_usage_error(Parsed<T> parsed)
{
    if (auto* error = std::get_if<ParseError>(&parsed)) {
        throw UsageError(error->message);
    }
    return std::move(std::get<T>(parsed));
}

} // namespace gpusched
