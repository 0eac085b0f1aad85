#pragma once
// The compiled model before it becomes bytes: nodes with their layers and tensor records,
// and the data blob. Offsets inside records are blob-relative until emit() relocates them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vnnx/ir/calibration.hpp"
#include "vnnx/ir/data_section.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/format/records.hpp"
#include "vnnx/meta/reflect.hpp"

namespace vnnx::compiler {

/// One tensor record before its buffer is placed. Records with the same name share a buffer.
struct tensor_desc {
    std::string name;
    std::int32_t type = static_cast<std::int32_t>(format::calc_type::CALC_TYPE_INT8);
    std::vector<std::int32_t> shape;  // channels-first
    float scale = 0.0f;
    std::int32_t zero = 0;
};

namespace detail {
/// Byte positions of the obj_off_t fields of union member M (relative to the union start).
template <class M>
std::vector<std::uint16_t> offset_fields() {
    std::vector<std::uint16_t> out;
    constexpr auto fields = meta::fields_v<M>;
    std::size_t i = 0;
    meta::for_each_field<M>([&](std::string_view, auto tag, auto) {
        if constexpr (std::is_same_v<typename decltype(tag)::type, format::obj_off_t>)
            out.push_back(static_cast<std::uint16_t>(fields[i].offset));
        ++i;
    });
    return out;
}
}  // namespace detail

/// A record plus the union offset fields that need relocation.
template <class Record>
struct record_build {
    Record rec{};
    std::vector<std::uint16_t> union_offsets;

    /// Makes the record hold union member M (its fields, zeros after).
    template <class M>
    void set(const M& member) {
        rec.options.set(member);
        union_offsets = detail::offset_fields<M>();
    }
    template <class M>
    [[nodiscard]] M get() const {
        return rec.options.template get<M>();
    }
};

struct layer_build : record_build<format::vnnx_layer_t> {
    std::vector<tensor_desc> tensors;  // inputs, then the output
    std::int32_t source_op = -1;       // graph index of the operator it lowers, -1 if none
};

struct node_build : record_build<format::vnnx_subgraph_node_t> {
    std::vector<tensor_desc> tensors;  // node inputs, then node outputs
    std::vector<layer_build> layers;
    std::string label;                 // for reports: the operators it came from
    std::int64_t macs = 0;
    std::int64_t weight_bytes = 0;
};

/// A graph input or output: its tensor name and the test vector embedded in its buffer.
struct io_desc {
    std::string name;
    std::vector<std::byte> test_data;  // channels-first, may be empty
};

struct program {
    format::preset preset = format::preset::V1000;
    format::compression compression = format::compression::ncomp;
    std::vector<node_build> nodes;
    data_section data;
    std::vector<io_desc> inputs, outputs;
    // Working memory of the conv lowering (a filter in FIA order), handed from one convolution to
    // the next: fresh pages fault at about 1.3 us each, a tenth of MobileNetV2's compile otherwise.
    std::vector<std::int8_t> filter_scratch;
    // Accumulators observed on calibration inputs: the conv lowering fits its records to them.
    const calibration* calib = nullptr;
    record_fit_stats fit;
};

/// A record's description: the name, cut or zero-padded to the field.
inline void set_description(format::chars<48>& dst, const std::string& name) {
    dst.fill('\0');
    std::memcpy(dst.data(), name.data(), std::min<std::size_t>(name.size(), dst.size()));
}

/// Node and layer records with the SDK's defaults (lowering.md §2.3).
inline format::vnnx_subgraph_node_t default_node() {
    format::vnnx_subgraph_node_t n{};
    n.input_strides = {1, 1};
    n.output_strides = {1, 1};
    n.num_inputs = 1;
    n.num_outputs = 1;
    n.activation_min = -1;
    n.activation_max = -1;
    n.input_offset = -1;
    n.output_offset = -1;
    n.replay_buffer = format::obj_off_t{0};  // written by a recording run, never relocated
    return n;
}

inline format::vnnx_layer_t default_layer() {
    format::vnnx_layer_t l{};
    l.strides = {1, 1};
    l.kernel_shape = {1, 1};
    l.dilations = {1, 1};
    l.num_inputs = 1;
    l.num_outputs = 1;
    l.num_tensors = -1;
    l.activation_min = -128;
    l.activation_max = 127;
    l.input_offset = -1;
    l.output_offset = -1;
    return l;
}

}  // namespace vnnx::compiler
