// The examples the documents give to paste into a shell run as written and end as they say:
// each `sh` block of README.md, HACKING.md and docs/ that runs gpusched, and the EXAMPLES of
// each manual page (doc_examples.hpp, with the marks that skip one or type Ctrl-C), runs as
// one bash script in a terminal (job control on, so that `%1` is what it is in the user's
// shell), in a fresh directory, from a fresh queue, against the binary the build made. Each
// must end with status 0, every command in it succeeding (the commands of a pipe too), with
// nothing that bash or gpusched complains of, each job it signals ended by its own exit,
// nothing left running but what it leaves so on purpose (the test stops those), and every
// command it hands to gpusched run.
//
// What this machine lacks has stand-ins: GPUs (GPUSCHED_GPUS names two fake ids), the user's
// programs (`python`, `python3`: scripts that print their arguments), the files the examples
// read (`commands.txt` is examples/commands.txt), and the Redis host `queue-host`: a
// redis-server of the test's (with the password the block gives), and a worker on it unless
// the block starts one, standing for the GPU servers the text speaks of.
#include "doc_examples.hpp"
#include "harness.hpp"
#include "redis_server.hpp"
#include "terminal_shell.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

extern char** environ;

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;

const fs::path k_top = GPUSCHED_SOURCE_DIR;

// A program an example runs that the README's test command installs but this machine lacks.
std::optional<std::string> missing_program(const std::string& script)
{
    for (const auto* program : {"parallel", "curl", "jq"}) {
        const std::regex runs(fmt::format(R"((^|\n|[|;&(])\s*{}\b)", program));
        if (std::regex_search(script, runs) &&
            std::system(fmt::format("command -v {} > /dev/null", program).c_str()) != 0) {
            return program;
        }
    }
    return std::nullopt;
}

// What a submit leaves running, which serves the queue until it is stopped: a worker; and
// the guard of a run, in a session of its own, which ends with its run.
bool ends_with_its_own(pid_t pid)
{
    std::vector<std::string> args;
    std::string name;
    try {
        std::istringstream words(read_file(fmt::format("/proc/{}/cmdline", pid)));
        for (std::string arg; std::getline(words, arg, '\0');) {
            args.push_back(arg);
        }
        name = read_file(fmt::format("/proc/{}/comm", pid));
    } catch (const std::exception&) {
    }
    return (args.size() > 1 && fs::path(args[0]).filename() == "gpusched" && args[1] == "worker") ||
           name == "gpusched-guard\n";
}

std::string described(const std::vector<pid_t>& pids)
{
    std::string text;
    for (const pid_t pid : pids) {
        auto command = read_file(fmt::format("/proc/{}/cmdline", pid)).substr(0, 200);
        std::replace(command.begin(), command.end(), '\0', ' ');
        text += fmt::format(" {} ({})", pid, command);
    }
    return text;
}

// The directory an example runs in, with the files it reads; the stand-ins for python, which
// write down what they ran.
void lay_out(const TempDir& dir, const fs::path& tools)
{
    fs::copy(k_top / "examples", dir / "examples", fs::copy_options::recursive);
    fs::copy(k_top / "examples/commands.txt", dir / "commands.txt");
    std::string sweep;
    for (const auto* lr : {"0.1", "0.05", "0.02", "0.01", "0.005", "0.002", "0.001", "5e-4"}) {
        sweep += fmt::format("examples/fake_train.sh lr={} 0.5\n", lr);
    }
    write_file(dir / "sweep.txt", sweep);
    write_file(dir / "flaky.txt",
               "examples/fake_train.sh lr=0.1 0.2\n"
               "examples/fake_train.sh lr=0.01 0.2 && test -e tried || { touch tried; exit 1; }\n");
    write_file(dir / "smoke.txt", "python train.py --steps 10\npython eval.py --steps 10\n");
    // The guide's commands run from a source tree built in build/.
    fs::create_directories(dir / "build");
    fs::create_directory_symlink(binary().parent_path(), dir / "build/src");
    for (const auto* python : {"python", "python3"}) {
        write_file(tools / python,
                   fmt::format("#!/bin/sh\necho \"{0} $*\" >> '{1}'\necho \"{0} $*\"\n", python,
                               (tools / "ran.log").string()));
        fs::permissions(tools / python, fs::perms::owner_all);
    }
}

