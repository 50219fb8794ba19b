#include "cli.hpp"

#include "command_line_errors.hpp"
#include "complete_jobs_command.hpp"
#include "exec_command.hpp"
#include "gpus_command.hpp"
#include "completion.hpp"
#include "help_format.hpp"
#include "job_commands.hpp"
#include "manual.hpp"
#include "queue_command.hpp"
#include "workers_command.hpp"
#include "hypersearch_command.hpp"
#include "report_command.hpp"
#include "run_command.hpp"
#include "serve_command.hpp"
#include "status_command.hpp"
#include "submit_command.hpp"
#include "worker_command.hpp"

#include <gpusched/errors.hpp>
#include <gpusched/log_pattern.hpp>
#include <gpusched/exit_status.hpp>
#include <gpusched/sys/probe_child.hpp>
#include <gpusched/sys/standard_streams.hpp>
#include <gpusched/sys/stderr_log.hpp>
#include <gpusched/version.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

namespace gpusched::cli {
namespace {

// The log goes to stderr, one line per event, written at once and never blocking; stdout
// belongs to the jobs. Warnings and errors are coloured on a terminal, never when NO_COLOR is
// set (no-color.org).
void set_up_log()
{
    const bool colour = isatty(STDERR_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
    auto sink = std::make_shared<sys::StderrSink>(colour);
    auto logger = std::make_shared<spdlog::logger>("gpusched", std::move(sink));
    logger->set_pattern(colour ? k_coloured_log_pattern : k_log_pattern);
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
}

int write_file(const std::string& path, const std::string& text)
{
    std::ofstream out(path);
    out << text;
    if (!out.flush()) {
        throw UsageError(fmt::format("cannot write {}", path));
    }
    return k_exit_success;
}

int write_manual(const CLI::App& app, const std::string& template_path,
                 const std::string& output_path, const std::string& date)
{
    std::ifstream in(template_path);
    if (!in) {
        throw UsageError(fmt::format("cannot read {}", template_path));
    }
    std::ostringstream text;
    text << in.rdbuf();
    return write_file(output_path, render_manual(app, text.str(), date));
}

std::string version_text()
{
    const std::string cuda =
        *k_cuda_version != '\0'
            ? fmt::format("CUDA support: yes (CUDA runtime {}, linked statically)", k_cuda_version)
            : "CUDA support: no (built without the CUDA toolkit: name GPUs with --gpus)";
    return fmt::format("gpusched {} (commit {})\n{}", k_version, k_git_commit, cuda);
}

// A subcommand is named by the first argument or not at all: a FILE that happens to be
// called `report` later on (gpusched -- report, gpusched --gpus 0 report) is a FILE, which
// CLI11 alone would take for the subcommand.
bool only_files_named_like_subcommands(const CLI::App& app, int argc, char** argv)
{
    const auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
    const auto is_subcommand = [&](const char* arg) {
        return std::any_of(subcommands.begin(), subcommands.end(),
                           [&](const CLI::App* sub) { return sub->get_name() == arg; });
    };
    return argc > 1 && !is_subcommand(argv[1]) && std::any_of(argv + 2, argv + argc, is_subcommand);
}

// Examples, the exit statuses (the same table as the manual's) and where the
// manual is: what a new user looks for at the end of --help.
std::string main_footer(const std::string& program)
{
    return fmt::format(
        R"(Examples:
  {0} --gpus 0,1 commands.txt      # each line on GPU 0 or 1, once free
  {0} --gpus 0-3 --timeout 2h --retries 1 --joblog runs.log commands.txt
  {0} hypersearch './train.py --lr {{lr}}' -p lr 0.1 0.01 | {0} -g 0,1
  {0} exec -n 2 -- python train.py # wait for 2 free GPUs, run it there
  {0} report runs.log              # failures and GPU use, from a --joblog

Exit status:
  0      every job succeeded
  1-100  that many jobs failed (101: more than 100)
  128+N  stopped by signal N
  255    a usage or system error (never a count)
  exec   its command's status; 75 no GPU free in time; 126, 127 cannot run it

The manual: man gpusched, and man gpusched-COMMAND for each command (in the
source tree: man build/man/gpusched.1, build/man/gpusched-submit.1, ...).)",
        program);
}

int run(int argc, char** argv)
{
    // `gpusched help [SUBCOMMAND]`, as git and cargo have it: that help, and never a run of a
    // file named `help` (which `gpusched ./help` still runs), nor a look for GPUs.
    std::vector<std::string> help_words;
    std::vector<char*> help_argv;
    if (argc > 1 && std::string_view(argv[1]) == "help") {
        help_words.assign(argv, argv + std::min(argc, 3));
        help_words.erase(help_words.begin() + 1);
        help_words.emplace_back("--help");
        for (auto& word : help_words) {
            help_argv.push_back(word.data());
        }
        help_argv.push_back(nullptr);
        argc = static_cast<int>(help_words.size());
        argv = help_argv.data();
    }
    // Internal, for the completion scripts: answered before the parser of every command is
    // built, within a keystroke.
    if (argc > 1 && argv[1] == k_complete_jobs_command) {
        return run_complete_jobs({argv + 2, argv + argc});
    }
    // Invoked as simple_hypersearch, or as `gpusched hypersearch`: the generator, whose -p
    // values CLI11 must not see as options, so it is routed before the main parser runs.
    const std::string& program = program_name();
    if (program == "simple_hypersearch") {
        return run_hypersearch(program, {argv + 1, argv + argc});
    }
    if (argc > 1 && std::string_view(argv[1]) == "hypersearch") {
        return run_hypersearch(program + " hypersearch", {argv + 2, argv + argc});
    }

    CLI::App app{"gpusched: run each line of the input as a shell command on a free GPU", program};
    app.formatter(wrapping_formatter());
    app.failure_message(failure_message({argv + std::min(argc, 1), argv + argc}));
    app.set_version_flag("-V,--version", version_text());
    app.get_help_ptr()->group(k_other_group);
    app.get_version_ptr()->group(k_other_group);

    RunOptions run_options;
    add_run_options(app, run_options);
    HypersearchArgs hypersearch_args;
    add_hypersearch_options(*app.add_subcommand("hypersearch", k_hypersearch_description),
                            hypersearch_args);

    ReportOptions report_options;
    auto* report = add_report_command(app, report_options);
    GpusOptions gpus_options;
    auto* gpus = add_gpus_command(app, gpus_options);
    ExecOptions exec_options;
    auto* exec = add_exec_command(app, exec_options);
    StatusOptions status_options;
    auto* status_command = add_status_command(app, status_options);
    SubmitOptions submit_options;
    auto* submit = add_submit_command(app, submit_options);
    WorkerOptions worker_options;
    auto* worker = add_worker_command(app, worker_options);
    QueueCommandOptions queue_options;
    auto* queue = add_queue_command(app, queue_options);
    WorkersOptions workers_options;
    auto* workers = add_workers_command(app, workers_options);
    ServeOptions serve_options;
    auto* serve = add_serve_command(app, serve_options);
    JobCommandOptions job_options;
    const auto job_commands = add_job_commands(app, job_options);

    // Each subcommand's help ends with where its manual page is.
    for (auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        auto footer = sub->get_footer();
        while (footer.ends_with('\n')) {
            footer.pop_back();
        }
        sub->footer(fmt::format("{}{}The manual: man gpusched-{}.", footer,
                                footer.empty() ? "" : "\n\n", sub->get_name()));
    }
    // After the subcommands, which would inherit it.
    app.footer(main_footer(program));

    // Internal: the short-lived children that load CUDA and NVML so the scheduler never does.
    auto* probe = app.add_subcommand("__probe-cuda", "")->group("");
    std::vector<std::string> usage_ids;
    auto* usage = app.add_subcommand("__probe-usage", "")->group("");
    usage->add_option("ID", usage_ids);
    // Internal, for the build: the manual page, generated from these very definitions.
    std::string manual_template;
    std::string manual_output;
    auto* manual = app.add_subcommand("__manual", "")->group("");
    manual->add_option("TEMPLATE", manual_template)->required();
    manual->add_option("OUTPUT", manual_output)->required();
    std::string manual_date;
    manual->add_option("DATE", manual_date);
    std::string completion_shell;
    std::string completion_output;
    auto* completion = app.add_subcommand("__completion", "")->group("");
    completion->add_option("SHELL", completion_shell)->required();
    completion->add_option("OUTPUT", completion_output)->required();
    std::string completion_program = "gpusched";
    completion->add_option("PROGRAM", completion_program);

    // Removing the subcommands destroys them: only the main command is looked at after that.
    const bool run_only = only_files_named_like_subcommands(app, argc, argv);
    if (run_only) {
        for (auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
            app.remove_subcommand(sub);
        }
    }
    std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
    if (!run_only) {
        check_subcommand_name(app, args);
    }
    if (!run_only && !args.empty() && args.front() == submit->get_name()) {
        take_submitted_command(args, submit_options.command);
    }
    if (!run_only && !args.empty() && args.front() == exec->get_name()) {
        auto exec_args = end_gpu_ids(*exec, {args.begin() + 1, args.end()});
        exec_args.insert(exec_args.begin(), args.front());
        args = std::move(exec_args);
    }
    std::reverse(args.begin(), args.end()); // CLI11 takes them last first
    try {
        app.parse(args);
    } catch (const CLI::ParseError& error) {
        const int status = app.exit(error);
        return status == 0 ? k_exit_success : k_exit_usage;
    }
    if (run_only) {
        return run_scheduler(run_options);
    }
    if (*probe) {
        return sys::print_cuda_inventory();
    }
    if (*usage) {
        return sys::print_gpu_usage(usage_ids);
    }
    if (*manual) {
        return write_manual(app, manual_template, manual_output, manual_date);
    }
    if (*completion) {
        return write_file(completion_output,
                          render_completion(app, completion_shell, completion_program));
    }
    if (*report) {
        return run_report(report_options);
    }
    if (*gpus) {
        return run_gpus(gpus_options);
    }
    if (*exec) {
        return run_exec(exec_options);
    }
    if (*status_command) {
        return run_status(status_options);
    }
    if (*submit) {
        return run_submit(submit_options);
    }
    if (*worker) {
        return run_worker(std::move(worker_options));
    }
    if (*queue) {
        return run_queue(queue_options);
    }
    if (*workers) {
        return run_workers(workers_options);
    }
    if (*serve) {
        return run_serve(serve_options);
    }
    if (const auto status = run_job_command(job_commands, job_options)) {
        return *status;
    }
    return run_scheduler(run_options);
}

} // namespace

int main(int argc, char** argv)
{
    sys::prepare_standard_streams();
    set_program_name(argc > 0 ? argv[0] : "gpusched");
    try {
        set_up_log();
        return run(argc, argv);
    } catch (const Interrupted& stop) {
        return exit_status_for_signal(stop.signal());
    } catch (const UsageError& error) {
        fmt::print(stderr, "{}: error: {}\n", program_name(), error.what());
        return k_exit_usage;
    } catch (const std::exception& error) {
        fmt::print(stderr, "{}: error: {}\n", program_name(), error.what());
        return k_exit_fatal;
    }
}

} // namespace gpusched::cli
