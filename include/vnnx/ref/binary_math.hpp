#pragma once
// 8-bit comparisons, DIV and SQUARED_DIFFERENCE with broadcasting, TensorFlow Lite's integer
// semantics (comparisons.cc, div.cc, squared_difference.cc). Checked bit for bit against
// TFLite (test/data/ref).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <span>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/eltwise.hpp"
#include "vnnx/ref/shape.hpp"

namespace vnnx::ref {

enum class comparison { equal, not_equal, greater, greater_equal, less, less_equal };

/// Both operands rescaled to a common fixed-point scale: (x − z)·2^8·QM(S) with S < 1.
template <class T>
void compare(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b, std::span<const std::int32_t> sb,
             std::span<std::uint8_t> out, operand_quant qa, operand_quant qb, comparison op) {
    constexpr int left_shift = 8;
    const auto ma = quant::quantize_multiplier_smaller_than_one(static_cast<double>(qa.scale));
    const auto mb = quant::quantize_multiplier_smaller_than_one(static_cast<double>(qb.scale));
    const auto os = broadcast_shape(sa, sb, "comparison");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const std::int32_t x = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(
            (static_cast<std::int32_t>(a[static_cast<std::size_t>(ia)]) - qa.zero_point) * (1 << left_shift), ma.multiplier, ma.shift);
        const std::int32_t y = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(
            (static_cast<std::int32_t>(b[static_cast<std::size_t>(ib)]) - qb.zero_point) * (1 << left_shift), mb.multiplier, mb.shift);
        bool r = false;
        switch (op) {
            case comparison::equal: r = x == y; break;
            case comparison::not_equal: r = x != y; break;
            case comparison::greater: r = x > y; break;
            case comparison::greater_equal: r = x >= y; break;
            case comparison::less: r = x < y; break;
            case comparison::less_equal: r = x <= y; break;
        }
        out[static_cast<std::size_t>(io)] = r ? 1 : 0;
    });
}

struct squared_difference_params {
    std::int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
    quant::quantized_multiplier input1, input2, output;
};

/// TFLite's squared_difference.cc Prepare for int8: inputs on a common scale after a left
/// shift of 7, the squared difference requantized by (2·max S_in)² / (2^14·S_out).
[[nodiscard]] inline squared_difference_params make_squared_difference_params(operand_quant a, operand_quant b, operand_quant out) {
    squared_difference_params p;
    p.input1_offset = -a.zero_point;
    p.input2_offset = -b.zero_point;
    p.output_offset = out.zero_point;
    const double twice_max = 2.0 * static_cast<double>(std::max(a.scale, b.scale));
    p.input1 = quant::quantize_multiplier_smaller_than_one(static_cast<double>(a.scale) / twice_max);
    p.input2 = quant::quantize_multiplier_smaller_than_one(static_cast<double>(b.scale) / twice_max);
    p.output = quant::quantize_multiplier(twice_max * twice_max / (static_cast<double>(1 << 14) * static_cast<double>(out.scale)));
    return p;
}

template <class T>
void squared_difference(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b,
                        std::span<const std::int32_t> sb, std::span<T> out, const squared_difference_params& p) {
    constexpr int left_shift = 7;
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const auto os = broadcast_shape(sa, sb, "SQUARED_DIFFERENCE");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const std::int32_t x = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(
            (static_cast<std::int32_t>(a[static_cast<std::size_t>(ia)]) + p.input1_offset) * (1 << left_shift), p.input1.multiplier,
            p.input1.shift);
        const std::int32_t y = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(
            (static_cast<std::int32_t>(b[static_cast<std::size_t>(ib)]) + p.input2_offset) * (1 << left_shift), p.input2.multiplier,
            p.input2.shift);
        const std::int32_t d = x - y;
        const std::int32_t r = quant::multiply_by_quantized_multiplier(d * d, p.output.multiplier, p.output.shift) + p.output_offset;
        out[static_cast<std::size_t>(io)] = static_cast<T>(std::clamp(r, lo, hi));
    });
}