// Bash's own lines before the example's: a command that fails says so (its line counted from
// the example's first); and after: its status kept, the jobs it signalled given a while to
// end, and how each job ended, as `jobs` tells it, written down.
std::string as_script(const std::string& example, const std::set<std::string>& signalled,
                      const fs::path& jobs)
{
    return fmt::format("set -o pipefail; trap 'echo \"example: line $((LINENO - 1)): exit status "
                       "$?\" >&2' ERR\n"
                       "{}\n"
                       "example_status=$?\n"
                       "trap - ERR\n"
                       "for example_round in $(seq 100); do\n"
                       "  jobs -r | grep -qE '^\\[({})\\]' || break\n"
                       "  sleep 0.1\n"
                       "done\n"
                       "jobs -l > '{}'\n"
                       "exit $example_status\n",
                       example, fmt::join(signalled, "|"), jobs.string());
}

struct Job {
    std::string number;
    std::vector<pid_t> pids;
    std::string state; // Running, Done, Exit 2, User defined signal 1...
};

// The jobs of `jobs -l`: "[1]+ 2301 Running   gpusched ... &", a pipe's other processes below.
std::vector<Job> jobs_listed(const std::string& listing)
{
    std::vector<Job> jobs;
    const std::regex job(R"(^\[([0-9]+)\][-+ ] +([0-9]+) (.*?)  +.*)");
    const std::regex process(R"(^ +([0-9]+)( .*)?)");
    for (const auto& line : split_lines(listing)) {
        std::smatch match;
        if (std::regex_match(line, match, job)) {
            jobs.push_back({match[1], {std::stoi(match[2])}, match[3]});
        } else if (!jobs.empty() && std::regex_match(line, match, process)) {
            jobs.back().pids.push_back(std::stoi(match[1]));
        }
    }
    return jobs;
}

class ExampleRun {
public:
    explicit ExampleRun(const DocExample& example)
        : m_example(example), m_script(example.script), m_env(environment())
    {
        lay_out(m_dir, m_tools.path());
    }

    void run()
    {
        // Each example on its own: one that could not be set up fails alone, the next run.
        if (!start_what_it_needs()) {
            return;
        }
        type_it();
        check_what_runs_on();
        check_what_it_showed();
    }

private:
    // A fresh user's: no GPU but two fake ids, the build's binary and the stand-ins first on
    // PATH, a home, a state and a lease space of their own, none of the test's GPUSCHED_*.
    std::map<std::string, std::optional<std::string>> environment() const
    {
        std::map<std::string, std::optional<std::string>> env;
        for (char** entry = environ; *entry != nullptr; ++entry) {
            const std::string variable = *entry;
            if (variable.starts_with("GPUSCHED_")) {
                env[variable.substr(0, variable.find('='))] = std::nullopt;
            }
        }
        for (const auto* unset : {"CUDA_VISIBLE_DEVICES", "REDISCLI_AUTH", "BASH_ENV", "ENV"}) {
            env[unset] = std::nullopt;
        }
        env["PATH"] = fmt::format("{}:{}:{}", binary().parent_path().string(),
                                  m_tools.path().string(), std::getenv("PATH"));
        env["HOME"] = m_home.path().string();
        env["GPUSCHED_GPUS"] = "0,1";
        env["GPUSCHED_LOCK_DIR"] = (m_home / "leases").string();
        env["XDG_STATE_HOME"] = (m_home / "state").string();
        env["XDG_CACHE_HOME"] = (m_home / "cache").string();
        env["NO_COLOR"] = "1";
        env["TERM"] = "dumb";
        return env;
    }

