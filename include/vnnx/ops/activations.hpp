#pragma once
// Single-input element-wise operators (lowering.md §7.6). In the default flow the LUT pass
// (§3.4) turns every one of them into a LUT layer; when an operator reaches lowering on its
// own (the LUT pass did not run or did not take it) it becomes:
//   - RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1: their own layer with clamp bounds (§7.6.7);
//   - LEAKY_RELU: the leakyrelu layer (§7.6.6);
//   - ABS: the ABS layer (§7.6.7; not a LUT member in §3.4);
//   - QUANTIZE between 8-bit types: the DEQUANTIZE requantization layer (§7.6.4);
//   - the others (tables only): a one-operator LUT computed by ir/lut_tables.hpp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "vnnx/ir/lut_tables.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/ops/lut.hpp"
#include "vnnx/ops/trait.hpp"
#include "vnnx/quant/multiplier.hpp"

namespace vnnx::ops {

namespace detail {

inline bool is_8bit(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

/// Rules shared by the single-input operators: one activation input, one output, 8-bit, one
/// type, per-tensor quantization on both.
inline std::string check_unary(const graph& g, const compiler::op& o, bool same_type = true) {
    if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
    const auto& in = g.t(o.inputs[0]);
    const auto& out = g.t(o.outputs[0]);
    if (in.is_constant()) return "input 0 must be an activation, not a constant";
    if (!is_8bit(in.type)) return "input must be INT8 or UINT8";
    if (!is_8bit(out.type)) return "output must be INT8 or UINT8";
    if (same_type && in.type != out.type) return "input and output types must be equal";
    if (in.quant.empty() || out.quant.empty()) return "input and output need quantization parameters";
    if (in.quant.scale.size() > 1 || out.quant.scale.size() > 1) return "per-channel activation quantization is not supported";
    if (in.element_count() != out.element_count()) return "input and output must have the same number of elements";
    return {};
}

/// A lone operator lowered as a one-operator LUT (the table from the reference kernels).
inline void lower_as_lut(lowering& c, const compiler::op& o) {
    const auto* base = c.g.ops.data();
    const std::ptrdiff_t at = &o - base;
    if (at < 0 || static_cast<std::size_t>(at) >= c.g.ops.size())
        c.reject(o, "is not an operator of the graph being lowered");
    compiler::op lut;
    lut.kind = compiler::op_type::lut;
    lut.inputs = {o.inputs.at(0)};
    lut.outputs = {o.outputs.at(0)};
    lut.source_index = o.source_index;
    lut.tables = compiler::evaluate_lut_chain(c.g, {static_cast<std::int32_t>(at)}, 1);
    lut_op::lower_layer(c, lut);
}

/// The multiplier QM(a / b) computed as TFLite does (the quotient in float, then widened), or
/// in double as the SDK's flow does (--sdk-scales).
inline quant::quantized_multiplier qm_float_ratio(quant::scale_arith arith, double a, double b) {
    return quant::quantize_multiplier(quant::scale_ratio(arith, a, b));
}

inline format::obj_off_t append_i32(lowering& c, std::int32_t v) {
    return format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(v))};
}

/// output_multiplier / output_shift arrays of one element each.
inline void set_output_multiplier(lowering& c, compiler::layer_build& l, quant::quantized_multiplier m) {
    l.rec.output_multiplier = append_i32(c, m.multiplier);
    l.rec.output_shift = append_i32(c, m.shift);
}

}  // namespace detail

/// Operators that only ever become tables.
template <builtin_operator Code>
struct lut_only_op {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary = "element-wise, as a 256-entry lookup table (LUT 303)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(format::vnnx_operator::LUT);
    using member = format::layer_options::ActivationOptions;
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        return detail::check_unary(g, o);
    }
    static void lower_layer(lowering& c, const compiler::op& o) { detail::lower_as_lut(c, o); }
};

