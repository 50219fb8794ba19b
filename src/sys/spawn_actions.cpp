#include <gpusched/sys/spawn_actions.hpp>

#include <gpusched/sys/system_error.hpp>

#include <fmt/format.h>

#if !defined(__GLIBC__) || !__GLIBC_PREREQ(2, 34)
#error "gpusched needs glibc 2.34 or newer for posix_spawn_file_actions_addclosefrom_np"
#endif

namespace gpusched::sys {
namespace {

void check(int error, const char* call)
{
    if (error != 0) {
        throw_error_code(error, call);
    }
}

} // namespace

SpawnFileActions::SpawnFileActions()
{
    check(posix_spawn_file_actions_init(&m_actions), "posix_spawn_file_actions_init");
}

SpawnFileActions::~SpawnFileActions()
{
    posix_spawn_file_actions_destroy(&m_actions);
}

SpawnFileActions& SpawnFileActions::open(int fd, const char* path, int flags, mode_t mode)
{
    check(posix_spawn_file_actions_addopen(&m_actions, fd, path, flags, mode),
          "posix_spawn_file_actions_addopen");
    return *this;
}

SpawnFileActions& SpawnFileActions::dup2(int fd, int new_fd)
{
    check(posix_spawn_file_actions_adddup2(&m_actions, fd, new_fd),
          "posix_spawn_file_actions_adddup2");
    return *this;
}

SpawnFileActions& SpawnFileActions::close_from(int lowest)
{
    check(posix_spawn_file_actions_addclosefrom_np(&m_actions, lowest),
          "posix_spawn_file_actions_addclosefrom_np");
    return *this;
}

SpawnFileActions& SpawnFileActions::chdir(const char* path)
{
    check(posix_spawn_file_actions_addchdir_np(&m_actions, path),
          "posix_spawn_file_actions_addchdir_np");
    return *this;
}

SpawnAttributes::SpawnAttributes()
{
    check(posix_spawnattr_init(&m_attributes), "posix_spawnattr_init");
}

SpawnAttributes::~SpawnAttributes()
{
    posix_spawnattr_destroy(&m_attributes);
}

void SpawnAttributes::set_flag(short flag)
{
    short flags = 0;
    check(posix_spawnattr_getflags(&m_attributes, &flags), "posix_spawnattr_getflags");
    check(posix_spawnattr_setflags(&m_attributes, static_cast<short>(flags | flag)),
          "posix_spawnattr_setflags");
}

SpawnAttributes& SpawnAttributes::new_process_group()
{
    check(posix_spawnattr_setpgroup(&m_attributes, 0), "posix_spawnattr_setpgroup");
    set_flag(POSIX_SPAWN_SETPGROUP);
    return *this;
}

SpawnAttributes& SpawnAttributes::new_session()
{
    set_flag(POSIX_SPAWN_SETSID);
    return *this;
}

SpawnAttributes& SpawnAttributes::signal_mask(const sigset_t& mask)
{
    check(posix_spawnattr_setsigmask(&m_attributes, &mask), "posix_spawnattr_setsigmask");
    set_flag(POSIX_SPAWN_SETSIGMASK);
    return *this;
}

SpawnAttributes& SpawnAttributes::default_signals(const sigset_t& signals)
{
    check(posix_spawnattr_setsigdefault(&m_attributes, &signals), "posix_spawnattr_setsigdefault");
    set_flag(POSIX_SPAWN_SETSIGDEF);
    return *this;
}

} // namespace gpusched::sys
