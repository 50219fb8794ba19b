#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace gpusched {

// What kind of failure it is, for a caller that decides by it (an exit status, an HTTP status,
// whether to try again) rather than by the words of its message.
enum class FailureKind {
    other,       // none of those below
    not_found,   // no such job, worker or queue
    bad_request, // the caller asked for what cannot be done (a job in a state it cannot leave so)
    unreachable, // a server could not be reached, or did not answer in time: it may later
    refused,     // not allowed: a password missing or wrong, a key that does not sign it
};

// An expected failure, returned as a value: its message names what was wrong and where, and is
// said to the user as it is.
struct Failure {
    explicit Failure(std::string what, int errno_value = 0)
        : message(std::move(what)), error(errno_value)
    {
    }
    Failure(FailureKind failure_kind, std::string what, int errno_value = 0)
        : message(std::move(what)), error(errno_value), kind(failure_kind)
    {
    }

    std::string message;
    // The errno behind it, where a system call failed: for a caller that tells a limit that
    // passes (EAGAIN) from a lasting fault. 0 otherwise.
    int error = 0;
    FailureKind kind = FailureKind::other;
};

// The one way a function returns a failure its caller is expected to handle: a value, or the
// Failure that kept it from being made (in the spirit of tl::expected and C++23's
// std::expected). Exceptions are for what ends the command (UsageError, Interrupted, a system
// call that cannot fail short of a broken machine); `bool` only for a yes-or-no answer, never
// for "could not"; std::optional only for a value that may be absent, never for an error.
template <class T>
class [[nodiscard]] Result {
public:
    // From anything a T is made of, as std::expected is (`return std::nullopt;` for a
    // Result<std::optional<...>>).
    template <class U = T>
    requires(
        std::is_constructible_v<T, U&&> && !std::is_same_v<std::remove_cvref_t<U>, Result> &&
        !std::is_same_v<std::remove_cvref_t<U>, Failure>) explicit(!std::is_convertible_v<U&&, T>)
        Result(U&& value)
        : m_state(std::in_place_index<0>, std::forward<U>(value))
    {
    }
    Result(Failure failure) : m_state(std::in_place_index<1>, std::move(failure)) {}

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() &
    {
        assert(ok());
        return std::get<0>(m_state);
    }
    const T& value() const&
    {
        assert(ok());
        return std::get<0>(m_state);
    }
    T&& value() &&
    {
        assert(ok());
        return std::get<0>(std::move(m_state));
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Failure& failure() const
    {
        assert(!ok());
        return std::get<1>(m_state);
    }
    const std::string& message() const { return failure().message; }
    FailureKind kind() const { return failure().kind; }

private:
    std::variant<T, Failure> m_state;
};

// Done, or the Failure that kept it from being done.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Failure failure) : m_failure(std::move(failure)) {}

    bool ok() const { return !m_failure; }
    explicit operator bool() const { return ok(); }

    const Failure& failure() const
    {
        assert(!ok());
        return m_failure.value(); // throws, as Result<T> does, where assert is compiled out
    }
    const std::string& message() const { return failure().message; }
    FailureKind kind() const { return failure().kind; }

private:
    std::optional<Failure> m_failure;
};

} // namespace gpusched
