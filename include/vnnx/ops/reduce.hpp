#pragma once
// MEAN (40), SUM (74), REDUCE_MAX (82), REDUCE_MIN (89), REDUCE_PROD (81) → reduce8 (lowering.md §7.7.1, §8.8).
// MEAN as the first operator of a split is a node of type MEAN with the node union reduce8;
// everywhere else these are layers.
//
// reduce8 holds one flag per channels-first axis (channels, rows, columns). The SDK accepts only
// the axis lists [1,2] and [1,2,3] [quirk]; here any set of the last three TFLite axes works
// (MEAN/SUM over the channel axis for LayerNorm, over [1] or [2], ...), and leading axes may be
// listed when their size is 1. keep_dims only changes the output record's shape.
//
// Data: output_multiplier / output_shift (one int32 each): MEAN QM(S_in / (n·S_out)) with the
// argument computed in double as the SDK does (n = reduced element count); SUM,
// REDUCE_MAX, REDUCE_MIN QM(S_in / S_out). REDUCE_PROD (81, INT8 as in TFLite) stores TFLite's
// per-step scaling QM(S_in / S_out^(1/n)), applied after every multiplication and once more at
// the end; the SDK stores QM(S_out) and leaves the rest to a runtime it does not describe
// [unverified]. activation_min/max span the output type (the SDK's fixed −128/127 would clip
// UINT8 outputs [quirk]).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/pool.hpp"
#include "vnnx/quant/multiplier.hpp"

namespace vnnx::ops {

namespace reduce_detail {

struct axes_info {
    format::layer_options::reduce8 flags{};
    std::int64_t count = 1;  // reduced elements
    std::string error;
};

/// The reduced axes of a reduction (operand 1: constant int32/int64 list or scalar).
inline axes_info reduce_axes(const graph& g, const compiler::op& o) {
    axes_info r;
    if (o.inputs.size() < 2 || o.inputs[1] < 0) {
        r.error = "needs a constant axis operand";
        return r;
    }
    const auto& x = g.t(o.inputs[0]);
    const auto& a = g.t(o.inputs[1]);
    if (!a.is_constant() || (a.type != tensor_type::INT32 && a.type != tensor_type::INT64)) {
        r.error = "the axis operand must be a constant int32/int64 tensor";
        return r;
    }
    std::vector<std::int64_t> axes;
    if (a.type == tensor_type::INT32)
        for (auto v : a.values<std::int32_t>()) axes.push_back(v);
    else
        for (auto v : a.values<std::int64_t>()) axes.push_back(v);
    const auto rank = static_cast<std::int64_t>(x.rank());
    if (rank < 1) {
        r.error = "the input must have rank >= 1";
        return r;
    }
    std::vector<bool> seen(static_cast<std::size_t>(rank), false);
    for (auto v : axes) {
        if (v < -rank || v >= rank) {
            r.error = "axis " + std::to_string(v) + " is outside the input rank " + std::to_string(rank);
            return r;
        }
        const auto ax = static_cast<std::int32_t>(v < 0 ? v + rank : v);
        if (seen[static_cast<std::size_t>(ax)]) continue;  // TFLite ignores repeated axes
        seen[static_cast<std::size_t>(ax)] = true;
        const auto from_end = static_cast<std::int32_t>(rank) - channels_first_axis(ax, static_cast<std::int32_t>(rank));
        const auto dim = x.shape[static_cast<std::size_t>(ax)];
        if (from_end == 1) r.flags.columns = 1;
        else if (from_end == 2) r.flags.rows = 1;
        else if (from_end == 3) r.flags.channels = 1;
        else if (dim != 1) {
            r.error = "reduction over leading axis " + std::to_string(ax) + " of size " + std::to_string(dim) +
                      " is not supported (only the last three axes)";
            return r;
        }
        r.count *= dim;
    }
    if (axes.empty()) r.error = "the axis list is empty";
    return r;
}

/// The output shape TFLite gives for the reduced axes.
inline std::vector<std::int32_t> reduced_shape(const graph& g, const compiler::op& o, bool keep) {
    const auto& x = g.t(o.inputs[0]);
    const auto rank = static_cast<std::int64_t>(x.rank());
    std::vector<bool> red(x.shape.size(), false);
    const auto& a = g.t(o.inputs[1]);
    std::vector<std::int64_t> axes;
    if (a.type == tensor_type::INT32)
        for (auto v : a.values<std::int32_t>()) axes.push_back(v);
    else
        for (auto v : a.values<std::int64_t>()) axes.push_back(v);
    for (auto v : axes) red[static_cast<std::size_t>(v < 0 ? v + rank : v)] = true;
    std::vector<std::int32_t> out;
    for (std::size_t i = 0; i < x.shape.size(); ++i) {
        if (!red[i]) out.push_back(x.shape[i]);
        else if (keep) out.push_back(1);
    }
    return out;
}

inline std::string check_reduction(const graph& g, const compiler::op& o) {
    if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, axes and one output";
    const auto& x = g.t(o.inputs[0]);
    const auto& y = g.t(o.outputs[0]);
    if (auto r = pool_detail::check_static_shape(x, "input"); !r.empty()) return r;
    const auto ax = reduce_axes(g, o);
    if (!ax.error.empty()) return ax.error;
    if (y.type != x.type) return "output type must equal the input type";
    auto expect = reduced_shape(g, o, o.options.keep_dims);
    auto got = y.shape;
    // A scalar result may be written as [] or [1].
    if (expect.empty()) expect = {1};
    if (got.empty()) got = {1};
    if (got != expect) return "output shape does not match the reduced axes and keep_dims";
    if (x.quant.empty() || y.quant.empty() || !(x.quant.scale0() > 0) || !(y.quant.scale0() > 0))
        return "input and output must be quantized with positive scales";
    return {};
}

/// QM of the reduction (see the header comment).
inline quant::quantized_multiplier multiplier_of(const graph& g, const compiler::op& o, std::int64_t count) {
    const double si = g.t(o.inputs[0]).quant.scale0();
    const double so = g.t(o.outputs[0]).quant.scale0();
    if (o.code == builtin_operator::MEAN) {
        // In double, in the SDK's order (S_in·(1/n))/S_out: a float32 ratio would lose the low
        // bits of the 31-bit multiplier (vww: 1908874240 against the SDK's 1908874354).
        return quant::quantize_multiplier(static_cast<double>(si) * (1.0 / static_cast<double>(count)) / static_cast<double>(so));
    }
    if (o.code == builtin_operator::REDUCE_PROD)
        return quant::quantize_multiplier(static_cast<double>(si) / std::pow(static_cast<double>(so), 1.0 / static_cast<double>(count)));
    return quant::quantize_multiplier(static_cast<double>(si) / static_cast<double>(so));
}

inline std::pair<std::int32_t, std::int32_t> type_range(const graph& g, std::int32_t t) {
    return g.t(t).type == tensor_type::UINT8 ? std::pair{0, 255} : std::pair{-128, 127};
}

template <builtin_operator Code>
struct reduce_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        Code == builtin_operator::MEAN        ? "mean over any of the last three axes (MEAN node when first)"
        : Code == builtin_operator::SUM       ? "sum over any of the last three axes"
        : Code == builtin_operator::REDUCE_MAX ? "maximum over any of the last three axes"
        : Code == builtin_operator::REDUCE_MIN ? "minimum over any of the last three axes"
                                               : "product over any of the last three axes, TFLite's per-step rescaling";
    static constexpr auto dtypes = [] {
        if constexpr (Code == builtin_operator::REDUCE_PROD) return meta::value_set<tensor_type::INT8>{};
        else return int8_types{};
    }();
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type =
        Code == builtin_operator::MEAN ? static_cast<std::int32_t>(builtin_operator::MEAN) : identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    using member = format::layer_options::reduce8;
    using tflite_options = tflite::opt::ReducerOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.keep_dims = x.keep_dims;
    }
    static constexpr std::string_view axes = "any set of the last three axes; leading axes of size 1";
    static constexpr std::string_view notes =
        "channel-axis and single-axis reductions (LayerNorm) compile; uint8 outputs span 0..255 (the SDK: axes "
        "[1,2] or [1,2,3] only, -128..127)";

