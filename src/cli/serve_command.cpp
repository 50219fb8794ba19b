#include "serve_command.hpp"

#include "lease_options.hpp"
#include "open_queue.hpp"
#include "option_values.hpp"
#include "gpu_ids_option.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/job_messages.hpp>
#include <gpusched/parse_number.hpp>
#include <gpusched/queue/host_name.hpp>
#include <gpusched/sys/poll_timeout.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/sys/signal_channel.hpp>
#include <gpusched/sys/user_account.hpp>
#include <gpusched/web/web_server.hpp>
#include <gpusched/web_access.hpp>

#include <fmt/format.h>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

namespace gpusched::cli {
namespace {

using namespace std::chrono_literals;

struct ListenAddress {
    std::string address;
    int port = 0;
};

// "ADDR:PORT", "[V6]:PORT" or ":PORT" (loopback).
ListenAddress parse_listen(const std::string& text)
{
    const auto colon = text.rfind(':');
    const auto port =
        colon == std::string::npos ? std::nullopt : parse_number<int>(text.substr(colon + 1));
    if (!port || *port < 0 || *port > 65535) {
        throw UsageError(fmt::format("--listen {}: expected ADDRESS:PORT, as 127.0.0.1:8787, "
                                     "with a port from 0 to 65535",
                                     text));
    }
    auto address = text.substr(0, colon);
    if (address.starts_with('[') && address.ends_with(']')) {
        address = address.substr(1, address.size() - 2);
    }
    return {address.empty() ? "127.0.0.1" : address, *port};
}

// 128 bits from the system's generator, as hex: what a browser or script presents to act.
std::string new_token()
{
    std::array<unsigned char, 16> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        throw std::runtime_error("no random bytes for the token (OpenSSL RAND_bytes)");
    }
    std::string token;
    for (const auto byte : bytes) {
        token += fmt::format("{:02x}", byte);
    }
    return token;
}

std::string url_host(const std::string& address)
{
    return address.find(':') != std::string::npos ? "[" + address + "]" : address;
}

// Each open page holds a connection, and each connection a descriptor: as many as this user
// may have, not the 1,024 a shell usually gives.
void raise_descriptor_limit()
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

} // namespace

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options)
{
    auto* serve = app.add_subcommand(
        "serve", "Serve a live web page of this server: GPUs, who holds and waits for them, the "
                 "queue, its jobs' output, the timeline; and its JSON API");
    serve
        ->add_option("--listen", options.listen,
                     "The address and port to listen on; beyond loopback every request of the "
                     "API needs the token printed at start")
        ->type_name("ADDR:PORT")
        ->capture_default_str();
    serve->add_flag("--allow-actions", options.allow_actions,
                    "Let the page cancel, retry, pause and resume your own jobs and workers "
                    "(with the token printed at start)");
    serve->add_flag("--share-output", options.share_output,
                    "Let whoever reads the page read your jobs' output too (by default it takes "
                    "the token printed at start: other users see what runs, not what it printed)");
    serve->add_flag("--no-queue", options.no_queue, "Show the GPUs and their leases only");
    add_gpu_ids_option(*serve, options.gpus,
                       "The GPU ids to show (default: $GPUSCHED_GPUS, else every GPU)");
    add_lock_dir_option(*serve, options.lock_dir);
    add_queue_options(*serve, options.queue, false);
    serve
        ->add_option("--probe-timeout", options.probe_timeout_seconds,
                     "How long to wait for the CUDA and NVML probes")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->capture_default_str();
    serve
        ->add_option("--sample-every", options.sample_seconds,
                     "How often to sample each GPU's utilisation and memory (NVML)")
        ->transform(duration_check(false))
        ->type_name("DURATION")
        ->capture_default_str();
    return serve;
}

