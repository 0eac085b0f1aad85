#pragma once
// BATCH_MATMUL with a constant right operand (B [.., K, N], batch dims 1) is a token-wise
// linear layer: it becomes FULLY_CONNECTED with weights Bᵀ [N, K] (B itself when adj_y) and no
// bias, so it runs on the convolution engine like any FC (passes/fully_connected.hpp). The
// integer result is the same sum Σ_k (a − z_a)(b − z_b) requantized by S_a·S_b / S_out.
#include <cstdint>
#include <vector>

#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

inline void batch_matmul_constant_to_fc(graph& g) {
    using B = builtin_operator;
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::BATCH_MATMUL || o.inputs.size() != 2 || o.inputs[1] < 0 ||
            !g.t(o.inputs[1]).is_constant() || o.options.adj_x)
            continue;
        const tensor& b = g.t(o.inputs[1]);
        const auto r = b.rank();
        if (r < 2 || b.data->size() != static_cast<std::size_t>(b.element_count())) continue;
        const std::int32_t k = o.options.adj_y ? b.shape[r - 1] : b.shape[r - 2];
        const std::int32_t n = o.options.adj_y ? b.shape[r - 2] : b.shape[r - 1];
        tensor w;
        w.name = g.unique_name(b.name + "/fc_weights");
        w.type = b.type;
        w.shape = {n, k};
        w.quant = b.quant;
        std::vector<std::byte> bytes(static_cast<std::size_t>(n) * static_cast<std::size_t>(k));
        for (std::int32_t j = 0; j < n; ++j)
            for (std::int32_t i = 0; i < k; ++i)
                bytes[static_cast<std::size_t>(j) * k + i] =
                    (*b.data)[o.options.adj_y ? static_cast<std::size_t>(j) * k + i : static_cast<std::size_t>(i) * n + j];
        w.data = std::move(bytes);
        const auto wt = g.add_tensor(std::move(w));
        o.code = B::FULLY_CONNECTED;
        o.inputs = {o.inputs[0], wt, -1};
        o.options.keep_num_dims = true;
        o.options.fused = activation::NONE;
    }
}

}  // namespace vnnx::compiler::passes
