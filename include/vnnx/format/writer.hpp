#pragma once
// Producer side: where every region of a .vnnx file goes (vnnx-format.md §2, §7.2), computed
// from the compile-time record sizes, and a writer that assembles records, replay region and
// data blob into the file bytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <string>
#include <vector>

#include "vnnx/support/bytes.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/format/codec.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/format/layout_asserts.hpp"
#include "vnnx/format/records.hpp"
#include "vnnx/format/union_select.hpp"

namespace vnnx::format {

/// Graph-relative offsets of the regions of a file (vnnx-format.md §7.2).
struct region_layout {
    std::uint64_t node_table = 0;    // 84
    std::uint64_t layer_table = 0;   // 84 + 492 N
    std::uint64_t tensor_table = 0;  // + 300 S
    std::uint64_t tensors_end = 0;   // + 76 T
    std::uint64_t replay = 0;        // A = round_up(tensors_end, 16)
    std::uint64_t replay_size = 0;   // R
    std::uint64_t data = 0;          // W = A + round_up(R, 16): blob-relative offsets are relocated by W
    std::vector<std::uint64_t> node_sublayers;  // per node: its `sublayers`
    std::vector<std::uint64_t> node_tensors;    // per node: its `tensors`
};

/// The offset calculator: one walk over the nodes with their layer and tensor counts.
[[nodiscard]] inline region_layout compute_regions(std::span<const std::size_t> layers_per_node,
                                                   std::span<const std::size_t> tensors_per_node,
                                                   std::uint64_t replay_size) {
    if (layers_per_node.size() != tensors_per_node.size())
        throw error(error_kind::usage, "compute_regions: " + std::to_string(layers_per_node.size()) +
                                           " layer counts but " + std::to_string(tensors_per_node.size()) + " tensor counts");
    region_layout r;
    const std::uint64_t n = layers_per_node.size();
    std::uint64_t s = 0, t = 0;
    for (std::size_t c : layers_per_node) s += c;
    for (std::size_t c : tensors_per_node) t += c;
    r.node_table = record_size_v<vnnx_graph_t>;
    r.layer_table = r.node_table + record_size_v<vnnx_subgraph_node_t> * n;
    r.tensor_table = r.layer_table + record_size_v<vnnx_layer_t> * s;
    r.tensors_end = r.tensor_table + record_size_v<vnnx_tensor_t> * t;
    r.replay = round_up(r.tensors_end, 16);
    r.replay_size = replay_size;
    r.data = r.replay + round_up(replay_size, 16);
    std::uint64_t layer_at = r.layer_table, tensor_at = r.tensor_table;
    for (std::size_t i = 0; i < layers_per_node.size(); ++i) {
        r.node_sublayers.push_back(layer_at);
        r.node_tensors.push_back(tensor_at);
        layer_at += record_size_v<vnnx_layer_t> * layers_per_node[i];
        tensor_at += record_size_v<vnnx_tensor_t> * tensors_per_node[i];
    }
    return r;
}

namespace detail {
// Adds delta to every present obj_off_t of rec (and of its selected union member).
template <class R>
void relocate(R& rec, std::uint64_t delta) {
    meta::for_each_field<R>([&](std::string_view, auto tag, auto get) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, obj_off_t>) {
            if (!get(rec).absent()) get(rec).value += delta;
        } else if constexpr (requires { typename T::descriptor; }) {
            using U = typename T::descriptor;
            const auto index = member_index_for_type<U>(rec.type);
            if (!index) return;
            std::size_t i = 0;
            U::for_each_member([&](auto member_tag) {
                using M = typename decltype(member_tag)::type;
                if (i++ != *index) return;
                M m = get(rec).template get<M>();
                relocate(m, delta);
                get(rec).set(m);
            });
        }
    });
}
}  // namespace detail

