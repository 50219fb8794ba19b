// The documentation checked against the software, as help_test checks --help: every link
// between the Markdown files resolves (to a file, and to a heading where it names one), every
// option a `gpusched` command line in them names exists for that command, and the guide's
// tutorial runs as shown (its console blocks run in order, each output line it shows found
// in what the command printed, once times, numbers and names are set aside).
#include "harness.hpp"
#include "queue_fixture.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace gpusched::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

const fs::path k_source = GPUSCHED_SOURCE_DIR;

std::vector<fs::path> markdown_files()
{
    std::vector<fs::path> files = {k_source / "README.md", k_source / "HACKING.md"};
    for (const auto& entry : fs::recursive_directory_iterator(k_source / "docs")) {
        if (entry.path().extension() == ".md") {
            files.push_back(entry.path());
        }
    }
    return files;
}

// GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces as
// '-'.
std::string anchor_of(const std::string& heading)
{
    std::string anchor;
    for (const char c : heading) {
        if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_') {
            anchor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (c == ' ') {
            anchor += '-';
        }
    }
    return anchor;
}

// The headings' anchors of a Markdown file (outside code blocks).
std::set<std::string> anchors_of(const fs::path& file)
{
    std::set<std::string> anchors;
    bool in_code = false;
    for (const auto& line : split_lines(read_file(file))) {
        if (line.starts_with("```")) {
            in_code = !in_code;
        } else if (!in_code && line.starts_with("#")) {
            const auto text = line.substr(line.find_first_not_of('#'));
            anchors.insert(anchor_of(text.substr(text.find_first_not_of(' '))));
        }
    }
    return anchors;
}

// The text of a Markdown file outside its code blocks and code spans, where links are.
std::string prose_of(const fs::path& file)
{
    std::string prose;
    bool in_code = false;
    for (const auto& line : split_lines(read_file(file))) {
        if (line.starts_with("```")) {
            in_code = !in_code;
        } else if (!in_code) {
            prose += std::regex_replace(line, std::regex("`[^`]*`"), "``") + "\n";
        }
    }
    return prose;
}

TEST(Docs, EveryLinkBetweenTheFilesResolves)
{
    const std::regex link(R"(\]\(([^)\s]+)\))");
    std::size_t checked = 0;
    for (const auto& file : markdown_files()) {
        ASSERT_TRUE(fs::exists(file)) << file;
        const auto prose = prose_of(file);
        for (auto it = std::sregex_iterator(prose.begin(), prose.end(), link);
             it != std::sregex_iterator(); ++it) {
            const std::string target = (*it)[1];
            if (target.starts_with("http://") || target.starts_with("https://") ||
                target.starts_with("mailto:")) {
                continue;
            }
            ++checked;
            const auto hash = target.find('#');
            const auto path_part = target.substr(0, hash);
            const auto resolved =
                path_part.empty() ? file : (file.parent_path() / path_part).lexically_normal();
            EXPECT_TRUE(fs::exists(resolved)) << file.lexically_relative(k_source) << " links to "
                                              << target << ", which does not exist";
            if (hash != std::string::npos && resolved.extension() == ".md" &&
                fs::exists(resolved)) {
                const auto anchor = target.substr(hash + 1);
                EXPECT_TRUE(anchors_of(resolved).contains(anchor))
                    << file.lexically_relative(k_source) << " links to " << target
                    << ": no heading makes #" << anchor;
            }
        }
    }
    EXPECT_GT(checked, 40u) << "the files link to each other";
}

// The options each command takes, read from its --help.
class Options {
public:
    const std::set<std::string>& of(const std::string& subcommand)
    {
        auto [found, added] = m_options.try_emplace(subcommand);
        if (added) {
            TempDir dir;
            std::vector<std::string> args;
            if (!subcommand.empty()) {
                args.push_back(subcommand);
            }
            args.push_back("--help");
            const auto help = run(dir, {args});
            EXPECT_EQ(help.exit_status, 0) << subcommand << ": " << help.err;
            const std::regex option(R"(--[a-z][a-z0-9-]*)");
            for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), option);
                 it != std::sregex_iterator(); ++it) {
                found->second.insert(it->str());
            }
        }
        return found->second;
    }

