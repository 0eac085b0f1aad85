#pragma once
// Little-endian loads and stores through memcpy: correct on any host, never an
// unaligned or type-punned access.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace vnnx {

template <class T>
concept le_scalar = std::is_arithmetic_v<T> || std::is_enum_v<T>;

template <le_scalar T>
inline void store_le(std::byte* dst, T value) noexcept {
    if constexpr (std::endian::native == std::endian::little || sizeof(T) == 1) {
        std::memcpy(dst, &value, sizeof(T));
    } else {
        unsigned char raw[sizeof(T)];
        std::memcpy(raw, &value, sizeof(T));
        for (std::size_t i = 0; i < sizeof(T); ++i) std::memcpy(dst + i, &raw[sizeof(T) - 1 - i], 1);
    }
}

template <le_scalar T>
[[nodiscard]] inline T load_le(const std::byte* src) noexcept {
    T value;
    if constexpr (std::endian::native == std::endian::little || sizeof(T) == 1) {
        std::memcpy(&value, src, sizeof(T));
    } else {
        unsigned char raw[sizeof(T)];
        for (std::size_t i = 0; i < sizeof(T); ++i) std::memcpy(&raw[i], src + sizeof(T) - 1 - i, 1);
        std::memcpy(&value, raw, sizeof(T));
    }
    return value;
}

[[nodiscard]] constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t m) noexcept {
    return (v + m - 1) / m * m;
}

}  // namespace vnnx
