#pragma once
// PRELU with TFLite's 8-bit semantics (activations.cc, BroadcastPrelu4DSlow): two output
// multipliers, QM(S_in/S_out) for x − z_in >= 0 and QM(S_in·S_a/S_out) applied to
// (x − z_in)·(a − z_a) below; both ratios are float products widened to double, double rounding.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/eltwise.hpp"
#include "vnnx/ref/shape.hpp"

namespace vnnx::ref {

struct prelu_params {
    std::int32_t input_offset = 0, alpha_offset = 0, output_offset = 0;
    quant::quantized_multiplier positive, negative;
};

/// TFLite's PreluPrepare for 8-bit tensors.
[[nodiscard]] inline prelu_params make_prelu_params(operand_quant in, operand_quant alpha, operand_quant out) {
    prelu_params p;
    p.input_offset = -in.zero_point;
    p.alpha_offset = -alpha.zero_point;
    p.output_offset = out.zero_point;
    p.positive = quant::quantize_multiplier(static_cast<double>(in.scale / out.scale));
    p.negative = quant::quantize_multiplier(static_cast<double>(in.scale * alpha.scale / out.scale));
    return p;
}

/// One element: x and a are the raw codes.
[[nodiscard]] inline std::int32_t prelu_value(std::int32_t x, std::int32_t a, const prelu_params& p) {
    const std::int32_t v = x + p.input_offset;
    if (v >= 0) return quant::multiply_by_quantized_multiplier(v, p.positive.multiplier, p.positive.shift) + p.output_offset;
    return quant::multiply_by_quantized_multiplier(v * (a + p.alpha_offset), p.negative.multiplier, p.negative.shift) +
           p.output_offset;
}

template <class T>
void prelu(std::span<const T> in, std::span<const std::int32_t> si, std::span<const T> alpha, std::span<const std::int32_t> sa,
           std::span<T> out, const prelu_params& p) {
    const auto os = broadcast_shape(si, sa, "PRELU");
    for_each_broadcast(si, sa, os, [&](std::int64_t ii, std::int64_t ia, std::int64_t io) {
        const std::int32_t v = prelu_value(in[static_cast<std::size_t>(ii)], alpha[static_cast<std::size_t>(ia)], p);
        out[static_cast<std::size_t>(io)] =
            static_cast<T>(std::clamp<std::int32_t>(v, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
    });
}

}  // namespace vnnx::ref
