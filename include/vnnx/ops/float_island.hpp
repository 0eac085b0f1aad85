#pragma once
// Operators that compute in float inside integer models (lowering.md §3.2, §3.4, §7.6.4):
//   DEQUANTIZE: at a float graph output it is removed (REMOVE_FP32_IO: the model output is the
//     quantized tensor); opening a float island it joins the island's table; with an 8-bit
//     output it is a requantization (a LUT, or the DEQUANTIZE (6) layer without the LUT pass).
//   POW: TFLite has float32 (and int32) POW only, so an integer model holds it as the island
//     DEQUANTIZE → POW (constant exponent) → QUANTIZE, which the LUT pass makes one table.
//     EXP, LOG, SQRT, NEG and RSQRT may sit in such islands too (their traits accept float32 there).
#include <cstdint>
#include <string>

#include "vnnx/ir/float_island.hpp"
#include "vnnx/ops/activations.hpp"

namespace vnnx::ops {

namespace island_detail {
/// Index of `o` in g.ops, or -1 when it is a copy.
inline std::ptrdiff_t index_of(const graph& g, const compiler::op& o) {
    const std::ptrdiff_t at = &o - g.ops.data();
    return at >= 0 && static_cast<std::size_t>(at) < g.ops.size() ? at : -1;
}
}  // namespace island_detail

template <>
struct op<builtin_operator::DEQUANTIZE> {
    static constexpr builtin_operator code = builtin_operator::DEQUANTIZE;
    static constexpr std::string_view summary =
        "float graph output: removed; opening a float island: its table; 8-bit output: a requantization LUT";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::DEQUANTIZE);
    using member = no_member;
    static constexpr std::string_view notes =
        "a float output inside the graph is refused unless it opens a float island (the SDK records it and patches node offsets)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1 || o.outputs.size() != 1 || o.inputs[0] < 0) return "needs one input and one output";
        const auto& y = g.t(o.outputs[0]);
        if (y.type == tensor_type::FLOAT32) {
            if (compiler::passes::is_graph_output(g, o.outputs[0])) return {};
            const auto at = island_detail::index_of(g, o);
            if (at >= 0 && compiler::float_island_from(g, static_cast<std::size_t>(at))) return {};
            return "a float output is supported at a graph output or opening a float island only (DEQUANTIZE -> POW, EXP, LOG, "
                   "SQRT, NEG or RSQRT -> QUANTIZE)";
        }
        return detail::check_unary(g, o, false);
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        if (!detail::is_8bit(c.g.t(o.outputs.at(0)).type))
            c.reject(o, "a float DEQUANTIZE is removed at a graph output or tabulated with its island, never lowered alone");
        op<builtin_operator::QUANTIZE>::lower_layer(c, o);  // the same 8-bit requantization layer
    }
};

template <>
struct op<builtin_operator::POW> {
    static constexpr builtin_operator code = builtin_operator::POW;
    static constexpr std::string_view summary = "float POW with a constant exponent inside DEQUANTIZE -> POW -> QUANTIZE: one LUT";
    static constexpr auto dtypes = meta::value_set<tensor_type::FLOAT32>{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(format::vnnx_operator::LUT);
    using member = format::layer_options::ActivationOptions;

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 2 || o.outputs.size() != 1 || o.inputs[1] < 0) return "needs a base and an exponent";
        const auto& e = g.t(o.inputs[1]);
        if (!e.is_constant()) return "the exponent (input 1) must be a constant";
        if (e.element_count() > 4) return "the exponent may hold at most 4 elements (one table each)";
        const auto at = island_detail::index_of(g, o);
        if (at < 0 || !compiler::in_float_island(g, static_cast<std::size_t>(at)))
            return "POW must sit in a DEQUANTIZE -> POW -> QUANTIZE island (its only reader chain) to become a table";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        c.reject(o, "a float POW is lowered only as its island's lookup table (the LUT pass)");
    }
};

}  // namespace vnnx::ops
