#include "hypersearch_command.hpp"

#include "command_line_errors.hpp"
#include "help_format.hpp"
#include "option_values.hpp"

#include <gpusched/command_template.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/hypersearch.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <system_error>

namespace gpusched::cli {
namespace {

constexpr std::array<std::string_view, 9> k_option_names = {
    "-p",      "--parameter", "--sampling-mode", "--n-samples", "-n", "--seed",
    "--quote", "-h",          "--help"};

bool is_option(std::string_view arg)
{
    const auto name = arg.substr(0, arg.find('='));
    return std::find(k_option_names.begin(), k_option_names.end(), name) != k_option_names.end();
}

// CLI11 would read a value such as "--no-augment" or "-1" as an option, so -p groups are
// taken out first: after `-p NAME`, every argument up to the next hypersearch option is a
// value, whatever it starts with.
std::vector<std::pair<std::string, std::vector<std::string>>>
take_parameters(std::vector<std::string>& args)
{
    std::vector<std::pair<std::string, std::vector<std::string>>> parameters;
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] != "-p" && args[i] != "--parameter") {
            rest.push_back(std::move(args[i]));
            continue;
        }
        if (i + 1 == args.size() || is_option(args[i + 1])) {
            throw UsageError(fmt::format("{} needs a parameter name and its values", args[i]));
        }
        auto& [name, values] =
            parameters.emplace_back(std::move(args[++i]), std::vector<std::string>{});
        while (i + 1 < args.size() && !is_option(args[i + 1])) {
            values.push_back(std::move(args[++i]));
        }
        if (values.empty()) {
            throw UsageError(fmt::format("parameter '{}' has no values", name));
        }
    }
    args = std::move(rest);
    return parameters;
}

using Parameters = std::vector<std::pair<std::string, std::vector<std::string>>>;

bool takes_value(std::string_view arg)
{
    return arg == "--sampling-mode" || arg == "--n-samples" || arg == "-n" || arg == "--seed";
}

// Whether `args` (the -p groups taken out) hold the template or ask for help.
bool has_template_or_help(const std::vector<std::string>& args)
{
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "-h" || args[i] == "--help" || !is_option(args[i])) {
            return true;
        }
        if (takes_value(args[i])) {
            ++i;
        }
    }
    return false;
}

bool names_a_parameter(std::string_view text, const Parameters& parameters)
{
    return std::any_of(parameters.begin(), parameters.end(), [&](const auto& parameter) {
        return text.find("{" + parameter.first + "}") != std::string_view::npos;
    });
}

// The template may come after the parameters (`-p lr 0.1 'python train.py --lr {lr}'`), where
// it reads as a value of the parameter before it: when no other template is given, the last
// value of a group that names a parameter as {name} is the template. Without one, the error
// says where the template goes.
void take_trailing_template(const std::string& program, std::vector<std::string>& args,
                            Parameters& parameters)
{
    if (has_template_or_help(args)) {
        return;
    }
    std::vector<std::string>* holder = nullptr;
    for (auto& [name, values] : parameters) {
        if (!values.empty() && names_a_parameter(values.back(), parameters)) {
            if (holder != nullptr) {
                holder = nullptr; // two candidates: no guessing
                break;
            }
            holder = &values;
        }
    }
    if (holder == nullptr) {
        throw UsageError(fmt::format(
            "no command template: it comes first, then the parameters: {} 'python train.py "
            "--lr {{lr}}' -p lr 0.1 0.01",
            program));
    }
    args.push_back(std::move(holder->back()));
    holder->pop_back();
    for (const auto& [name, values] : parameters) {
        if (values.empty()) {
            throw UsageError(fmt::format("parameter '{}' has no values", name));
        }
    }
}

// Writes the commands so that a program reading them sees each one promptly without a
// system call per line: a terminal gets lines, a pipe gets at most 4 KiB at a time and never
// waits more than 5 ms for a flush, a file gets large blocks. Reports whether the reader is
// still there.
class LineWriter {
public:
    LineWriter()
    {
        struct stat info {};
        if (isatty(STDOUT_FILENO) != 0) {
            std::setvbuf(stdout, nullptr, _IOLBF, 0);
        } else if (fstat(STDOUT_FILENO, &info) == 0 && S_ISFIFO(info.st_mode)) {
            m_flush_every = std::chrono::milliseconds(5);
            std::setvbuf(stdout, nullptr, _IOFBF, 4096);
        } else {
            std::setvbuf(stdout, nullptr, _IOFBF, 64 * 1024);
        }
    }

    bool write(std::string_view line)
    {
        if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size() ||
            std::fputc('\n', stdout) == EOF) {
            return failed();
        }
        if (m_flush_every) {
            const auto now = std::chrono::steady_clock::now();
            if (now - m_last_flush >= *m_flush_every) {
                m_last_flush = now;
                return std::fflush(stdout) == 0 || failed();
            }
        }
        return true;
    }

    bool finish() { return std::fflush(stdout) == 0 || failed(); }

private:
    static bool failed()
    {
        if (errno == EPIPE) {
            return false; // the reader has gone (`| head -1`): a normal end
        }
        throw std::system_error(errno, std::generic_category(), "write stdout");
    }

    std::optional<std::chrono::steady_clock::duration> m_flush_every;
    std::chrono::steady_clock::time_point m_last_flush = std::chrono::steady_clock::now();
};

