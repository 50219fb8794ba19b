#pragma once

#include <gpusched/errors.hpp>

#include <cstddef>
#include <string_view>

namespace gpusched {

// GNU parallel's --halt: `never`, or WHEN,WHY=LIMIT where WHEN is `soon` (start no more jobs)
// or `now` (also stop the running ones), WHY is `fail`, `success` or `done`, and LIMIT is a
// count (`fail=3`) or a percentage of the jobs finished so far (`fail=10%`).
struct HaltPolicy {
    enum class When { never, soon, now };
    enum class Why { fail, success, done };

    When when = When::never;
    Why why = Why::fail;
    double limit = 0;
    bool percent = false;

    static Result<HaltPolicy> parse(std::string_view text);

    // Whether the final outcomes so far call for a halt.
    bool reached(std::size_t succeeded, std::size_t failed) const;
};

} // namespace gpusched
