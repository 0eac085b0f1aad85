#pragma once
// Single-input 8-bit kernels with TFLite's interpreter semantics: RELU family, LEAKY_RELU,
// HARD_SWISH (int16 fixed point), LOGISTIC/TANH (float-built 256-entry tables), QUANTIZE
// (requantize or from float) and DEQUANTIZE.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/lut.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/eltwise.hpp"

namespace vnnx::ref {

/// RELU (lo 0, hi +inf), RELU6 (0, 6), RELU_N1_TO_1 (−1, 1), RELU_0_TO_1 (0, 1).
template <class T>
void relu_x(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo, float lo, float hi) {
    // TFLite divides the float scales in float, then widens.
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale / qo.scale));
    constexpr std::int32_t tmin = std::numeric_limits<T>::min(), tmax = std::numeric_limits<T>::max();
    const std::int32_t amin = std::max(tmin, qo.zero_point + static_cast<std::int32_t>(std::round(lo / qo.scale)));
    const std::int32_t amax = std::isinf(hi) ? tmax
                                             : std::min(tmax, qo.zero_point + static_cast<std::int32_t>(std::round(hi / qo.scale)));
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t v =
            qo.zero_point + quant::multiply_by_quantized_multiplier(static_cast<std::int32_t>(in[i]) - qi.zero_point,
                                                                    m.multiplier, m.shift);
        out[i] = static_cast<T>(std::clamp(v, amin, amax));
    }
}

template <class T>
void leaky_relu(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo, float alpha) {
    // A negative alpha gives a negative multiplier (TFLite's QuantizeMultiplier keeps the sign).
    const double r_alpha = static_cast<double>(qi.scale * alpha / qo.scale);
    auto m_alpha = quant::quantize_multiplier(std::abs(r_alpha));
    if (r_alpha < 0) m_alpha.multiplier = -m_alpha.multiplier;
    const auto m_id = quant::quantize_multiplier(static_cast<double>(qi.scale / qo.scale));
    constexpr std::int32_t tmin = std::numeric_limits<T>::min(), tmax = std::numeric_limits<T>::max();
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t x = static_cast<std::int32_t>(in[i]) - qi.zero_point;
        const auto& m = x >= 0 ? m_id : m_alpha;
        const std::int32_t v = qo.zero_point + quant::multiply_by_quantized_multiplier(x, m.multiplier, m.shift);
        out[i] = static_cast<T>(std::clamp(v, tmin, tmax));
    }
}

struct hard_swish_params {
    std::int16_t input_zero_point = 0, output_zero_point = 0;
    std::int16_t reluish_multiplier = 0, output_multiplier = 0;
    int reluish_exponent = 0, output_exponent = 0;
};

/// TFLite HardSwishPrepare: everything on a "hires" input scale of S_in/128.
[[nodiscard]] inline hard_swish_params make_hard_swish_params(operand_quant qi, operand_quant qo) {
    hard_swish_params p;
    p.input_zero_point = static_cast<std::int16_t>(qi.zero_point);
    p.output_zero_point = static_cast<std::int16_t>(qo.zero_point);
    const float hires = (1.0f / 128.0f) * qi.scale;
    const float reluish_scale = 3.0f / 32768.0f;
    const auto om = quant::quantize_multiplier(static_cast<double>(hires / qo.scale));
    p.output_multiplier = quant::down_scale_int32_to_int16_multiplier(om.multiplier);
    p.output_exponent = om.shift;
    const auto rm = quant::quantize_multiplier(static_cast<double>(hires / reluish_scale));
    p.reluish_multiplier = quant::down_scale_int32_to_int16_multiplier(rm.multiplier);
    p.reluish_exponent = rm.shift;
    if (p.output_exponent > 0) fail(error_kind::unsupported, "HARD_SWISH: output multiplier exponent must be <= 0");
    return p;
}