SamplingMode parse_mode(const std::string& mode)
{
    if (mode == "grid") {
        return SamplingMode::grid;
    }
    if (mode == "random") {
        return SamplingMode::random;
    }
    return SamplingMode::shuffled_grid;
}

} // namespace

void add_hypersearch_options(CLI::App& app, HypersearchArgs& args)
{
    app.add_option("TEMPLATE", args.request.command_template,
                   "Command with {name} placeholders; {{ and }} are literal braces")
        ->type_name("")
        ->required();
    app.add_option("-p,--parameter", "NAME VALUE...: values of {NAME}; a value may be "
                                     "range:START:STOP[:STEP], linspace:A:B:N, logspace:A:B:N, "
                                     "and in random mode uniform:A:B, loguniform:A:B, randint:A:B")
        ->type_name("NAME VALUE...");
    app.add_option("--sampling-mode", args.mode, "grid, shuffled_grid or random")
        ->check(CLI::IsMember({"grid", "shuffled_grid", "random"}))
        ->type_name("MODE")
        ->capture_default_str();
    app.add_option("-n,--n-samples", args.samples,
                   "Print the first N configurations (random: draw N, independently)")
        ->transform(whole_number_check(1, std::numeric_limits<std::int64_t>::max()))
        ->type_name("N");
    app.add_option("--seed", args.seed, "Seed that makes the output identical on every run")
        ->transform(whole_number_check(0, std::numeric_limits<std::uint64_t>::max()))
        ->type_name("S");
    app.add_flag("--quote", args.request.quote, "Shell-quote every inserted value");
}

namespace {

// Values go into the command as they are: one with a space, a quote or another character
// the shell reads (`run a`, `it's`) becomes more words or a command the shell cannot parse.
// Meant or not, it is said once, with the --quote that makes each value one word.
void warn_of_unquoted_values(
    const std::string& program,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& parameters)
{
    constexpr std::size_t k_named = 3;
    std::vector<std::string> unquoted;
    std::size_t count = 0;
    for (const auto& [name, values] : parameters) {
        for (const auto& value : values) {
            const auto quoted = shell_quote(value);
            if (quoted != value && ++count <= k_named) {
                unquoted.push_back(fmt::format("{}={}", name, quoted));
            }
        }
    }
    if (count == 0) {
        return;
    }
    fmt::print(stderr,
               "{}: {} the shell reads as more than one plain word, inserted as given: {}{}; "
               "--quote inserts each value as one word\n",
               program, count == 1 ? "a value" : fmt::format("{} values", count),
               fmt::join(unquoted, ", "), count > k_named ? ", ..." : "");
}

} // namespace

int run_hypersearch(const std::string& program, std::vector<std::string> args)
{
    HypersearchArgs parsed;
    const auto given = args;
    parsed.request.parameters = take_parameters(args);
    take_trailing_template(program, args, parsed.request.parameters);
    CLI::App app{k_hypersearch_description, program};
    app.formatter(wrapping_formatter());
    app.failure_message(failure_message(given));
    app.footer(fmt::format("Examples:\n"
                           "  {0} 'train.py --lr {{lr}} --bs {{bs}}' -p lr 0.1 0.01 -p bs 32 64\n"
                           "  {0} 'train.py --lr {{lr}}' -p lr logspace:0.0001:0.1:4\n"
                           "  {0} 'train.py --lr {{lr}}' -p lr loguniform:1e-5:1e-1 \\\n"
                           "      --sampling-mode random -n 20 --seed 7\n\n"
                           "The manual: man {1}.",
                           program,
                           program == "simple_hypersearch" ? program : "gpusched-hypersearch"));
    add_hypersearch_options(app, parsed);
    auto& request = parsed.request;
    const auto& mode = parsed.mode;
    const auto& samples = parsed.samples;
    const auto& seed = parsed.seed;

    std::reverse(args.begin(), args.end()); // CLI11 takes a vector in reverse order
    try {
        app.parse(args);
    } catch (const CLI::ParseError& error) {
        const int status = app.exit(error);
        return status == 0 ? k_exit_success : k_exit_usage;
    }

    request.mode = parse_mode(mode);
    request.samples = samples;
    request.seed =
        seed ? *seed : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    const bool seed_chosen = !seed && request.mode != SamplingMode::grid;
    const auto chosen = request.seed;
    if (!request.quote) {
        warn_of_unquoted_values(program, request.parameters);
    }
    const auto search = value_or_usage_error(Hypersearch::create(std::move(request)));
    if (seed_chosen) {
        // A grid's order needs no seed; a random one can be had again with this one.
        fmt::print(stderr, "{}: seed {} (--seed {} gives this order again)\n", program, chosen,
                   chosen);
    }

    // A closed stdout must end the run quietly, with EPIPE, not kill it with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    LineWriter writer;
    bool reader_present = true;
    search.generate([&](std::string_view line) { return reader_present = writer.write(line); });
    if (reader_present) {
        writer.finish();
    }
    return k_exit_success;
}

} // namespace gpusched::cli
