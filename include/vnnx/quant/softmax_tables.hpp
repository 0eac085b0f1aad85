#pragma once
// SOFTMAX tables: the VNNX exponential table and step list of lowering.md §8.7, and TFLite's
// own float table used by its optimized int8/uint8 kernel.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "vnnx/quant/multiplier.hpp"

namespace vnnx::quant {

struct softmax_vnnx_tables {
    double lut_scale = 0;
    std::array<std::uint32_t, 256> exp_table{};  // indexed by byte r, code v = (int8)r
    std::vector<std::uint32_t> step_values;      // lut_int32
    std::vector<std::int8_t> step_codes;         // idx_int8
    quantized_multiplier input;                  // QM(1 / (S_out · 2^16))
};

/// §8.7 for a softmax axis of `depth` elements.
[[nodiscard]] inline softmax_vnnx_tables softmax_tables(std::int64_t depth, double s_in, double s_out) {
    softmax_vnnx_tables t;
    t.lut_scale = std::min(std::ldexp(1.0, 24), std::ldexp(1.0, 31) / static_cast<double>(std::max<std::int64_t>(depth, 1)));
    for (int v = -128; v <= 127; ++v) {
        double e = round_away(std::exp(static_cast<double>(v - 127) * s_in) * t.lut_scale);
        e = std::clamp(e, -2147483648.0, 2147483647.0);
        t.exp_table[static_cast<std::uint8_t>(v)] = static_cast<std::uint32_t>(static_cast<std::int32_t>(e));
    }
    for (int v = -128; v <= 127; ++v) {
        const std::uint32_t e = t.exp_table[static_cast<std::uint8_t>(v)];
        if (t.step_values.empty() || t.step_values.back() != e) {
            t.step_values.push_back(e);
            t.step_codes.push_back(static_cast<std::int8_t>(v));
        }
    }
    t.input = quantize_multiplier(1.0 / (s_out * 65536.0));
    return t;
}

/// TFLite PopulateSoftmaxLookupTable: table[255 − d] = expf(−S_in·β·d) for d = 0..255.
[[nodiscard]] inline std::array<float, 256> tflite_softmax_float_table(float s_in, float beta) {
    std::array<float, 256> table{};
    const float scale = -s_in * beta;
    for (int d = 0; d <= 255; ++d) table[static_cast<std::size_t>(255 - d)] = std::exp(scale * static_cast<float>(d));
    return table;
}

}  // namespace vnnx::quant
