#pragma once
// The bounds-checked reader: a view over the bytes of a .vnnx file that validates everything
// it will later use (vnnx-format.md §2, §6, §10) before any record is handed out, so that a
// consumer (the simulator, `vnnx info`) never reads outside the file. All reads go through
// load_le; errors are vnnx::error(bad_input, "<source>: <what>").
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vnnx/support/bytes.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/support/limits.hpp"
#include "vnnx/format/codec.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/format/layout_asserts.hpp"
#include "vnnx/format/records.hpp"
#include "vnnx/format/union_select.hpp"
#include "vnnx/support/linkage.hpp"

namespace vnnx::format {

namespace detail {
template <class Tag, class R>
[[nodiscard]] constexpr auto record_type(const R& rec) noexcept { return rec.type; }
}  // namespace detail

/// Calls f(field name, offset) for every obj_off_t of a record: its own fields, fields of
/// nested records, and the fields of the union member its `type` selects.
template <class R, class F>
void for_each_offset(const R& rec, F&& f) {
    meta::for_each_field<R>([&](std::string_view name, auto tag, auto get) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, obj_off_t>) {
            f(name, get(rec));
        } else if constexpr (requires { typename T::descriptor; }) {
            using U = typename T::descriptor;
            // Through a T-dependent call: clang checks a non-dependent `rec.type` even in the
            // branches of records that have no union (and so no `type`).
            const auto index = member_index_for_type<U>(detail::record_type<T>(rec));
            if (!index) return;
            std::size_t i = 0;
            U::for_each_member([&](auto member_tag) {
                using M = typename decltype(member_tag)::type;
                if (i++ == *index) for_each_offset(get(rec).template get<M>(), f);
            });
        } else if constexpr (meta::reflected<T>) {
            for_each_offset(get(rec), f);
        }
    });
}

/// A graph input or output as the firmware accessors see it (vnnx-format.md §10.2).
struct io_tensor {
    std::size_t node = 0;   // owning node (io_nodes[j])
    std::size_t index = 0;  // tensor index inside that node (io_offsets[j])
    vnnx_tensor_t tensor{};
    std::vector<std::int32_t> shape;  // the first `dims` entries, channels-first
    std::int32_t type = 0;            // calc_type
    float scale = 0;
    std::int32_t scale_f16 = 0;
    std::int32_t zero_point = 0;
    std::uint32_t offset = 0;         // indirect.offset
    std::uint64_t direct = 0;
    std::uint64_t length = 0;         // element count, entries <= 0 skipped
    std::span<const std::byte> test_vector;  // length * element size bytes at `direct`
};

class model_view {
public:
    static constexpr std::uint64_t header_size = record_size_v<vnnx_graph_t>;
    static constexpr std::uint64_t node_size = record_size_v<vnnx_subgraph_node_t>;
    static constexpr std::uint64_t layer_size = record_size_v<vnnx_layer_t>;
    static constexpr std::uint64_t tensor_size = record_size_v<vnnx_tensor_t>;

    model_view(std::span<const std::byte> bytes, std::string source) : bytes_(bytes), source_(std::move(source)) {
        validate();
    }

    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
    [[nodiscard]] const vnnx_graph_t& header() const noexcept { return header_; }

    [[nodiscard]] std::size_t num_nodes() const noexcept { return nodes_.size(); }
    [[nodiscard]] std::size_t num_layers() const noexcept { return layers_.size(); }
    [[nodiscard]] std::size_t num_tensors() const noexcept { return tensors_.size(); }

    [[nodiscard]] const vnnx_subgraph_node_t& node(std::size_t i) const { return at(nodes_, i, "node"); }
    [[nodiscard]] const vnnx_layer_t& layer(std::size_t i) const { return at(layers_, i, "layer"); }
    [[nodiscard]] const vnnx_tensor_t& tensor(std::size_t i) const { return at(tensors_, i, "tensor"); }

