// spawn_floor PROGRAM ARG COUNT: runs PROGRAM -c ARG COUNT times, one after another, with
// posix_spawn and a blocking waitpid and nothing else. The hand-off it shows is what process
// creation alone costs on this machine: the floor under any scheduler's figure.
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

extern char** environ;

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: spawn_floor PROGRAM ARG COUNT\n");
        return 2;
    }
    char* child_argv[] = {argv[1], const_cast<char*>("-c"), argv[2], nullptr};
    const long count = std::strtol(argv[3], nullptr, 10);
    for (long i = 0; i < count; ++i) {
        pid_t pid = 0;
        if (posix_spawn(&pid, argv[1], nullptr, nullptr, child_argv, environ) != 0) {
            std::perror("posix_spawn");
            return 1;
        }
        int status = 0;
        waitpid(pid, &status, 0);
    }
    return 0;
}