    /// The tiler's model: MEAN and SUM reduce rows and columns in the tile; the other reductions
    /// take the default.
    static bool tile(const graph&, const compiler::op&, std::int32_t, bool, compiler::layer& L) {
        if (Code != builtin_operator::MEAN && Code != builtin_operator::SUM) return false;
        L.kind = compiler::op_kind::mean_sum;
        L.reduce_rows = L.reduce_cols = true;
        return true;
    }
    static std::string check(const graph& g, const compiler::op& o) {
        auto r = check_reduction(g, o);
        if (r.empty() && Code == builtin_operator::REDUCE_PROD) {
            const auto m = multiplier_of(g, o, reduce_axes(g, o).count);
            if (m.shift < -31 || m.shift > 7) return "per-step scaling S_in / S_out^(1/n) is out of TFLite's range";
        }
        return r;
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto ax = reduce_axes(c.g, o);
        if (!ax.error.empty()) c.reject(o, ax.error);
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto m = multiplier_of(c.g, o, ax.count);
        l.rec.output_multiplier = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(m.multiplier))};
        l.rec.output_shift = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(static_cast<std::int32_t>(m.shift)))};
        const auto [lo, hi] = type_range(c.g, o.outputs[0]);
        l.rec.activation_min = lo;
        l.rec.activation_max = hi;
        l.set(ax.flags);
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        const auto ax = reduce_axes(c.g, o);
        if (!ax.error.empty()) c.reject(o, ax.error);
        auto& n = c.node;
        n.tensors.push_back(c.desc(o.inputs.at(0)));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = 1;
        n.rec.num_outputs = 1;
        const auto m = multiplier_of(c.g, o, ax.count);
        n.rec.output_multiplier = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(m.multiplier))};
        n.rec.output_shift = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(static_cast<std::int32_t>(m.shift)))};
        const auto [lo, hi] = type_range(c.g, o.outputs[0]);
        n.rec.activation_min = lo;
        n.rec.activation_max = hi;
        format::node_options::reduce8 r{};
        r.channels = ax.flags.channels;
        r.rows = ax.flags.rows;
        r.columns = ax.flags.columns;
        n.set(r);
    }
};

}  // namespace reduce_detail

template <>
struct op<builtin_operator::MEAN> : reduce_detail::reduce_trait<builtin_operator::MEAN> {};
template <>
struct op<builtin_operator::SUM> : reduce_detail::reduce_trait<builtin_operator::SUM> {};
template <>
struct op<builtin_operator::REDUCE_MAX> : reduce_detail::reduce_trait<builtin_operator::REDUCE_MAX> {};
template <>
struct op<builtin_operator::REDUCE_MIN> : reduce_detail::reduce_trait<builtin_operator::REDUCE_MIN> {};
template <>
struct op<builtin_operator::REDUCE_PROD> : reduce_detail::reduce_trait<builtin_operator::REDUCE_PROD> {};

}  // namespace vnnx::ops
