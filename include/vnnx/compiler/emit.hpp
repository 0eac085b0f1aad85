#pragma once
// Lays out a compiled program and writes its bytes (vnnx-format.md §2, §6, §7):
// header, node table, layer table, tensor table, pad, replay region, pad, data blob; then the
// I/O tables (twice, as the SDK writes them), I/O buffers with the test vectors and the
// activation arena, which is reserved by the loader and not part of the file. Every
// blob-relative offset is relocated by W, the blob's start.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vnnx/compiler/arena.hpp"
#include "vnnx/ir/program.hpp"
#include "vnnx/compiler/zero_copy.hpp"
#include "vnnx/format/codec.hpp"
#include "vnnx/format/layout_asserts.hpp"
#include "vnnx/support/bytes.hpp"

namespace vnnx::compiler {

/// Bytes of a tensor buffer: the channels-first shape with its last two dims rounded up to
/// multiples of 4 (rank >= 2), times the element size (vnnx-format.md §7.1).
inline std::uint64_t buffer_bytes(const tensor_desc& t) {
    std::uint64_t n = 1;
    const std::size_t r = t.shape.size();
    for (std::size_t i = 0; i < r; ++i) {
        auto d = static_cast<std::uint64_t>(std::max(t.shape[i], 1));
        if (r >= 2 && i + 2 >= r) d = round_up(d, 4);
        n *= d;
    }
    return n * std::max<std::uint32_t>(format::element_size(t.type), 1);
}

/// The replay region is reserved empty: the SDK's recorded size plus its slack of 128 bytes,
/// with nothing recorded (vnnx-format.md §7.4).
inline constexpr std::uint32_t replay_bytes = 128;

struct emit_result {
    std::vector<std::byte> bytes;
    std::uint32_t allocate_bytes = 0;
};

/// `laid_out`, if set, is called when every offset is known and the writing begins (the
/// compiler's -v timings tell layout and writing apart). The data blob of `p` becomes the result's
/// bytes (p.data is left empty).
inline emit_result emit(program& p, const std::function<void()>& laid_out = {}) {
    using format::obj_off_t;
    constexpr std::uint64_t header_size = meta::serialized_size_v<format::vnnx_graph_t>;
    constexpr std::uint64_t node_size = meta::serialized_size_v<format::vnnx_subgraph_node_t>;
    constexpr std::uint64_t layer_size = meta::serialized_size_v<format::vnnx_layer_t>;
    constexpr std::uint64_t tensor_size = meta::serialized_size_v<format::vnnx_tensor_t>;

    if (p.nodes.empty()) fail(error_kind::unsupported, "the model has no operator left to compile");
    mark_zero_copy(p);
    const auto aliases = zero_copy_aliases(p);
    auto root_of = [&](const std::string& name) -> const std::string& {
        const auto it = aliases.find(name);
        return it == aliases.end() ? name : it->second.root;
    };
    const std::uint64_t n_nodes = p.nodes.size();
    std::uint64_t n_layers = 0, n_tensors = 0;
    // Every node's full tensor array: node tensors, then each layer's.
    std::vector<std::vector<const tensor_desc*>> node_tensors(p.nodes.size());
    for (std::size_t k = 0; k < p.nodes.size(); ++k) {
        auto& nd = p.nodes[k];
        for (const auto& t : nd.tensors) node_tensors[k].push_back(&t);
        for (const auto& l : nd.layers)
            for (const auto& t : l.tensors) node_tensors[k].push_back(&t);
        n_layers += nd.layers.size();
        n_tensors += node_tensors[k].size();
    }
    const std::uint64_t tensors_end = header_size + node_size * n_nodes + layer_size * n_layers + tensor_size * n_tensors;
    const std::uint64_t A = round_up(tensors_end, 16);
    const std::uint64_t W = A + round_up(replay_bytes, 16);

    // I/O tables: the first tensor record carrying each graph I/O name, in node then tensor order.
    const std::size_t n_in = p.inputs.size(), n_out = p.outputs.size();
    std::vector<std::int32_t> io_nodes, io_offsets;
    auto locate = [&](const std::string& name, bool input) {
        for (std::size_t k = 0; k < node_tensors.size(); ++k)
            for (std::size_t i = 0; i < node_tensors[k].size(); ++i)
                if (node_tensors[k][i]->name == name) {
                    io_nodes.push_back(static_cast<std::int32_t>(k));
                    io_offsets.push_back(static_cast<std::int32_t>(i));
                    return;
                }
        fail(error_kind::bad_input, std::string("graph ") + (input ? "input" : "output") + " '" + name +
                                        "' is not used by any compiled node");
    };
    for (const auto& io : p.inputs) locate(io.name, true);
    for (const auto& io : p.outputs) locate(io.name, false);
    auto& data = p.data;
    data.append(io_nodes);  // the SDK writes both tables twice and points at the second copy
    data.append(io_offsets);
    const std::int64_t io_nodes_at = data.append(io_nodes);
    const std::int64_t io_offsets_at = data.append(io_offsets);

    // Buffers: one per distinct name. Graph I/O get dedicated buffers holding the test vectors.
    std::map<std::string, std::uint64_t> buffer_at;  // blob-relative
    auto find_desc = [&](const std::string& name) -> const tensor_desc* {
        for (const auto& list : node_tensors)
            for (const auto* t : list)
                if (t->name == name) return t;
        return nullptr;
    };
    auto place_io = [&](const io_desc& io) {
        if (buffer_at.count(io.name)) return;
        const tensor_desc* t = find_desc(io.name);
        data.align(16);
        const std::uint64_t size = buffer_bytes(*t);
        if (io.test_data.size() > size)
            fail(error_kind::bad_input, "test vector of '" + io.name + "' is larger than its buffer");
        const std::int64_t at = data.reserve(size);
        if (!io.test_data.empty()) std::memcpy(data.bytes().data() + at, io.test_data.data(), io.test_data.size());
        buffer_at[io.name] = static_cast<std::uint64_t>(at);
    };
    for (const auto& io : p.inputs) place_io(io);
    for (const auto& io : p.outputs) place_io(io);
    data.align(16);
    const std::uint64_t data_blob_bytes = data.size();

    // Activation arena: first fit over node lifetimes. The parts of a skipped split or
    // concatenation request their whole's buffer, which lives as long as any of them.
    std::vector<std::string> names;
    std::vector<buffer_request> requests;
    std::map<std::string, std::size_t> request_of;
    for (std::size_t k = 0; k < node_tensors.size(); ++k)
        for (const auto* t : node_tensors[k]) {
            const std::string& root = root_of(t->name);
            if (buffer_at.count(root)) continue;
            const auto a = aliases.find(t->name);
            const std::uint64_t bytes = (a == aliases.end() ? 0 : a->second.offset) + buffer_bytes(*t);
            auto it = request_of.find(root);
            if (it == request_of.end()) {
                request_of[root] = requests.size();
                names.push_back(root);
                requests.push_back({bytes, static_cast<std::int32_t>(k), static_cast<std::int32_t>(k)});
            } else {
                auto& r = requests[it->second];
                r.bytes = std::max(r.bytes, bytes);
                r.last_use = static_cast<std::int32_t>(k);
            }
        }
    const arena_plan arena = plan_arena(requests);
    for (std::size_t i = 0; i < names.size(); ++i) buffer_at[names[i]] = data_blob_bytes + arena.offsets[i];
    for (const auto& [name, a] : aliases) buffer_at[name] = buffer_at.at(a.root) + a.offset;

    const std::uint64_t data_bytes = W + data_blob_bytes;
    const std::uint64_t allocate = data_bytes + arena.size;
    if (allocate > 0xFFFFFFFFull)
        fail(error_kind::limit, "the model needs " + std::to_string(allocate) +
                                    " bytes of memory, more than the format's 32-bit sizes can describe");
    if (laid_out) laid_out();

    auto reloc = [&](obj_off_t& o) {
        if (!o.absent()) o.value += W;
    };
    auto reloc_union = [&](auto& rb) {
        for (auto at : rb.union_offsets) {
            std::byte* p8 = rb.rec.options.bytes.data() + at;
            const auto v = load_le<std::uint64_t>(p8);
            if (v != obj_off_t::absent_value) store_le<std::uint64_t>(p8, v + W);
        }
    };
    auto tensor_record = [&](const tensor_desc& t, bool io) {
        format::vnnx_tensor_t r{};
        r.type = t.type;
        for (std::size_t i = 0; i < t.shape.size() && i < 6; ++i) r.shape[i] = t.shape[i];
        r.dims = static_cast<std::int32_t>(t.shape.size());
        r.scale = t.scale;
        // 16.16 fixed point; saturated, since a hostile scale of 2^15 or more does not fit.
        const double f16 = std::clamp(static_cast<double>(t.scale) * 65536.0, -2147483648.0, 2147483647.0);
        r.scale_f16 = io ? static_cast<std::int32_t>(f16) : -1;
        r.zero = t.zero;
        r.multiplier = -1;
        r.shift = -1;
        const std::uint64_t at = W + buffer_at.at(t.name);
        r.indirect.base_ptr_offset_from_sp_start = 0;
        r.indirect.offset = static_cast<std::uint32_t>(at);
        r.direct = obj_off_t{at};
        return r;
    };
    auto is_io = [&](const std::string& name) {
        for (const auto& io : p.inputs)
            if (io.name == name) return true;
        for (const auto& io : p.outputs)
            if (io.name == name) return true;
        return false;
    };

    // The blob becomes the file: the records go in front of it (within its reserved capacity
    // this moves it in place, with no second buffer of the file's size).
    std::vector<std::byte> out = data.take();
    out.insert(out.begin(), static_cast<std::size_t>(W), std::byte{0});
    format::vnnx_graph_t h{};
    h.version = format::graph_version;
    h.vbx_nn_preset = static_cast<std::uint32_t>(p.preset);
    h.num_inputs = static_cast<std::uint32_t>(n_in);
    h.num_outputs = static_cast<std::uint32_t>(n_out);
    h.include_io_data = 1;
    h.data_bytes = static_cast<std::uint32_t>(data_bytes);
    h.allocate_bytes = static_cast<std::uint32_t>(allocate);
    h.io_nodes = obj_off_t{W + static_cast<std::uint64_t>(io_nodes_at)};
    h.io_offsets = obj_off_t{W + static_cast<std::uint64_t>(io_offsets_at)};
    h.num_layers = static_cast<std::int32_t>(n_nodes);
    h.replay_buffer = obj_off_t{A};
    h.replay_buffer_size = static_cast<std::int32_t>(replay_bytes);
    h.magic = format::magic;
    h.sparsity = static_cast<std::int32_t>(p.compression);
    format::emit(out, 0, h);

    std::uint64_t layer_at = header_size + node_size * n_nodes;
    std::uint64_t tensor_at = layer_at + layer_size * n_layers;
    for (std::size_t k = 0; k < p.nodes.size(); ++k) {
        auto& nd = p.nodes[k];
        auto rec = nd.rec;
        rec.sublayers = obj_off_t{layer_at};
        rec.num_sublayers = static_cast<std::int32_t>(nd.layers.size());
        rec.tensors = obj_off_t{tensor_at};
        rec.num_tensors = static_cast<std::int32_t>(node_tensors[k].size());
        reloc(rec.input_multiplier);
        reloc(rec.input_shift);
        reloc(rec.output_multiplier);
        reloc(rec.output_shift);
        record_build<format::vnnx_subgraph_node_t> tmp{rec, nd.union_offsets};
        reloc_union(tmp);
        format::emit(out, header_size + node_size * k, tmp.rec);
        for (auto& l : nd.layers) {
            auto lrec = l.rec;
            reloc(lrec.input_multiplier);
            reloc(lrec.input_shift);
            reloc(lrec.output_multiplier);
            reloc(lrec.output_shift);
            lrec.tensors = format::absent_offset;
            record_build<format::vnnx_layer_t> ltmp{lrec, l.union_offsets};
            reloc_union(ltmp);
            format::emit(out, layer_at, ltmp.rec);
            layer_at += layer_size;
        }
        for (const auto* t : node_tensors[k]) {
            format::emit(out, tensor_at, tensor_record(*t, is_io(t->name)));
            tensor_at += tensor_size;
        }
    }
    return {std::move(out), static_cast<std::uint32_t>(allocate)};
}

}  // namespace vnnx::compiler
