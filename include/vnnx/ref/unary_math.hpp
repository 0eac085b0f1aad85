#pragma once
// 8-bit ABS, RSQRT, ELU and GELU with TensorFlow Lite's integer semantics: ABS and RSQRT
// requantize in fixed point (elementwise.cc), ELU and GELU are 256-entry tables computed in
// float (PopulateLookupTable). Checked bit for bit against TFLite (test/data/ref).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <span>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/lut.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/eltwise.hpp"

namespace vnnx::ref {

/// ABS: |x − z_in|, rescaled by QM(S_in/S_out) unless both scales are equal.
template <class T>
void abs_quantized(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo) {
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const bool rescale = qi.scale != qo.scale;
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale) / static_cast<double>(qo.scale));
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t v = std::abs(static_cast<std::int32_t>(in[i]) - qi.zero_point);
        const std::int32_t r = rescale ? quant::multiply_by_quantized_multiplier(v, m.multiplier, m.shift) : v;
        out[i] = static_cast<T>(std::clamp(r + qo.zero_point, lo, hi));
    }
}

namespace detail {
// gemmlowp fixed-point helpers for the inverse square root below.
inline std::int32_t sat_shift_left(std::int32_t x, int exponent) {
    const std::int32_t threshold = (std::int32_t{1} << (31 - exponent)) - 1;
    if (x > threshold) return std::numeric_limits<std::int32_t>::max();
    if (x < -threshold) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << exponent);
}
}  // namespace detail

/// TFLite GetInvSqrtQuantizedMultiplierExp (reverse_shift −1): 1/sqrt(input) as a multiplier
/// and a left shift, by five Newton-Raphson steps in Q3.28.
inline void inv_sqrt_multiplier(std::int32_t input, std::int32_t& multiplier, int& shift) {
    using quant::saturating_rounding_doubling_high_mul;
    if (input <= 1) {
        multiplier = std::numeric_limits<std::int32_t>::max();
        shift = 0;
        return;
    }
    int s = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        ++s;
    }
    const unsigned max_left_shift_bits = static_cast<unsigned>(std::countl_zero(static_cast<std::uint32_t>(input))) - 1;
    const unsigned left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
    s -= static_cast<int>(left_shift_bit_pairs);
    input <<= 2 * left_shift_bit_pairs;
    const std::int32_t fx_input = input >> 1;                                  // Q3.28
    const std::int32_t fx_half_input = quant::rounding_divide_by_pot(fx_input, 1);
    const std::int32_t fx_half_three = (1 << 28) + (1 << 27);                 // 1.5 in Q3.28
    std::int32_t x = 1 << 28;                                                 // 1.0
    for (int i = 0; i < 5; ++i) {
        const std::int32_t x3 = detail::sat_shift_left(
            saturating_rounding_doubling_high_mul(saturating_rounding_doubling_high_mul(x, x), x), 6);
        const std::int32_t a = saturating_rounding_doubling_high_mul(fx_half_three, x);
        const std::int32_t b = saturating_rounding_doubling_high_mul(fx_half_input, x3);
        x = detail::sat_shift_left(static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b)), 3);
    }
    x = saturating_rounding_doubling_high_mul(x, 1518500250);  // · sqrt(2)/2 in Q0.31
    if (s < 0) {
        x = static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << -s);
        s = 0;
    }
    multiplier = x;
    shift = -s;
}

/// RSQRT: 1/sqrt(x − z_in) in fixed point (scaled up by 2^20), then QM(1/(sqrt(S_in)·S_out));
/// x = z_in gives the type maximum. Negative inputs are an error in TFLite: `bad` is called.
template <class T, class Bad>
void rsqrt_quantized(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo, Bad&& bad) {
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    constexpr int k_shift = 20;
    const auto m = quant::quantize_multiplier(1.0 / (std::sqrt(static_cast<double>(qi.scale)) * static_cast<double>(qo.scale)));
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t v = static_cast<std::int32_t>(in[i]) - qi.zero_point;
        if (v < 0) bad("RSQRT of a negative value");
        if (v == 0) {
            out[i] = static_cast<T>(hi);
            continue;
        }
        std::int32_t inv = 0;
        int inv_shift = 0;
        inv_sqrt_multiplier(v, inv, inv_shift);
        const std::int32_t data = quant::multiply_by_quantized_multiplier(1, inv, inv_shift + k_shift);
        const std::int32_t r = quant::multiply_by_quantized_multiplier(data, m.multiplier, m.shift - k_shift) + qo.zero_point;
        out[i] = static_cast<T>(std::clamp(r, lo, hi));
    }
}

/// ELU: exp(x) − 1 below zero, as TFLite's float table.
template <class T>
[[nodiscard]] std::array<T, 256> elu_table(operand_quant qi, operand_quant qo) {
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point,
                               [](float x) { return x < 0.0f ? std::exp(x) - 1.0f : x; });
}

/// GELU: 0.5·x·erfc(−x/√2), or the tanh approximation, as TFLite's float table.
template <class T>
[[nodiscard]] std::array<T, 256> gelu_table(operand_quant qi, operand_quant qo, bool approximate) {
    if (approximate) {
        constexpr float k = 0.7978845608028654f;  // sqrt(2/pi)
        return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point, [](float x) {
            return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
        });
    }
    constexpr float inv_sqrt2 = 0.7071067811865476f;
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point,
                               [](float x) { return 0.5f * x * std::erfc(x * -inv_sqrt2); });
}

}  // namespace vnnx::ref
