#pragma once
// RSQRT over 8-bit data with TFLite's integer kernel: per code, the inverse square root of
// (x − z_in) by gemmlowp's fixed-point Newton iteration (GetInvSqrtQuantizedMultiplierExp),
// then QM(1 / (√S_in·S_out)) with a 2^20 guard; x == z_in gives the type's maximum. TFLite
// refuses codes below the zero point; here they take the x − z_in <= 1 path (the table of a
// LUT chain needs every code).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/lut.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/eltwise.hpp"

namespace vnnx::ref {

namespace detail {

/// gemmlowp SaturatingRoundingMultiplyByPOT<e> for e > 0: a left shift that saturates.
constexpr std::int32_t saturating_shift_left(std::int32_t x, int e) noexcept {
    const std::int32_t threshold = static_cast<std::int32_t>((std::int64_t{1} << (31 - e)) - 1);
    if (x > threshold) return std::numeric_limits<std::int32_t>::max();
    if (x < -threshold) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << e);
}

/// TFLite GetInvSqrtQuantizedMultiplierExp with reverse_shift −1: 1/√input as (multiplier, left shift).
inline quant::quantized_multiplier inv_sqrt_multiplier(std::int32_t input) noexcept {
    using quant::saturating_rounding_doubling_high_mul;
    if (input <= 1) return {std::numeric_limits<std::int32_t>::max(), 0};
    int shift = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        ++shift;
    }
    const int max_left_shift_bits = std::countl_zero(static_cast<std::uint32_t>(input)) - 1;
    const int left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
    shift -= left_shift_bit_pairs;
    input <<= 2 * left_shift_bit_pairs;
    // Fixed point with 3 integer bits (raw / 2^28).
    const std::int32_t fp_input = input >> 1;
    const std::int32_t fp_half_input = quant::rounding_divide_by_pot(fp_input, 1);
    const std::int32_t fp_half_three = (1 << 28) + (1 << 27);
    std::int32_t x = 1 << 28;
    for (int i = 0; i < 5; ++i) {
        const std::int32_t x3 = saturating_shift_left(
            saturating_rounding_doubling_high_mul(saturating_rounding_doubling_high_mul(x, x), x), 6);
        x = saturating_shift_left(saturating_rounding_doubling_high_mul(fp_half_three, x) -
                                      saturating_rounding_doubling_high_mul(fp_half_input, x3),
                                  3);
    }
    x = saturating_rounding_doubling_high_mul(x, 1518500250);  // · √2/2
    if (shift < 0) {
        x = static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << -shift);
        shift = 0;
    }
    return {x, -shift};
}

}  // namespace detail

template <class T>
[[nodiscard]] std::array<T, 256> rsqrt_table(operand_quant qi, operand_quant qo) {
    const auto m = quant::quantize_multiplier(1.0 / (std::sqrt(static_cast<double>(qi.scale)) * static_cast<double>(qo.scale)));
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    constexpr int guard = 20;  // keeps 1/√v an integer
    return quant::build_lut<T, T>([&](T code) {
        const std::int32_t v = static_cast<std::int32_t>(code) - qi.zero_point;
        if (v == 0) return static_cast<T>(hi);
        const auto inv = detail::inv_sqrt_multiplier(v);
        const std::int32_t data = quant::multiply_by_quantized_multiplier(1, inv.multiplier, inv.shift + guard);
        const std::int32_t out = quant::multiply_by_quantized_multiplier(data, m.multiplier, m.shift - guard) + qo.zero_point;
        return static_cast<T>(std::clamp(out, lo, hi));
    });
}

}  // namespace vnnx::ref
