#pragma once

#include <gpusched/duration.hpp>
#include <gpusched/errors.hpp>
#include <gpusched/gpu_discovery.hpp>
#include <gpusched/job_request.hpp>
#include <gpusched/memory_size.hpp>
#include <gpusched/number_checks.hpp>
#include <gpusched/parse_number.hpp>

#include <CLI/Validators.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::cli {

// Bounds of the per-job whole-number options (a run's and a submitted job's): far beyond real
// use, they keep a typo from turning into billions of slots or tries.
constexpr std::uint64_t k_most_gpus_per_job = 1024; // and never more than the pool
constexpr std::uint64_t k_most_retries = 1000;

// A duration as options take it (checked by duration_check), in the milliseconds the runtime
// counts in; a duration shorter than a millisecond is one.
inline std::chrono::milliseconds to_milliseconds(double seconds)
{
    return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000.0)));
}

// The check of every duration option (and of its environment variable): 30s, 90m, 1h, 2d or
// plain seconds, more than 0, or at least 0 where 0 means at once, and at most a year. CLI11
// is handed the seconds as parsed, so the two cannot read it differently.
inline CLI::Validator duration_check(bool zero_allowed)
{
    return CLI::Validator(
        [zero_allowed](std::string& value) -> std::string {
            const auto parsed = parse_duration(value, zero_allowed);
            if (!parsed) {
                return parsed.message();
            }
            value = fmt::format("{}", *parsed);
            return {};
        },
        "");
}

// The check of every whole-number option: decimal digits only (CLI11 alone would take -1 as
// 2^64-1, and 010 as 8), from `least` to `most`.
inline CLI::Validator whole_number_check(std::uint64_t least, std::uint64_t most)
{
    return CLI::Validator(
        [least, most](std::string& value) -> std::string {
            const auto parsed = parse_whole_number(value, least, most);
            if (!parsed) {
                return parsed.message();
            }
            value = std::to_string(*parsed);
            return {};
        },
        "");
}

// The check of --mem: a size with its unit (20G, 8000M), handed to CLI11 as bytes, or `auto`
// (k_learned_memory).
// --mem: a size, or `auto` where the jobs of a run or worker teach it (`allow_auto`).
inline CLI::Validator memory_check(bool allow_auto = true)
{
    return CLI::Validator(
        [allow_auto](std::string& value) -> std::string {
            if (value == "auto" && !allow_auto) {
                return "must be a size (20G, 8000M): auto learns from the jobs of a run or "
                       "worker";
            }
            if (value == "auto") {
                value = std::to_string(k_learned_memory);
                return {};
            }
            const auto parsed = parse_memory_size(value);
            if (!parsed) {
                return parsed.message();
            }
            value = std::to_string(*parsed);
            return {};
        },
        "");
}

// The same for an option that may be negative (--priority).
inline CLI::Validator integer_check(std::int64_t least, std::int64_t most)
{
    return CLI::Validator(
        [least, most](std::string& value) -> std::string {
            const auto parsed = parse_integer(value, least, most);
            if (!parsed) {
                return parsed.message();
            }
            value = std::to_string(*parsed);
            return {};
        },
        "");
}

// The check of a weight (--share): a number from 0.01 to 1000 (not NaN, not infinite).
inline CLI::Validator weight_check()
{
    return CLI::Validator(
        [](std::string& value) -> std::string {
            const auto parsed = parse_number<double>(value);
            if (!parsed || !std::isfinite(*parsed) || *parsed < 0.01 || *parsed > 1000) {
                return fmt::format("{} is not a weight: must be a number from 0.01 to 1000",
                                   value);
            }
            value = fmt::format("{}", *parsed);
            return {};
        },
        "");
}

// A variable of gpusched's own environment, when set.
inline std::optional<std::string> environment_variable(const char* name)
{
    const char* value = std::getenv(name);
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

// Refuses bad GPU ids, from --gpus (named `gpus_source` in errors) or else from
// CUDA_VISIBLE_DEVICES, before a command makes anything: a FIFO, a lock file every user's
// `status` shows, a probe child.
inline void check_gpu_ids(const std::vector<std::string>& gpus,
                          std::string_view gpus_source = "--gpus")
{
    value_or_usage_error(
        given_gpu_ids(gpus, environment_variable("CUDA_VISIBLE_DEVICES"), gpus_source));
}

} // namespace gpusched::cli
