#include "doc_examples.hpp"

#include "harness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <regex>

namespace gpusched::testing {
namespace {

// A block that runs gpusched, under one of its names or as a path to it, as a command (here
// or over ssh): not one that builds it or runs the tests.
bool runs_gpusched(const std::string& script)
{
    const std::regex command(
        R"((^|[|;&({`]|\bssh\b.*\s)\s*([A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)"
        R"((\S*/)?(gpusched|simple_gpu_scheduler|simple_hypersearch)($|[\s;|&)]))");
    const auto lines = split_lines(script);
    return std::any_of(lines.begin(), lines.end(),
                       [&](const auto& line) { return std::regex_search(line, command); });
}

// The "TEXT" of each `WORD "TEXT"` in a mark.
std::vector<std::string> quoted_after(const std::string& mark, const std::string& word)
{
    std::vector<std::string> texts;
    const std::regex quoted(word + R"re( "([^"]*)")re");
    for (auto it = std::sregex_iterator(mark.begin(), mark.end(), quoted);
         it != std::sregex_iterator(); ++it) {
        texts.push_back((*it)[1]);
    }
    return texts;
}

std::set<std::string> matches(const std::string& text, const std::regex& pattern, int group)
{
    std::set<std::string> found;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
         it != std::sregex_iterator(); ++it) {
        found.insert((*it)[group]);
    }
    return found;
}

} // namespace

bool DocExample::skipped() const
{
    return mark.starts_with("skip");
}

std::vector<std::string> DocExample::interrupted_after() const
{
    return mark.find("ctrl-c") != std::string::npos ? quoted_after(mark, "after")
                                                    : std::vector<std::string>{};
}

std::vector<std::string> DocExample::running_before() const
{
    return quoted_after(mark, "while");
}

std::vector<DocExample> markdown_examples(const std::filesystem::path& top, const std::string& name)
{
    std::vector<DocExample> examples;
    std::vector<std::string> comments; // those just above the line
    std::optional<DocExample> block;
    bool in_other_block = false;
    int number = 0;
    for (const auto& line : split_lines(read_file(top / name))) {
        ++number;
        if (block) {
            if (line == "```") {
                if (runs_gpusched(block->script) || !block->mark.empty()) {
                    examples.push_back(*block);
                }
                block.reset();
            } else {
                block->script += line + "\n";
            }
        } else if (in_other_block) {
            in_other_block = line != "```";
        } else if (line == "```sh") {
            in_other_block = std::any_of(comments.begin(), comments.end(), [](const auto& c) {
                return c.starts_with("<!-- guide-file:");
            });
            if (!in_other_block) {
                block = DocExample{fmt::format("{}:{}", name, number + 1), "", ""};
                for (const auto& comment : comments) {
                    std::smatch mark;
                    if (std::regex_match(comment, mark, std::regex(R"(<!-- example: (.*) -->)"))) {
                        block->mark += mark[1].str() + "; ";
                    }
                }
            }
        } else if (line.starts_with("```")) {
            in_other_block = true;
        }
        if (line.starts_with("<!--")) {
            comments.push_back(line);
        } else {
            comments.clear();
        }
    }
    return examples;
}

DocExample manual_examples(const std::filesystem::path& top, const std::string& name)
{
    DocExample example{name, "", ""};
    bool in_examples = false;
    int number = 0;
    for (const auto& line : split_lines(read_file(top / name))) {
        ++number;
        if (line.starts_with(".SH")) {
            in_examples = line == ".SH EXAMPLES";
            if (in_examples) {
                example.where = fmt::format("{}:{}", name, number + 1);
            }
        } else if (std::smatch mark;
                   in_examples &&
                   std::regex_match(line, mark, std::regex(R"(\.\\" example: (.*))"))) {
            example.mark += mark[1].str() + "; "; // a roff comment, as <!-- --> in Markdown
        } else if (in_examples && !line.starts_with(".")) {
            std::string shown;
            for (std::size_t i = 0; i < line.size(); ++i) {
                if (line[i] != '\\' || i + 1 == line.size()) {
                    shown += line[i];
                } else if (line[++i] == 'e') {
                    shown += '\\';
                } else if (line.compare(i, 3, "(aq") == 0) {
                    shown += '\'';
                    i += 2;
                } else if (line[i] != '&') {
                    shown += line[i]; // \- and the like
                }
            }
            example.script += shown + "\n";
        }
    }
    return example;
}

std::set<std::string> handed_over(const std::string& script)
{
    auto commands = matches(script, std::regex(R"(-- (python3?( [^\s|;&#)]+)*))"), 1);
    commands.merge(matches(script, std::regex(R"(echo (["'])(python3? [^"']*)\1)"), 2));
    return commands;
}

std::set<std::string> signalled_jobs(const std::string& script)
{
    return matches(script, std::regex(R"(\bkill\b[^#\n]*%([0-9]+))"), 1);
}

} // namespace gpusched::testing