private:
    std::map<std::string, std::set<std::string>> m_options;
};

const std::set<std::string> k_subcommands = {"hypersearch", "report", "gpus",  "exec",    "status",
                                             "submit",      "worker", "queue", "workers", "cancel",
                                             "pause",       "resume", "retry", "logs",    "wait",
                                             "serve"};

// The options of each `gpusched ...` command line in `text`: (subcommand, option) pairs, up
// to where the command ends (`--` before a job's own command, a pipe, `;`, `&&`).
std::vector<std::pair<std::string, std::string>> options_named(const std::string& text)
{
    std::vector<std::pair<std::string, std::string>> named;
    const std::regex command(R"((?:^|[\s`(|$])gpusched((?: +[^\s|;&`)]+)*))");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), command);
         it != std::sregex_iterator(); ++it) {
        std::istringstream words((*it)[1].str());
        std::string word;
        std::string subcommand;
        bool first = true;
        while (words >> word) {
            if (word == "--" || word.starts_with("\"") || word.starts_with("'")) {
                break;
            }
            if (first && k_subcommands.contains(word)) {
                subcommand = word;
            } else if (word.starts_with("--") && word.size() > 2) {
                named.emplace_back(subcommand, word.substr(0, word.find('=')));
            }
            first = false;
        }
    }
    return named;
}

TEST(Docs, EveryOptionACommandLineNamesExists)
{
    Options options;
    std::size_t checked = 0;
    for (const auto& file : markdown_files()) {
        const auto lines = split_lines(read_file(file));
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const auto& line = lines[i];
            // A command shown failing for its unknown option is that error's example.
            if (i + 1 < lines.size() &&
                lines[i + 1].find("error: unknown option") != std::string::npos) {
                continue;
            }
            for (const auto& [subcommand, option] : options_named(line)) {
                ++checked;
                EXPECT_TRUE(options.of(subcommand).contains(option))
                    << file.lexically_relative(k_source) << ": `gpusched "
                    << (subcommand.empty() ? "" : subcommand + " ") << option
                    << "` is not an option of it:\n"
                    << line;
            }
        }
    }
    EXPECT_GT(checked, 100u);
}

// The manual is the reference: every variable the binary reads from the environment (as
// `--help` names them) is under its ENVIRONMENT, and so is every GPUSCHED_ variable the
// documents name that the program reads (those only tests read, such as the fake driver's,
// are not the user's).
TEST(Docs, TheManualListsEveryVariable)
{
    const auto manual = read_file(GPUSCHED_MANUAL);
    const auto environment_at = manual.find(".SH ENVIRONMENT");
    ASSERT_NE(environment_at, std::string::npos);
    const auto environment =
        manual.substr(environment_at, manual.find(".SH EXIT STATUS") - environment_at);
    const std::regex variable(R"(GPUSCHED_[A-Z_]+)");
    const std::regex env_of_option(R"(Env:(GPUSCHED_[A-Z_]+))");
    std::set<std::string> read_by_options;
    std::vector<std::vector<std::string>> helps = {{"--help"}};
    for (const auto& subcommand : k_subcommands) {
        helps.push_back({subcommand, "--help"});
    }
    for (const auto& args : helps) {
        TempDir dir;
        const auto help = run(dir, {args});
        for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), env_of_option);
             it != std::sregex_iterator(); ++it) {
            read_by_options.insert((*it)[1]);
        }
    }
    EXPECT_GT(read_by_options.size(), 10u);
    for (const auto& name : read_by_options) {
        EXPECT_NE(environment.find(name), std::string::npos) << name << " is not under ENVIRONMENT";
    }
    for (const auto& file : markdown_files()) {
        const auto text = read_file(file);
        for (auto it = std::sregex_iterator(text.begin(), text.end(), variable);
             it != std::sregex_iterator(); ++it) {
            const auto name = it->str();
            const auto grep = std::system(fmt::format("grep -rqw {} '{}/src' '{}/include'", name,
                                                      k_source.string(), k_source.string())
                                              .c_str());
            if (grep == 0) {
                EXPECT_NE(manual.find(name), std::string::npos)
                    << file.lexically_relative(k_source) << " names " << name
                    << ", which the manual does not";
            }
        }
    }
}

