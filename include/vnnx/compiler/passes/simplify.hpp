#pragma once
// Small rewrites of lowering.md §3.2: REMOVE_FP32_IO, QUANTIZE-of-constant folding
// (REMOVE_CONSTANTS a), POOL_AS_MEAN, STRIDED_DEPTHWISE and REMOVE_NOPS; NARROW_INDICES and
// FOLD_INPUT_CAST (ours).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

/// A QUANTIZE at a float graph input or a DEQUANTIZE at a float graph output is dropped: the
/// model's I/O become the 8-bit tensors.
inline void remove_float_io(graph& g) {
    using B = builtin_operator;
    std::vector<op> kept;
    for (auto& o : g.ops) {
        if (o.kind == op_type::builtin && o.code == B::QUANTIZE && o.inputs.size() == 1 && o.outputs.size() == 1 &&
            g.t(o.inputs[0]).type == tensor_type::FLOAT32) {
            bool at_input = false;
            for (auto& x : g.inputs)
                if (x == o.inputs[0]) at_input = true;
            if (at_input && readers_of(g, o.inputs[0]).size() == 1) {
                for (auto& x : g.inputs)
                    if (x == o.inputs[0]) x = o.outputs[0];
                continue;
            }
        }
        if (o.kind == op_type::builtin && o.code == B::DEQUANTIZE && o.inputs.size() == 1 && o.outputs.size() == 1 &&
            g.t(o.outputs[0]).type == tensor_type::FLOAT32 && is_graph_output(g, o.outputs[0])) {
            for (auto& x : g.outputs)
                if (x == o.outputs[0]) x = o.inputs[0];
            continue;
        }
        kept.push_back(std::move(o));
    }
    g.ops = std::move(kept);
}

/// An 8-bit graph input read only by a CAST to float whose only reader is a QUANTIZE (MoveNet's
/// uint8 image -> float -> int8) is an integer requantization: the CAST goes, the QUANTIZE reads
/// the input itself, whose quantization becomes scale 1, zero point 0 (the CAST read the raw
/// integers). Run before the checks, so that the model counts as integer.
inline void fold_input_cast(graph& g) {
    using B = builtin_operator;
    std::vector<bool> drop(g.ops.size(), false);
    for (std::size_t k = 0; k < g.ops.size(); ++k) {
        const auto& o = g.ops[k];
        if (o.kind != op_type::builtin || o.code != B::CAST || o.inputs.size() != 1 || o.outputs.size() != 1 ||
            o.inputs[0] < 0 || o.outputs[0] < 0)
            continue;
        const auto in = o.inputs[0], mid = o.outputs[0];
        const auto type = g.t(in).type;
        bool at_input = false;
        for (auto x : g.inputs) at_input = at_input || x == in;
        const auto readers = readers_of(g, mid);
        if ((type != tensor_type::UINT8 && type != tensor_type::INT8) || !at_input || g.t(mid).type != tensor_type::FLOAT32 ||
            readers_of(g, in).size() != 1 || readers.size() != 1 || is_graph_output(g, mid) || is_graph_output(g, in))
            continue;
        auto& q = g.ops[readers[0]];
        if (q.kind != op_type::builtin || q.code != B::QUANTIZE || q.inputs.size() != 1 || q.outputs.size() != 1 ||
            q.outputs[0] < 0 || (g.t(q.outputs[0]).type != tensor_type::INT8 && g.t(q.outputs[0]).type != tensor_type::UINT8))
            continue;
        q.inputs[0] = in;
        auto& t = g.t(in);
        t.quant.scale = {1.0f};
        t.quant.zero_point = {0};
        t.quant.quantized_dimension = 0;
        drop[k] = true;
    }
    std::vector<op> kept;
    for (std::size_t k = 0; k < g.ops.size(); ++k)
        if (!drop[k]) kept.push_back(std::move(g.ops[k]));
    g.ops = std::move(kept);
}