/// Assembles a .vnnx file. Nodes are added with their layers and tensors; offsets inside the
/// records and the header's io_nodes / io_offsets are blob-relative (as the SDK builds them)
/// and are relocated by W when the file is written. The writer fills the structural fields:
/// version, magic, num_layers, node sublayers / num_sublayers / tensors / num_tensors,
/// replay_buffer(_size), data_bytes, allocate_bytes.
class writer {
public:
    void add_node(const vnnx_subgraph_node_t& node, std::vector<vnnx_layer_t> layers, std::vector<vnnx_tensor_t> tensors) {
        nodes_.push_back(node);
        layers_.push_back(std::move(layers));
        tensors_.push_back(std::move(tensors));
    }

    /// The regions the file will have with the nodes added so far.
    [[nodiscard]] region_layout regions(std::uint64_t replay_size) const {
        std::vector<std::size_t> l, t;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            l.push_back(layers_[i].size());
            t.push_back(tensors_[i].size());
        }
        return compute_regions(l, t, replay_size);
    }

    /// The file bytes. `blob` is the data blob (parameters, I/O tables, I/O buffers) that goes
    /// at W; `arena_bytes` more are reserved past the end of the file (allocate_bytes).
    [[nodiscard]] std::vector<std::byte> write(vnnx_graph_t header, std::span<const std::byte> blob,
                                               std::uint64_t replay_size, std::uint64_t arena_bytes) const {
        if (nodes_.empty()) throw error(error_kind::usage, "writer: a model needs at least one node");
        const region_layout r = regions(replay_size);
        const std::uint64_t data_bytes = r.data + blob.size();
        if (data_bytes + arena_bytes > 0xFFFFFFFFull)
            throw error(error_kind::limit, "writer: model of " + std::to_string(data_bytes + arena_bytes) +
                                               " bytes exceeds the format's 4 GiB limit");
        std::vector<std::byte> out(static_cast<std::size_t>(data_bytes));

        header.version = graph_version;
        header.magic = magic;
        header.num_layers = static_cast<std::int32_t>(nodes_.size());
        header.replay_buffer = obj_off_t{r.replay};
        header.replay_buffer_size = static_cast<std::int32_t>(replay_size);
        header.data_bytes = static_cast<std::uint32_t>(data_bytes);
        header.allocate_bytes = static_cast<std::uint32_t>(data_bytes + arena_bytes);
        if (!header.io_nodes.absent()) header.io_nodes.value += r.data;
        if (!header.io_offsets.absent()) header.io_offsets.value += r.data;
        emit(out, 0, header);

        std::uint64_t layer_at = r.layer_table, tensor_at = r.tensor_table;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            vnnx_subgraph_node_t node = nodes_[i];
            const obj_off_t replay = node.replay_buffer;  // filled by a recording run, never relocated
            detail::relocate(node, r.data);
            node.replay_buffer = replay;
            node.sublayers = obj_off_t{r.node_sublayers[i]};
            node.num_sublayers = static_cast<std::int32_t>(layers_[i].size());
            node.tensors = obj_off_t{r.node_tensors[i]};
            node.num_tensors = static_cast<std::int32_t>(tensors_[i].size());
            emit(out, r.node_table + record_size_v<vnnx_subgraph_node_t> * i, node);
            for (vnnx_layer_t layer : layers_[i]) {
                detail::relocate(layer, r.data);
                emit(out, layer_at, layer);
                layer_at += record_size_v<vnnx_layer_t>;
            }
            for (vnnx_tensor_t tensor : tensors_[i]) {
                detail::relocate(tensor, r.data);
                // As the SDK does: unconditionally, so an unset offset (-1) would become W - 1.
                tensor.indirect.offset += static_cast<std::uint32_t>(r.data);
                emit(out, tensor_at, tensor);
                tensor_at += record_size_v<vnnx_tensor_t>;
            }
        }
        // Pads and the (unrecorded) replay region stay zero.
        std::copy(blob.begin(), blob.end(), out.begin() + static_cast<std::ptrdiff_t>(r.data));
        return out;
    }

private:
    std::vector<vnnx_subgraph_node_t> nodes_;
    std::vector<std::vector<vnnx_layer_t>> layers_;
    std::vector<std::vector<vnnx_tensor_t>> tensors_;
};

}  // namespace vnnx::format