// A console block of the guide: its commands, each with the lines it is shown printing.
struct ShownCommand {
    std::string command;
    std::vector<std::string> shown;
};
struct ConsoleBlock {
    std::string marker; // the <!-- guide-test: ... --> before it, if any
    std::vector<ShownCommand> commands;
};

std::vector<ConsoleBlock> console_blocks(const std::string& guide,
                                         std::map<std::string, std::string>& files)
{
    std::vector<ConsoleBlock> blocks;
    std::string marker;
    std::string file_name;
    std::string file_text;
    enum class In { prose, console, file, other } in = In::prose;
    for (const auto& line : split_lines(guide)) {
        if (in == In::prose) {
            std::smatch match;
            if (std::regex_match(line, match, std::regex(R"(<!-- guide-test: (.*) -->)"))) {
                marker = match[1];
            } else if (std::regex_match(line, match, std::regex(R"(<!-- guide-file: (\S+) -->)"))) {
                file_name = match[1];
            } else if (line == "```console") {
                in = In::console;
                blocks.push_back({marker, {}});
                marker.clear();
            } else if (line.starts_with("```")) {
                in = file_name.empty() ? In::other : In::file;
            } else if (!line.empty()) {
                marker.clear();
            }
        } else if (line == "```") {
            if (in == In::file) {
                files[file_name] = file_text;
                file_name.clear();
                file_text.clear();
            }
            in = In::prose;
        } else if (in == In::console) {
            if (line.starts_with("$ ")) {
                blocks.back().commands.push_back({line.substr(2), {}});
            } else if (!blocks.back().commands.empty()) {
                blocks.back().commands.back().shown.push_back(line);
            }
        } else if (in == In::file) {
            file_text += line + "\n";
        }
    }
    return blocks;
}

// A line as compared: times, numbers and runs of blanks set aside.
std::string shape_of(std::string line)
{
    line = std::regex_replace(line, std::regex("[0-9]+"), "N");
    line = std::regex_replace(line, std::regex("[ \t]+"), " ");
    const auto end = line.find_last_not_of(' ');
    return end == std::string::npos ? "" : line.substr(0, end + 1);
}

std::string user_name()
{
    const passwd* entry = getpwuid(getuid());
    return entry != nullptr ? entry->pw_name : "root";
}

std::string host_name()
{
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    return name;
}

// The shown lines missing from what the command printed.
std::vector<std::string> missing_lines(const std::vector<std::string>& shown,
                                       const std::string& printed,
                                       const std::map<std::string, std::string>& names)
{
    std::set<std::string> actual;
    for (const auto& line : split_lines(printed)) {
        actual.insert(shape_of(line));
    }
    std::vector<std::string> missing;
    for (auto line : shown) {
        if (line.starts_with("^C")) {
            line = line.substr(2);
        }
        for (const auto& [from, to] : names) {
            line = std::regex_replace(line, std::regex(from), to);
        }
        if (!shape_of(line).empty() && !actual.contains(shape_of(line))) {
            missing.push_back(line);
        }
    }
    return missing;
}

