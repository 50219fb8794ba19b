#include <gpusched/index_permutation.hpp>

namespace gpusched {

std::uint64_t mix64(std::uint64_t value)
{
    value += 0x9e3779b97f4a7c15ULL;
    value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
    value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
    return value ^ (value >> 31);
}

IndexPermutation::IndexPermutation(std::uint64_t size, std::uint64_t seed) : m_size(size)
{
    while (m_half_bits < 32 && (std::uint64_t{1} << (2 * m_half_bits)) < size) {
        ++m_half_bits;
    }
    m_half_mask = (std::uint64_t{1} << m_half_bits) - 1;
    std::uint64_t state = seed;
    for (auto& key : m_keys) {
        state = mix64(state);
        key = state;
    }
}

std::uint64_t IndexPermutation::encrypt(std::uint64_t value) const
{
    std::uint64_t left = value >> m_half_bits;
    std::uint64_t right = value & m_half_mask;
    for (const auto key : m_keys) {
        const std::uint64_t next = left ^ (mix64(right ^ key) & m_half_mask);
        left = right;
        right = next;
    }
    return (left << m_half_bits) | right;
}

std::uint64_t IndexPermutation::operator()(std::uint64_t index) const
{
    // encrypt() permutes [0, 4^half_bits); walking the cycle from `index` until it lands
    // back inside [0, size) restricts it to a permutation of [0, size).
    std::uint64_t value = encrypt(index);
    while (value >= m_size) {
        value = encrypt(value);
    }
    return value;
}

} // namespace gpusched