template <class T>
[[nodiscard]] T hard_swish_one(T v, const hard_swish_params& p) {
    using quant::rounding_divide_by_pot;
    const auto input = static_cast<std::int16_t>(static_cast<std::int32_t>(v) - p.input_zero_point);
    const auto hires = static_cast<std::int16_t>(input * (1 << 7));
    const std::int16_t preshift_out = quant::saturating_rounding_doubling_high_mul(hires, p.output_multiplier);
    std::int16_t reluish = hires;
    if (p.reluish_exponent > 0) reluish = quant::saturating_left_shift(reluish, p.reluish_exponent - 1);
    reluish = quant::saturating_rounding_doubling_high_mul(reluish, p.reluish_multiplier);
    if (p.reluish_exponent > 0) reluish = quant::saturating_left_shift(reluish, 1);
    if (p.reluish_exponent < 0) reluish = rounding_divide_by_pot<std::int16_t>(reluish, -p.reluish_exponent);
    // Map [-32768, 32767] to [0, 32767]: the "relu6(x+3)/6" factor as a Q15 fraction.
    reluish = static_cast<std::int16_t>((static_cast<std::int32_t>(reluish) + (1 << 15)) >> 1);
    const std::int16_t preshift = quant::saturating_doubling_high_mul(reluish, preshift_out);
    std::int32_t o = rounding_divide_by_pot<std::int16_t>(preshift, -p.output_exponent);
    o += p.output_zero_point;
    return static_cast<T>(std::clamp<std::int32_t>(o, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

template <class T>
void hard_swish(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo) {
    const auto p = make_hard_swish_params(qi, qo);
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = hard_swish_one(in[i], p);
}

/// TFLite's LOGISTIC table (optimized kernel).
template <class T>
[[nodiscard]] std::array<T, 256> logistic_table(operand_quant qi, operand_quant qo) {
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point,
                               [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}

template <class T>
[[nodiscard]] std::array<T, 256> tanh_table(operand_quant qi, operand_quant qo) {
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point, [](float x) { return std::tanh(x); });
}

template <class T>
void apply_table(std::span<const T> in, std::span<T> out, const std::array<T, 256>& table) {
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = quant::lut_lookup(table, in[i]);
}

/// QUANTIZE between 8-bit types: requantize with QM(S_in / S_out), double rounding.
template <class In, class Out>
void requantize(std::span<const In> in, std::span<Out> out, operand_quant qi, operand_quant qo) {
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale) / static_cast<double>(qo.scale));
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t v =
            quant::multiply_by_quantized_multiplier(static_cast<std::int32_t>(in[i]) - qi.zero_point, m.multiplier, m.shift) +
            qo.zero_point;
        out[i] = static_cast<Out>(
            std::clamp<std::int32_t>(v, std::numeric_limits<Out>::min(), std::numeric_limits<Out>::max()));
    }
}

/// QUANTIZE from float: round(x / S) + z in double, clamped; NaN gives the type minimum, as
/// TFLite's build does (log or sqrt of a negative value inside a float island).
template <class Out>
void quantize(std::span<const float> in, std::span<Out> out, operand_quant qo) {
    const double s = qo.scale;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (std::isnan(in[i])) {
            out[i] = std::numeric_limits<Out>::min();
            continue;
        }
        const double r = std::round(static_cast<double>(in[i]) / s);
        const double c = std::clamp(r + qo.zero_point, static_cast<double>(std::numeric_limits<Out>::min()),
                                    static_cast<double>(std::numeric_limits<Out>::max()));
        out[i] = static_cast<Out>(static_cast<std::int32_t>(c));
    }
}

/// DEQUANTIZE: S · (x − z), computed in double and rounded to float.
template <class In>
void dequantize(std::span<const In> in, std::span<float> out, operand_quant qi) {
    const double s = qi.scale;
    for (std::size_t i = 0; i < in.size(); ++i)
        out[i] = static_cast<float>(s * (static_cast<std::int32_t>(in[i]) - qi.zero_point));
}

}  // namespace vnnx::ref
