#pragma once
// L2_NORMALIZATION over the last axis with TFLite's 8-bit kernels: Σ(x − z_in)² in int32, its
// inverse square root as a quantized multiplier (quant/inv_sqrt.hpp), then
//   int8:  MultiplyByQuantizedMultiplier(x − z_in, m, shift + 7), clamped (output 1/128, zp 0);
//   uint8: 128 + MultiplyByQuantizedMultiplierSmallerThanOneExp(128·(x − z_in), m, shift),
//          clamped (output 1/128, zp 128).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/inv_sqrt.hpp"

namespace vnnx::ref {

template <class T>
void l2_normalize(std::span<const T> in, std::span<T> out, std::int64_t depth, std::int32_t input_zero_point) {
    const std::int64_t rows = depth > 0 ? static_cast<std::int64_t>(in.size()) / depth : 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const T* x = in.data() + r * depth;
        T* y = out.data() + r * depth;
        std::int32_t acc = 0;
        for (std::int64_t j = 0; j < depth; ++j) {
            const std::int32_t d = static_cast<std::int32_t>(x[j]) - input_zero_point;
            acc += d * d;
        }
        const auto m = quant::inv_sqrt_quantized_multiplier_exp(acc, -1);
        for (std::int64_t j = 0; j < depth; ++j) {
            const std::int32_t d = static_cast<std::int32_t>(x[j]) - input_zero_point;
            std::int32_t v;
            if constexpr (std::is_same_v<T, std::int8_t>)
                v = quant::multiply_by_quantized_multiplier(d, m.multiplier, m.shift + 7);
            else
                v = 128 + quant::multiply_by_quantized_multiplier_smaller_than_one_exp(128 * d, m.multiplier, m.shift);
            y[j] = static_cast<T>(std::clamp<std::int32_t>(v, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
        }
    }
}

}  // namespace vnnx::ref