/// POOL_AS_MEAN: an average pool covering the whole input with a 1×1 output is a spatial MEAN.
inline void pool_as_mean(graph& g) {
    using B = builtin_operator;
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::AVERAGE_POOL_2D || o.inputs.empty() || o.outputs.empty()) continue;
        const auto& is = g.t(o.inputs[0]).shape;
        const auto& os = g.t(o.outputs[0]).shape;
        if (is.size() != 4 || os.size() != 4 || os[1] != 1 || os[2] != 1) continue;
        if (o.options.filter_h < is[1] || o.options.filter_w < is[2]) continue;
        const auto axes = add_i32_constant(g, g.t(o.outputs[0]).name + "/axes", {2}, {1, 2});
        o.code = B::MEAN;
        o.inputs = {o.inputs[0], axes};
        o.options.keep_dims = true;
    }
}

/// STRIDED_DEPTHWISE: the FIA runs depthwise convs with unit column stride; the column
/// stride becomes a STRIDED_SLICE after the conv.
inline void strided_depthwise(graph& g) {
    using B = builtin_operator;
    std::vector<op> out;
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::DEPTHWISE_CONV_2D || o.options.stride_w <= 1 ||
            o.options.pad != padding::VALID) {
            out.push_back(std::move(o));
            continue;
        }
        const auto& is = g.t(o.inputs[0]).shape;
        const auto& ws = g.t(o.inputs[1]).shape;
        const auto final_out = o.outputs[0];
        const auto fs = g.t(final_out).shape;
        const std::int32_t kw_eff = (ws[2] - 1) * o.options.dilation_w + 1;
        const std::int32_t wide = is[2] - kw_eff + 1;
        const std::int32_t sw = o.options.stride_w;
        const auto mid = add_activation_like(g, final_out, g.t(final_out).name + "/unstrided", {fs[0], fs[1], wide, fs[3]});
        o.options.stride_w = 1;
        o.outputs[0] = mid;
        op slice;
        slice.code = B::STRIDED_SLICE;
        slice.source_index = o.source_index;
        const std::string base = g.t(final_out).name;
        slice.inputs = {mid, add_i32_constant(g, base + "/begin", {4}, {0, 0, 0, 0}),
                        add_i32_constant(g, base + "/end", {4}, {fs[0], fs[1], wide, fs[3]}),
                        add_i32_constant(g, base + "/strides", {4}, {1, 1, sw, 1})};
        slice.outputs = {final_out};
        out.push_back(std::move(o));
        out.push_back(std::move(slice));
    }
    g.ops = std::move(out);
}

/// REMOVE_NOPS: a RESHAPE (or SQUEEZE / EXPAND_DIMS) whose input and output shapes are equal.
inline void remove_nops(graph& g) {
    using B = builtin_operator;
    std::vector<op> kept;
    for (auto& o : g.ops) {
        const bool reshape_like = o.kind == op_type::builtin &&
                                  (o.code == B::RESHAPE || o.code == B::SQUEEZE || o.code == B::EXPAND_DIMS);
        if (reshape_like && !o.inputs.empty() && !o.outputs.empty() && g.t(o.inputs[0]).shape == g.t(o.outputs[0]).shape &&
            !is_graph_output(g, o.outputs[0])) {
            replace_uses(g, o.outputs[0], o.inputs[0]);
            continue;
        }
        kept.push_back(std::move(o));
    }
    g.ops = std::move(kept);
}

/// NARROW_INDICES: the INT64 output of ARG_MAX / ARG_MIN becomes INT32 (VNNX has no 64-bit calc
/// type; an index is below 2^24 by the shape limits). A graph output keeps TFLite's values, in
/// 32 bits: the io tensor of the VNNX file is INT32.
inline void narrow_indices(graph& g) {
    using B = builtin_operator;
    for (const auto& o : g.ops)
        if (o.kind == op_type::builtin && (o.code == B::ARG_MAX || o.code == B::ARG_MIN) && o.outputs.size() == 1 &&
            o.outputs[0] >= 0 && g.t(o.outputs[0]).type == tensor_type::INT64)
            g.t(o.outputs[0]).type = tensor_type::INT32;
}

}  // namespace vnnx::compiler::passes
