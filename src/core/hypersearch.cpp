#include <gpusched/hypersearch.hpp>

#include <gpusched/index_permutation.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>

namespace gpusched {
namespace {

Result<void> check_names(const CommandTemplate& command, const HypersearchRequest& request)
{
    if (request.parameters.empty()) {
        return Failure{fmt::format("no parameters: give each placeholder its values with "
                                   "-p NAME VALUE..., e.g. -p {} 1 2",
                                   command.names().front())};
    }
    std::set<std::string_view> given;
    for (const auto& [name, specs] : request.parameters) {
        if (!given.insert(name).second) {
            return Failure{fmt::format("parameter '{}' is given twice", name)};
        }
        const auto& used = command.names();
        if (std::find(used.begin(), used.end(), name) == used.end()) {
            return Failure{
                fmt::format("parameter '{}' is not used in the template (no {{{}}})", name, name)};
        }
    }
    for (const auto& name : command.names()) {
        if (given.count(name) == 0) {
            return Failure{
                fmt::format("placeholder {{{}}} has no values: add -p {} VALUE...", name, name)};
        }
    }
    return {};
}

} // namespace

Result<Hypersearch> Hypersearch::create(HypersearchRequest request)
{
    auto parsed_template = CommandTemplate::parse(request.command_template);
    if (!parsed_template) {
        return Failure{
            fmt::format("template '{}': {}", request.command_template, parsed_template.message())};
    }
    auto& command = *parsed_template;
    if (auto checked = check_names(command, request); !checked) {
        return checked.failure();
    }
    if (request.samples && *request.samples <= 0) {
        return Failure{fmt::format("--n-samples must be at least 1, not {}", *request.samples)};
    }
    if (request.mode == SamplingMode::random && !request.samples) {
        return Failure{"--sampling-mode random needs --n-samples N"};
    }

    Hypersearch search(std::move(command), request.mode, request.seed, request.quote);
    const auto& names = search.m_template.names();
    std::uint64_t grid_size = 1;
    for (const auto& [name, specs] : request.parameters) {
        if (specs.empty()) {
            return Failure{fmt::format("parameter '{}' has no values", name)};
        }
        search.m_slot.push_back(
            static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin()));
        if (request.mode == SamplingMode::random) {
            auto parameter = RandomParameter::parse(name, specs);
            if (!parameter) {
                return parameter.failure();
            }
            search.m_random.push_back(std::move(*parameter));
            continue;
        }
        auto values = ValueList::parse(name, specs);
        if (!values) {
            return values.failure();
        }
        const auto size = values->size();
        if (grid_size > std::numeric_limits<std::uint64_t>::max() / size) {
            return Failure{"the grid has 2^64 combinations or more"};
        }
        grid_size *= size;
        search.m_grid.push_back(std::move(*values));
    }
    search.m_grid_size = grid_size;
    if (request.mode == SamplingMode::random) {
        search.m_count = static_cast<std::uint64_t>(*request.samples);
    } else {
        search.m_count = request.samples ? std::min(search.m_grid_size,
                                                    static_cast<std::uint64_t>(*request.samples))
                                         : search.m_grid_size;
    }
    return search;
}

void Hypersearch::generate(const std::function<bool(std::string_view)>& emit) const
{
    if (m_mode == SamplingMode::random) {
        generate_random(emit);
    } else {
        generate_grid(emit);
    }
}

bool Hypersearch::emit_line(std::vector<std::string_view>& values, std::string& line,
                            const std::function<bool(std::string_view)>& emit) const
{
    line.clear();
    if (!m_quote) {
        m_template.render(values, line);
        return emit(line);
    }
    std::vector<std::string> quoted(values.begin(), values.end());
    for (std::size_t i = 0; i < values.size(); ++i) {
        quoted[i] = shell_quote(values[i]);
        values[i] = quoted[i];
    }
    m_template.render(values, line);
    return emit(line);
}

void Hypersearch::generate_grid(const std::function<bool(std::string_view)>& emit) const
{
    const std::optional<IndexPermutation> shuffle =
        m_mode == SamplingMode::shuffled_grid
            ? std::optional<IndexPermutation>(IndexPermutation(m_grid_size, m_seed))
            : std::nullopt;
    std::vector<std::string> scratch(m_grid.size());
    std::vector<std::string_view> values(m_template.names().size());
    std::string line;
    for (std::uint64_t i = 0; i < m_count; ++i) {
        std::uint64_t index = shuffle ? (*shuffle)(i) : i;
        for (std::size_t p = m_grid.size(); p-- > 0;) {
            const auto size = m_grid[p].size();
            values[m_slot[p]] = m_grid[p].at(index % size, scratch[p]);
            index /= size;
        }
        if (!emit_line(values, line, emit)) {
            return;
        }
    }
}

void Hypersearch::generate_random(const std::function<bool(std::string_view)>& emit) const
{
    std::mt19937_64 engine(m_seed);
    std::vector<std::string> scratch(m_random.size());
    std::vector<std::string_view> values(m_template.names().size());
    std::string line;
    for (std::uint64_t i = 0; i < m_count; ++i) {
        for (std::size_t p = 0; p < m_random.size(); ++p) {
            values[m_slot[p]] = m_random[p].draw(engine, scratch[p]);
        }
        if (!emit_line(values, line, emit)) {
            return;
        }
    }
}

} // namespace gpusched
