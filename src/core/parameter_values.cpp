#include <gpusched/parameter_values.hpp>

#include <gpusched/parse_number.hpp>
#include <gpusched/split.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

namespace gpusched {
namespace {

// A number in a range or distribution: a leading '+' is allowed, infinities and NaN are not.
template <class Number>
std::optional<Number> parse_spec_number(std::string_view text)
{
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
    }
    const auto value = parse_number<Number>(text);
    if constexpr (std::is_floating_point_v<Number>) {
        if (value && !std::isfinite(*value)) {
            return std::nullopt;
        }
    }
    return value;
}

bool starts_with(std::string_view text, std::string_view prefix)
{
    return text.substr(0, prefix.size()) == prefix;
}

// Computed spacings carry rounding noise (0.30000000000000004); 15 significant digits are
// all a double holds reliably, so the value is rounded there before it is printed.
double without_rounding_noise(double value)
{
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%.15g", value);
    return std::strtod(text.data(), nullptr);
}

// 53 random bits as a double in [0, 1).
double unit_interval(std::mt19937_64& engine)
{
    return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

Failure bad_spec(std::string_view name, std::string_view spec, std::string_view expected)
{
    return Failure{
        fmt::format("parameter '{}': bad value '{}': expected {}", name, spec, expected)};
}

} // namespace

std::string format_number(double value)
{
    std::array<char, 32> text{};
    const auto result = std::to_chars(text.data(), text.data() + text.size(), value);
    return std::string(text.data(), result.ptr);
}

std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound)
{
    // Rejects the top partial block of 2^64 so every residue is equally likely.
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                std::numeric_limits<std::uint64_t>::max() % bound;
    std::uint64_t draw = 0;
    do {
        draw = engine();
    } while (draw >= limit);
    return draw % bound;
}

Result<ValueList> ValueList::parse(std::string_view name, const std::vector<std::string>& specs)
{
    ValueList list;
    for (const auto& spec : specs) {
        const auto fields = split(spec, ':');
        if (starts_with(spec, "range:")) {
            constexpr auto expected = "range:START:STOP[:STEP] with integers and STEP not 0";
            if (fields.size() != 3 && fields.size() != 4) {
                return bad_spec(name, spec, expected);
            }
            const auto start = parse_spec_number<std::int64_t>(fields[1]);
            const auto stop = parse_spec_number<std::int64_t>(fields[2]);
            const auto step = fields.size() == 4 ? parse_spec_number<std::int64_t>(fields[3])
                                                 : std::optional<std::int64_t>(1);
            if (!start || !stop || !step || *step == 0) {
                return bad_spec(name, spec, expected);
            }
            const bool upwards = *step > 0;
            if (upwards ? *stop <= *start : *stop >= *start) {
                return Failure{fmt::format("parameter '{}': '{}' holds no value", name, spec)};
            }
            // Unsigned differences cannot overflow, whatever the int64 bounds.
            const auto as_unsigned = [](std::int64_t value) {
                return static_cast<std::uint64_t>(value);
            };
            const std::uint64_t distance = upwards ? as_unsigned(*stop) - as_unsigned(*start)
                                                   : as_unsigned(*start) - as_unsigned(*stop);
            const std::uint64_t stride = upwards ? as_unsigned(*step) : 0 - as_unsigned(*step);
            list.m_pieces.emplace_back(IntegerRange{*start, *step, (distance - 1) / stride + 1});
        } else if (starts_with(spec, "linspace:") || starts_with(spec, "logspace:")) {
            const bool logarithmic = starts_with(spec, "logspace:");
            const auto expected = logarithmic ? "logspace:A:B:N with A, B > 0 and N >= 1"
                                              : "linspace:A:B:N with N >= 1";
            if (fields.size() != 4) {
                return bad_spec(name, spec, expected);
            }
            const auto first = parse_spec_number<double>(fields[1]);
            const auto last = parse_spec_number<double>(fields[2]);
            const auto count = parse_spec_number<std::uint64_t>(fields[3]);
            if (!first || !last || !count || *count == 0 ||
                (logarithmic && (*first <= 0 || *last <= 0))) {
                return bad_spec(name, spec, expected);
            }
            list.m_pieces.emplace_back(Spaced{*first, *last, *count, logarithmic});
        } else if (RandomParameter::is_distribution(spec)) {
            return Failure{fmt::format(
                "parameter '{}': '{}' is a distribution, for --sampling-mode random only", name,
                spec)};
        } else {
            list.m_pieces.emplace_back(spec);
        }
        const auto added = piece_size(list.m_pieces.back());
        if (added > std::numeric_limits<std::uint64_t>::max() - list.m_size) {
            return Failure{fmt::format("parameter '{}' has too many values", name)};
        }
        list.m_size += added;
    }
    if (list.m_size == 0) {
        return Failure{fmt::format("parameter '{}' has no values", name)};
    }
    return list;
}

