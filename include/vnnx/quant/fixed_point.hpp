#pragma once
// TFLite's (gemmlowp's) fixed-point primitives and the two requantization variants that
// the TFLite interpreter uses: double rounding (element-wise ops, depthwise conv) and ruy's
// single rounding (CONV_2D and FULLY_CONNECTED GEMMs). Pure integer code, no float.
#include <algorithm>
#include <cstdint>
#include <limits>

namespace vnnx::quant {

/// round((a * b * 2) / 2^32) with ties away from zero; saturates the one overflow case
/// (both operands INT32_MIN). gemmlowp's SaturatingRoundingDoublingHighMul.
[[nodiscard]] constexpr std::int32_t saturating_rounding_doubling_high_mul(std::int32_t a, std::int32_t b) noexcept {
    if (a == b && a == std::numeric_limits<std::int32_t>::min()) return std::numeric_limits<std::int32_t>::max();
    const std::int64_t ab = static_cast<std::int64_t>(a) * static_cast<std::int64_t>(b);
    const std::int64_t nudge = ab >= 0 ? (std::int64_t{1} << 30) : (1 - (std::int64_t{1} << 30));
    // C++ division truncates toward zero, as gemmlowp relies on.
    return static_cast<std::int32_t>((ab + nudge) / (std::int64_t{1} << 31));
}

/// The int16 form (used by HARD_SWISH).
[[nodiscard]] constexpr std::int16_t saturating_rounding_doubling_high_mul(std::int16_t a, std::int16_t b) noexcept {
    if (a == b && a == std::numeric_limits<std::int16_t>::min()) return std::numeric_limits<std::int16_t>::max();
    const std::int32_t ab = static_cast<std::int32_t>(a) * static_cast<std::int32_t>(b);
    const std::int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return static_cast<std::int16_t>((ab + nudge) / (1 << 15));
}

/// TFLite's non-rounding int16 doubling high multiply (truncates toward zero).
[[nodiscard]] constexpr std::int16_t saturating_doubling_high_mul(std::int16_t a, std::int16_t b) noexcept {
    if (a == b && a == std::numeric_limits<std::int16_t>::min()) return std::numeric_limits<std::int16_t>::max();
    const std::int32_t ab = static_cast<std::int32_t>(a) * static_cast<std::int32_t>(b);
    return static_cast<std::int16_t>(ab / (1 << 15));
}

/// x / 2^exponent rounded to nearest, ties away from zero (gemmlowp RoundingDivideByPOT).
/// Exponents a hostile model's scales can ask for are defined too: <= 0 divides by 1, and one
/// past the width is computed in 64 bits (a shift by the width or more is undefined in C++).
template <class T>
[[nodiscard]] constexpr T rounding_divide_by_pot(T x, int exponent) noexcept {
    using wide = std::conditional_t<(sizeof(T) < 4), std::int32_t, T>;
    if (exponent <= 0) return x;
    if (exponent >= static_cast<int>(8 * sizeof(wide)) - 1) {
        if (exponent >= 62) return 0;  // what every 32-bit x rounds to
        if constexpr (sizeof(wide) < 8) return static_cast<T>(rounding_divide_by_pot<std::int64_t>(x, exponent));
    }
    const wide mask = static_cast<wide>((std::int64_t{1} << exponent) - 1);
    const wide remainder = static_cast<wide>(x) & mask;
    const wide threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return static_cast<T>((static_cast<wide>(x) >> exponent) + (remainder > threshold ? 1 : 0));
}

/// Saturating left shift of an int16 (gemmlowp SaturatingLeftShift on int16).
[[nodiscard]] constexpr std::int16_t saturating_left_shift(std::int16_t x, int shift) noexcept {
    const std::int32_t wide = static_cast<std::int32_t>(x) * (std::int32_t{1} << shift);
    return static_cast<std::int16_t>(std::clamp<std::int32_t>(wide, std::numeric_limits<std::int16_t>::min(),
                                                               std::numeric_limits<std::int16_t>::max()));
}

/// TFLite MultiplyByQuantizedMultiplier: left shift (if shift > 0), doubling high multiply,
/// then rounding right shift (double rounding). `shift` is positive for a left shift.
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier(std::int32_t x, std::int32_t multiplier,
                                                                      int shift) noexcept {
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    // x * 2^left wraps in TFLite only for out-of-range inputs; do it in 32 bits like TFLite
    // (2^32 and more wrap to 0: a shift that wide is undefined in C++).
    const auto shifted = left >= 32 ? 0 : static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << left);
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right);
}

/// MultiplyByQuantizedMultiplierSmallerThanOneExp: shift <= 0, no left shift.
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier_smaller_than_one_exp(
    std::int32_t x, std::int32_t multiplier, int shift) noexcept {
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), -shift);
}

/// MultiplyByQuantizedMultiplierGreaterThanOne: shift >= 0.
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier_greater_than_one(
    std::int32_t x, std::int32_t multiplier, int shift) noexcept {
    const auto shifted = shift >= 32 ? 0 : static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << std::max(shift, 0));
    return saturating_rounding_doubling_high_mul(shifted, multiplier);
}

/// ruy's single-rounding requantization (TFLite's CONV_2D / FULLY_CONNECTED through ruy):
/// (x*m + 2^(30-shift)) >> (31-shift), arithmetic shift (ties toward +infinity), saturated.
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier_single_round(std::int32_t x,
                                                                                   std::int32_t multiplier,
                                                                                   int shift) noexcept {
    const int total = 31 - shift;
    const std::int64_t prod = static_cast<std::int64_t>(x) * static_cast<std::int64_t>(multiplier);
    if (total <= 0) {
        // Would need a left shift; only reachable with multipliers >= 2^31, which QM never makes.
        const std::int64_t r = prod * (std::int64_t{1} << std::min(-total, 31));
        return static_cast<std::int32_t>(std::clamp<std::int64_t>(r, std::numeric_limits<std::int32_t>::min(),
                                                                    std::numeric_limits<std::int32_t>::max()));
    }
    if (total >= 63) return 0;
    const std::int64_t r = (prod + (std::int64_t{1} << (total - 1))) >> total;
    return static_cast<std::int32_t>(
        std::clamp<std::int64_t>(r, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
}

}  // namespace vnnx::quant
