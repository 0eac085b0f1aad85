#pragma once
// Parameters of two-input element-wise ops (lowering.md §8.4, §8.5). ADD/SUB/SQUARED_DIFFERENCE
// and comparisons are TFLite's own int8 parameterisation; the same numbers drive the reference
// kernels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "vnnx/quant/multiplier.hpp"

namespace vnnx::quant {

enum class eltwise_kind { add, sub, mul, div, squared_difference, minimum, maximum, comparison };

struct eltwise_params {
    int left_shift = 0;  // −1 where the op has none (MUL, DIV)
    std::vector<quantized_multiplier> input1;  // empty where the op has none
    std::vector<quantized_multiplier> input2;
    quantized_multiplier output;
};

/// §8.4. `pot_scale_int16_false` selects ℓ = 15 for ADD/SUB (only when the option is explicitly false).
[[nodiscard]] inline eltwise_params eltwise_parameters(eltwise_kind k, double s_in, double s_in2, double s_out,
                                                       bool pot_scale_int16_false = false) {
    const double T = 2 * std::max(s_in, s_in2);
    eltwise_params p;
    switch (k) {
        case eltwise_kind::add:
        case eltwise_kind::sub:
            p.left_shift = pot_scale_int16_false ? 15 : 20;
            p.input1 = {quantize_multiplier(s_in / T)};
            p.input2 = {quantize_multiplier(s_in2 / T)};
            p.output = quantize_multiplier(T / (std::ldexp(1.0, p.left_shift) * s_out));
            break;
        case eltwise_kind::squared_difference:
            p.left_shift = 7;
            p.input1 = {quantize_multiplier(s_in / T)};
            p.input2 = {quantize_multiplier(s_in2 / T)};
            p.output = quantize_multiplier(T * T / (std::ldexp(1.0, 14) * s_out));
            break;
        case eltwise_kind::mul:
        case eltwise_kind::div:  // SDK quirk: DIV uses the MUL multiplier
            p.left_shift = -1;
            p.output = quantize_multiplier(s_in * s_in2 / s_out);
            break;
        case eltwise_kind::minimum:
        case eltwise_kind::maximum:
            p.left_shift = 0;
            p.input1 = {quantize_multiplier(s_in)};
            p.input2 = {quantize_multiplier(s_in2)};
            p.output = quantize_multiplier(s_out);
            break;
        case eltwise_kind::comparison:
            p.left_shift = 8;
            p.input1 = {quantize_multiplier(s_in)};
            p.input2 = {quantize_multiplier(s_in2)};
            p.output = quantize_multiplier(1.0);
            break;
    }
    return p;
}

/// §8.5 broadcast MUL bias per row: −z_in·Σ(f − z_f) + round_away(z_out / M) (0 when M = 0).
[[nodiscard]] inline std::int32_t broadcast_mul_bias(std::int32_t z_in, std::int64_t sum_f_minus_zf, std::int32_t z_out,
                                                     double M) {
    const double second = M == 0.0 ? 0.0 : round_away(static_cast<double>(z_out) / M);
    return static_cast<std::int32_t>(-static_cast<std::int64_t>(z_in) * sum_f_minus_zf +
                                     static_cast<std::int64_t>(second));
}

}  // namespace vnnx::quant
