#pragma once

// The fixture of the --mem tests: a fake driver's machine, and jobs that note their start
// and end in a log and hold their GPU until the test lets them go.
#include "fake_driver_fixture.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpusched::testing {

// One GPU of 81559 MiB, 1000 MiB of them in use by the driver, as k_gpus's GPU 0.
inline const std::string k_one_gpu =
    fmt::format("gpu {} 00000000:41:00.0 81559 1000 Fake H100 80GB HBM3\n", k_first_uuid);

class GpuMemory : public FakeDriver {
protected:
    // A job that notes its start and end in the log, and holds its GPU until `go` exists.
    std::string held_job(int number, const std::string& before = "") const
    {
        return fmt::format("{}echo start {} >> {}; while [ ! -e {} ]; do sleep 0.05; done; "
                           "echo end {} >> {}\n",
                           before, number, log().string(), go().string(), number, log().string());
    }
    // `gpusched ARGS` on the fake driver against a queue: the local one, in this test's own
    // state directory, or the Redis server at `redis_url`.
    LaunchOptions in_queue(std::vector<std::string> args, const std::string& redis_url = "") const
    {
        if (!redis_url.empty()) {
            args.insert(args.begin() + 1, {"--redis", redis_url});
        }
        auto options = on_fake(std::move(args));
        options.env["XDG_STATE_HOME"] = (m_dir / "state").string();
        options.env["XDG_CACHE_HOME"] = (m_dir / "cache").string();
        return options;
    }
    fs::path log() const { return m_dir / "log"; }
    fs::path go() const { return m_dir / "go"; }
    std::size_t started() const
    {
        const auto lines =
            fs::exists(log()) ? split_lines(read_file(log())) : std::vector<std::string>{};
        return static_cast<std::size_t>(
            std::count_if(lines.begin(), lines.end(),
                          [](const auto& line) { return line.starts_with("start"); }));
    }
    // The most jobs that ran at once, by the log's starts and ends.
    std::size_t most_at_once() const
    {
        std::size_t running = 0;
        std::size_t most = 0;
        for (const auto& line : split_lines(read_file(log()))) {
            running += line.starts_with("start") ? 1 : 0;
            running -= line.starts_with("end") ? 1 : 0;
            most = std::max(most, running);
        }
        return most;
    }
    // How many looks at the GPUs' usage the run has started (its debug log says each).
    static std::size_t looks(const std::string& err)
    {
        std::size_t count = 0;
        for (std::size_t at = 0; (at = err.find("looking at GPU usage", at)) != std::string::npos;
             ++at) {
            ++count;
        }
        return count;
    }
};

} // namespace gpusched::testing
