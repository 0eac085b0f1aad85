#pragma once
// Two-input element-wise ops with broadcasting, TFLite int8/uint8 semantics: ADD/SUB rescale
// both inputs to a common scale after a left shift of 20, MUL requantizes the product,
// MINIMUM/MAXIMUM compare raw codes. All use double rounding.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "vnnx/quant/activation.hpp"
#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/shape.hpp"

namespace vnnx::ref {

struct operand_quant {
    float scale = 1.0f;
    std::int32_t zero_point = 0;
};

struct add_params {
    int left_shift = 20;
    std::int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
    quant::quantized_multiplier input1, input2, output;
    quant::activation_range act{-128, 127};
};

/// TFLite's PrepareGeneralSubOp / add Prepare for 8-bit types.
[[nodiscard]] inline add_params make_add_params(operand_quant a, operand_quant b, operand_quant out,
                                                quant::activation_range act) {
    add_params p;
    p.input1_offset = -a.zero_point;
    p.input2_offset = -b.zero_point;
    p.output_offset = out.zero_point;
    const double twice_max = 2 * static_cast<double>(std::max(a.scale, b.scale));
    p.input1 = quant::quantize_multiplier(static_cast<double>(a.scale) / twice_max);
    p.input2 = quant::quantize_multiplier(static_cast<double>(b.scale) / twice_max);
    // (1 << 20) * scale is a float product in TFLite; a power of two keeps it exact.
    p.output = quant::quantize_multiplier(twice_max / static_cast<double>(static_cast<float>(1 << p.left_shift) * out.scale));
    p.act = act;
    return p;
}

namespace detail {
inline std::int32_t scale_input(std::int32_t x, std::int32_t offset, int left_shift, quant::quantized_multiplier m) {
    const std::int32_t shifted = (x + offset) * (1 << left_shift);
    return quant::multiply_by_quantized_multiplier_smaller_than_one_exp(shifted, m.multiplier, m.shift);
}
}  // namespace detail

template <class T>
void add(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b, std::span<const std::int32_t> sb,
         std::span<T> out, const add_params& p, bool subtract = false) {
    const auto os = broadcast_shape(sa, sb, subtract ? "SUB" : "ADD");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const std::int32_t x = detail::scale_input(a[static_cast<std::size_t>(ia)], p.input1_offset, p.left_shift, p.input1);
        const std::int32_t y = detail::scale_input(b[static_cast<std::size_t>(ib)], p.input2_offset, p.left_shift, p.input2);
        const std::int32_t raw = subtract ? x - y : x + y;
        const std::int32_t r = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(raw, p.output.multiplier,
                                                                                            p.output.shift) +
                               p.output_offset;
        out[static_cast<std::size_t>(io)] = static_cast<T>(std::clamp(r, p.act.min, p.act.max));
    });
}

struct mul_params {
    std::int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
    quant::quantized_multiplier output;
    quant::activation_range act{-128, 127};
};

[[nodiscard]] inline mul_params make_mul_params(operand_quant a, operand_quant b, operand_quant out,
                                                quant::activation_range act) {
    mul_params p;
    p.input1_offset = -a.zero_point;
    p.input2_offset = -b.zero_point;
    p.output_offset = out.zero_point;
    // TFLite computes this product and quotient in float before widening.
    const float real = a.scale * b.scale / out.scale;
    p.output = quant::quantize_multiplier(static_cast<double>(real));
    p.act = act;
    return p;
}

template <class T>
void mul(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b, std::span<const std::int32_t> sb,
         std::span<T> out, const mul_params& p) {
    const auto os = broadcast_shape(sa, sb, "MUL");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const std::int32_t prod = (static_cast<std::int32_t>(a[static_cast<std::size_t>(ia)]) + p.input1_offset) *
                                  (static_cast<std::int32_t>(b[static_cast<std::size_t>(ib)]) + p.input2_offset);
        const std::int32_t r =
            quant::multiply_by_quantized_multiplier(prod, p.output.multiplier, p.output.shift) + p.output_offset;
        out[static_cast<std::size_t>(io)] = static_cast<T>(std::clamp(r, p.act.min, p.act.max));
    });
}

/// MAXIMUM / MINIMUM compare the raw codes (TFLite requires equal quantization).
template <class T>
void min_max(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b,
             std::span<const std::int32_t> sb, std::span<T> out, bool maximum) {
    const auto os = broadcast_shape(sa, sb, maximum ? "MAXIMUM" : "MINIMUM");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const T x = a[static_cast<std::size_t>(ia)], y = b[static_cast<std::size_t>(ib)];
        out[static_cast<std::size_t>(io)] = maximum ? std::max(x, y) : std::min(x, y);
    });
}

/// Integer arithmetic on unquantized int32 tensors (shape computations): ADD, SUB, MUL wrap as
/// two's complement; DIV truncates, FLOOR_DIV floors, as TFLite's int32 kernels. `op` is one of
/// '+', '-', '*', '/', 'f' (floor division). A zero divisor is an error.
inline void int_arithmetic(std::span<const std::int32_t> a, std::span<const std::int32_t> sa,
                           std::span<const std::int32_t> b, std::span<const std::int32_t> sb, std::span<std::int32_t> out,
                           char op, const std::string& where) {
    const auto os = broadcast_shape(sa, sb, where);
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const std::int64_t x = a[static_cast<std::size_t>(ia)], y = b[static_cast<std::size_t>(ib)];
        std::int64_t r = 0;
        switch (op) {
            case '+': r = x + y; break;
            case '-': r = x - y; break;
            case '*': r = x * y; break;
            default:
                if (y == 0) fail(error_kind::bad_input, where + ": integer division by zero");
                r = x / y;
                if (op == 'f' && x % y != 0 && ((x < 0) != (y < 0))) --r;
        }
        out[static_cast<std::size_t>(io)] = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(r)));
    });
}

}  // namespace vnnx::ref
