#pragma once
// Single-input layers reached when no lookup table formed (lowering.md §7.6.4–§7.6.7):
// RELU (19), RELU_N1_TO_1 (20), RELU6 (21), RELU_0_TO_1 (152): requantize with the stored
// output multiplier, clamp to [activation_min, activation_max]; LEAKY_RELU (98): the output
// multiplier for x >= z_in, leakyrelu.alpha_* below; ABS (101): |x − z_in| requantized;
// DEQUANTIZE (6): an 8-bit requantization (activation_min = activation_max = 0 marks a pure
// sign-bit flip, which the same arithmetic reproduces).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vnnx/format/enums.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/layers/eltwise.hpp"

namespace vnnx::sim {

namespace activation_detail {

inline void unary_tensors(const layer_context& c) {
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    c.require_same_count(c.tensors[0], c.tensors[1]);
}

/// Clamp bounds from the record, limited to the output type.
inline std::pair<std::int32_t, std::int32_t> bounds(const layer_context& c, const tensor_ref& out) {
    const std::int32_t lo = std::max(c.rec.activation_min, out.type_min());
    const std::int32_t hi = std::min(c.rec.activation_max, out.type_max());
    if (lo > hi)
        c.reject("activation_min " + std::to_string(c.rec.activation_min) + " exceeds activation_max " +
                 std::to_string(c.rec.activation_max));
    return {lo, hi};
}

/// out = clamp(z_out + scale(f(x - z_in))) with the record's output multiplier, clamped to the
/// record's activation range (`record_bounds`) or to the output type's.
template <class F>
void requantize_each(layer_context& c, bool record_bounds, F f) {
    unary_tensors(c);
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    const auto m = eltwise_detail::read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
    const auto [lo, hi] = record_bounds ? bounds(c, out) : std::pair{out.type_min(), out.type_max()};
    const std::int32_t zi = c.rec.input_offset, zo = c.rec.output_offset;
    for (std::uint64_t i = 0; i < in.count; ++i)
        out.set(i, std::clamp(zo + eltwise_detail::scale(f(in.get(i) - zi), m), lo, hi));
}

}  // namespace activation_detail

template <std::int32_t Type>
struct relu_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        activation_detail::requantize_each(c, true, [](std::int32_t x) { return x; });
    }
};
template <> struct layer_exec<19> : relu_exec<19> {};    // RELU
template <> struct layer_exec<20> : relu_exec<20> {};    // RELU_N1_TO_1
template <> struct layer_exec<21> : relu_exec<21> {};    // RELU6
template <> struct layer_exec<152> : relu_exec<152> {};  // RELU_0_TO_1

template <>
struct layer_exec<98> {  // LEAKY_RELU
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        activation_detail::unary_tensors(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto u = c.rec.options.get<format::layer_options::leakyrelu>();
        const auto m = eltwise_detail::read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        const auto ma = eltwise_detail::read_qm(c, u.alpha_multiplier, u.alpha_shift, "alpha");
        const std::int32_t zi = c.rec.input_offset, zo = c.rec.output_offset;
        for (std::uint64_t i = 0; i < in.count; ++i) {
            const std::int32_t x = in.get(i) - zi;
            out.set(i, std::clamp(zo + eltwise_detail::scale(x, x >= 0 ? m : ma), out.type_min(), out.type_max()));
        }
    }
};

template <>
struct layer_exec<101> {  // ABS
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        activation_detail::requantize_each(c, true, [](std::int32_t x) { return std::abs(x); });
    }
};

template <>
struct layer_exec<6> {  // DEQUANTIZE used as an 8-bit requantization
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        activation_detail::requantize_each(c, false, [](std::int32_t x) { return x; });
    }
};

}  // namespace vnnx::sim