int run_serve(const ServeOptions& options)
{
    const auto listen = parse_listen(options.listen);
    raise_descriptor_limit();
    // The signals are taken through one descriptor, blocked before any thread starts so that
    // every thread inherits the mask: only this one hears them.
    std::signal(SIGCHLD, SIG_DFL);
    std::signal(SIGPIPE, SIG_IGN); // a page closed mid-answer is a failed write, not a death
    sys::SignalChannel signals{SIGCHLD, SIGINT, SIGTERM, SIGHUP};
    const auto probe_timeout = to_milliseconds(options.probe_timeout_seconds);
    sys::CudaProbeChild probe(probe_timeout, signals);

    web::LiveSources sources;
    sources.lock_dir = options.lock_dir;
    sources.gpus = gpus_to_show(options.gpus, probe);
    sources.add_others = options.gpus.empty();
    sources.inventory = probe.inventory();
    if (!options.no_queue) {
        sources.open_queue = [&options](queue::WhenMissing missing) {
            return open_queue(options.queue, missing);
        };
        sources.queue_name = options.queue.queue;
    }
    sources.host = queue::this_host();
    sources.uid = getuid();
    sources.user = sys::user_name(getuid());
    sources.allow_actions = options.allow_actions;

    web::WebServerOptions server_options;
    server_options.address = listen.address;
    server_options.port = listen.port;
    server_options.policy = {is_loopback_host(listen.address), options.allow_actions, new_token(),
                             options.share_output};
    web::LiveState state(std::move(sources));
    web::WebServer server(state, server_options);
    const int port = server.bind();
    state.start();
    std::atomic<bool> served{false};
    std::thread serving([&] {
        server.serve();
        served = true;
    });

    // The address to open, on stdout for scripts; with the token, which a loopback page only
    // needs to act, in the fragment: a browser sends that to no server, so the token reaches
    // only the page's script (docs/serve.md).
    // A wildcard address is no address to open: the host's name is.
    const bool wildcard = listen.address == "0.0.0.0" || listen.address == "::";
    const auto address = wildcard ? state.sources().host : url_host(listen.address);
    fmt::print("http://{}:{}/#token={}\n", address, port, server_options.policy.token);
    std::fflush(stdout);
    spdlog::info("serving {} on http://{}:{}/ ({}{})", state.sources().host, address, port,
                 options.allow_actions ? "actions allowed with the token" : "read-only",
                 server_options.policy.loopback_only ? "" : "; the API needs the token");

    int status = k_exit_success;
    const std::vector<std::string> ids = [&] {
        std::vector<std::string> shown;
        for (const auto& gpu : state.sources().gpus) {
            shown.push_back(gpu.id);
        }
        return shown;
    }();
    auto next_sample = std::chrono::steady_clock::now();
    const auto sample_every = to_milliseconds(options.sample_seconds);
    try {
        while (!served) {
            const auto now = std::chrono::steady_clock::now();
            if (!ids.empty() && now >= next_sample) {
                const auto usage = sys::UsageProbeChild(probe_timeout, signals).usage(ids);
                state.note_usage(usage);
                // Where NVML is absent, asking again each time would cost a process for nothing.
                next_sample =
                    std::chrono::steady_clock::now() +
                    (usage.problem.empty() ? sample_every : std::max(sample_every, 60'000ms));
            }
            pollfd ready{signals.fd(), POLLIN, 0};
            const auto wait =
                ids.empty()
                    ? 1000ms
                    : std::min(1000ms,
                               std::chrono::ceil<std::chrono::milliseconds>(next_sample - now));
            poll(&ready, 1, sys::poll_timeout(wait));
            for (const int signal : signals.take_pending()) {
                if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) {
                    throw Interrupted(signal);
                }
            }
        }
        spdlog::error("the web server stopped by itself");
        status = k_exit_fatal;
    } catch (const Interrupted& stop) {
        spdlog::info("{}: stopping", signal_name(stop.signal()));
    }
    server.stop();
    state.stop();
    serving.join();
    return status;
}

} // namespace gpusched::cli
