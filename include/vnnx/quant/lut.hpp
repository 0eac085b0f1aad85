#pragma once
// 256-entry lookup tables over 8-bit codes (lowering.md §8.6). A table is indexed by the
// code's byte value r = code & 0xFF (int8: order 0..127, −128..−1; uint8: r = code).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace vnnx::quant {

template <class T>
concept byte_code = std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t>;

/// The table slot of a code: its byte value.
template <byte_code T>
[[nodiscard]] constexpr std::size_t lut_index(T code) noexcept {
    return static_cast<std::uint8_t>(code);
}

/// Runs `kernel(code) -> Out` over every code of T; entry r holds the result for the code
/// whose byte value is r.
template <byte_code T, class Out, class Kernel>
[[nodiscard]] std::array<Out, 256> build_lut(Kernel&& kernel) {
    std::array<Out, 256> table{};
    for (int v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v)
        table[lut_index(static_cast<T>(v))] = static_cast<Out>(kernel(static_cast<T>(v)));
    return table;
}

/// TFLite's float-LUT recipe (LOGISTIC, TANH, ELU, EXP, ... in its optimized kernels):
/// dequantize in float32, apply f in float32, q = round(f · (1/S_out)) + z_out, clamp.
/// A NaN result maps to the type minimum (the SDK's choice; TFLite leaves it undefined).
template <byte_code T, class F>
[[nodiscard]] std::array<T, 256> float_lut(float s_in, std::int32_t z_in, float s_out, std::int32_t z_out, F&& f) {
    const float inverse_scale = 1.0f / s_out;
    constexpr std::int32_t lo = std::numeric_limits<T>::min();
    constexpr std::int32_t hi = std::numeric_limits<T>::max();
    return build_lut<T, T>([&](T v) {
        const float dequantized = s_in * static_cast<float>(static_cast<std::int32_t>(v) - z_in);
        const float transformed = f(dequantized);
        const float rescaled = std::round(transformed * inverse_scale);
        const float shifted = rescaled + static_cast<float>(z_out);
        if (std::isnan(shifted)) return static_cast<T>(lo);
        const float clamped = std::clamp(shifted, static_cast<float>(lo), static_cast<float>(hi));
        return static_cast<T>(static_cast<std::int32_t>(clamped));
    });
}

/// Applies a table to one code.
template <byte_code T, class Out>
[[nodiscard]] constexpr Out lut_lookup(const std::array<Out, 256>& table, T code) noexcept {
    return table[lut_index(code)];
}

/// The SDK's intermediate GATHER tables hold the entry for int8 code v at v + 128; the
/// serialized table is in byte order. Converts the former into the latter.
template <class Out>
[[nodiscard]] constexpr std::array<Out, 256> rotate_from_offset_order(const std::array<Out, 256>& offset_order) noexcept {
    std::array<Out, 256> out{};
    for (int v = -128; v <= 127; ++v) out[static_cast<std::uint8_t>(v)] = offset_order[static_cast<std::size_t>(v + 128)];
    return out;
}

}  // namespace vnnx::quant
