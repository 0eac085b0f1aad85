#pragma once
// What an operator's lowering sees: the graph, the node being built, the data blob and the
// preset; plus the common rules of lowering.md §5 (channels-first shapes, tensor records,
// layer defaults) so that every operator trait applies them the same way.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ir/graph.hpp"
#include "vnnx/ir/preset.hpp"
#include "vnnx/ir/program.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::ops {

using compiler::graph;
using compiler::layer_build;
using compiler::node_build;
using compiler::tensor_desc;

/// Whether a layer of this VNNX type reads its `input_offset` (the input zero point). The SDK
/// writes the zero point only into these and leaves -1 in all others (movement, pooling,
/// softmax and table layers, which never subtract it); the simulator reads it for exactly these.
constexpr bool layer_reads_input_zero(std::int32_t type) {
    using B = builtin_operator;
    constexpr B reads[] = {B::ADD,  B::SUB,  B::MUL,   B::SQUARED_DIFFERENCE, B::MAXIMUM,  B::MINIMUM,
                           B::RELU, B::RELU_N1_TO_1, B::RELU6, B::RELU_0_TO_1, B::LEAKY_RELU, B::ABS,
                           B::QUANTIZE, B::DEQUANTIZE, B::PRELU, B::L2_NORMALIZATION, B::MEAN, B::SUM,
                           B::REDUCE_MAX, B::REDUCE_MIN, B::REDUCE_PROD, B::GREATER, B::GREATER_EQUAL,
                           B::LESS, B::LESS_EQUAL, B::EQUAL, B::NOT_EQUAL, B::EMBEDDING_LOOKUP};
    if (type == static_cast<std::int32_t>(format::vnnx_operator::ELTWISE)) return true;
    for (auto b : reads)
        if (static_cast<std::int32_t>(b) == type) return true;
    return false;
}

/// TFLite shape → channels-first (lowering.md §2.1): the last axis moves to position -3.
inline std::vector<std::int32_t> channels_first(const std::vector<std::int32_t>& s) {
    if (s.size() < 3) return s;
    std::vector<std::int32_t> out(s.begin(), s.end() - 3);
    out.push_back(s.back());
    out.push_back(s[s.size() - 3]);
    out.push_back(s[s.size() - 2]);
    return out;
}

/// A TFLite axis → channels-first axis, non-negative form.
inline std::int32_t channels_first_axis(std::int32_t axis, std::int32_t rank) {
    if (axis < 0) axis += rank;
    if (rank >= 3) {
        if (axis == rank - 1) return rank - 3;
        if (axis == rank - 3 || axis == rank - 2) return axis + 1;
    }
    return axis;
}

inline std::int32_t calc_type_of(tflite::tensor_type t) {
    using T = tflite::tensor_type;
    using C = format::calc_type;
    switch (t) {
        case T::UINT8: case T::BOOL: return static_cast<std::int32_t>(C::CALC_TYPE_UINT8);
        case T::INT8: return static_cast<std::int32_t>(C::CALC_TYPE_INT8);
        case T::INT16: return static_cast<std::int32_t>(C::CALC_TYPE_INT16);
        case T::INT32: return static_cast<std::int32_t>(C::CALC_TYPE_INT32);
        default: return static_cast<std::int32_t>(C::CALC_TYPE_UNKNOWN);
    }
}

/// Channels-first geometry (channels, rows, cols) of a shape; missing dims are 1.
struct geometry {
    std::int32_t channels = 1, m = 1, n = 1;
};
inline geometry geometry_of(const std::vector<std::int32_t>& tflite_shape) {
    const auto cf = channels_first(tflite_shape);
    geometry g;
    const auto r = cf.size();
    if (r >= 1) g.n = cf[r - 1];
    if (r >= 2) g.m = cf[r - 2];
    if (r >= 3) g.channels = cf[r - 3];
    return g;
}

struct lowering {
    const graph& g;
    compiler::program& prog;
    const compiler::preset_info& preset;
    node_build& node;
    // The tile chosen for the node (lowering.md §10.1); convolutions pack weights with it.
    std::int32_t maps = 0, imaps = 0;
    // Names of node inputs renamed for an IDENTITY node's copy (lowering.md §5.3).
    std::vector<std::pair<std::string, std::string>> renames;

    [[nodiscard]] compiler::data_section& data() { return prog.data; }

    [[nodiscard]] std::string tensor_name(std::int32_t t) const {
        std::string n = g.t(t).name;
        for (const auto& [from, to] : renames)
            if (n == from) return to;
        return n;
    }

    /// The tensor record of graph tensor t (channels-first).
    [[nodiscard]] tensor_desc desc(std::int32_t t) const {
        const auto& x = g.t(t);
        tensor_desc d;
        d.name = tensor_name(t);
        d.type = calc_type_of(x.type);
        d.shape = channels_first(x.shape);
        for (auto& v : d.shape)
            if (v < 0) v = 1;  // an unknown batch is 1
        d.scale = x.quant.scale0();
        d.zero = x.quant.zero0();
        return d;
    }

    /// A new layer with the common fields of lowering.md §5.4 filled from operator `o`:
    /// types, zero points, tensors (activation inputs, then the output).
    layer_build& add_layer(std::int32_t type, const compiler::op& o, const std::vector<std::int32_t>& inputs) {
        layer_build l;
        l.rec = compiler::default_layer();
        l.rec.type = type;
        for (auto t : inputs) l.tensors.push_back(desc(t));
        l.tensors.push_back(desc(o.outputs.at(0)));
        l.rec.input_data_type = l.tensors.front().type;
        l.rec.output_data_type = l.tensors.back().type;
        l.rec.input_offset = layer_reads_input_zero(type) ? l.tensors.front().zero : -1;
        l.rec.output_offset = l.tensors.back().zero;
        l.rec.num_inputs = static_cast<std::int32_t>(inputs.size());
        l.rec.num_outputs = 1;
        l.rec.num_tensors = l.rec.num_inputs + 1;
        if (!g.ops.empty() && &o >= g.ops.data() && &o < g.ops.data() + g.ops.size())
            l.source_op = static_cast<std::int32_t>(&o - g.ops.data());
        node.layers.push_back(std::move(l));
        return node.layers.back();
    }

    /// The activation (non-constant) inputs of an operator, in order.
    [[nodiscard]] std::vector<std::int32_t> activation_inputs(const compiler::op& o) const {
        std::vector<std::int32_t> out;
        for (auto t : o.inputs)
            if (t >= 0 && !g.t(t).is_constant()) out.push_back(t);
        return out;
    }

    [[noreturn]] void reject(const compiler::op& o, const std::string& rule) const {
        fail(error_kind::unsupported, g.source + ": " + compiler::describe(o) + ": " + rule);
    }
};

}  // namespace vnnx::ops
