#pragma once
// FC_CONV_2D (lowering.md §3.2, §7.10.1): every FULLY_CONNECTED becomes RESHAPE → 1×1 CONV_2D →
// RESHAPE, so it runs on the convolution engine. Unlike the SDK, inputs with several rows
// (token-wise layers of transformers, [T, C] or [1, T, C]) are kept correct: the rows become
// the conv's spatial rows ([1, T, 1, C]) and the final reshape restores the FC's own output shape.
#include <cstdint>
#include <vector>

#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

inline void fully_connected_to_conv(graph& g) {
    using B = builtin_operator;
    std::vector<op> out;
    out.reserve(g.ops.size());
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::FULLY_CONNECTED || o.inputs.size() < 2 || o.outputs.empty() ||
            !g.t(o.inputs[1]).is_constant()) {
            out.push_back(std::move(o));
            continue;
        }
        const std::int32_t in = o.inputs[0], w = o.inputs[1];
        const std::int32_t bias = o.inputs.size() > 2 ? o.inputs[2] : -1;
        const auto& wshape = g.t(w).shape;  // [K, C]
        if (wshape.size() != 2) fail_input(g.source + ": " + describe(o) + ": weights must have rank 2");
        const std::int32_t k = wshape[0], c = wshape[1];
        const std::int64_t total = g.t(in).element_count();
        if (c <= 0 || total % c != 0)
            fail_input(g.source + ": " + describe(o) + ": input element count is not a multiple of the weights' depth");
        const auto rows = static_cast<std::int32_t>(total / c);

        // Weights [K, C] become a [K, 1, 1, C] filter with the same bytes and quantization.
        tensor filt = g.t(w);
        filt.name = g.unique_name(g.t(w).name + "/conv_filter");
        filt.shape = {k, 1, 1, c};
        if (filt.quant.scale.size() > 1) filt.quant.quantized_dimension = 0;
        const auto filt_t = g.add_tensor(std::move(filt));

        const auto in4 = add_activation_like(g, in, g.t(in).name + "/rows", {1, rows, 1, c});
        const auto out_t = o.outputs[0];
        const auto conv_out = add_activation_like(g, out_t, g.t(out_t).name + "/conv", {1, rows, 1, k});

        op r1;
        r1.code = B::RESHAPE;
        r1.inputs = {in, add_i32_constant(g, g.t(in4).name + "/shape", {4}, {1, rows, 1, c})};
        r1.outputs = {in4};
        r1.options.new_shape = {1, rows, 1, c};
        r1.source_index = o.source_index;

        op conv;
        conv.code = B::CONV_2D;
        conv.inputs = {in4, filt_t, bias};
        conv.outputs = {conv_out};
        conv.options.pad = padding::VALID;
        conv.options.fused = o.options.fused;
        conv.source_index = o.source_index;

        op r2;
        r2.code = B::RESHAPE;
        r2.inputs = {conv_out, add_i32_constant(g, g.t(out_t).name + "/shape", {static_cast<std::int32_t>(g.t(out_t).shape.size())},
                                                g.t(out_t).shape)};
        r2.outputs = {out_t};
        r2.options.new_shape = g.t(out_t).shape;
        r2.source_index = o.source_index;

        out.push_back(std::move(r1));
        out.push_back(std::move(conv));
        out.push_back(std::move(r2));
    }
    g.ops = std::move(out);
}

}  // namespace vnnx::compiler::passes
