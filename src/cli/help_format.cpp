#include "help_format.hpp"

#include <sstream>

namespace gpusched::cli {
namespace {

constexpr std::size_t k_terminal_width = 80;
constexpr std::size_t k_name_column = 30;

// Breaks `text` into lines of at most `width` characters at spaces; CLI11 indents each line
// after a newline to the description column.
std::string wrap(const std::string& text, std::size_t width)
{
    std::istringstream words(text);
    std::string wrapped;
    std::string line;
    std::string word;
    while (words >> word) {
        if (!line.empty() && line.size() + 1 + word.size() > width) {
            wrapped += line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return wrapped + line;
}

class WrappingFormatter final : public CLI::Formatter {
public:
    WrappingFormatter() { column_width(k_name_column); }

    std::string make_option_desc(const CLI::Option* option) const override
    {
        return wrap(CLI::Formatter::make_option_desc(option), k_terminal_width - k_name_column);
    }
    std::string make_description(const CLI::App* app) const override
    {
        return wrap(CLI::Formatter::make_description(app), k_terminal_width) + "\n";
    }
    std::string make_subcommand(const CLI::App* sub) const override
    {
        std::ostringstream out;
        CLI::detail::format_help(out, sub->get_display_name(true),
                                 wrap(sub->get_description(), k_terminal_width - k_name_column),
                                 column_width_);
        return out.str();
    }
};

} // namespace

std::shared_ptr<CLI::Formatter> wrapping_formatter()
{
    return std::make_shared<WrappingFormatter>();
}

std::string failure_message(const CLI::App* app, const CLI::Error& error)
{
    return "gpusched: error: " + CLI::FailureMessage::simple(app, error);
}

} // namespace gpusched::cli
