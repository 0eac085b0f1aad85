#pragma once
// Builds one VNNX node from one split (lowering.md §5): the node type comes from the first
// operator; an IDENTITY node runs every operator, the first included, as a layer; other nodes
// lower their first operator themselves and run the rest as layers.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "vnnx/ir/split.hpp"
#include "vnnx/ops/registry.hpp"

namespace vnnx::compiler {

/// Tile of a node as the lowering sees it (lowering.md §10.1).
struct node_tile {
    std::int32_t maps = 0, imaps = 0;
};

inline node_build build_node(const graph& g, program& prog, const preset_info& preset, const split& s,
                             const node_tile& tile) {
    node_build node;
    node.rec = default_node();
    ops::lowering ctx{g, prog, preset, node, tile.maps, tile.imaps, {}};
    const op& first = g.ops.at(static_cast<std::size_t>(s.front()));
    const ops::entry& e = ops::entry_for(first);
    for (auto i : s) {
        if (!node.label.empty()) node.label += " + ";
        const op& o = g.ops[static_cast<std::size_t>(i)];
        node.label += o.kind == op_type::lut ? std::string("LUT") : std::string(builtin_name(o.code));
    }

    // Common fields (lowering.md §5.2) from the first operator's data input and first output.
    const std::int32_t data_in = ops::data_input(first);
    const auto in_desc = ctx.desc(data_in);
    const auto out_desc = ctx.desc(first.outputs.at(0));
    node.rec.input_data_type = in_desc.type;
    node.rec.output_data_type = out_desc.type;
    node.rec.input_offset = in_desc.zero;
    node.rec.output_offset = out_desc.zero;
    const auto geo = ops::geometry_of(g.t(data_in).shape);
    node.rec.channels = geo.channels;
    node.rec.m = geo.m;
    node.rec.n = geo.n;
    set_description(node.rec.input_description, in_desc.name);

    std::size_t layers_from = 1;
    if (e.node_type == ops::identity_node) {
        node.rec.type = static_cast<std::int32_t>(format::vnnx_operator::IDENTITY);
        const auto acts = ctx.activation_inputs(first);
        if (acts.size() == 1) {
            // The node copies its input into "<input>.id", which feeds the first layer. As the SDK
            // writes it, the copy's record carries the first operator's output quantization (a
            // final SOFTMAX node's output reads 1/256, -128), except before a table: the SDK's
            // table pattern starts with a CAST that keeps the input's type and zero point, so the
            // copy and the node's output fields describe the input (uint8, 127 on MobileNetV2).
            node.tensors.push_back(in_desc);
            auto copy = in_desc;
            copy.name = in_desc.name + ".id";
            if (first.kind == op_type::lut) {
                node.rec.output_data_type = in_desc.type;
                node.rec.output_offset = in_desc.zero;
            } else {
                copy.scale = out_desc.scale;
                copy.zero = out_desc.zero;
            }
            node.tensors.push_back(copy);
            ctx.renames.emplace_back(in_desc.name, copy.name);
        } else {
            for (auto t : acts) node.tensors.push_back(ctx.desc(t));
            for (auto t : first.outputs) node.tensors.push_back(ctx.desc(t));
        }
        node.rec.num_inputs = static_cast<std::int32_t>(acts.size() == 1 ? 1 : acts.size());
        node.rec.num_outputs = acts.size() == 1 ? 1 : static_cast<std::int32_t>(first.outputs.size());
        layers_from = 0;
    } else {
        node.rec.type = e.node_type;
        e.lower_node(ctx, first);
    }
    for (std::size_t k = layers_from; k < s.size(); ++k) {
        const op& o = g.ops[static_cast<std::size_t>(s[k])];
        const ops::entry& le = ops::entry_for(o);
        if (le.lower_layer == nullptr)
            fail(error_kind::unsupported, g.source + ": " + describe(o) + ": cannot run as a layer of a node");
        le.lower_layer(ctx, o);
    }
    // The node's result is the last layer's output (or its own output).
    const std::string& last = node.layers.empty() ? node.tensors.back().name : node.layers.back().tensors.back().name;
    set_description(node.rec.output_description, last);
    // Every operator of the split is vectorised except a few (lowering.md §5.2): those whose
    // trait says `replay = false`.
    node.rec.use_replay = 1;
    for (auto i : s)
        if (!ops::entry_for(g.ops[static_cast<std::size_t>(i)]).replay) node.rec.use_replay = 0;
    return node;
}

}  // namespace vnnx::compiler