    /// The layers of node i, in order.
    [[nodiscard]] std::span<const vnnx_layer_t> node_layers(std::size_t i) const {
        const auto& n = node(i);
        return {layers_.data() + (n.sublayers.value - layer_table_) / layer_size,
                static_cast<std::size_t>(n.num_sublayers)};
    }
    /// The tensor records of node i (§6.3 order: node inputs, node outputs, layer tensors).
    [[nodiscard]] std::span<const vnnx_tensor_t> node_tensors(std::size_t i) const {
        const auto& n = node(i);
        return {tensors_.data() + (n.tensors.value - tensor_table_) / tensor_size,
                static_cast<std::size_t>(n.num_tensors)};
    }

    /// Index, inside node i's tensor array, of the node's final output o (vnnx-format.md §6.3):
    /// the last layer's outputs when the node has layers, else the node's own outputs.
    [[nodiscard]] std::size_t node_output_index(std::size_t i, std::size_t o) const {
        const auto& n = node(i);
        const auto layers = node_layers(i);
        const std::int64_t outs = layers.empty() ? n.num_outputs : layers.back().num_outputs;
        const std::int64_t at = std::int64_t{n.num_tensors} - outs + static_cast<std::int64_t>(o);
        if (outs < 0 || static_cast<std::int64_t>(o) >= outs || at < 0 || at >= n.num_tensors)
            fail(describe("node", i, n.type) + ": it has no output " + std::to_string(o) + " (" + std::to_string(outs) +
                 " outputs, " + std::to_string(n.num_tensors) + " tensors)");
        return static_cast<std::size_t>(at);
    }

    [[nodiscard]] std::size_t num_inputs() const noexcept { return header_.num_inputs; }
    [[nodiscard]] std::size_t num_outputs() const noexcept { return header_.num_outputs; }
    [[nodiscard]] const io_tensor& input(std::size_t i) const { return at(inputs_, i, "input"); }
    [[nodiscard]] const io_tensor& output(std::size_t o) const { return at(outputs_, o, "output"); }

    /// Start of the replay region, its size, and W, the start of the data blob.
    [[nodiscard]] std::uint64_t replay_offset() const noexcept { return header_.replay_buffer.value; }
    [[nodiscard]] std::uint64_t replay_size() const noexcept { return static_cast<std::uint64_t>(header_.replay_buffer_size); }
    [[nodiscard]] std::uint64_t data_offset() const noexcept { return data_offset_; }

    /// `size` bytes of the file at graph-relative `offset` (multipliers, weights, LUTs...).
    /// `what` names the data in the error when the range is not inside the file.
    [[nodiscard]] std::span<const std::byte> range(std::uint64_t offset, std::uint64_t size, std::string_view what) const {
        if (offset > bytes_.size() || bytes_.size() - offset < size)
            fail(std::string(what) + ": " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                 " are not inside the " + std::to_string(bytes_.size()) + "-byte file");
        return bytes_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
    }
    /// `count` little-endian int32 values at `offset`.
    [[nodiscard]] std::vector<std::int32_t> int32s(std::uint64_t offset, std::uint64_t count, std::string_view what) const {
        if (count > bytes_.size() / 4) fail(std::string(what) + ": " + std::to_string(count) + " int32 values cannot fit in the file");
        const auto raw = range(offset, count * 4, what);
        std::vector<std::int32_t> out(static_cast<std::size_t>(count));
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_le<std::int32_t>(raw.data() + 4 * i);
        return out;
    }

    /// "node 3 (CONV_2D)" style names for messages.
    [[nodiscard]] static std::string describe(std::string_view kind, std::size_t index, std::int32_t type) {
        std::string s = std::string(kind) + " " + std::to_string(index);
        const std::string_view name = operator_name(type);
        s += name.empty() ? " (type " + std::to_string(type) + ")" : " (" + std::string(name) + ")";
        return s;
    }

private:
    [[noreturn]] void fail(const std::string& what) const { fail_input(source_ + ": " + what); }

    template <class T>
    const T& at(const std::vector<T>& v, std::size_t i, std::string_view kind) const {
        if (i >= v.size())
            fail(std::string(kind) + " index " + std::to_string(i) + " is out of range (there are " +
                 std::to_string(v.size()) + ")");
        return v[i];
    }

