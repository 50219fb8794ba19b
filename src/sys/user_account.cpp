#include <gpusched/sys/user_account.hpp>

#include <pwd.h>

namespace gpusched::sys {

std::string user_name(uid_t uid)
{
    const passwd* entry = getpwuid(uid);
    return entry != nullptr ? entry->pw_name : std::to_string(uid);
}

} // namespace gpusched::sys