TEST(Docs, TheGuidesTutorialRunsAsShown)
{
    adopt_orphans();
    std::map<std::string, std::string> files;
    const auto blocks = console_blocks(read_file(k_source / "docs/guide.md"), files);
    ASSERT_TRUE(files.contains("train.sh") && files.contains("sweep.txt"));
    ASSERT_GE(blocks.size(), 6u);

    TempDir dir;
    write_file(dir / "train.sh", files["train.sh"]);
    fs::permissions(dir / "train.sh", fs::perms::owner_all);
    write_file(dir / "sweep.txt", files["sweep.txt"]);
    const auto binary_dir = binary().parent_path().string();
    const std::map<std::string, std::optional<std::string>> env = {
        {"PATH", binary_dir + ":" + std::getenv("PATH")},
        {"GPUSCHED_GPUS", "0,1"},
        {"GPUSCHED_LOCK_DIR", (dir / "leases").string()},
        {"XDG_STATE_HOME", (dir / "state").string()},
        {"XDG_CACHE_HOME", (dir / "cache").string()},
        {"NO_COLOR", "1"}};
    // What the guide shows of the machine it ran on, as this one says it.
    const std::map<std::string, std::string> names = {
        {"/home/ann/\\.local/state", (dir / "state").string()},
        {"/home/ann/proj", dir.path().string()},
        {"gpu-node-3", host_name()},
        {"\\b(ann|bob)\\b", user_name()}};
    // Listings show what has happened by the time they run: they are asked again, for a
    // while, until they show it.
    const auto is_listing = [](const std::string& command) {
        return command.starts_with("gpusched queue") || command.starts_with("gpusched logs") ||
               command.starts_with("gpusched status");
    };

    std::size_t ran = 0;
    for (const auto& block : blocks) {
        if (block.marker.starts_with("skip")) {
            continue;
        }
        for (std::size_t i = 0; i < block.commands.size(); ++i) {
            const auto& [command, shown] = block.commands[i];
            if (command == "echo $?") {
                continue; // checked with the command before it
            }
            SCOPED_TRACE(command);
            ++ran;
            std::smatch interrupt;
            const std::string& marker = block.marker;
            const bool interrupted =
                std::regex_match(marker, interrupt, std::regex(R"re(sigint-when "(.*)")re"));
            LaunchOptions options{
                {"-c", (interrupted ? "exec " : "") + command}, std::nullopt, std::nullopt, env};
            options.program = "/bin/sh";
            options.cwd = dir.path();
            Finished finished;
            std::vector<std::string> missing;
            const auto deadline = std::chrono::steady_clock::now() + 15s;
            while (true) {
                Process process(dir, options);
                if (interrupted) {
                    const std::string awaited = interrupt[1];
                    EXPECT_TRUE(eventually([&] {
                        return process.err_so_far().find(awaited) != std::string::npos;
                    })) << process.err_so_far();
                    process.signal(SIGINT);
                }
                finished = process.wait(60s);
                missing = missing_lines(shown, finished.out + finished.err, names);
                if (missing.empty() || !is_listing(command) ||
                    std::chrono::steady_clock::now() > deadline) {
                    break;
                }
                std::this_thread::sleep_for(200ms);
            }
            EXPECT_TRUE(missing.empty()) << "shown in the guide, not printed:\n"
                                         << join_lines(missing) << "printed:\n"
                                         << finished.out << finished.err;
            // The status the guide shows with `echo $?` after it; else success.
            const bool status_shown =
                i + 1 < block.commands.size() && block.commands[i + 1].command == "echo $?";
            const auto expected = status_shown && !block.commands[i + 1].shown.empty()
                                      ? block.commands[i + 1].shown[0]
                                      : std::string("0");
            EXPECT_EQ(std::to_string(finished.exit_status), expected);
        }
    }
    EXPECT_GE(ran, 10u);

    // The workers the tutorial's `submit` started end with it.
    const auto workers = run(dir, {{"workers", "--json"}, std::nullopt, std::nullopt, env});
    for (const auto& worker : json_field(workers.out, "workers")) {
        kill(worker["pid"].get<pid_t>(), SIGTERM);
    }
    stop_leftovers();
}

// The backticked names of a Markdown file, code blocks left out, with where each begins (the
// paragraph's text with its line breaks as spaces, so that a name and its file may be on two
// lines).
struct Named {
    std::string name;
    std::string after; // the text after it, up to the next backtick
    std::string next;  // the backticked name that follows, if any
};

