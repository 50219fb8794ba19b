#include "cli.hpp"

#include "run_command.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/version.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <exception>
#include <system_error>

namespace gpusched::cli {
namespace {

// The log goes to stderr, one flushed line per event; stdout belongs to the jobs.
void set_up_log()
{
    auto logger = spdlog::stderr_logger_st("gpusched");
    logger->set_pattern("[%T.%e] %v");
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
}

int run(int argc, char** argv)
{
    CLI::App app{"gpusched: run each line of the input as a shell command on a free GPU", "gpusched"};
    app.set_version_flag("-V,--version", fmt::format("gpusched {}", k_version));

    RunOptions run_options;
    add_run_options(app, run_options);

    // Internal: the short-lived child that initialises CUDA so the scheduler never does.
    auto* probe = app.add_subcommand("__probe-cuda", "")->group("");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const int status = app.exit(error);
        return status == 0 ? k_exit_success : k_exit_usage;
    }
    if (*probe) {
        return sys::run_probe_and_print();
    }
    return run_scheduler(run_options);
}

} // namespace

int main(int argc, char** argv)
{
    try {
        set_up_log();
        return run(argc, argv);
    } catch (const UsageError& error) {
        fmt::print(stderr, "gpusched: error: {}\n", error.what());
        return k_exit_usage;
    } catch (const std::exception& error) {
        fmt::print(stderr, "gpusched: error: {}\n", error.what());
        return k_exit_fatal;
    }
}

} // namespace gpusched::cli