std::uint64_t ValueList::piece_size(const Piece& piece)
{
    if (const auto* range = std::get_if<IntegerRange>(&piece)) {
        return range->count;
    }
    if (const auto* spaced = std::get_if<Spaced>(&piece)) {
        return spaced->count;
    }
    return 1;
}

std::string_view ValueList::at(std::uint64_t index, std::string& scratch) const
{
    for (const auto& piece : m_pieces) {
        const auto size = piece_size(piece);
        if (index >= size) {
            index -= size;
            continue;
        }
        if (const auto* value = std::get_if<std::string>(&piece)) {
            return *value;
        }
        if (const auto* range = std::get_if<IntegerRange>(&piece)) {
            // Modular arithmetic lands on the right int64, which lies between START and STOP.
            const auto value = static_cast<std::uint64_t>(range->start) +
                               index * static_cast<std::uint64_t>(range->step);
            scratch = fmt::format("{}", static_cast<std::int64_t>(value));
            return scratch;
        }
        const auto& spaced = std::get<Spaced>(piece);
        double value = spaced.first;
        if (index + 1 == spaced.count && spaced.count > 1) {
            value = spaced.last;
        } else if (index > 0) {
            const double fraction =
                static_cast<double>(index) / static_cast<double>(spaced.count - 1);
            value = spaced.logarithmic ? std::pow(10.0, std::log10(spaced.first) +
                                                            fraction * (std::log10(spaced.last) -
                                                                        std::log10(spaced.first)))
                                       : spaced.first + fraction * (spaced.last - spaced.first);
            value = without_rounding_noise(value);
        }
        scratch = format_number(value);
        return scratch;
    }
    return {};
}

bool RandomParameter::is_distribution(std::string_view spec)
{
    return starts_with(spec, "uniform:") || starts_with(spec, "loguniform:") ||
           starts_with(spec, "randint:");
}

Result<RandomParameter> RandomParameter::parse(std::string_view name,
                                               const std::vector<std::string>& specs)
{
    RandomParameter parameter;
    const bool any_distribution = std::any_of(
        specs.begin(), specs.end(), [](const auto& spec) { return is_distribution(spec); });
    if (!any_distribution) {
        auto list = ValueList::parse(name, specs);
        if (!list) {
            return list.failure();
        }
        parameter.m_source = std::move(*list);
        return parameter;
    }
    if (specs.size() != 1) {
        return Failure{
            fmt::format("parameter '{}': a distribution must be its only value, not one of {}",
                        name, specs.size())};
    }
    const auto& spec = specs.front();
    const auto fields = split(spec, ':');
    if (starts_with(spec, "randint:")) {
        const auto low =
            fields.size() == 3 ? parse_spec_number<std::int64_t>(fields[1]) : std::nullopt;
        const auto high =
            fields.size() == 3 ? parse_spec_number<std::int64_t>(fields[2]) : std::nullopt;
        if (!low || !high || *low > *high) {
            return bad_spec(name, spec, "randint:A:B with integers A <= B");
        }
        parameter.m_source = RandInt{*low, *high};
        return parameter;
    }
    const bool logarithmic = starts_with(spec, "loguniform:");
    const auto low = fields.size() == 3 ? parse_spec_number<double>(fields[1]) : std::nullopt;
    const auto high = fields.size() == 3 ? parse_spec_number<double>(fields[2]) : std::nullopt;
    if (!low || !high || *low >= *high || (logarithmic && *low <= 0)) {
        return bad_spec(name, spec,
                        logarithmic ? "loguniform:A:B with 0 < A < B" : "uniform:A:B with A < B");
    }
    parameter.m_source = Uniform{*low, *high, logarithmic};
    return parameter;
}

std::string_view RandomParameter::draw(std::mt19937_64& engine, std::string& scratch) const
{
    if (const auto* list = std::get_if<ValueList>(&m_source)) {
        return list->at(uniform_below(engine, list->size()), scratch);
    }
    if (const auto* range = std::get_if<RandInt>(&m_source)) {
        const auto span =
            static_cast<std::uint64_t>(range->high) - static_cast<std::uint64_t>(range->low);
        const std::uint64_t offset = span == std::numeric_limits<std::uint64_t>::max()
                                         ? engine()
                                         : uniform_below(engine, span + 1);
        scratch = fmt::format(
            "{}", static_cast<std::int64_t>(static_cast<std::uint64_t>(range->low) + offset));
        return scratch;
    }
    const auto& uniform = std::get<Uniform>(m_source);
    const double u = unit_interval(engine);
    const double value =
        uniform.logarithmic
            ? std::exp(std::log(uniform.low) + u * (std::log(uniform.high) - std::log(uniform.low)))
            : uniform.low + u * (uniform.high - uniform.low);
    scratch = format_number(value);
    return scratch;
}

} // namespace gpusched