std::vector<Named> backticked_names(const fs::path& file)
{
    std::string text;
    bool in_code = false;
    for (const auto& line : split_lines(read_file(file))) {
        if (line.starts_with("```")) {
            in_code = !in_code;
            text += "\n\n";
        } else if (!in_code) {
            text += line.empty() ? "\n\n" : line + " ";
        }
    }
    std::vector<Named> names;
    // ``A `B` C`` spans are left out: they quote backticks.
    text = std::regex_replace(text, std::regex("``[^`]*``"), "");
    const std::regex span("`([^`\n]+)`");
    std::vector<std::pair<std::string, std::size_t>> spans; // name, end
    std::vector<std::size_t> starts;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), span);
         it != std::sregex_iterator(); ++it) {
        spans.emplace_back((*it)[1], it->position() + it->length());
        starts.push_back(it->position());
    }
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const auto end = spans[i].second;
        const auto next_start = i + 1 < spans.size() ? starts[i + 1] : text.size();
        names.push_back({spans[i].first, text.substr(end, next_start - end),
                         i + 1 < spans.size() ? spans[i + 1].first : ""});
    }
    return names;
}

// Every file of the repository, by its path from the top (build directories left out).
std::vector<std::string> repository_files()
{
    std::vector<std::string> files;
    for (const auto* top : {"src", "include", "tests", "cmake", "bench", "docs", "examples"}) {
        for (const auto& entry : fs::recursive_directory_iterator(k_source / top)) {
            if (entry.is_regular_file()) {
                files.push_back(entry.path().lexically_relative(k_source).string());
            }
        }
    }
    return files;
}

const std::set<std::string> k_tops = {"src", "include", "tests", "cmake", "bench", "docs"};

// A name that stands for a path: `src/...` (and the other tops), or a source file named
// without its directories (`sys/probe_child.cpp`, `queue_worker.cpp`). Placeholders (`NAME`,
// `*`, `...`) and what a build makes are no path of the repository.
bool is_path_name(const std::string& name)
{
    if (!std::regex_match(name, std::regex(R"([A-Za-z0-9_./+-]+)")) ||
        name.find("..") != std::string::npos ||
        std::regex_search(name, std::regex("(^|/)[A-Z][A-Z_]+([./]|$)"))) {
        return false;
    }
    const auto top = name.substr(0, name.find('/'));
    if (name.find('/') != std::string::npos && k_tops.contains(top)) {
        return true;
    }
    return std::regex_match(name, std::regex(R"(([a-z0-9_]+/)*[a-z0-9_]+\.(cpp|hpp))"));
}

// The repository's files a path name can mean: itself, or those whose path ends with it.
std::vector<std::string> files_named(const std::string& name, const std::vector<std::string>& files)
{
    std::vector<std::string> found;
    const auto bare = name.back() == '/' ? name.substr(0, name.size() - 1) : name;
    if (k_tops.contains(bare.substr(0, bare.find('/'))) &&
        (bare.find('/') != std::string::npos || name.back() == '/')) {
        if (fs::exists(k_source / bare)) {
            found.push_back(bare);
        }
        return found;
    }
    for (const auto& file : files) {
        if (file.ends_with("/" + bare)) {
            found.push_back(file);
        }
    }
    return found;
}

// A name that stands for something in the code: `Name::member`, `Name::member()`, a
// `function_name` or a `ClassName`. Namespaces are left out (`sys::JobRunner`: `JobRunner`).
std::optional<std::string> symbol_of(std::string name)
{
    if (name.ends_with("()")) {
        name.resize(name.size() - 2);
    }
    name = std::regex_replace(name, std::regex(R"(^((gpusched|sys|queue|gpu|cli|web)::)+)"), "");
    const std::regex identifier(R"([A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_~][A-Za-z0-9_]*)?)");
    const bool member = name.find("::") != std::string::npos;
    const bool function = std::regex_match(name, std::regex(R"([a-z][a-z0-9]*(_[a-z0-9]+)+)"));
    const bool type = std::regex_match(name, std::regex(R"([A-Z][a-z0-9]+([A-Z][a-z0-9]*)+)"));
    if (!std::regex_match(name, identifier) || !(member || function || type)) {
        return std::nullopt;
    }
    return name;
}

bool occurs_as_word(const std::string& text, const std::string& word)
{
    return std::regex_search(text, std::regex("(^|[^A-Za-z0-9_])" + word + "($|[^A-Za-z0-9_])"));
}