    // The Redis host and its workers, a page on a free port, what the text says runs already;
    // false, the failure said, where one did not start.
    bool start_what_it_needs()
    {
        if (m_script.find("redis://queue-host") != std::string::npos) {
            // The password, copied before the script it points into is rewritten.
            std::optional<std::string> password;
            if (std::smatch found;
                std::regex_search(m_script, found, std::regex(R"(REDISCLI_AUTH=(\S+))"))) {
                password = found[1].str();
            }
            m_redis.emplace(password);
            m_script = std::regex_replace(m_script, std::regex("redis://queue-host(:6379)?"),
                                          m_redis->url());
            if (!std::regex_search(m_script, std::regex(R"(gpusched worker --redis)"))) {
                auto env = m_env;
                if (password) {
                    env["REDISCLI_AUTH"] = *password;
                }
                m_worker.emplace(m_worker_dir, LaunchOptions{{"worker", "--redis", m_redis->url()},
                                                             std::nullopt,
                                                             std::nullopt,
                                                             env});
                if (!eventually([&] { return has(m_worker->err_so_far(), " on queue "); })) {
                    ADD_FAILURE() << "the worker did not start: " << m_worker->err_so_far();
                    return false;
                }
            }
        }
        // 8787 may be taken on a machine where tests run side by side: the page listens on a
        // free port, and the addresses the block names are that port's.
        const auto port = std::to_string(free_port());
        const auto on_free_port = [&](std::string text) {
            text = std::regex_replace(text, std::regex(R"(gpusched serve\b)"),
                                      "gpusched serve --listen 127.0.0.1:" + port);
            return std::regex_replace(text, std::regex(R"(127\.0\.0\.1:8787)"),
                                      "127.0.0.1:" + port);
        };
        m_script = on_free_port(m_script);
        for (const auto& command : m_example.running_before()) {
            LaunchOptions options{
                {"-c", "exec " + on_free_port(command)}, std::nullopt, std::nullopt, m_env};
            options.program = "/bin/bash";
            options.cwd = m_dir.path();
            m_before.emplace(m_before_dir, options);
            if (!eventually([&] { return !m_before->err_so_far().empty(); })) {
                ADD_FAILURE() << command << " did not start";
                return false;
            }
        }
        return true;
    }

    // The script in a terminal, Ctrl-C typed where the text says, for up to a minute.
    void type_it()
    {
        const auto interrupts = m_example.interrupted_after();
        write_file(m_tools / "example.sh",
                   as_script(m_script, signalled_jobs(m_script), m_tools / "jobs.txt"));
        m_shell.emplace(
            std::vector<std::string>{"/bin/bash", "-m", (m_tools / "example.sh").string()},
            m_dir.path(), m_env);
        std::size_t seen = 0;
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        while (!(m_finished = m_shell->try_wait())) {
            m_shell->read(20ms);
            if (m_typed < interrupts.size()) {
                const auto at = m_shell->output().find(interrupts[m_typed], seen);
                if (at != std::string::npos) {
                    std::this_thread::sleep_for(100ms); // as a hand on the keyboard would
                    seen = at + interrupts[m_typed].size();
                    ++m_typed;
                    m_shell->type("\x03");
                }
            }
            if (std::chrono::steady_clock::now() > deadline) {
                ADD_FAILURE() << "still running after 60 s";
                m_shell->kill();
            }
        }
        m_shell->read(100ms);
        EXPECT_EQ(m_typed, interrupts.size())
            << "never shown: " << interrupts[std::min(m_typed, interrupts.size() - 1)];
    }

    // Each job the block signalled ended by its own exit; another ended so too, or runs on as
    // the block left it (a worker, a page, a live queue); nothing else runs on but a worker a
    // submit started. What runs on stops when told, and the guards of runs with it.
    void check_what_runs_on()
    {
        const auto listing = m_tools / "jobs.txt";
        const auto signalled = signalled_jobs(m_script);
        std::set<pid_t> running_on; // each job's group: its processes, and those they forked
        for (const auto& job : jobs_listed(fs::exists(listing) ? read_file(listing) : "")) {
            EXPECT_TRUE(job.state == "Done" ||
                        (!signalled.contains(job.number) && job.state == "Running"))
                << "job %" << job.number << ": " << job.state;
            if (job.state == "Running") {
                running_on.insert(job.pids.begin(), job.pids.end());
            }
        }
        const auto ours = [&](pid_t pid) {
            return (m_redis && pid == m_redis->pid()) || (m_worker && pid == m_worker->pid()) ||
                   (m_before && pid == m_before->pid());
        };
        const auto others = [&] {
            std::vector<pid_t> left;
            for (const pid_t pid : leftover_processes()) {
                if (!ours(pid) && !running_on.contains(getpgid(pid)) && !ends_with_its_own(pid)) {
                    left.push_back(pid);
                }
            }
            return left;
        };
        EXPECT_TRUE(eventually(
            [&] {
                m_shell->read(0ms);
                return others().empty();
            },
            10s))
            << "left running:" << described(others());

        for (auto* process : {m_worker ? &*m_worker : nullptr, m_before ? &*m_before : nullptr}) {
            if (process != nullptr) {
                process->signal(SIGTERM);
                process->wait(20s);
            }
        }
        for (const pid_t pid : leftover_processes()) {
            if (!ours(pid)) {
                kill(pid, SIGTERM);
            }
        }
        const auto all_left = [&] {
            auto left = leftover_processes();
            left.erase(std::remove_if(left.begin(), left.end(), ours), left.end());
            return left;
        };
        EXPECT_TRUE(eventually(
            [&] {
                m_shell->read(0ms);
                return all_left().empty();
            },
            20s))
            << "still running after SIGTERM:" << described(all_left());
    }

