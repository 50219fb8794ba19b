// stamp -c MICROSECONDS: a job for the hand-off benchmark. Run as gpusched's --shell (or by
// xargs/parallel), it notes the time it started, sleeps, and appends
// "SLOT START_NS END_NS" to $STAMP_LOG just before exiting. Linked statically so that exec
// costs as little as possible and the figure is the scheduler's, not the loader's.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

long long now_ns()
{
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

} // namespace

int main(int argc, char** argv)
{
    const long long start = now_ns();
    const char* argument = argc > 2 ? argv[2] : (argc > 1 ? argv[1] : "0");
    const long sleep_us = std::strtol(argument, nullptr, 10);
    if (sleep_us > 0) {
        timespec pause{sleep_us / 1'000'000, (sleep_us % 1'000'000) * 1000};
        nanosleep(&pause, nullptr);
    }
    const char* slot = std::getenv("CUDA_VISIBLE_DEVICES");
    if (slot == nullptr) {
        slot = std::getenv("PARALLEL_JOBSLOT");
    }
    char line[128];
    const int length =
        std::snprintf(line, sizeof line, "%s %lld %lld\n", slot ? slot : "-", start, now_ns());
    const char* log = std::getenv("STAMP_LOG");
    const int fd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd >= 0 && length > 0) {
        [[maybe_unused]] auto written = write(fd, line, static_cast<size_t>(length));
        close(fd);
    }
    return 0;
}
