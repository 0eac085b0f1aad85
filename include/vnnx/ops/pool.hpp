#pragma once
// MAX_POOL_2D (17) and AVERAGE_POOL_2D (1) → pool layers (lowering.md §7.5): `kernel_shape` =
// [fh, fw], `strides` = [sh, sw], `pads` = [0, top, left, 0, bottom, right]. SAME max pools
// arrive as PADV2(lowest) + VALID pool (passes/explicit_pad.hpp). A SAME average pool keeps its
// TFLite pads in the layer and the simulator divides by the in-bounds taps only, as TFLite does
// (the SDK leaves SAME average pools unsupported). Fused activations are honoured through
// activation_min/max (the SDK ignores them [quirk]); the kernel is not clipped to the input
// because with SAME padding clipping would move the windows (the SDK clips it [quirk]).
// Both pools work on raw codes, so TFLite requires equal input and output quantization.
#include <cstdint>
#include <string>

#include <algorithm>
#include <utility>

#include "vnnx/ops/trait.hpp"
#include "vnnx/quant/activation.hpp"

namespace vnnx::ops {

namespace pool_detail {

/// Every dim of a tensor static and positive, rank at most 6 (the tensor record holds six).
inline std::string check_static_shape(const compiler::tensor& x, const char* role) {
    if (x.rank() > 6) return std::string(role) + " '" + x.name + "' has rank " + std::to_string(x.rank()) + ", more than 6";
    for (auto d : x.shape)
        if (d <= 0) return std::string(role) + " '" + x.name + "' has no static shape";
    return {};
}

/// TFLite's clamp range of the fused activation in the output type (not the SDK's §8.3 bounds,
/// which drop RELU6 and keep 127 for UINT8 outputs [quirk]).
inline quant::activation_range output_range(const graph& g, const compiler::op& o) {
    const auto& out = g.t(o.outputs.at(0));
    const bool u8 = out.type == tensor_type::UINT8;
    return quant::tflite_activation_range(static_cast<quant::fused_activation>(o.options.fused), out.quant.scale0(),
                                          out.quant.zero0(), u8 ? 0 : -128, u8 ? 255 : 127);
}

/// TFLite's SAME padding of one axis: total = max((out−1)·s + k − in, 0), before = total/2.
inline std::pair<std::int32_t, std::int32_t> same_pads(std::int32_t in, std::int32_t out, std::int32_t k, std::int32_t s) {
    const std::int32_t total = std::max((out - 1) * s + k - in, 0);
    return {total / 2, total - total / 2};
}

inline std::int32_t valid_out(std::int32_t in, std::int32_t k, std::int32_t s) { return (in - k) / s + 1; }
inline std::int32_t same_out(std::int32_t in, std::int32_t s) { return (in + s - 1) / s; }

template <builtin_operator Code>
struct pool_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool is_max = Code == builtin_operator::MAX_POOL_2D;
    static constexpr std::string_view summary =
        is_max ? "max pool over fh x fw windows (SAME via an explicit pad)"
               : "average pool over fh x fw windows, SAME counts in-bounds taps only";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations =
        meta::value_set<activation_function::NONE, activation_function::RELU, activation_function::RELU_N1_TO_1,
                        activation_function::RELU6>{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    using member = no_member;
    using tflite_options = tflite::opt::Pool2DOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.pad = x.padding;
        o.stride_w = x.stride_w;
        o.stride_h = x.stride_h;
        o.filter_w = x.filter_width;
        o.filter_h = x.filter_height;
        o.fused = x.fused_activation_function;
    }
    static constexpr rank_range ranks{4, 4};
    static constexpr auto paddings = any_padding{};
    static constexpr std::string_view axes = "H and W of [N,H,W,C]";
    static constexpr std::string_view notes =
        "fused activations are applied and the kernel is not clipped to the input (the SDK ignores the first "
        "and clips, which moves SAME windows)";

    /// The tiler's model: the pool's window and strides.
    static bool tile(const graph&, const compiler::op& o, std::int32_t, bool, compiler::layer& L) {
        L.kind = is_max ? compiler::op_kind::max_pool : compiler::op_kind::average_pool;
        L.pool_kh = o.options.filter_h;
        L.pool_kw = o.options.filter_w;
        L.pool_sh = o.options.stride_h;
        L.pool_sw = o.options.stride_w;
        return true;
    }
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (x.rank() != 4 || y.rank() != 4) return "input and output must be 4-D [N,H,W,C]";
        if (auto r = check_static_shape(x, "input"); !r.empty()) return r;
        if (y.type != x.type) return "output type must equal the input type";
        const auto& op = o.options;
        if (op.filter_h <= 0 || op.filter_w <= 0 || op.stride_h <= 0 || op.stride_w <= 0)
            return "filter and strides must be positive";
        std::int32_t oh = 0, ow = 0;
        if (op.pad == compiler::padding::SAME) {
            oh = same_out(x.shape[1], op.stride_h);
            ow = same_out(x.shape[2], op.stride_w);
        } else {
            if (op.filter_h > x.shape[1] || op.filter_w > x.shape[2]) return "VALID filter is larger than the input";
            oh = valid_out(x.shape[1], op.filter_h, op.stride_h);
            ow = valid_out(x.shape[2], op.filter_w, op.stride_w);
        }
        if (y.shape[0] != x.shape[0] || y.shape[1] != oh || y.shape[2] != ow || y.shape[3] != x.shape[3])
            return "output shape does not follow from the filter, strides and padding";
        // Pools compare and average raw codes (TFLite checks the same).
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output quantization must be equal";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& x = c.g.t(o.inputs[0]);
        const auto& y = c.g.t(o.outputs[0]);
        const auto& op = o.options;
        l.rec.kernel_shape = {op.filter_h, op.filter_w};
        l.rec.strides = {op.stride_h, op.stride_w};
        l.rec.pads = {0, 0, 0, 0, 0, 0};
        if (op.pad == compiler::padding::SAME) {
            const auto [t, b] = same_pads(x.shape[1], y.shape[1], op.filter_h, op.stride_h);
            const auto [lf, r] = same_pads(x.shape[2], y.shape[2], op.filter_w, op.stride_w);
            l.rec.pads = {0, t, lf, 0, b, r};
        }
        const auto range = output_range(c.g, o);
        l.rec.activation_min = range.min;
        l.rec.activation_max = range.max;
    }
};

}  // namespace pool_detail

template <>
struct op<builtin_operator::MAX_POOL_2D> : pool_detail::pool_trait<builtin_operator::MAX_POOL_2D> {};
template <>
struct op<builtin_operator::AVERAGE_POOL_2D> : pool_detail::pool_trait<builtin_operator::AVERAGE_POOL_2D> {};

}  // namespace vnnx::ops
