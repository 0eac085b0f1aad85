#pragma once
// IDENTITY (300): a node that only runs its layers. With one input it first copies the input
// into its output tensor (the `<input>.id` copy of lowering.md §5.3) when the two differ.
// When its one layer reads that copy and nothing after the node reads it (dead_bytes.hpp), the
// node runs the layer on its input in place instead and leaves the copy unwritten: the layer's
// output is the same, without moving the tensor (DeepLabV3's 5.5 MB score map before ARG_MAX).
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/sim/dead_bytes.hpp"
#include "vnnx/sim/executors.hpp"

namespace vnnx::sim {

namespace identity_node_detail {

inline bool overlap(const tensor_ref& a, const tensor_ref& b) {
    return a.data < b.data + b.count * b.elem && b.data < a.data + a.count * a.elem;
}

// Whether node c may run its one layer on its input: the layer's first input is exactly the
// copy, its other inputs do not read the copy, its outputs do not touch the node's input (the
// layer now reads it), and the copy's bytes are dead after the node.
inline bool layer_reads_input(const node_context& c) {
    if (!c.ex.fuse_layers || c.layers_done == nullptr || c.run_layer == nullptr || c.layer_tensors.empty()) return false;
    const auto layers = c.view.node_layers(c.node_index);
    const auto recs = c.view.node_tensors(c.node_index);
    if (layers.size() != 1 || layers[0].num_tensors < 2 || layers[0].num_outputs < 1 ||
        layers[0].num_outputs >= layers[0].num_tensors ||
        c.layer_tensors.size() != static_cast<std::size_t>(layers[0].num_tensors) || recs.size() != 2 + c.layer_tensors.size())
        return false;
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    const tensor_ref& lin = c.layer_tensors[0];
    if (lin.data != out.data || lin.count * lin.elem != out.count * out.elem || in.count * in.elem != out.count * out.elem)
        return false;
    const auto inputs = static_cast<std::size_t>(layers[0].num_tensors - layers[0].num_outputs);
    for (std::size_t i = 1; i < c.layer_tensors.size(); ++i)
        if (overlap(c.layer_tensors[i], i < inputs ? out : in)) return false;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> live{{recs[1].direct.value, recs[1].direct.value + out.count * out.elem}};
    for (std::size_t i = inputs; i < c.layer_tensors.size(); ++i) {
        const auto& r = recs[2 + i];
        dead_bytes_detail::remove(live, {r.direct.value, r.direct.value + c.layer_tensors[i].count * c.layer_tensors[i].elem});
    }
    return dead_after(c.view, c.node_index, std::move(live));
}

}  // namespace identity_node_detail

template <>
struct node_exec<static_cast<std::int32_t>(format::vnnx_operator::IDENTITY)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        if (c.rec.num_inputs != 1 || c.tensors.size() < 2) return;
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.data == out.data) return;
        if (in.type != out.type && !((in.type == 0 || in.type == 1) && (out.type == 0 || out.type == 1)))
            c.reject("copies calc type " + std::to_string(in.type) + " into calc type " + std::to_string(out.type));
        c.require_same_count(in, out);
        // Decided once per model: the records do not change between runs.
        if (*c.cache == nullptr) *c.cache = std::make_shared<bool>(identity_node_detail::layer_reads_input(c));
        if (*static_cast<const bool*>(c.cache->get())) {
            std::vector<tensor_ref> t(c.layer_tensors.begin(), c.layer_tensors.end());
            t[0].data = in.data;  // the same bytes the copy would hold
            (*c.run_layer)(0, t);
            *c.layers_done = 1;
            return;
        }
        std::memmove(out.data, in.data, static_cast<std::size_t>(in.count) * in.elem);
    }
};

}  // namespace vnnx::sim
