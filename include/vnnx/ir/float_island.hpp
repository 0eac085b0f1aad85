#pragma once
// Float islands (lowering.md §3.4, §8.6): DEQUANTIZE (8-bit → float32) → float element-wise
// operators with constant side inputs → QUANTIZE (float32 → 8-bit). TFLite computes POW, LOG,
// SQRT (and, in older versions, EXP and NEG) this way inside integer models; the LUT pass turns the whole
// island into one table, so no float reaches the accelerator.
#include <cstdint>
#include <optional>
#include <vector>

#include "vnnx/ir/graph.hpp"
#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler {

namespace detail {
inline bool is_8bit_type(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

/// Float operators of one input that an island may hold: converters leave these in float
/// where TFLite has no 8-bit kernel (LOG, SQRT) or an older one lacks it (EXP, NEG, RSQRT).
inline bool is_island_unary(builtin_operator c) {
    using B = builtin_operator;
    return c == B::EXP || c == B::LOG || c == B::SQRT || c == B::NEG || c == B::RSQRT;
}

/// A float operator an island may hold: one of the unary ones above, or POW with a float32
/// constant exponent of <= 4 elements (one per channel at most, like the LUT pass's constants).
inline bool island_body_op(const graph& g, const op& o, std::int32_t cur) {
    using B = builtin_operator;
    if (o.kind != op_type::builtin || o.outputs.size() != 1 || o.inputs.empty() || o.inputs[0] != cur) return false;
    if (is_island_unary(o.code)) {
        const tensor& y = g.t(o.outputs[0]);
        return o.inputs.size() == 1 && y.type == tensor_type::FLOAT32 && y.shape == g.t(cur).shape;
    }
    if (o.code != B::POW || o.inputs.size() != 2 || o.inputs[1] < 0) return false;
    const tensor& e = g.t(o.inputs[1]);
    if (!e.is_constant() || e.type != tensor_type::FLOAT32 || e.element_count() > 4) return false;
    for (std::size_t d = 0; d + 1 < e.shape.size(); ++d)
        if (e.shape[d] != 1) return false;
    const tensor& y = g.t(o.outputs[0]);
    return y.type == tensor_type::FLOAT32 && y.shape == g.t(cur).shape;
}
}  // namespace detail

/// At most this many float operators between the DEQUANTIZE and the QUANTIZE: islands are
/// short, and the bound keeps the checks linear on hostile chains.
inline constexpr std::size_t max_island_body = 8;

/// The operators (indices into g.ops, in order) of the float island that starts at operator
/// `first`, a DEQUANTIZE; nullopt when `first` starts none. Each float tensor inside has one
/// reader and is no graph output.
inline std::optional<std::vector<std::int32_t>> float_island_from(const graph& g, std::size_t first) {
    using B = builtin_operator;
    const op& d = g.ops.at(first);
    if (d.kind != op_type::builtin || d.code != B::DEQUANTIZE || d.inputs.size() != 1 || d.outputs.size() != 1) return std::nullopt;
    if (d.inputs[0] < 0 || g.t(d.inputs[0]).is_constant() || !detail::is_8bit_type(g.t(d.inputs[0]).type)) return std::nullopt;
    std::vector<std::int32_t> chain{static_cast<std::int32_t>(first)};
    std::int32_t cur = d.outputs[0];
    for (;;) {
        if (g.t(cur).type != tensor_type::FLOAT32 || passes::is_graph_output(g, cur)) return std::nullopt;
        const auto rs = passes::readers_of(g, cur);
        if (rs.size() != 1) return std::nullopt;
        const op& n = g.ops[rs[0]];
        if (n.kind == op_type::builtin && n.code == B::QUANTIZE && n.inputs.size() == 1 && n.outputs.size() == 1 &&
            detail::is_8bit_type(g.t(n.outputs[0]).type)) {
            if (chain.size() < 2) return std::nullopt;  // DEQUANTIZE → QUANTIZE alone is a requantization, not an island
            chain.push_back(static_cast<std::int32_t>(rs[0]));
            return chain;
        }
        if (!detail::island_body_op(g, n, cur) || chain.size() > max_island_body) return std::nullopt;
        chain.push_back(static_cast<std::int32_t>(rs[0]));
        cur = n.outputs[0];
    }
}

/// Whether operator `index` belongs to a float island.
inline bool in_float_island(const graph& g, std::size_t index) {
    // Walk back through float inputs to the island's DEQUANTIZE, then forward.
    using B = builtin_operator;
    std::size_t at = index;
    for (std::size_t steps = 0; steps <= max_island_body + 1; ++steps) {
        const op& o = g.ops[at];
        if (o.kind != op_type::builtin ||
            (o.code != B::DEQUANTIZE && o.code != B::QUANTIZE && o.code != B::POW && !detail::is_island_unary(o.code)))
            return false;
        if (o.kind == op_type::builtin && o.code == builtin_operator::DEQUANTIZE) {
            const auto isl = float_island_from(g, at);
            if (!isl) return false;
            for (auto i : *isl)
                if (static_cast<std::size_t>(i) == index) return true;
            return false;
        }
        if (o.inputs.empty() || o.inputs[0] < 0) return false;
        const std::int32_t x = o.inputs[0];
        std::optional<std::size_t> producer;
        for (std::size_t k = 0; k < g.ops.size(); ++k)
            for (auto y : g.ops[k].outputs)
                if (y == x) producer = k;
        if (!producer) return false;
        at = *producer;
    }
    return false;
}

}  // namespace vnnx::compiler