    // Status 0 (130 where Ctrl-C was typed), every command's too; no complaint; each command
    // handed over run.
    void check_what_it_showed()
    {
        const auto& output = m_shell->output();
        SCOPED_TRACE(fmt::format("the terminal showed:\n{}", output));
        const bool interrupted = m_typed > 0;
        EXPECT_TRUE(m_finished->exit_status == 0 || (interrupted && m_finished->exit_status == 130))
            << "exit status " << m_finished->exit_status << ", signal " << m_finished->signal;
        const std::regex failed(R"(example: line ([0-9]+): exit status ([0-9]+))");
        const auto lines = split_lines(m_example.script);
        for (auto it = std::sregex_iterator(output.begin(), output.end(), failed);
             it != std::sregex_iterator(); ++it) {
            const auto line = std::stoul((*it)[1]);
            EXPECT_TRUE(interrupted && (*it)[2] == "130")
                << it->str() << ": " << (line >= 1 && line <= lines.size() ? lines[line - 1] : "");
        }
        // A missing file is the example's fault, but for the driver's libraries: this machine
        // has no GPU, and gpusched says so as it would on any such machine.
        const auto shown = std::regex_replace(
            output, std::regex("cannot open shared object file: No such file"), "");
        for (const auto* complaint : {"command not found", ": not found", "No such file",
                                      "gpusched: error", "example.sh: line"}) {
            EXPECT_EQ(shown.find(complaint), std::string::npos) << "shows \"" << complaint << '"';
        }
        const auto ran = fs::exists(m_tools / "ran.log")
                             ? split_lines(read_file(m_tools / "ran.log"))
                             : std::vector<std::string>{};
        for (const auto& command : handed_over(m_script)) {
            EXPECT_NE(std::find(ran.begin(), ran.end(), command), ran.end())
                << "never ran: " << command;
        }
    }

    const DocExample& m_example;
    TempDir m_dir;   // where it runs
    TempDir m_home;  // $HOME
    TempDir m_tools; // the stand-ins, the script
    std::string m_script;
    std::map<std::string, std::optional<std::string>> m_env;
    std::optional<RedisServer> m_redis;
    TempDir m_worker_dir;
    std::optional<Process> m_worker;
    TempDir m_before_dir;
    std::optional<Process> m_before;
    std::optional<TerminalShell> m_shell;
    std::optional<Finished> m_finished;
    std::size_t m_typed = 0;
};

TEST(Docs, EveryExampleRunsAsWritten)
{
    adopt_orphans();
    std::vector<std::string> pages = {"README.md", "HACKING.md"};
    std::vector<std::string> manuals;
    for (const auto& entry : fs::recursive_directory_iterator(k_top / "docs")) {
        if (entry.path().extension() == ".md") {
            pages.push_back(entry.path().lexically_relative(k_top));
        }
    }
    for (const auto& entry : fs::directory_iterator(k_top / "man")) {
        if (entry.path().string().ends_with(".1.in")) {
            manuals.push_back(entry.path().lexically_relative(k_top));
        }
    }
    std::sort(pages.begin() + 2, pages.end());
    std::sort(manuals.begin(), manuals.end());
    std::vector<DocExample> examples;
    for (const auto& page : pages) {
        const auto found = markdown_examples(k_top, page);
        examples.insert(examples.end(), found.begin(), found.end());
    }
    for (const auto& manual : manuals) {
        examples.push_back(manual_examples(k_top, manual));
    }
    std::size_t ran = 0;
    for (const auto& example : examples) {
        if (example.skipped()) {
            continue;
        }
        if (const auto program = missing_program(example.script)) {
            std::cout << example.where << ": not run, " << *program << " is not installed\n";
            continue;
        }
        SCOPED_TRACE(fmt::format("{}:\n{}", example.where, example.script));
        const auto start = std::chrono::steady_clock::now();
        ExampleRun(example).run();
        stop_leftovers();
        ++ran;
        std::cout << fmt::format(
            "{}: ran in {:.1f} s\n", example.where,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    EXPECT_GE(ran, 20u) << "of " << examples.size();
}

} // namespace
} // namespace gpusched::testing