    struct span_check {
        std::uint64_t begin, end;
        std::string owner;
    };

    // Table ranges owned by nodes must lie inside their table, start on a record boundary and
    // not overlap one another.
    void check_table(std::vector<span_check> ranges, std::uint64_t table, std::uint64_t table_end, std::uint64_t rec,
                     std::string_view what) const {
        for (const auto& r : ranges) {
            if (r.begin >= table && (r.begin - table) % rec != 0)
                fail(r.owner + ": " + std::string(what) + " offset " + std::to_string(r.begin) +
                     " is misaligned: not a whole number of " + std::to_string(rec) + "-byte records after the table start " +
                     std::to_string(table));
            if (r.begin < table || r.end > table_end)
                fail(r.owner + ": " + std::string(what) + " [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                     ") is outside the " + std::string(what) + " table [" + std::to_string(table) + ", " +
                     std::to_string(table_end) + ")");
        }
        std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
        const span_check* prev = nullptr;
        for (const auto& r : ranges) {
            if (r.begin == r.end) continue;
            if (prev != nullptr && r.begin < prev->end)
                fail(r.owner + ": " + std::string(what) + " [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                     ") overlaps those of " + prev->owner + " [" + std::to_string(prev->begin) + ", " +
                     std::to_string(prev->end) + ")");
            prev = &r;
        }
    }

    template <class R>
    void check_offsets(const R& rec, const std::string& owner) const {
        for_each_offset(rec, [&](std::string_view field, obj_off_t off) {
            if (!off.absent() && off.value >= header_.allocate_bytes)
                fail(owner + ": " + std::string(field) + " = " + std::to_string(off.value) +
                     " is outside the model [0, allocate_bytes = " + std::to_string(header_.allocate_bytes) + ")");
        });
    }

    void validate();

    void read_io() {
        const std::uint64_t count = std::uint64_t{header_.num_inputs} + header_.num_outputs;
        if (header_.io_nodes.absent() || header_.io_offsets.absent())
            fail("header io_nodes / io_offsets are absent (-1) but the model has " + std::to_string(count) + " inputs and outputs");
        const auto io_nodes = int32s(header_.io_nodes.value, count, "io_nodes table");
        const auto io_offsets = int32s(header_.io_offsets.value, count, "io_offsets table");
        for (std::uint64_t j = 0; j < count; ++j) {
            const bool is_input = j < header_.num_inputs;
            const std::uint64_t k = is_input ? j : j - header_.num_inputs;
            const std::string who = std::string(is_input ? "input " : "output ") + std::to_string(k);
            const std::int32_t nd = io_nodes[static_cast<std::size_t>(j)];
            const std::int32_t ix = io_offsets[static_cast<std::size_t>(j)];
            if (nd < 0 || static_cast<std::size_t>(nd) >= nodes_.size())
                fail(who + ": io_nodes entry " + std::to_string(nd) + " is not a node index (0.." +
                     std::to_string(nodes_.size() - 1) + ")");
            const auto owned = node_tensors(static_cast<std::size_t>(nd));
            if (ix < 0 || static_cast<std::size_t>(ix) >= owned.size())
                fail(who + ": io_offsets entry " + std::to_string(ix) + " is not a tensor index of node " +
                     std::to_string(nd) + " (it has " + std::to_string(owned.size()) + ")");
            io_tensor io;
            io.node = static_cast<std::size_t>(nd);
            io.index = static_cast<std::size_t>(ix);
            io.tensor = owned[io.index];
            const auto& t = io.tensor;
            io.shape.assign(t.shape.begin(), t.shape.begin() + t.dims);
            io.type = t.type;
            io.scale = t.scale;
            io.scale_f16 = t.scale_f16;
            io.zero_point = t.zero;
            io.offset = t.indirect.offset;
            io.direct = t.direct.value;
            io.length = 1;
            for (std::int32_t d : io.shape) {
                if (d <= 0) continue;  // as model_get_input_length: entries <= 0 are skipped
                if (io.length > bytes_.size() / static_cast<std::uint64_t>(d))
                    fail(who + ": shape has more elements than the file has bytes");
                io.length *= static_cast<std::uint64_t>(d);
            }
            const std::uint32_t esize = element_size(t.type);
            if (esize == 0) fail(who + ": tensor type " + std::to_string(t.type) + " is not a known calc_type");
            if (header_.include_io_data != 0) {
                if (t.direct.absent()) fail(who + ": tensor direct offset is absent but the file embeds test vectors");
                io.test_vector = range(t.direct.value, io.length * esize, who + " test vector");
            }
            (is_input ? inputs_ : outputs_).push_back(std::move(io));
        }
    }

