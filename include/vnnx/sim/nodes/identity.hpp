#pragma once
// IDENTITY (300): a node that only runs its layers. With one input it first copies the input
// into its output tensor (the `<input>.id` copy of lowering.md §5.3) when the two differ.
// When only its first layer reads that copy and nothing after the node reads it (dead_bytes.hpp),
// the node runs that layer on its input in place instead and leaves the copy unwritten: the
// layer's output is the same, without moving the tensor (DeepLabV3's 5.5 MB score map before
// ARG_MAX, the input image before a classifier's quantizing LUT). A resize node followed by a
// channel ARG_MAX node may run together as one segmentation head (segmentation_head.hpp).
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/sim/dead_bytes.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/nodes/segmentation_head.hpp"

namespace vnnx::sim {

namespace identity_node_detail {

// Whether node c may run its first layer on its input: that layer's first input is exactly the
// copy, none of its other inputs nor any input of a later layer reads the copy, its outputs do
// not touch the node's input (the layer now reads it), and the copy's bytes are dead after the
// node.
inline bool layer_reads_input(const node_context& c) {
    if (!c.ex.fuse_layers || c.layers_done == nullptr || c.run_layer == nullptr) return false;
    const auto layers = c.view.node_layers(c.node_index);
    const auto recs = c.view.node_tensors(c.node_index);
    if (layers.empty() || recs.size() != 2 + c.layer_tensors.size()) return false;
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    std::vector<std::pair<std::uint64_t, std::uint64_t>> live{{recs[1].direct.value, recs[1].direct.value + out.count * out.elem}};
    std::size_t next = 0;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const auto& layer = layers[l];
        if (layer.num_tensors < 2 || layer.num_outputs < 1 || layer.num_outputs >= layer.num_tensors) return false;
        const auto n = static_cast<std::size_t>(layer.num_tensors), inputs = n - static_cast<std::size_t>(layer.num_outputs);
        if (next + n > c.layer_tensors.size()) return false;
        const auto t = c.layer_tensors.subspan(next, n);
        if (l == 0 && (t[0].data != out.data || t[0].count * t[0].elem != out.count * out.elem ||
                       in.count * in.elem != out.count * out.elem))
            return false;
        for (std::size_t i = l == 0 ? 1 : 0; i < n; ++i) {
            if (i < inputs && bytes_overlap(t[i], out)) return false;       // reads the copy
            if (l == 0 && i >= inputs && bytes_overlap(t[i], in)) return false;  // overwrites what it reads
            if (i >= inputs) {
                const auto& r = recs[2 + next + i];
                dead_bytes_detail::remove(live, {r.direct.value, r.direct.value + t[i].count * t[i].elem});
            }
        }
        next += n;
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
        // Decided once per model, the records do not change between runs: copy (0), run the first
        // layer in place (1), or that and the next node as a segmentation head (2).
        if (*c.cache == nullptr) {
            int how = identity_node_detail::layer_reads_input(c) ? 1 : 0;
            if (how == 1 && segmentation_head::fusable(c)) how = 2;
            *c.cache = std::make_shared<int>(how);
        }
        const int how = *static_cast<const int*>(c.cache->get());
        if (how == 2) {
            segmentation_head::run(c);
            return;
        }
        if (how == 1) {
            const auto n = static_cast<std::size_t>(c.view.node_layers(c.node_index)[0].num_tensors);
            std::vector<tensor_ref> t(c.layer_tensors.begin(), c.layer_tensors.begin() + static_cast<std::ptrdiff_t>(n));
            t[0].data = in.data;  // the same bytes the copy would hold
            (*c.run_layer)(0, t);
            *c.layers_done = 1;
            return;
        }
        std::memmove(out.data, in.data, static_cast<std::size_t>(in.count) * in.elem);
    }
};

}  // namespace vnnx::sim
