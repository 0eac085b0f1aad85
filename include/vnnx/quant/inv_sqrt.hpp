#pragma once
// TFLite's GetInvSqrtQuantizedMultiplierExp (used by L2_NORMALIZATION): 1/sqrt(x) of an int32
// as a quantized multiplier and shift, by five Newton-Raphson steps in gemmlowp fixed point.
// Pure integer code, so the simulator and the reference share it bit for bit.
#include <bit>
#include <cstdint>
#include <limits>

#include "vnnx/quant/fixed_point.hpp"

namespace vnnx::quant {

namespace detail {
/// gemmlowp SaturatingRoundingMultiplyByPOT<e> for e > 0 (a saturating left shift).
[[nodiscard]] constexpr std::int32_t saturating_pot(std::int32_t x, int e) noexcept {
    const std::int32_t threshold = static_cast<std::int32_t>((std::int64_t{1} << (31 - e)) - 1);
    if (x > threshold) return std::numeric_limits<std::int32_t>::max();
    if (x < -threshold) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << e);
}
[[nodiscard]] constexpr std::int32_t wrap_sub(std::int32_t a, std::int32_t b) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b));
}
}  // namespace detail

struct inv_sqrt_multiplier {
    std::int32_t multiplier = 0;
    int shift = 0;  // after reverse_shift is applied (positive: left)
};

/// `input` >= 0; reverse_shift is -1 for L2_NORMALIZATION (the shift is returned as a left shift).
[[nodiscard]] constexpr inv_sqrt_multiplier inv_sqrt_quantized_multiplier_exp(std::int32_t input, int reverse_shift) noexcept {
    if (input <= 1) return {std::numeric_limits<std::int32_t>::max(), 0};  // 0 treated as 1, as TFLite
    int shift = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        ++shift;
    }
    const unsigned max_left_shift_bits = static_cast<unsigned>(std::countl_zero(static_cast<std::uint32_t>(input))) - 1;
    const unsigned left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
    shift -= static_cast<int>(left_shift_bit_pairs);
    input <<= 2 * left_shift_bit_pairs;
    // Fixed point with 3 integer bits: F3 raw r means r / 2^28.
    const std::int32_t fp_input = input >> 1;
    const std::int32_t fp_half_input = rounding_divide_by_pot(fp_input, 1);
    const std::int32_t fp_half_three = (1 << 28) + (1 << 27);
    std::int32_t x = 1 << 28;  // F3 one
    for (int i = 0; i < 5; ++i) {
        // x·x·x has 9 integer bits; Rescale<3> is a saturating shift left by 6.
        const std::int32_t x2 = saturating_rounding_doubling_high_mul(x, x);
        const std::int32_t x3 = detail::saturating_pot(saturating_rounding_doubling_high_mul(x2, x), 6);
        // Both products have 6 integer bits; Rescale<3> shifts left by 3.
        const std::int32_t a = saturating_rounding_doubling_high_mul(fp_half_three, x);
        const std::int32_t b = saturating_rounding_doubling_high_mul(fp_half_input, x3);
        x = detail::saturating_pot(detail::wrap_sub(a, b), 3);
    }
    const std::int32_t half_sqrt_2 = 1518500250;  // sqrt(2)/2 with 0 integer bits
    x = saturating_rounding_doubling_high_mul(x, half_sqrt_2);
    if (shift < 0) {
        x = static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << -shift);
        shift = 0;
    }
    return {x, shift * reverse_shift};
}

}  // namespace vnnx::quant
