#pragma once
// BATCH_MATMUL (126) → BATCH_MATMUL node with BatchMatMulOptions (lowering.md §7.9). Between
// two activations the node lists both operands as inputs (§5.3) and runs the product itself;
// the requantization QM(S_a·S_b / S_out) and the zero points come from its tensor records.
// A constant right operand never reaches the lowering: passes/batch_matmul.hpp rewrites it
// into a FULLY_CONNECTED (token-wise), which runs on the convolution engine.
// The SDK forces adj_x = adj_y = 1 [quirk]; here the model's flags are written and honoured.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

namespace bmm_detail {

/// Checks ranks, contracted dims and batch broadcasting of A·B; "" when they fit.
inline std::string check_shapes(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b,
                                const std::vector<std::int32_t>& y, bool adj_x, bool adj_y) {
    if (a.size() < 2 || b.size() < 2 || a.size() > 5 || b.size() > 5) return "operands must have rank 2 to 5";
    const std::size_t ra = a.size(), rb = b.size();
    const std::int32_t m = adj_x ? a[ra - 1] : a[ra - 2], k = adj_x ? a[ra - 2] : a[ra - 1];
    const std::int32_t kb = adj_y ? b[rb - 1] : b[rb - 2], n = adj_y ? b[rb - 2] : b[rb - 1];
    if (k != kb) return "contracted dims differ (" + std::to_string(k) + " and " + std::to_string(kb) + ")";
    const std::size_t nb = std::max(ra, rb) - 2;
    std::vector<std::int32_t> want(nb, 1);
    for (std::size_t i = 0; i < nb; ++i) {
        const std::int32_t x = i + ra >= nb + 2 ? a[i + ra - nb - 2] : 1;
        const std::int32_t z = i + rb >= nb + 2 ? b[i + rb - nb - 2] : 1;
        if (x != z && x != 1 && z != 1) return "batch dims " + std::to_string(x) + " and " + std::to_string(z) + " do not broadcast";
        want[i] = std::max(x, z);
    }
    want.push_back(m);
    want.push_back(n);
    if (y != want) return "output shape " + movement::shape_text(y) + " is not " + movement::shape_text(want);
    return {};
}

}  // namespace bmm_detail

template <>
struct op<builtin_operator::BATCH_MATMUL> {
    static constexpr builtin_operator code = builtin_operator::BATCH_MATMUL;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary =
        "batched matrix product of two activations (attention Q·Kᵀ, P·V) or of an activation and a constant";
    static constexpr auto dtypes = meta::value_set<tensor_type::INT8>{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::BATCH_MATMUL);
    static constexpr std::int32_t layer_type = no_layer;
    using member = format::node_options::BatchMatMulOptions;
    using tflite_options = tflite::opt::BatchMatMulOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.adj_x = x.adj_x;
        o.adj_y = x.adj_y;
    }
    static constexpr bool replay = false;  // its node is never replayed (use_replay = 0)
    static constexpr rank_range ranks{2, 5};
    static constexpr std::string_view axes = "contracts the last axis of A with the second-to-last of B; leading axes broadcast";
    static constexpr std::string_view notes =
        "adj_x/adj_y honoured and requantized as TFLite (the SDK forces both flags to 1 and stores no quantization); "
        "a constant B becomes a FULLY_CONNECTED";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.inputs[1] < 0 || o.outputs.size() != 1 || o.outputs[0] < 0)
            return "needs two inputs and one output";
        const auto& a = g.t(o.inputs[0]);
        const auto& b = g.t(o.inputs[1]);
        const auto& y = g.t(o.outputs[0]);
        if (a.is_constant()) return "input 0 is a constant; only the second operand may be";
        if (b.type != tensor_type::INT8 || y.type != tensor_type::INT8) return "operands and output must be int8";
        for (const auto* t : {&a, &b, &y})
            if (!(t->quant.scale0() > 0) || t->quant.scale.size() != 1) return "operands and output need one positive scale each";
        for (const auto* t : {&a, &b, &y})
            for (auto d : t->shape)
                if (d <= 0) return "shapes must be static and non-empty";
        if (auto r = bmm_detail::check_shapes(a.shape, b.shape, y.shape, o.options.adj_x, o.options.adj_y); !r.empty()) return r;
        if (b.is_constant()) {
            if (o.options.adj_x) return "adj_x with a constant operand is not supported";
            for (std::size_t i = 0; i + 2 < b.rank(); ++i)
                if (b.shape[i] != 1) return "a constant operand must not have batch dims above 1";
        }
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        const std::int32_t a = o.inputs.at(0), b = o.inputs.at(1);
        if (c.g.t(b).is_constant()) c.reject(o, "a constant operand must be rewritten into FULLY_CONNECTED first");
        n.tensors.push_back(c.desc(a));
        n.tensors.push_back(c.desc(b));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = 2;
        n.rec.num_outputs = 1;
        // m, n: the larger of the two operands' (lowering.md §7.9); channels from the first.
        const auto ga = geometry_of(c.g.t(a).shape), gb = geometry_of(c.g.t(b).shape);
        n.rec.channels = ga.channels;
        n.rec.m = std::max(ga.m, gb.m);
        n.rec.n = std::max(ga.n, gb.n);
        format::node_options::BatchMatMulOptions bo{};
        bo.adj_x = o.options.adj_x ? 1 : 0;
        bo.adj_y = o.options.adj_y ? 1 : 0;
        bo.asym = 1;  // zero points are applied
        n.set(bo);
    }
};

}  // namespace vnnx::ops
