#pragma once
// Cutting the ordered operator list into splits; each split becomes one VNNX node whose first
// operator decides the node type and whose other operators become its subnodes
// (lowering.md §4). LUT chains are single operators of kind `lut` in this graph, so the
// "LUT pattern" of the SDK is one operator here.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "vnnx/ir/graph.hpp"

namespace vnnx::compiler {

using split = std::vector<std::int32_t>;  // operator indices, in order

namespace detail {

using B = builtin_operator;

inline bool is(const op& o, B code) { return o.kind == op_type::builtin && o.code == code; }

inline bool is_any(const op& o, std::initializer_list<B> codes) {
    return o.kind == op_type::builtin && std::find(codes.begin(), codes.end(), o.code) != codes.end();
}

struct graph_index {
    std::vector<std::vector<std::int32_t>> consumers;  // per tensor: operators reading it
    std::vector<std::int32_t> producer;                // per tensor: operator writing it, -1

    explicit graph_index(const graph& g) : consumers(g.tensors.size()), producer(g.tensors.size(), -1) {
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            for (auto t : g.ops[i].inputs)
                if (t >= 0) {
                    auto& c = consumers[static_cast<std::size_t>(t)];
                    if (c.empty() || c.back() != static_cast<std::int32_t>(i)) c.push_back(static_cast<std::int32_t>(i));
                }
            for (auto t : g.ops[i].outputs)
                if (t >= 0) producer[static_cast<std::size_t>(t)] = static_cast<std::int32_t>(i);
        }
    }
};

/// Channels-first H and W of a TFLite shape are its dims -3 and -2 (rank >= 3) or the two dims (rank 2).
inline bool spatial_singleton(const tensor& t) {
    const auto r = t.shape.size();
    if (r < 2) return false;
    const std::int32_t h = r >= 3 ? t.shape[r - 3] : t.shape[0];
    const std::int32_t w = r >= 3 ? t.shape[r - 2] : t.shape[1];
    return h == 1 && w == 1;
}

inline std::vector<std::int32_t> non_one_dims(const std::vector<std::int32_t>& s) {
    std::vector<std::int32_t> out;
    for (auto d : s)
        if (d != 1) out.push_back(d);
    return out;
}

}  // namespace detail

/// Whether an operator always starts a node of its own (rule 5): the operator traits say it
/// (ops::starts_own_node), a layer above this one.
using node_start_rule = bool (*)(const op&);

