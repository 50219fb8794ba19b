#pragma once

#include <gpusched/command_template.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/parameter_values.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusched {

enum class SamplingMode { grid, shuffled_grid, random };

struct HypersearchRequest {
    std::string command_template;
    // (name, value specs) in the order given with -p; the grid varies the last one fastest.
    std::vector<std::pair<std::string, std::vector<std::string>>> parameters;
    SamplingMode mode = SamplingMode::shuffled_grid;
    std::optional<std::int64_t> samples;
    std::uint64_t seed = 0;
    bool quote = false;
};

// Generates the commands of a grid or random search one at a time: the product of the
// parameters is never held in memory, and a shuffled grid is a seeded bijection of the
// index space, so any size costs constant memory and the first lines come at once.
class Hypersearch {
public:
    // Checks the request; every error names its culprit.
    static Result<Hypersearch> create(HypersearchRequest request);

    // The number of commands generate() produces.
    std::uint64_t count() const { return m_count; }

    // Calls `emit` with each command in order; stops early when it returns false.
    void generate(const std::function<bool(std::string_view)>& emit) const;

private:
    Hypersearch(CommandTemplate command, SamplingMode mode, std::uint64_t seed, bool quote)
        : m_template(std::move(command)), m_mode(mode), m_seed(seed), m_quote(quote)
    {
    }

    void generate_grid(const std::function<bool(std::string_view)>& emit) const;
    void generate_random(const std::function<bool(std::string_view)>& emit) const;
    bool emit_line(std::vector<std::string_view>& values, std::string& line,
                   const std::function<bool(std::string_view)>& emit) const;

    CommandTemplate m_template;
    SamplingMode m_mode;
    std::uint64_t m_seed;
    bool m_quote;
    std::vector<ValueList> m_grid;         // per parameter, in -p order (grid modes)
    std::vector<RandomParameter> m_random; // per parameter, in -p order (random mode)
    std::vector<std::size_t> m_slot;       // parameter index -> template name index
    std::uint64_t m_grid_size = 0;
    std::uint64_t m_count = 0;
};

} // namespace gpusched
