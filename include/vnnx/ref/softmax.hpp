#pragma once
// SOFTMAX over the last axis with TFLite's optimized 8-bit recipe: a 256-entry float table
// of exp(−S_in·β·d), a float sum, and rounding of p/S_out (uint8 outputs add 0.5 and truncate,
// as TFLite does off ARM64; int8 outputs round half away and add the zero point).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include "vnnx/quant/softmax_tables.hpp"

namespace vnnx::ref {

template <class In, class Out>
void softmax(std::span<const In> in, std::span<Out> out, std::int64_t last_dim, float input_scale, float beta,
             float output_scale, std::int32_t output_zero_point) {
    const auto table = quant::tflite_softmax_float_table(input_scale, beta);
    const std::int64_t rows = last_dim > 0 ? static_cast<std::int64_t>(in.size()) / last_dim : 0;
    constexpr std::int32_t omin = std::numeric_limits<Out>::min(), omax = std::numeric_limits<Out>::max();
    for (std::int64_t r = 0; r < rows; ++r) {
        const In* x = in.data() + r * last_dim;
        Out* y = out.data() + r * last_dim;
        std::int32_t max_val = std::numeric_limits<In>::min();
        for (std::int64_t j = 0; j < last_dim; ++j) max_val = std::max<std::int32_t>(max_val, x[j]);
        // table[255 − max + x] = exp(−S·β·(max − x))
        auto e = [&](std::int64_t j) { return table[static_cast<std::size_t>(255 - max_val + x[j])]; };
        float sum = 0.0f;
        for (std::int64_t j = 0; j < last_dim; ++j) sum += e(j);
        const float inv = 1.0f / (sum * output_scale);
        for (std::int64_t j = 0; j < last_dim; ++j) {
            const float p = e(j) * inv;
            std::int32_t q;
            if constexpr (std::is_same_v<Out, std::uint8_t>) q = static_cast<std::int32_t>(p + 0.5f);
            else q = static_cast<std::int32_t>(std::round(p)) + output_zero_point;
            y[j] = static_cast<Out>(std::clamp(q, omin, omax));
        }
    }
}

}  // namespace vnnx::ref