inline std::vector<split> split_graph(const graph& g, node_start_rule starts_own_node) {
    using B = builtin_operator;
    using namespace detail;
    const graph_index idx(g);
    auto is_graph_output = [&](std::int32_t t) {
        return std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
    };
    auto is_const = [&](std::int32_t t) { return t >= 0 && g.t(t).is_constant(); };
    auto is_conv = [&](const op& o) { return is_any(o, {B::CONV_2D, B::DEPTHWISE_CONV_2D, B::TRANSPOSE_CONV}); };

    std::vector<split> out;
    split cur;
    bool cur_has_lut = false;
    auto close = [&] {
        if (!cur.empty()) out.push_back(std::move(cur));
        cur.clear();
        cur_has_lut = false;
    };
    auto append = [&](std::int32_t i) {
        cur.push_back(i);
        if (g.ops[static_cast<std::size_t>(i)].kind == op_type::lut) cur_has_lut = true;
    };

    for (std::size_t ii = 0; ii < g.ops.size(); ++ii) {
        const auto i = static_cast<std::int32_t>(ii);
        const op& o = g.ops[ii];
        if (ii == 0) {
            append(i);
            continue;
        }
        const op& prev = g.ops[ii - 1];
        bool connected = false;
        for (auto t : o.inputs)
            if (t >= 0 && std::find(prev.outputs.begin(), prev.outputs.end(), t) != prev.outputs.end()) connected = true;
        bool forked = prev.outputs.size() > 1;
        for (auto t : prev.outputs)
            if (t >= 0 && idx.consumers[static_cast<std::size_t>(t)].size() > 1) forked = true;
        bool feeds_output = false;
        for (auto t : o.inputs)
            if (t >= 0 && is_graph_output(t)) feeds_output = true;
        std::size_t n_act_inputs = 0;
        bool any_const = false;
        for (auto t : o.inputs) {
            if (t < 0) continue;
            if (is_const(t)) any_const = true;
            else ++n_act_inputs;
        }
        const bool multi_input = n_act_inputs > 1 && !any_const;
        bool singleton = false;
        for (auto t : o.inputs)
            if (t >= 0 && spatial_singleton(g.t(t))) singleton = true;

        // Rule 1: after a PAD that pads channels, or that feeds a pool, start anew.
        if (is_any(prev, {B::PAD, B::PADV2})) {
            bool pads_channels = false;
            if (prev.inputs.size() > 1 && is_const(prev.inputs[1])) {
                auto pads = g.t(prev.inputs[1]).values<std::int32_t>();
                if (pads.size() >= 2 && pads[pads.size() - 2] + pads[pads.size() - 1] > 0) pads_channels = true;
            }
            bool feeds_pool = false;
            if (!prev.outputs.empty() && prev.outputs[0] >= 0) {
                const auto& cons = idx.consumers[static_cast<std::size_t>(prev.outputs[0])];
                if (!cons.empty())
                    feeds_pool = is_any(g.ops[static_cast<std::size_t>(cons[0])], {B::MAX_POOL_2D, B::AVERAGE_POOL_2D});
            }
            if (pads_channels || feeds_pool) close();
        }
        // Rule 2: a concatenation or strided slice always ends its split.
        if (is_any(prev, {B::CONCATENATION, B::STRIDED_SLICE})) close();

        // Rule 3: a LUT chain joins the current split unless one is already there.
        if (o.kind == op_type::lut) {
            const bool partial = forked;  // the chain takes one consumer of a forked tensor
            if (cur_has_lut || partial || !connected) close();
            append(i);
            continue;
        }
        // Rule 4.
        if (forked || feeds_output || !connected) {
            close();
            append(i);
            continue;
        }
        // Rule 5.
        if (starts_own_node(o)) {
            close();
            append(i);
            continue;
        }
        const op* first = cur.empty() ? nullptr : &g.ops[static_cast<std::size_t>(cur.front())];
        const bool after_conv = is_conv(prev);
        // Rules 6-7: activations and pools following a conv stay in its node.
        if (after_conv && is_any(o, {B::RELU, B::RELU6, B::RELU_N1_TO_1, B::LEAKY_RELU, B::PRELU, B::HARD_SWISH,
                                     B::LOGISTIC, B::TANH, B::ELU, B::GELU})) {
            append(i);
            continue;
        }
        if (is_any(o, {B::MAX_POOL_2D, B::AVERAGE_POOL_2D}) && first != nullptr && is_conv(*first) && cur.size() >= 2 &&
            (prev.kind == op_type::lut || is_any(prev, {B::RELU, B::RELU6, B::LEAKY_RELU}))) {
            append(i);
            continue;
        }
        // Rule 8: ADD or MUL right after a conv.
        if (after_conv && is_any(o, {B::ADD, B::MUL})) {
            bool per_channel_const = false;
            if (o.inputs.size() > 1 && is_const(o.inputs[1])) {
                const auto& s = g.t(o.inputs[1]).shape;
                per_channel_const = s.size() <= 1;
                if (!per_channel_const) {
                    per_channel_const = true;
                    for (std::size_t d = 0; d + 1 < s.size(); ++d)
                        if (s[d] != 1) per_channel_const = false;
                }
            }
            if (!per_channel_const && multi_input && singleton) close();
            append(i);
            continue;
        }
        // Rule 9.
        if (is(o, B::RESIZE_BILINEAR)) {
            close();
            append(i);
            continue;
        }
        // Rule 10: a reshape that moves data starts a node.
        if (is(o, B::RESHAPE) && !o.inputs.empty() && !o.outputs.empty() &&
            non_one_dims(g.t(o.inputs[0]).shape) != non_one_dims(g.t(o.outputs[0]).shape)) {
            close();
            append(i);
            continue;
        }
        // Rule 11.
        if (is_any(o, {B::ADD, B::SUB, B::MUL, B::DIV, B::SQUARED_DIFFERENCE, B::GREATER, B::GREATER_EQUAL, B::LESS,
                       B::LESS_EQUAL, B::EQUAL, B::NOT_EQUAL}) &&
            multi_input && singleton) {
            close();
            append(i);
            continue;
        }
        append(i);  // Rule 12.
    }
    close();
    return out;
}

/// Cuts a split that could not be tiled (lowering.md §4, "re-splitting on allocation
/// failure"): before the second operator, or before the third when the first two are a conv
/// and its fused activation table. Returns false for a single operator (nothing to cut).
inline bool cut_split(const graph& g, std::vector<split>& splits, std::size_t which) {
    auto& s = splits.at(which);
    if (s.size() < 2) return false;
    std::size_t at = 1;
    const op& first = g.ops[static_cast<std::size_t>(s[0])];
    const op& second = g.ops[static_cast<std::size_t>(s[1])];
    const bool conv_first = detail::is_any(first, {builtin_operator::CONV_2D, builtin_operator::DEPTHWISE_CONV_2D,
                                                   builtin_operator::TRANSPOSE_CONV});
    if (conv_first && second.kind == op_type::lut && s.size() > 2) at = 2;
    split tail(s.begin() + static_cast<std::ptrdiff_t>(at), s.end());
    s.resize(at);
    splits.insert(splits.begin() + static_cast<std::ptrdiff_t>(which) + 1, std::move(tail));
    return true;
}

}  // namespace vnnx::compiler
