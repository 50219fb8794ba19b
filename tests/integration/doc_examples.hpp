#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace gpusched::testing {

// An example a document gives to paste into a shell, as written, with what the marks before
// it say (an HTML comment, which the page does not show):
// - `<!-- example: skip (REASON) -->`: not to be run here (another machine, a package
//   installed);
// - `<!-- example: ctrl-c after "TEXT", after "TEXT" -->`: the user presses Ctrl-C once the
//   terminal shows TEXT, each in turn;
// - `<!-- example: while "COMMAND" runs -->`: COMMAND runs already, as the text assumes.
struct DocExample {
    std::string where;  // FILE:LINE of its first line
    std::string script; // as written
    std::string mark;   // the words of its marks

    bool skipped() const;
    std::vector<std::string> interrupted_after() const;
    std::vector<std::string> running_before() const;
};

// The `sh` blocks of a Markdown file that run gpusched, or are marked; what the guide gives
// as a file to write (<!-- guide-file: NAME -->) is no example. `name` is relative to `top`.
std::vector<DocExample> markdown_examples(const std::filesystem::path& top,
                                          const std::string& name);
// The EXAMPLES of a manual page's source, roff's escapes read as the page shows them; its
// marks are roff comments in the section (`.\" example: skip (REASON)`).
DocExample manual_examples(const std::filesystem::path& top, const std::string& name);

// The python commands a script hands to gpusched, after `--` or written to its input
// (`echo "python train.py" > jobs`).
std::set<std::string> handed_over(const std::string& script);
// The jobs a script signals (`kill -USR1 %1`): "1".
std::set<std::string> signalled_jobs(const std::string& script);

} // namespace gpusched::testing
