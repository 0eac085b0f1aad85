#pragma once
// 8-bit ABS, NEG, RSQRT, ELU, GELU, EXP, LOG and SQRT with TensorFlow Lite's integer semantics:
// ABS and RSQRT requantize in fixed point (elementwise.cc), NEG is zero-point arithmetic
// (integer_ops/neg.h), ELU, GELU and EXP are 256-entry tables computed in float (LUTPopulate).
// LOG and SQRT have no 8-bit kernel in TFLite; converters leave them as float islands
// (DEQUANTIZE → op → QUANTIZE), whose result the same float table gives. Checked against TFLite
// (test/data/ref: the single operators, or their islands where TFLite lacks the 8-bit kernel).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <span>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/inv_sqrt.hpp"
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

/// NEG: z_in + z_out − x when both scales are equal (TFLite's integer kernel); otherwise
/// −(x − z_in) rescaled by QM(S_in/S_out), as ABS does.
template <class T>
void neg_quantized(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo) {
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const bool rescale = qi.scale != qo.scale;
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale) / static_cast<double>(qo.scale));
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t v = qi.zero_point - static_cast<std::int32_t>(in[i]);
        const std::int32_t r = rescale ? quant::multiply_by_quantized_multiplier(v, m.multiplier, m.shift) : v;
        out[i] = static_cast<T>(std::clamp(r + qo.zero_point, lo, hi));
    }
}

/// RSQRT: 1/sqrt(x − z_in) in fixed point (scaled up by 2^20), then QM(1/(sqrt(S_in)·S_out));
/// x = z_in gives the type maximum. TFLite refuses codes below the zero point at run time; here
/// they take the x − z_in <= 1 path, because the table of a LUT chain needs every code.
template <class T>
[[nodiscard]] std::array<T, 256> rsqrt_table(operand_quant qi, operand_quant qo) {
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    constexpr int guard = 20;  // keeps 1/sqrt(v) an integer
    const auto m = quant::quantize_multiplier(1.0 / (std::sqrt(static_cast<double>(qi.scale)) * static_cast<double>(qo.scale)));
    return quant::build_lut<T, T>([&](T code) {
        const std::int32_t v = static_cast<std::int32_t>(code) - qi.zero_point;
        if (v == 0) return static_cast<T>(hi);
        const auto inv = quant::inv_sqrt_quantized_multiplier_exp(v, -1);
        const std::int32_t data = quant::multiply_by_quantized_multiplier(1, inv.multiplier, inv.shift + guard);
        const std::int32_t r = quant::multiply_by_quantized_multiplier(data, m.multiplier, m.shift - guard) + qo.zero_point;
        return static_cast<T>(std::clamp(r, lo, hi));
    });
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

/// EXP: TFLite's float table (exp.cc).
template <class T>
[[nodiscard]] std::array<T, 256> exp_table(operand_quant qi, operand_quant qo) {
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point, [](float x) { return std::exp(x); });
}

/// LOG: the float island's table; log(0) = −inf and log of a negative value (NaN) give the
/// type minimum, as the island's QUANTIZE does.
template <class T>
[[nodiscard]] std::array<T, 256> log_table(operand_quant qi, operand_quant qo) {
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point, [](float x) { return std::log(x); });
}

/// SQRT: the float island's table; a negative input (NaN) gives the type minimum.
template <class T>
[[nodiscard]] std::array<T, 256> sqrt_table(operand_quant qi, operand_quant qo) {
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point, [](float x) { return std::sqrt(x); });
}

/// The float32 kernels of these operators (inside float islands).
enum class float_unary { exp, log, sqrt, neg, abs, rsqrt };

inline void apply_float_unary(float_unary f, std::span<const float> in, std::span<float> out) {
    for (std::size_t i = 0; i < in.size(); ++i) {
        const float x = in[i];
        switch (f) {
            case float_unary::exp: out[i] = std::exp(x); break;
            case float_unary::log: out[i] = std::log(x); break;
            case float_unary::sqrt: out[i] = std::sqrt(x); break;
            case float_unary::neg: out[i] = -x; break;
            case float_unary::abs: out[i] = std::abs(x); break;
            case float_unary::rsqrt: out[i] = 1.0f / std::sqrt(x); break;
        }
    }
}

}  // namespace vnnx::ref
