#pragma once
// DEPTHWISE_MULTIPLIER (ours): the FIA's depthwise mode has as many outputs as inputs
// (lowering.md §7.1), so a DEPTHWISE_CONV_2D with depth multiplier M > 1 over C > 1 channels
// becomes an ordinary CONV_2D whose [M·C, kh, kw, C] filter holds kernel k's taps on input
// channel k / M and the weight zero point elsewhere: every product outside the group is zero,
// so the result equals TFLite's exactly (C times the MACs of the depthwise form). One input
// channel needs nothing: it already runs as an ordinary conv.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

inline void depthwise_multiplier_to_conv(graph& g) {
    using B = builtin_operator;
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::DEPTHWISE_CONV_2D || o.inputs.size() < 2 || o.inputs[0] < 0 ||
            o.inputs[1] < 0)
            continue;
        const auto& wt = g.t(o.inputs[1]);
        const auto& in = g.t(o.inputs[0]);
        if (!wt.is_constant() || wt.rank() != 4 || in.rank() != 4) continue;
        const std::int32_t C = in.shape[3], K = wt.shape[3], kh = wt.shape[1], kw = wt.shape[2];
        if (C <= 1 || K == C || K % C != 0 || wt.shape[0] != 1) continue;
        const std::int32_t M = K / C;
        const auto& q = wt.quant;
        const auto zero_of = [&](std::size_t k) -> std::byte {
            if (q.zero_point.empty()) return std::byte{0};
            return static_cast<std::byte>(static_cast<std::uint8_t>(q.zero_point[q.zero_point.size() == 1 ? 0 : k]));
        };
        const auto& src = *wt.data;  // [1][kh][kw][K]
        std::vector<std::byte> dense(static_cast<std::size_t>(K) * kh * kw * C);
        for (std::int32_t k = 0; k < K; ++k) {
            const auto ku = static_cast<std::size_t>(k);
            for (std::int32_t t = 0; t < kh * kw; ++t) {
                std::byte* row = dense.data() + (ku * kh * kw + static_cast<std::size_t>(t)) * C;
                for (std::int32_t c = 0; c < C; ++c) row[c] = zero_of(ku);
                row[k / M] = src.at(static_cast<std::size_t>(t) * K + ku);
            }
        }
        tensor filt = wt;
        filt.name = g.unique_name(wt.name + "/dense");
        filt.shape = {K, kh, kw, C};
        filt.quant.quantized_dimension = 0;  // per-channel scales follow the output channel
        filt.data = std::move(dense);
        o.inputs[1] = g.add_tensor(std::move(filt));
        o.code = B::CONV_2D;
    }
}

}  // namespace vnnx::compiler::passes
