#pragma once
// Output clamping bounds from a fused activation: TFLite's CalculateActivationRangeQuantized
// (used by the reference interpreter) and the VNNX node bounds of lowering.md §8.3.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "vnnx/quant/multiplier.hpp"

namespace vnnx::quant {

/// TFLite ActivationFunctionType values.
enum class fused_activation : std::int8_t { none = 0, relu = 1, relu_n1_to_1 = 2, relu6 = 3, tanh = 4, sign_bit = 5 };

struct activation_range {
    std::int32_t min = 0;
    std::int32_t max = 0;
    friend constexpr bool operator==(const activation_range&, const activation_range&) = default;
};

/// TFLite CalculateActivationRangeQuantized for an output type range [qmin, qmax]:
/// bounds z + round(f / scale) computed in float, as TFLite does.
[[nodiscard]] inline activation_range tflite_activation_range(fused_activation act, float scale, std::int32_t zero_point,
                                                              std::int32_t qmin, std::int32_t qmax) {
    auto q = [&](float f) { return zero_point + static_cast<std::int32_t>(std::round(f / scale)); };
    switch (act) {
        case fused_activation::relu: return {std::max(qmin, q(0.0f)), qmax};
        case fused_activation::relu6: return {std::max(qmin, q(0.0f)), std::min(qmax, q(6.0f))};
        case fused_activation::relu_n1_to_1: return {std::max(qmin, q(-1.0f)), std::min(qmax, q(1.0f))};
        default: return {qmin, qmax};
    }
}

/// Which VNNX node kind the bounds are for (the rows of §8.3).
enum class bounds_site { conv, fully_connected, eltwise, broadcast_add_sub, other, comparison };

/// VNNX activation_min/max of §8.3. The maximum stays 127 even for UINT8 outputs (SDK quirk).
[[nodiscard]] inline activation_range vnnx_activation_bounds(bounds_site site, fused_activation act, double s_out,
                                                             std::int32_t z_out) {
    if (site == bounds_site::comparison) return {0, 1};
    if (site == bounds_site::other) return {-128, 127};
    if (act == fused_activation::relu) return {z_out, 127};
    if (act == fused_activation::relu6 && site == bounds_site::conv)
        return {z_out, std::min(static_cast<std::int32_t>(round_even(6.0 / s_out + z_out)), 127)};
    return {-128, 127};
}

}  // namespace vnnx::quant