namespace detail {
inline int leading_zeros(std::uint32_t x) { return x == 0 ? 32 : std::countl_zero(x); }
inline int leading_sign_bits(std::int32_t x) {
    if (x >= 0) return leading_zeros(static_cast<std::uint32_t>(x)) - 1;
    if (x == std::numeric_limits<std::int32_t>::min()) return 0;
    return leading_zeros(2 * static_cast<std::uint32_t>(-x) - 1);
}
inline std::int32_t saturating_left_shift32(std::int32_t x, int e) {
    const std::int32_t threshold = (1 << (31 - e)) - 1;
    if (x > threshold) return std::numeric_limits<std::int32_t>::max();
    if (x < -threshold) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << e);
}
/// gemmlowp one_over_one_plus_x_for_x_in_0_1: a Q0.31 input, three Newton steps in Q2.29.
inline std::int32_t one_over_one_plus_x(std::int32_t a) {
    using quant::saturating_rounding_doubling_high_mul;
    const std::int64_t sum = static_cast<std::int64_t>(a) + std::numeric_limits<std::int32_t>::max();
    const auto half_denominator = static_cast<std::int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
    std::int32_t x = 1515870810 + saturating_rounding_doubling_high_mul(half_denominator, -1010580540);  // 48/17 − 32/17·d
    for (int i = 0; i < 3; ++i) {
        const std::int32_t one_minus = (1 << 29) - saturating_rounding_doubling_high_mul(half_denominator, x);
        x = x + saturating_left_shift32(saturating_rounding_doubling_high_mul(x, one_minus), 2);
    }
    return saturating_left_shift32(x, 1);  // ·1/2 as Q1.30, then rescaled to Q0.31
}
}  // namespace detail

/// TFLite DivElementwise for 8-bit types: (a − z_a) / (b − z_b) through GetReciprocal, scaled
/// by QM(S_a / (S_b·S_out)). A zero divisor is an error (TFLite leaves it undefined).
template <class T, class Bad>
void divide(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b, std::span<const std::int32_t> sb,
            std::span<T> out, operand_quant qa, operand_quant qb, operand_quant qo, quant::activation_range act, Bad&& bad) {
    const auto m = quant::quantize_multiplier(static_cast<double>(qa.scale / (qb.scale * qo.scale)));
    const auto os = broadcast_shape(sa, sb, "DIV");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        std::int32_t x = static_cast<std::int32_t>(a[static_cast<std::size_t>(ia)]) - qa.zero_point;
        std::int32_t y = static_cast<std::int32_t>(b[static_cast<std::size_t>(ib)]) - qb.zero_point;
        if (y == 0) bad("DIV by a zero value");
        if (y < 0) {
            x = -x;
            y = -y;
        }
        const int headroom_plus_one = detail::leading_zeros(static_cast<std::uint32_t>(y));
        const int recip_shift = 31 - headroom_plus_one;
        const std::int32_t inv = detail::one_over_one_plus_x(
            static_cast<std::int32_t>((static_cast<std::uint32_t>(y) << headroom_plus_one) - (std::uint32_t{1} << 31)));
        const int headroom = detail::leading_sign_bits(x);
        const std::int32_t unscaled = quant::multiply_by_quantized_multiplier_greater_than_one(x, inv, headroom);
        const int total_shift = m.shift - recip_shift - headroom;
        std::int32_t r = 0;
        if (total_shift > 0) r = quant::multiply_by_quantized_multiplier(unscaled, m.multiplier, total_shift);
        else if (total_shift >= -31) r = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(unscaled, m.multiplier, total_shift);
        out[static_cast<std::size_t>(io)] = static_cast<T>(std::clamp(r + qo.zero_point, act.min, act.max));
    });
}

}  // namespace vnnx::ref