/// Table operators that converters also leave in float inside an island
/// (DEQUANTIZE → op → QUANTIZE, lowering.md §3.4): there the island's table covers them.
template <builtin_operator Code>
struct lut_or_island_op : lut_only_op<Code> {
    static constexpr std::string_view summary =
        "element-wise, as a 256-entry lookup table (LUT 303); float32 inside DEQUANTIZE -> op -> QUANTIZE: the island's table";
    static constexpr auto dtypes = meta::value_set<tensor_type::INT8, tensor_type::UINT8, tensor_type::FLOAT32>{};
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() == 1 && o.inputs[0] >= 0 && g.t(o.inputs[0]).type == tensor_type::FLOAT32) {
            const std::ptrdiff_t at = &o - g.ops.data();
            if (at < 0 || static_cast<std::size_t>(at) >= g.ops.size() || !compiler::in_float_island(g, static_cast<std::size_t>(at)))
                return "a float32 input is supported only inside a DEQUANTIZE -> float operators -> QUANTIZE island";
            return {};
        }
        return lut_only_op<Code>::check(g, o);
    }
};

template <> struct op<builtin_operator::LOGISTIC> : lut_only_op<builtin_operator::LOGISTIC> {};
template <> struct op<builtin_operator::TANH> : lut_only_op<builtin_operator::TANH> {};
template <> struct op<builtin_operator::HARD_SWISH> : lut_only_op<builtin_operator::HARD_SWISH> {};
template <> struct op<builtin_operator::ELU> : lut_only_op<builtin_operator::ELU> {};
template <> struct op<builtin_operator::GELU> : lut_only_op<builtin_operator::GELU> {
    using tflite_options = tflite::opt::GeluOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.approximate = x.approximate;
    }
};
template <> struct op<builtin_operator::EXP> : lut_or_island_op<builtin_operator::EXP> {};
template <> struct op<builtin_operator::LOG> : lut_or_island_op<builtin_operator::LOG> {};
template <> struct op<builtin_operator::RSQRT> : lut_or_island_op<builtin_operator::RSQRT> {};
template <> struct op<builtin_operator::SQRT> : lut_or_island_op<builtin_operator::SQRT> {};
template <> struct op<builtin_operator::NEG> : lut_or_island_op<builtin_operator::NEG> {};

/// RELU (19), RELU6 (21), RELU_N1_TO_1 (20), RELU_0_TO_1 (152): requantize, then clamp (§7.6.7).
template <builtin_operator Code>
struct relu_family_op {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary = "clamp; a LUT, or its own layer when no table forms";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    using member = no_member;
    static constexpr std::string_view notes = "uint8 outputs clamp in 0..255 (the SDK keeps -128..127)";
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        return detail::check_unary(g, o);
    }
    /// The real bounds (lo, hi) of the operator; hi = +inf for RELU.
    static constexpr std::pair<float, float> range() {
        using B = builtin_operator;
        if constexpr (Code == B::RELU6) return {0.0f, 6.0f};
        else if constexpr (Code == B::RELU_N1_TO_1) return {-1.0f, 1.0f};
        else if constexpr (Code == B::RELU_0_TO_1) return {0.0f, 1.0f};
        else return {0.0f, std::numeric_limits<float>::infinity()};
    }
    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& in = c.g.t(o.inputs[0]);
        const auto& out = c.g.t(o.outputs[0]);
        const double s_out = out.quant.scale0();
        const std::int32_t z_out = out.quant.zero0();
        // Bounds in the output type's range: the SDK keeps [-128, 127] even for UINT8 outputs
        // [quirk], which would clamp every uint8 code above 127; the TFLite bounds are used here
        // (z + roundf(bound / S) in float, as TFLite's CalculateActivationRangeQuantized).
        const bool u8 = out.type == tensor_type::UINT8;
        const std::int32_t tmin = u8 ? 0 : -128, tmax = u8 ? 255 : 127;
        const auto [lo, hi] = range();
        l.rec.activation_min = std::max(tmin, z_out + static_cast<std::int32_t>(std::round(quant::scale_ratio(c.g.arith, lo, s_out))));
        l.rec.activation_max = std::isinf(hi) ? tmax
                                              : std::min(tmax, z_out + static_cast<std::int32_t>(
                                                                           std::round(quant::scale_ratio(c.g.arith, hi, s_out))));
        detail::set_output_multiplier(c, l, detail::qm_float_ratio(c.g.arith, in.quant.scale0(), s_out));
    }
};

template <> struct op<builtin_operator::RELU> : relu_family_op<builtin_operator::RELU> {};
template <> struct op<builtin_operator::RELU6> : relu_family_op<builtin_operator::RELU6> {};
template <> struct op<builtin_operator::RELU_N1_TO_1> : relu_family_op<builtin_operator::RELU_N1_TO_1> {};
template <> struct op<builtin_operator::RELU_0_TO_1> : relu_family_op<builtin_operator::RELU_0_TO_1> {};

