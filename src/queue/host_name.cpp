#include <gpusched/queue/host_name.hpp>

#include <unistd.h>

#include <array>

namespace gpusched::queue {

std::string this_host()
{
    std::array<char, 256> name{};
    gethostname(name.data(), name.size() - 1);
    return name.data();
}

} // namespace gpusched::queue
