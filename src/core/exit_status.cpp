#include <gpusched/exit_status.hpp>

namespace gpusched {

int exit_status_for_failures(std::size_t failed)
{
    constexpr std::size_t k_max_counted = 100;
    if (failed > k_max_counted) {
        return k_exit_too_many_failures;
    }
    return static_cast<int>(failed);
}

int exit_status_for_signal(int signal)
{
    return 128 + signal;
}

} // namespace gpusched
