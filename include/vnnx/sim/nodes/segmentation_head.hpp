#pragma once
// A segmentation head as one step: an IDENTITY node whose one layer is a uint8 RESIZE_BILINEAR
// with dyadic taps (layers/resize.hpp, bilinear_dyadic), followed by an IDENTITY node whose one
// layer is ARG_MAX over the channels of that resize's output (DeepLabV3: 21 x 33 x 33 ->
// 513 x 513 -> labels). On AVX2 and AVX-512 the first node computes the labels itself, band
// by band, and the upsampled score map (5.5 MB there) is never written nor read back; the
// machine skips the second node. Only when the records show that nothing after the second node reads the score
// map or the second node's copy of it, and the first node may read its input in place.
#include <cstdint>
#include <span>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/sim/dead_bytes.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/layers/argmax.hpp"
#include "vnnx/sim/layers/resize.hpp"

namespace vnnx::sim::segmentation_head {

namespace detail {

inline bool same_bytes(const format::vnnx_tensor_t& a, const format::vnnx_tensor_t& b) {
    dead_bytes_detail::range ra, rb;
    return dead_bytes_detail::bytes_of(a, ra) && dead_bytes_detail::bytes_of(b, rb) && ra == rb;
}

// The resize geometry of node c's layer when it is a uint8 bilinear with dyadic taps, the
// checks of its layer executor included (anything else runs unfused and is judged there).
inline bool dyadic_resize(const node_context& c, resize_exec_detail::dyadic_taps& taps) {
    const auto layers = c.view.node_layers(c.node_index);
    if (layers.size() != 1 || layers[0].type != static_cast<std::int32_t>(builtin_operator::RESIZE_BILINEAR) ||
        c.tensors.size() != 2 || c.layer_tensors.size() != 2)
        return false;
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& scores = c.layer_tensors[1];
    if (in.type != 0 || scores.type != 0 || in.outer() != 1 || scores.outer() != 1 || in.channels() != scores.channels() ||
        in.channels() < 1 || in.channels() > 256 || in.rows() < 1 || in.cols() < 1 || scores.rows() < 1 || scores.cols() < 1)
        return false;
    const auto o = layers[0].options.get<format::layer_options::ResizeOptions>();
    const auto m = quant::resize::decode(o.mode);
    if (!m || !m->linear || (m->align_corners && m->half_pixel)) return false;
    const bool align = m->align_corners, half = m->half_pixel;
    if (o.scale[0] != static_cast<float>(scores.rows()) / static_cast<float>(in.rows()) ||
        o.scale[1] != static_cast<float>(scores.cols()) / static_cast<float>(in.cols()))
        return false;
    taps = resize_exec_detail::make_dyadic_taps(in.rows(), in.cols(), scores.rows(), scores.cols(), align, half);
    return taps.exact();
}

}  // namespace detail

/// Whether node c (an IDENTITY node that may run its layer on its input in place) and the next
/// node form a fusable head. Decided once per model.
inline bool fusable(const node_context& c) {
    if (!c.ex.fuse_layers || c.ex.isa == isa_kind::scalar || c.next_node_done == nullptr || c.resolve_node == nullptr ||
        c.layers_done == nullptr)
        return false;
    resize_exec_detail::dyadic_taps taps;
    if (!detail::dyadic_resize(c, taps)) return false;
    const auto& v = c.view;
    const std::size_t k = c.node_index, k1 = k + 1;
    const auto recs = v.node_tensors(k);
    if (k1 >= v.num_nodes() || recs.size() != 4) return false;
    const auto& n1 = v.node(k1);
    const auto layers1 = v.node_layers(k1);
    const auto recs1 = v.node_tensors(k1);
    if (n1.type != static_cast<std::int32_t>(format::vnnx_operator::IDENTITY) || n1.skip != 0 || n1.num_inputs != 1 ||
        n1.num_outputs != 1 || layers1.size() != 1 || recs1.size() != 4 ||
        layers1[0].type != static_cast<std::int32_t>(builtin_operator::ARG_MAX) || layers1[0].num_tensors != 2 ||
        layers1[0].num_outputs != 1)
        return false;
    const auto r8 = layers1[0].options.get<format::layer_options::reduce8>();
    if (r8.channels == 0 || r8.rows != 0 || r8.columns != 0) return false;
    // The ARG_MAX reads the score map: as node k1's input, or through its copy of it.
    if (!detail::same_bytes(recs1[0], recs[3]) || !(detail::same_bytes(recs1[2], recs1[1]) || detail::same_bytes(recs1[2], recs1[0])))
        return false;
    const auto t1 = (*c.resolve_node)(k1);
    const tensor_ref& scores = c.layer_tensors[1];
    if (t1.size() != 4 || t1[2].type != 0 || t1[2].count != scores.count || t1[2].channels() != scores.channels() ||
        t1[2].rows() != scores.rows() || t1[2].cols() != scores.cols() || t1[3].type != 3 ||
        t1[3].count != static_cast<std::uint64_t>(scores.rows()) * static_cast<std::uint64_t>(scores.cols()))
        return false;
    dead_bytes_detail::range s, copy;
    if (!dead_bytes_detail::bytes_of(recs[3], s) || !dead_bytes_detail::bytes_of(recs1[1], copy)) return false;
    return dead_after(v, k1, {s, copy});
}

/// Runs the head: node c's input resized and reduced to the next node's int32 labels.
inline void run(node_context& c) {
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& scores = c.layer_tensors[1];
    const auto o = c.view.node_layers(c.node_index)[0].options.get<format::layer_options::ResizeOptions>();
    const auto m = quant::resize::decode(o.mode).value_or(quant::resize::mode{});  // checked by fusable()
    const auto taps = resize_exec_detail::make_dyadic_taps(in.rows(), in.cols(), scores.rows(), scores.cols(),
                                                           m.align_corners, m.half_pixel);
    const auto t1 = (*c.resolve_node)(c.node_index + 1);
    const std::size_t pixels = static_cast<std::size_t>(scores.rows()) * static_cast<std::size_t>(scores.cols());
    std::vector<std::uint8_t> labels(pixels + 64);  // write_out's gathers read past the last label
    resize_exec_detail::bilinear_dyadic(in.u8(), nullptr, static_cast<std::size_t>(in.channels()), in.rows(), in.cols(),
                                        scores.rows(), taps.tx, taps.ty, taps.mx, taps.my, c.ex.isa, c.ex.pool, labels.data());
    argmax_exec<false>::write_out(t1[3], std::span<const std::uint8_t>(labels.data(), pixels), c.ex.isa, c.ex.pool);
    *c.layers_done = 1;
    *c.next_node_done = true;
}

}  // namespace vnnx::sim::segmentation_head
