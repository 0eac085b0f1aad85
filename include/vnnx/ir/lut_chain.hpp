#pragma once
// The LUT pass (lowering.md §3.4): chains of element-wise single-input operators on 8-bit
// data become one table lookup. Here a chain becomes one operator of kind `lut` holding the
// tables (1..4, one per channel of a small per-channel constant); the tables are computed by
// running the chain's reference kernels on all 256 input codes (`evaluate`), so they are
// exactly TFLite's integer results.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "vnnx/ir/float_island.hpp"
#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

/// Computes the tables of a chain: for the chain's operators (in order) applied to a tensor
/// of shape [1, 1, 256, L] holding the codes 0..255 in every channel (cast to the input type),
/// returns L tables of 256 entries (entry r = output for input byte r).
using lut_evaluator =
    std::function<std::vector<std::vector<std::int32_t>>(const graph&, const std::vector<std::int32_t>& chain, int tables)>;

namespace detail {

inline bool is_8bit(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

inline bool is_comparison(builtin_operator c) {
    using B = builtin_operator;
    return c == B::EQUAL || c == B::NOT_EQUAL || c == B::GREATER || c == B::GREATER_EQUAL || c == B::LESS ||
           c == B::LESS_EQUAL;
}

/// Number of tables an operator needs inside a chain (1), 2..4 for a small per-channel
/// constant, or 0 when the operator cannot join a chain.
inline int lut_tables(const graph& g, const op& o, std::int32_t chain_input) {
    using B = builtin_operator;
    if (o.kind != op_type::builtin || o.outputs.size() != 1 || o.inputs.empty()) return 0;
    const tensor& out = g.t(o.outputs[0]);
    switch (o.code) {
        case B::HARD_SWISH: case B::LOGISTIC: case B::TANH: case B::LEAKY_RELU: case B::RELU: case B::RELU6:
        case B::RELU_N1_TO_1: case B::RELU_0_TO_1: case B::RSQRT: case B::SQRT: case B::EXP: case B::LOG:
        case B::ELU: case B::GELU: case B::NEG:  // not ABS: §3.4 leaves it to its own layer (§7.6.7)
            return is_8bit(out.type) && is_8bit(g.t(o.inputs[0]).type) && o.inputs.size() == 1 ? 1 : 0;
        case B::QUANTIZE:
        case B::DEQUANTIZE:  // an 8-bit DEQUANTIZE output is a requantization as well
            return is_8bit(out.type) && is_8bit(g.t(o.inputs[0]).type) ? 1 : 0;
        case B::ADD: case B::SUB: case B::MUL: case B::DIV: case B::SQUARED_DIFFERENCE: case B::MAXIMUM:
        case B::MINIMUM: case B::PRELU:
        // A comparison with a constant is a function of one input: a table of 0/1 (BOOL output),
        // which ends the chain (nothing 8-bit reads a BOOL).
        case B::EQUAL: case B::NOT_EQUAL: case B::GREATER: case B::GREATER_EQUAL: case B::LESS: case B::LESS_EQUAL: {
            const bool comparison = is_comparison(o.code);
            if (o.inputs.size() != 2 || !(comparison ? out.type == tensor_type::BOOL : is_8bit(out.type))) return 0;
            const std::int32_t a = o.inputs[0], b = o.inputs[1];
            if (a == b) return !comparison && (o.code == B::ADD || o.code == B::MUL) && a == chain_input ? 1 : 0;  // x+x, x·x
            const std::int32_t c = g.t(a).is_constant() ? a : (g.t(b).is_constant() ? b : -1);
            if (c < 0) {
                return 0;
            }
            const tensor& k = g.t(c);
            if (!is_8bit(k.type) || k.element_count() > 4) return 0;
            if (!is_8bit(g.t(c == a ? b : a).type)) return 0;
            if (g.t(c == a ? b : a).shape != out.shape) return 0;  // the constant must not widen the tensor
            if (k.element_count() > 1) {
                // Per-channel constants only: every dim but the last is 1.
                for (std::size_t d = 0; d + 1 < k.shape.size(); ++d)
                    if (k.shape[d] != 1) return 0;
                return k.shape.empty() ? 1 : k.shape.back();
            }
            return 1;
        }
        default:
            return 0;
    }
}

}  // namespace detail

inline void lut_pass(graph& g, const lut_evaluator& evaluate) {
    using B = builtin_operator;
    auto readers = [&](std::int32_t t) { return readers_of(g, t); };
    std::vector<std::uint8_t> consumed(g.ops.size(), 0);
    std::vector<op> out;
    out.reserve(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (consumed[i]) continue;
        const op& first = g.ops[i];
        // The chain's one activation input: SUB(constant, x) reads it as input 1.
        std::int32_t chain_in = -1;
        for (auto x : first.inputs)
            if (x >= 0 && !g.t(x).is_constant()) {
                chain_in = x;
                break;
            }
        // A float island (DEQUANTIZE → float ops → QUANTIZE) opens a chain as a whole.
        const auto island = float_island_from(g, i);
        if (!island && (chain_in < 0 || g.t(chain_in).is_constant() || detail::lut_tables(g, first, chain_in) == 0)) {
            out.push_back(g.ops[i]);
            continue;
        }
        std::vector<std::int32_t> chain{static_cast<std::int32_t>(i)};
        int tables = island ? 1 : detail::lut_tables(g, first, chain_in);
        if (island) {
            chain = *island;
            for (auto k : chain) {
                const op& m = g.ops[static_cast<std::size_t>(k)];
                if (m.inputs.size() == 2) {  // a constant side input: one table per channel
                    const tensor& c = g.t(m.inputs[1]);
                    if (c.element_count() > 1 && !c.shape.empty()) tables = std::max(tables, c.shape.back());
                }
            }
        }
        std::int32_t cur_out = g.ops[static_cast<std::size_t>(chain.back())].outputs[0];
        for (;;) {
            if (is_graph_output(g, cur_out)) break;
            const auto rs = readers(cur_out);
            std::size_t next = 0;
            bool ok = false;
            if (rs.size() == 1) {
                next = rs[0];
                ok = true;
            }
            // SiLU: LOGISTIC followed by a MUL with the LOGISTIC's own input.
            const op& last = g.ops[static_cast<std::size_t>(chain.back())];
            if (!ok || consumed[next] || next <= static_cast<std::size_t>(chain.back())) break;
            const op& cand = g.ops[next];
            int t = detail::lut_tables(g, cand, cur_out);
            if (t == 0 && last.code == B::LOGISTIC && cand.kind == op_type::builtin && cand.code == B::MUL &&
                cand.inputs.size() == 2 && last.inputs[0] == chain_in &&
                ((cand.inputs[0] == cur_out && cand.inputs[1] == chain_in) ||
                 (cand.inputs[1] == cur_out && cand.inputs[0] == chain_in)))
                t = 1;
            if (t == 0) break;
            // Every input of the candidate is the chain value, the chain input (SiLU) or a constant.
            bool inputs_ok = true;
            for (auto x : cand.inputs)
                if (x != cur_out && x != chain_in && !g.t(x).is_constant()) inputs_ok = false;
            if (!inputs_ok) break;
            if (std::max(tables, t) > 4) break;
            tables = std::max(tables, t);
            chain.push_back(static_cast<std::int32_t>(next));
            cur_out = cand.outputs[0];
        }
        // A lone QUANTIZE between 8-bit types is a requantization: a table as well.
        op lut;
        lut.kind = op_type::lut;
        lut.inputs = {chain_in};
        lut.outputs = {cur_out};
        lut.source_index = first.source_index;
        lut.tables = evaluate(g, chain, tables);
        for (auto c : chain) consumed[static_cast<std::size_t>(c)] = 1;
        out.push_back(std::move(lut));
    }
    g.ops = std::move(out);
}

}  // namespace vnnx::compiler::passes