// `Name::member` occurs in a file as written, or as its member where the file names the class
// (a member defined in a class's body, or called on one).
bool defines_or_names(const std::string& text, const std::string& symbol)
{
    const auto colons = symbol.find("::");
    if (colons == std::string::npos) {
        return occurs_as_word(text, symbol);
    }
    return text.find(symbol) != std::string::npos ||
           (occurs_as_word(text, symbol.substr(0, colons)) &&
            occurs_as_word(text, symbol.substr(colons + 2)));
}

// The docs for people who change the code name files and what is in them: each path they name
// exists, and each function or class they name with its file ("`run_jobs`
// (`src/cli/run_command.cpp`)", "`take_leases`, `sys/job_runner_leases.cpp`", "`main` in
// `src/cli/cli.cpp`") occurs in that file.
TEST(Docs, EverySourcePathAndSymbolTheyNameExists)
{
    const auto files = repository_files();
    std::size_t paths = 0;
    std::size_t symbols = 0;
    for (const auto& file : markdown_files()) {
        const auto where = file.lexically_relative(k_source).string();
        for (const auto& [name, after, next] : backticked_names(file)) {
            if (is_path_name(name)) {
                ++paths;
                EXPECT_FALSE(files_named(name, files).empty())
                    << where << " names `" << name << "`, which is no file of the repository";
                continue;
            }
            const auto symbol = symbol_of(name);
            if (!symbol || !is_path_name(next) ||
                !std::regex_match(after, std::regex(R"(\s*(\(|,|\)?\s*\|)?\s*(in\s+)?)"))) {
                continue;
            }
            const auto candidates = files_named(next, files);
            if (candidates.empty() || fs::is_directory(k_source / candidates.front())) {
                continue; // said above
            }
            ++symbols;
            EXPECT_TRUE(std::any_of(candidates.begin(), candidates.end(),
                                    [&](const auto& path) {
                                        return defines_or_names(read_file(k_source / path),
                                                                *symbol);
                                    }))
                << where << " places `" << name << "` in `" << next << "`, which does not name it";
        }
    }
    EXPECT_GT(paths, 150u);
    EXPECT_GT(symbols, 40u);
}

// The way the guide gives to have simple_gpu_scheduler's lines prints them as it does, on
// stdout beside the jobs' output, while the jobs' stderr and the rest of the log stay on
// stderr.
TEST(Docs, SimpleGpuSchedulersLinesComeAsTheGuideSays)
{
    const auto guide = split_lines(read_file(k_source / "docs/guide.md"));
    const auto marker = std::find(guide.begin(), guide.end(), "<!-- guide-sgs-lines -->");
    ASSERT_TRUE(marker != guide.end() && marker + 2 < guide.end() && *(marker + 1) == "```sh");
    const auto command = *(marker + 2);

    TempDir dir;
    write_file(dir / "commands.txt", "echo out-1\n\n# a comment\necho err-2 >&2\necho out-3\n");
    LaunchOptions options{{"-c", command}, std::nullopt, std::nullopt, {}};
    options.program = "/bin/sh";
    options.cwd = dir.path();
    options.env = {{"PATH", binary().parent_path().string() + ":" + std::getenv("PATH")},
                   {"GPUSCHED_LOCK_DIR", (dir / "leases").string()},
                   {"XDG_STATE_HOME", (dir / "state").string()},
                   {"NO_COLOR", "1"}};
    const auto finished = run(dir, options);
    EXPECT_EQ(finished.exit_status, 0) << finished.err;
    std::vector<std::string> sgs_lines;
    std::set<std::string> out_lines;
    for (const auto& line : split_lines(finished.out)) {
        (line.starts_with("Processing") ? sgs_lines.push_back(line) : (void)out_lines.insert(line));
    }
    // simple_gpu_scheduler --gpus 0,1,2 would name 2, 1, 0: gpusched goes in order.
    EXPECT_EQ(sgs_lines, (std::vector<std::string>{"Processing command `echo out-1` on gpu 0",
                                                   "Processing command `echo err-2 >&2` on gpu 1",
                                                   "Processing command `echo out-3` on gpu 2"}))
        << finished.out;
    EXPECT_EQ(out_lines, (std::set<std::string>{"out-1", "out-3"})) << finished.out;
    EXPECT_NE(finished.err.find("err-2"), std::string::npos) << finished.err;
    EXPECT_NE(finished.err.find("3 jobs: 3 succeeded"), std::string::npos) << finished.err;
    EXPECT_EQ(finished.err.find("started on"), std::string::npos) << finished.err;
}

