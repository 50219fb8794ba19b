#pragma once

#include <gpusched/errors.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace gpusched {

// The most GPU memory a job may ask for: far beyond any GPU, it keeps a typo from asking for
// an exabyte (and the sums of reservations from overflowing).
constexpr std::uint64_t k_most_job_memory = std::uint64_t{1} << 50; // 1 PiB

// A size of GPU memory as --mem takes it: a number, a fraction allowed, then its unit, K, M,
// G or T (also as KiB, MB, ...; either case). Units are powers of 1024, as nvidia-smi's MiB
// and CUDA's cudaMemGetInfo count: 20G is 20 GiB. A bare number is refused rather than read
// as bytes or MiB; 0 and more than k_most_job_memory are refused too.
Result<std::uint64_t> parse_memory_size(std::string_view text);

// `bytes` in whole MiB, rounded up, as the job log, --json and records write a size: a
// promise or a peak is never written smaller than it was.
constexpr std::uint64_t mebibytes_rounded_up(std::uint64_t bytes)
{
    constexpr std::uint64_t k_mebibyte = std::uint64_t{1} << 20;
    return bytes / k_mebibyte + (bytes % k_mebibyte != 0 ? 1 : 0);
}

// `bytes` as a person reads it: "20 GiB", "1.5 GiB", "800 MiB", "512 KiB", "12 B".
std::string format_memory_size(std::uint64_t bytes);

} // namespace gpusched
