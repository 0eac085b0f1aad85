#pragma once
// Folds a single-table int8 LUT that directly follows a convolution into the convolution's
// `nlf_data` (lowering.md §7.1.6): the conv writes the LUT's output, indexing the table by its own
// raw output byte. Runs after the LUT pass. Multi-table LUTs, non-int8 tables, LUTs after a conv
// whose output is also read elsewhere or is a graph output stay LUT layers.
#include <cstdint>
#include <vector>

#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

inline void fuse_activation(graph& g) {
    using B = builtin_operator;
    std::vector<bool> drop(g.ops.size(), false);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        op& conv = g.ops[i];
        if (conv.kind != op_type::builtin || (conv.code != B::CONV_2D && conv.code != B::DEPTHWISE_CONV_2D) ||
            conv.outputs.size() != 1 || !conv.nlf_table.empty())
            continue;
        const std::int32_t out = conv.outputs[0];
        if (is_graph_output(g, out)) continue;
        const auto readers = readers_of(g, out);
        if (readers.size() != 1) continue;
        const op& lut = g.ops[readers[0]];
        if (lut.kind != op_type::lut || lut.tables.size() != 1 || lut.tables[0].size() != 256 || lut.inputs.size() != 1 ||
            lut.outputs.size() != 1 || drop[readers[0]])
            continue;
        if (g.t(lut.outputs[0]).type != tensor_type::INT8) continue;
        const auto own = g.t(out).type;
        if (own != tensor_type::INT8 && own != tensor_type::UINT8) continue;
        conv.nlf_table = lut.tables[0];
        conv.nlf_source = g.t(out);
        conv.outputs[0] = lut.outputs[0];
        drop[readers[0]] = true;
    }
    std::vector<op> kept;
    kept.reserve(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (!drop[i]) kept.push_back(std::move(g.ops[i]));
    g.ops = std::move(kept);
}

}  // namespace vnnx::compiler::passes
