#pragma once

#include <array>
#include <cstdint>

namespace gpusched {

// A seeded bijection of [0, size) onto itself, evaluated one index at a time in constant
// memory: a shuffled grid of 10^12 configurations costs no more than one of ten. It is a
// balanced Feistel network over the smallest even power of two covering `size`, with
// cycle-walking to stay inside [0, size) (at most four steps on average).
class IndexPermutation {
public:
    IndexPermutation(std::uint64_t size, std::uint64_t seed);

    std::uint64_t operator()(std::uint64_t index) const;
    std::uint64_t size() const { return m_size; }

private:
    std::uint64_t encrypt(std::uint64_t value) const;

    static constexpr int k_rounds = 6;
    std::uint64_t m_size;
    unsigned m_half_bits = 1;
    std::uint64_t m_half_mask = 1;
    std::array<std::uint64_t, k_rounds> m_keys{};
};

// SplitMix64's finaliser: a fast, well-mixed 64-bit hash.
std::uint64_t mix64(std::uint64_t value);

} // namespace gpusched
