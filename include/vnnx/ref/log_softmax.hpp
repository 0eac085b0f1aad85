#pragma once
// LOG_SOFTMAX over the last axis with TFLite's optimized 8-bit kernel (the builtin one): the
// float table exp(−S_in·d) of SOFTMAX (beta 1), a float sum, its log, and
// rint(S_in/S_out·x − (S_in·max + log Σ)/S_out) + z_out. TFLite requires S_out = 16/256 and
// z_out = 127 (int8) or 255 (uint8).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "vnnx/quant/softmax_tables.hpp"

namespace vnnx::ref {

template <class T>
void log_softmax(std::span<const T> in, std::span<T> out, std::int64_t last_dim, float input_scale, float output_scale,
                 std::int32_t output_zero_point) {
    const auto table = quant::tflite_softmax_float_table(input_scale, 1.0f);
    const std::int64_t rows = last_dim > 0 ? static_cast<std::int64_t>(in.size()) / last_dim : 0;
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    for (std::int64_t r = 0; r < rows; ++r) {
        const T* x = in.data() + r * last_dim;
        T* y = out.data() + r * last_dim;
        std::int32_t max_val = std::numeric_limits<T>::min();
        for (std::int64_t j = 0; j < last_dim; ++j) max_val = std::max<std::int32_t>(max_val, x[j]);
        float sum = 0.0f;
        for (std::int64_t j = 0; j < last_dim; ++j) sum += table[static_cast<std::size_t>(255 - max_val + x[j])];
        const float log_sum = std::log(sum);
        const float scale = input_scale / output_scale;
        const float precomputed = (input_scale * static_cast<float>(max_val) + log_sum) / output_scale;
        for (std::int64_t j = 0; j < last_dim; ++j) {
            const float v = scale * static_cast<float>(x[j]) - precomputed;
            const auto q = static_cast<std::int32_t>(std::rint(v)) + output_zero_point;
            y[j] = static_cast<T>(std::clamp(q, lo, hi));
        }
    }
}

}  // namespace vnnx::ref