/// LEAKY_RELU (98), union leakyrelu (§7.6.6).
template <>
struct op<builtin_operator::LEAKY_RELU> {
    static constexpr builtin_operator code = builtin_operator::LEAKY_RELU;
    static constexpr std::string_view summary = "leaky ReLU; a LUT, or the leakyrelu layer when no table forms";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::LEAKY_RELU);
    using member = format::layer_options::leakyrelu;
    using tflite_options = tflite::opt::LeakyReluOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.alpha = x.alpha;
    }
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        if (auto r = detail::check_unary(g, o); !r.empty()) return r;
        if (!std::isfinite(o.options.alpha)) return "alpha must be finite";
        return {};
    }
    static void lower_layer(lowering& c, const compiler::op& o) {
        // A negative slope is always a table (the LUT pass takes every 8-bit LEAKY_RELU); the
        // leakyrelu layer's alpha multiplier is unsigned.
        if (!(o.options.alpha >= 0.0f)) c.reject(o, "a negative alpha needs the LUT form (the leakyrelu layer's multiplier is unsigned)");
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const double s_in = c.g.t(o.inputs[0]).quant.scale0();
        const double s_out = c.g.t(o.outputs[0]).quant.scale0();
        detail::set_output_multiplier(c, l, detail::qm_float_ratio(c.g.arith, s_in, s_out));
        // TFLite forms alpha·S_in / S_out in float.
        const auto ma = quant::quantize_multiplier(quant::scale_product_ratio(c.g.arith, s_in, o.options.alpha, s_out));
        format::layer_options::leakyrelu u{};
        u.alpha_multiplier = detail::append_i32(c, ma.multiplier);
        u.alpha_shift = detail::append_i32(c, ma.shift);
        l.set(u);
    }
};

/// ABS (101): |x − z_in| requantized with QM(S_in/S_out) (§7.6.7).
template <>
struct op<builtin_operator::ABS> {
    static constexpr builtin_operator code = builtin_operator::ABS;
    static constexpr std::string_view summary = "absolute value, its own layer";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::ABS);
    using member = no_member;
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        return detail::check_unary(g, o);
    }
    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const double s_in = c.g.t(o.inputs[0]).quant.scale0();
        const double s_out = c.g.t(o.outputs[0]).quant.scale0();
        detail::set_output_multiplier(c, l, detail::qm_float_ratio(c.g.arith, s_in, s_out));
        const bool u8 = c.g.t(o.outputs[0]).type == tensor_type::UINT8;
        l.rec.activation_min = u8 ? 0 : -128;
        l.rec.activation_max = u8 ? 255 : 127;
    }
};

/// QUANTIZE between 8-bit types: a LUT in the default flow, else the DEQUANTIZE (6)
/// requantization layer of §7.6.4.
template <>
struct op<builtin_operator::QUANTIZE> {
    static constexpr builtin_operator code = builtin_operator::QUANTIZE;
    static constexpr std::string_view summary = "8-bit requantization; a LUT, or a DEQUANTIZE (6) layer";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::DEQUANTIZE);
    using member = no_member;
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        return detail::check_unary(g, o, false);
    }
    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& in = c.g.t(o.inputs[0]);
        const auto& out = c.g.t(o.outputs[0]);
        // TFLite's requantize divides in double.
        const auto m = quant::quantize_multiplier(static_cast<double>(in.quant.scale0()) / out.quant.scale0());
        detail::set_output_multiplier(c, l, m);
        // 64 bits: int32 tensors may carry any int32 zero point, and the difference can overflow.
        const std::int64_t dz = std::int64_t{in.quant.zero0()} - out.quant.zero0();
        const bool flip = m.multiplier == (1 << 30) && m.shift == 1 &&
                          ((in.type == tensor_type::INT8 && out.type == tensor_type::UINT8 && dz == -128) ||
                           (in.type == tensor_type::UINT8 && out.type == tensor_type::INT8 && dz == 128));
        if (flip) {  // the SDK's "flip the sign bit" marker
            l.rec.activation_min = 0;
            l.rec.activation_max = 0;
        }
    }
};

}  // namespace vnnx::ops