    std::span<const std::byte> bytes_;
    std::string source_;
    vnnx_graph_t header_{};
    std::vector<vnnx_subgraph_node_t> nodes_;
    std::vector<vnnx_layer_t> layers_;
    std::vector<vnnx_tensor_t> tensors_;
    std::vector<io_tensor> inputs_, outputs_;
    std::uint64_t layer_table_ = 0, tensor_table_ = 0, data_offset_ = 0;
};

#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY void model_view::validate() {
    const std::uint64_t size = bytes_.size();
    if (size < header_size)
        fail("file is " + std::to_string(size) + " bytes, shorter than the " + std::to_string(header_size) +
             "-byte graph header (truncated?)");
    header_ = decode<vnnx_graph_t>(bytes_.data());
    const auto hex = [](std::uint32_t v) {
        static constexpr char digits[] = "0123456789abcdef";
        std::string s = "0x";
        for (int sh = 28; sh >= 0; sh -= 4) s += digits[(v >> sh) & 0xF];
        return s;
    };
    if (header_.magic != magic)
        fail("bad magic " + hex(header_.magic) + " at offset 76 (expected " + hex(magic) + "): not a VNNX file");
    if (header_.version != graph_version)
        fail("unsupported format version " + hex(header_.version) + " at offset 0 (this build reads " +
             hex(graph_version) + ")");
    if (header_.data_bytes != size)
        fail("header data_bytes = " + std::to_string(header_.data_bytes) + " but the file is " + std::to_string(size) +
             " bytes (truncated or padded file)");
    if (header_.allocate_bytes < header_.data_bytes)
        fail("header allocate_bytes = " + std::to_string(header_.allocate_bytes) + " is less than data_bytes = " +
             std::to_string(header_.data_bytes));
    if (header_.num_layers < 1) fail("header num_layers = " + std::to_string(header_.num_layers) + ": a model needs at least one node");

    const std::uint64_t n = static_cast<std::uint64_t>(header_.num_layers);
    check_limit(n, active_limits().max_nodes, source_ + ": header num_layers", "VNNX_MAX_NODES");
    layer_table_ = header_size + node_size * n;
    if (layer_table_ > size)
        fail("node table of " + std::to_string(n) + " nodes ends at " + std::to_string(layer_table_) +
             ", past the end of the " + std::to_string(size) + "-byte file");
    nodes_.reserve(static_cast<std::size_t>(n));
    std::uint64_t total_layers = 0, total_tensors = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        nodes_.push_back(decode<vnnx_subgraph_node_t>(bytes_.data() + header_size + node_size * i));
        const auto& nd = nodes_.back();
        const std::string who = describe("node", static_cast<std::size_t>(i), nd.type);
        if (nd.num_sublayers < 0 || nd.num_tensors < 0 || nd.num_inputs < 0 || nd.num_outputs < 0)
            fail(who + ": negative count (num_sublayers " + std::to_string(nd.num_sublayers) + ", num_tensors " +
                 std::to_string(nd.num_tensors) + ", num_inputs " + std::to_string(nd.num_inputs) + ", num_outputs " +
                 std::to_string(nd.num_outputs) + ")");
        total_layers += static_cast<std::uint64_t>(nd.num_sublayers);
        total_tensors += static_cast<std::uint64_t>(nd.num_tensors);
    }
    check_limit(total_layers, active_limits().max_nodes, source_ + ": the nodes' sublayer count", "VNNX_MAX_NODES");
    tensor_table_ = layer_table_ + layer_size * total_layers;
    const std::uint64_t tensors_end = tensor_table_ + tensor_size * total_tensors;
    if (tensors_end > size)
        fail("the nodes own " + std::to_string(total_layers) + " layers and " + std::to_string(total_tensors) +
             " tensors; their tables would end at " + std::to_string(tensors_end) + ", past the end of the " +
             std::to_string(size) + "-byte file");

    std::vector<span_check> layer_ranges, tensor_ranges;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const auto& nd = nodes_[i];
        const std::string who = describe("node", i, nd.type);
        if (nd.sublayers.value > size || nd.tensors.value > size)
            fail(who + ": sublayers = " + std::to_string(nd.sublayers.value) + " / tensors = " +
                 std::to_string(nd.tensors.value) + " point past the end of the file");
        layer_ranges.push_back({nd.sublayers.value, nd.sublayers.value + layer_size * static_cast<std::uint64_t>(nd.num_sublayers), who});
        tensor_ranges.push_back({nd.tensors.value, nd.tensors.value + tensor_size * static_cast<std::uint64_t>(nd.num_tensors), who});
    }
    check_table(std::move(layer_ranges), layer_table_, tensor_table_, layer_size, "layer records");
    check_table(std::move(tensor_ranges), tensor_table_, tensors_end, tensor_size, "tensor records");

    layers_.reserve(static_cast<std::size_t>(total_layers));
    for (std::uint64_t i = 0; i < total_layers; ++i)
        layers_.push_back(decode<vnnx_layer_t>(bytes_.data() + layer_table_ + layer_size * i));
    tensors_.reserve(static_cast<std::size_t>(total_tensors));
    for (std::uint64_t i = 0; i < total_tensors; ++i)
        tensors_.push_back(decode<vnnx_tensor_t>(bytes_.data() + tensor_table_ + tensor_size * i));

    // Replay region and data blob: 16-byte aligned, after the tables, inside the file.
    const std::uint64_t replay = header_.replay_buffer.value;
    if (header_.replay_buffer_size < 0)
        fail("header replay_buffer_size = " + std::to_string(header_.replay_buffer_size) + " is negative");
    if (replay % 16 != 0) fail("replay region at offset " + std::to_string(replay) + " is not 16-byte aligned");
    if (replay < tensors_end)
        fail("replay region at offset " + std::to_string(replay) + " overlaps the record tables, which end at " +
             std::to_string(tensors_end));
    data_offset_ = replay > size ? replay : replay + round_up(static_cast<std::uint64_t>(header_.replay_buffer_size), 16);
    if (replay > size || data_offset_ > size)
        fail("replay region [" + std::to_string(replay) + ", " + std::to_string(replay + static_cast<std::uint64_t>(header_.replay_buffer_size)) +
             ") and the data blob after it do not fit in the " + std::to_string(size) + "-byte file");

    // Every offset anywhere: -1 or inside [0, allocate_bytes).
    check_offsets(header_, std::string("graph header"));
    for (std::size_t i = 0; i < nodes_.size(); ++i) check_offsets(nodes_[i], describe("node", i, nodes_[i].type));
    for (std::size_t i = 0; i < layers_.size(); ++i) check_offsets(layers_[i], describe("layer", i, layers_[i].type));
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const std::string who = "tensor " + std::to_string(i);
        check_offsets(tensors_[i], who);
        const std::uint32_t ind = tensors_[i].indirect.offset;
        if (ind != 0xFFFFFFFFu && ind >= header_.allocate_bytes)
            fail(who + ": indirect.offset = " + std::to_string(ind) + " is outside the model [0, allocate_bytes = " +
                 std::to_string(header_.allocate_bytes) + ")");
        if (tensors_[i].dims < 0 || tensors_[i].dims > 6)
            fail(who + ": dims = " + std::to_string(tensors_[i].dims) + " is outside 0..6");
    }
    read_io();
}
#endif

}  // namespace vnnx::format
