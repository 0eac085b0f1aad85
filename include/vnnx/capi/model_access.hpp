#pragma once
// The firmware API's model accessors (model_get_*) over a model in a caller's memory, whose
// length the caller does not pass: the header says how long the model is (data_bytes), and
// every record read after it is checked against that. Each accessor reads the header, one
// io_nodes/io_offsets pair, one node record and one tensor record: O(1), no allocation, so a
// program may call them as often as the SDK's do.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "vnnx/format/codec.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/format/layout_asserts.hpp"
#include "vnnx/format/records.hpp"
#include "vnnx/meta/reflect.hpp"
#include "vnnx/support/bytes.hpp"

namespace vnnx::capi {

/// Where a graph input or output's tensor record lies in the model, and the record itself.
struct io_record {
    std::uint64_t offset = 0;  // of the tensor record, from the model's start
    format::vnnx_tensor_t tensor{};
};

class model_access {
public:
    static constexpr std::uint64_t header_size = format::record_size_v<format::vnnx_graph_t>;
    static constexpr std::uint64_t node_size = format::record_size_v<format::vnnx_subgraph_node_t>;
    static constexpr std::uint64_t tensor_size = format::record_size_v<format::vnnx_tensor_t>;
    static constexpr std::uint64_t shape_offset = meta::offset_of_v<format::vnnx_tensor_t, "shape">;

    /// `model` may be null; nothing is read past the header before its magic and version
    /// have been checked.
    explicit model_access(const void* model) noexcept : base_(static_cast<const std::byte*>(model)) {
        if (base_ == nullptr) return;
        header_ = format::decode<format::vnnx_graph_t>(base_);
        magic_ok_ = header_.magic == format::magic;
        version_ok_ = header_.version == format::graph_version;
    }

    [[nodiscard]] bool sane() const noexcept { return base_ != nullptr && magic_ok_ && version_ok_; }
    [[nodiscard]] bool magic_ok() const noexcept { return base_ != nullptr && magic_ok_; }
    [[nodiscard]] const format::vnnx_graph_t& header() const noexcept { return header_; }
    [[nodiscard]] const std::byte* base() const noexcept { return base_; }

    /// Graph input (is_input) or output `index`'s tensor record, or nothing when the model is
    /// not sane, the index is out of range or a record lies outside data_bytes.
    [[nodiscard]] std::optional<io_record> io(bool is_input, int index) const noexcept {
        if (!sane() || index < 0) return std::nullopt;
        const std::uint64_t count = is_input ? header_.num_inputs : header_.num_outputs;
        if (static_cast<std::uint64_t>(index) >= count) return std::nullopt;
        const std::uint64_t j = (is_input ? 0 : std::uint64_t{header_.num_inputs}) + static_cast<std::uint64_t>(index);
        const auto node_index = int32_at(header_.io_nodes, j);
        const auto tensor_index = int32_at(header_.io_offsets, j);
        if (!node_index || !tensor_index || *node_index < 0 || *tensor_index < 0) return std::nullopt;
        if (*node_index >= header_.num_layers) return std::nullopt;
        const std::uint64_t node_at = header_size + node_size * static_cast<std::uint64_t>(*node_index);
        if (!inside(node_at, node_size)) return std::nullopt;
        const auto node = format::decode<format::vnnx_subgraph_node_t>(base_ + node_at);
        if (*tensor_index >= node.num_tensors || node.tensors.absent()) return std::nullopt;
        const std::uint64_t at = node.tensors.value + tensor_size * static_cast<std::uint64_t>(*tensor_index);
        if (!inside(at, tensor_size)) return std::nullopt;
        io_record r{at, format::decode<format::vnnx_tensor_t>(base_ + at)};
        if (r.tensor.dims < 0 || r.tensor.dims > 6) return std::nullopt;
        return r;
    }

    /// Element count of an io tensor: the product of its shape entries, those <= 0 skipped
    /// (as the firmware counts them).
    [[nodiscard]] static std::uint64_t length(const format::vnnx_tensor_t& t) noexcept {
        std::uint64_t n = 1;
        for (std::int32_t d = 0; d < t.dims; ++d) {
            const std::int32_t v = t.shape[static_cast<std::size_t>(d)];
            if (v > 0) n *= static_cast<std::uint64_t>(v);
        }
        return n;
    }

    /// The bytes of an io tensor's embedded test vector, inside the model, or null when the
    /// model embeds none or they would lie outside data_bytes.
    [[nodiscard]] const std::byte* test_vector(const io_record& r) const noexcept {
        if (header_.include_io_data == 0 || r.tensor.direct.absent()) return nullptr;
        const std::uint64_t bytes = length(r.tensor) * format::element_size(r.tensor.type);
        if (bytes == 0 || !inside(r.tensor.direct.value, bytes)) return nullptr;
        return base_ + r.tensor.direct.value;
    }

private:
    [[nodiscard]] bool inside(std::uint64_t offset, std::uint64_t size) const noexcept {
        const std::uint64_t end = header_.data_bytes;
        return offset <= end && end - offset >= size;
    }
    [[nodiscard]] std::optional<std::int32_t> int32_at(format::obj_off_t table, std::uint64_t j) const noexcept {
        if (table.absent() || j > (std::uint64_t{1} << 32)) return std::nullopt;
        if (table.value > header_.data_bytes) return std::nullopt;
        const std::uint64_t at = table.value + 4 * j;
        if (!inside(at, 4)) return std::nullopt;
        return load_le<std::int32_t>(base_ + at);
    }

    const std::byte* base_ = nullptr;
    format::vnnx_graph_t header_{};
    bool magic_ok_ = false, version_ok_ = false;
};

}  // namespace vnnx::capi