// The lines of the block of `page` that follows the line `marker`: a code block's lines, or a
// table's rows.
std::vector<std::string> block_after(const std::vector<std::string>& page,
                                     const std::string& marker)
{
    auto line = std::find(page.begin(), page.end(), marker);
    EXPECT_TRUE(line != page.end()) << marker;
    std::vector<std::string> block;
    if (line == page.end()) {
        return block;
    }
    ++line;
    const bool code = line != page.end() && line->starts_with("```");
    for (line += code ? 1 : 0; line != page.end() && !line->empty(); ++line) {
        if (code && *line == "```") {
            break;
        }
        block.push_back(*line);
    }
    return block;
}

class DocsQueueProtocol : public ::testing::Test, public QueueFixture {
protected:
    DocsQueueProtocol() : QueueFixture(Store::redis) {}
};

// The worked example of queue-protocol.md, as a client written from the page would do it: its
// commands run as shown (with redis-cli pointed at the test's server), a real worker runs the
// job, and the job's hash holds what the page says.
TEST_F(DocsQueueProtocol, TheWorkedExampleRunsAsShown)
{
    const auto page = split_lines(read_file(k_source / "docs/queue-protocol.md"));
    const auto commands = block_after(page, "<!-- protocol-example: submit -->");
    const auto rows = block_after(page, "<!-- protocol-example: result -->");
    ASSERT_GT(commands.size(), 4u);
    ASSERT_GT(rows.size(), 10u);

    // redis-cli as the page runs it, on the test's server: a wrapper first on PATH.
    TempDir bin;
    const auto path = std::string(std::getenv("PATH"));
    write_file(bin / "redis-cli", fmt::format("#!/bin/sh\nPATH='{}'\nexec redis-cli -p {} \"$@\"\n",
                                              path, redis().port()));
    fs::permissions(bin / "redis-cli", fs::perms::owner_all);
    LaunchOptions client{{"-ec", join_lines(commands)}, std::nullopt, std::nullopt, {}};
    client.program = "/bin/sh";
    client.env["PATH"] = bin.path().string() + ":" + path;
    const auto submitted = run(m_dir, client);
    ASSERT_EQ(submitted.exit_status, 0) << submitted.out << submitted.err;

    start_worker("0");
    const auto key = std::string("gpusched:{default}:job:1");
    ASSERT_TRUE(eventually([&] {
        return redis().cli({"HEXISTS", key, "outcome"}) == "1\n";
    })) << worker_err(0);
    // Each row: | `field` | `value`... | (a value in backticks is exact) or | `field` | words |.
    const std::regex row(R"(\| `([a-z_]+)` \| (`([^`]*)`)?.*\|)");
    std::size_t checked = 0;
    for (const auto& line : rows) {
        std::smatch match;
        if (!std::regex_match(line, match, row)) {
            continue;
        }
        ++checked;
        const std::string field = match[1];
        ASSERT_EQ(redis().cli({"HEXISTS", key, field}), "1\n") << field << " is not in the hash";
        auto value = redis().cli({"HGET", key, field});
        if (!value.empty()) {
            value.pop_back(); // redis-cli's newline
        }
        if (match[2].matched) {
            EXPECT_EQ(value, std::regex_replace(std::string(match[3]), std::regex(R"(\\n)"), "\n"))
                << field;
        } else if (line.find("| empty |") != std::string::npos) {
            EXPECT_EQ(value, "") << field;
        } else {
            EXPECT_FALSE(value.empty()) << field;
        }
    }
    EXPECT_EQ(checked, 13u);
    EXPECT_EQ(redis().cli({"LRANGE", "gpusched:{default}:batch:1:done", "0", "-1"}), "1\n");
}

} // namespace
} // namespace gpusched::testing
