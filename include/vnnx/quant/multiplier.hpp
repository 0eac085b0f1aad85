#pragma once
// Real multiplier -> (int32 multiplier, shift) as TFLite's QuantizeMultiplier (lowering.md
// §8.1), and the rounding helpers of lowering.md §2.2.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "vnnx/support/error.hpp"

namespace vnnx::quant {

/// sign(x)·floor(|x| + 0.5): C's round(), TFLite's TfLiteRound.
[[nodiscard]] inline double round_away(double x) noexcept { return std::round(x); }
[[nodiscard]] inline float round_away(float x) noexcept { return std::round(x); }

/// Round half to even (Python's round()).
[[nodiscard]] inline double round_even(double x) noexcept {
    const double f = std::floor(x);
    const double diff = x - f;
    if (diff > 0.5) return f + 1.0;
    if (diff < 0.5) return f;
    return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

struct quantized_multiplier {
    std::int32_t multiplier = 0;
    int shift = 0;  // positive: left shift
    friend constexpr bool operator==(const quantized_multiplier&, const quantized_multiplier&) = default;
};

/// QM(r) of lowering.md §8.1 = TFLite QuantizeMultiplier. Negative or non-finite r is an error.
[[nodiscard]] inline quantized_multiplier quantize_multiplier(double r) {
    if (!(r >= 0.0) || !std::isfinite(r))
        fail_input("quantize_multiplier: real multiplier " + std::to_string(r) + " must be finite and >= 0");
    if (r == 0.0) return {0, 0};
    int e = 0;
    const double q = std::frexp(r, &e);
    auto m = static_cast<std::int64_t>(std::round(q * static_cast<double>(std::int64_t{1} << 31)));
    if (m == (std::int64_t{1} << 31)) {
        m /= 2;
        ++e;
    }
    if (e < -31) {
        e = 0;
        m = 0;
    }
    return {static_cast<std::int32_t>(m), e};
}

/// TFLite QuantizeMultiplierSmallerThanOneExp: r in (0, 1), shift <= 0.
[[nodiscard]] inline quantized_multiplier quantize_multiplier_smaller_than_one(double r) {
    if (!(r > 0.0 && r < 1.0))
        fail_input("quantize_multiplier_smaller_than_one: " + std::to_string(r) + " must be in (0, 1)");
    return quantize_multiplier(r);
}

/// TFLite QuantizeMultiplierGreaterThanOne: r > 1, shift >= 0.
[[nodiscard]] inline quantized_multiplier quantize_multiplier_greater_than_one(double r) {
    if (!(r > 1.0)) fail_input("quantize_multiplier_greater_than_one: " + std::to_string(r) + " must be > 1");
    return quantize_multiplier(r);
}

/// TFLite DownScaleInt32ToInt16Multiplier (HARD_SWISH): round the Q31 multiplier to Q15.
[[nodiscard]] constexpr std::int16_t down_scale_int32_to_int16_multiplier(std::int32_t m) noexcept {
    constexpr std::int32_t offset = 1 << 15;
    if (m >= std::numeric_limits<std::int32_t>::max() - offset) return std::numeric_limits<std::int16_t>::max();
    return static_cast<std::int16_t>((m + offset) >> 16);
}

}  // namespace vnnx::quant
