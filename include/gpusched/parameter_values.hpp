#pragma once

#include <gpusched/errors.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gpusched {

// The values of one hypersearch parameter, for the grid: plain values and ranges, in the
// order given. Ranges are computed on demand, so `range:0:1000000000` costs no memory.
//   range:START:STOP[:STEP]  integers from START up to STOP excluded (STEP may be negative)
//   linspace:A:B:N           N numbers from A to B inclusive, evenly spaced
//   logspace:A:B:N           N numbers from A to B inclusive, evenly spaced in log (A, B > 0)
class ValueList {
public:
    static Result<ValueList> parse(std::string_view name, const std::vector<std::string>& specs);

    std::uint64_t size() const { return m_size; }
    // Value `index` (< size()); computed values are formatted into `scratch`.
    std::string_view at(std::uint64_t index, std::string& scratch) const;

private:
    struct IntegerRange {
        std::int64_t start;
        std::int64_t step;
        std::uint64_t count;
    };
    struct Spaced {
        double first;
        double last;
        std::uint64_t count;
        bool logarithmic;
    };
    using Piece = std::variant<std::string, IntegerRange, Spaced>;

    static std::uint64_t piece_size(const Piece& piece);

    std::vector<Piece> m_pieces;
    std::uint64_t m_size = 0;
};

// A parameter of a random search: a value list to choose from uniformly, or a distribution:
//   uniform:A:B      a real number in [A, B)
//   loguniform:A:B   a real number in [A, B), uniform in log (A, B > 0)
//   randint:A:B      an integer from A to B, both included
class RandomParameter {
public:
    static Result<RandomParameter> parse(std::string_view name,
                                         const std::vector<std::string>& specs);

    // Draws one value; the same engine state gives the same value on every machine.
    std::string_view draw(std::mt19937_64& engine, std::string& scratch) const;

    // True when a spec is a distribution; such a parameter exists only in random mode.
    static bool is_distribution(std::string_view spec);

private:
    struct Uniform {
        double low;
        double high;
        bool logarithmic;
    };
    struct RandInt {
        std::int64_t low;
        std::int64_t high;
    };

    std::variant<ValueList, Uniform, RandInt> m_source;
};

// The shortest text that reads back as `value`: 0.001, 1e-05, 3.
std::string format_number(double value);

// A uniformly distributed integer in [0, bound) (bound > 0), without modulo bias, computed
// the same way on every machine (the standard's distributions are implementation-defined).
std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound);

} // namespace gpusched
