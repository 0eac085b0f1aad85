#pragma once
// The records of the firmware header `vnnx-types.h` (SDK snapshot f5a428c), each field listed
// once and named as in the header. Sizes and offsets are derived from these lists
// (meta/reflect.hpp) and asserted against the measured numbers in layout_asserts.hpp.
//
// Every field list is a macro of its own (VNNX_FIELDS_<record>, without the union;
// VNNX_LAYER_OPTION_FIELDS_<member>, VNNX_NODE_OPTION_FIELDS_<member>): the records and the
// firmware-host checks of c_check.hpp are both generated from it.
//
// The header's anonymous unions become a field named `options` of type union_storage<U>:
// the raw union bytes plus typed set/get of one member. Each union member is a type of its
// own, in namespace node_options (14 members) or layer_options (28 members); the seven members
// the two unions have alike are defined once (shared_options). The two `Conv2DOptions` differ
// (the layer one lacks first_fia, last_fia, fia_collision).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vnnx/meta/reflect.hpp"
#include "vnnx/meta/struct.hpp"
#include "vnnx/meta/union.hpp"
#include "vnnx/format/codec.hpp"

/// A record of the firmware header: a reflected struct that knows its firmware name.
#define VNNX_FORMAT_RECORD(NAME, ...)                                       \
    struct NAME {                                                           \
        static constexpr std::string_view record_name = #NAME;              \
        VNNX_META_STRUCT(NAME, __VA_ARGS__);                              \
        bool operator==(const NAME&) const = default;                       \
    }

/// A member of one of the header's unions: a reflected struct named as the union member.
#define VNNX_FORMAT_UNION_MEMBER(NAME, ...)                                 \
    struct NAME {                                                           \
        static constexpr std::string_view member_name = #NAME;              \
        VNNX_META_STRUCT(NAME, __VA_ARGS__);                              \
        bool operator==(const NAME&) const = default;                       \
    }

/// `, ns::member`: one element of a union's member list (VNNX_*_OPTION_MEMBERS).
#define VNNX_FORMAT_LISTED_MEMBER(ns, member) , ns::member

namespace vnnx::format {

namespace detail {
/// meta::union_of over a generated list that starts with a comma (after a leading void).
template <class Void, class... Members>
using union_of_listed = meta::union_of<Members...>;
}  // namespace detail

using i32 = std::int32_t;
using u32 = std::uint32_t;
using f32 = float;
template <std::size_t N>
using i32s = std::array<std::int32_t, N>;
template <std::size_t N>
using f32s = std::array<float, N>;
template <std::size_t N>
using chars = std::array<char, N>;

/// Storage of an anonymous union: its bytes as they are in the file. set<M>() makes the
/// record hold member M (M's fields, then zeros up to the union size, as the SDK writes).
template <class U>
struct union_storage {
    using descriptor = U;
    static constexpr std::size_t serialized_size = U::size;

    std::array<std::byte, U::size> bytes{};

    template <class M>
    void set(const M& member) noexcept {
        static_assert(U::template holds<M>, "union_storage::set: not a member of this union");
        bytes.fill(std::byte{0});
        encode(bytes.data(), member);
    }

    template <class M>
    [[nodiscard]] M get() const noexcept {
        static_assert(U::template holds<M>, "union_storage::get: not a member of this union");
        return decode<M>(bytes.data());
    }

    [[nodiscard]] bool all_zero() const noexcept {
        return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
    }

    bool operator==(const union_storage&) const = default;

    void encode_to(std::byte* dst) const noexcept { std::copy(bytes.begin(), bytes.end(), dst); }
    static union_storage decode_from(const std::byte* src) noexcept {
        union_storage out;
        std::copy(src, src + U::size, out.bytes.begin());
        return out;
    }
};

#define VNNX_FIELDS_indirect_ptr_t \
    (u32, base_ptr_offset_from_sp_start), (u32, offset)
VNNX_FORMAT_RECORD(indirect_ptr_t, VNNX_FIELDS_indirect_ptr_t);

#define VNNX_FIELDS_vnnx_tensor_t \
    (i32, type), (i32s<6>, shape), (i32, dims), (i32, external_producer), (i32, external_consumer), \
    (f32, scale), (i32, scale_f16), (i32, zero), (i32, multiplier), (i32, shift), \
    (indirect_ptr_t, indirect), (obj_off_t, direct)
VNNX_FORMAT_RECORD(vnnx_tensor_t, VNNX_FIELDS_vnnx_tensor_t);

// Members the two unions share, field for field: defined once, named in both unions.
#define VNNX_SHARED_OPTION_FIELDS_ConcatOptions \
    (i32, axis)
#define VNNX_SHARED_OPTION_FIELDS_eltwise8 \
    (obj_off_t, input2_multiplier), (obj_off_t, input2_shift), (i32, input2_offset), (obj_off_t, bias_data), \
    (i32, swap), (i32, optimized), (i32, isize), (i32, left_shift), (i32, type)
#define VNNX_SHARED_OPTION_FIELDS_reduce8 \
    (i32, channels), (i32, rows), (i32, columns)
#define VNNX_SHARED_OPTION_FIELDS_PackOptions \
    (i32, axis), (i32, count), (i32, dims)
#define VNNX_SHARED_OPTION_FIELDS_ResizeOptions \
    (f32s<2>, scale), (i32, mode), (i32, num_c_inc), (obj_off_t, c_inc), (i32, min_rows), (i32, min_cols), \
    (i32, min_maps), (i32, rows_trips), (i32, cols_trips), (i32, maps_trips), (i32, in_scratchpad)
#define VNNX_SHARED_OPTION_FIELDS_TransposeOptions \
    (i32s<3>, permutation), (i32, out_maps_at_once), (i32, out_rows_at_once)
#define VNNX_SHARED_OPTION_FIELDS_SplitOptions \
    (i32, axis), (i32, max_split), (obj_off_t, splits)

namespace shared_options {
VNNX_FORMAT_UNION_MEMBER(ConcatOptions, VNNX_SHARED_OPTION_FIELDS_ConcatOptions);
VNNX_FORMAT_UNION_MEMBER(eltwise8, VNNX_SHARED_OPTION_FIELDS_eltwise8);
VNNX_FORMAT_UNION_MEMBER(reduce8, VNNX_SHARED_OPTION_FIELDS_reduce8);
VNNX_FORMAT_UNION_MEMBER(PackOptions, VNNX_SHARED_OPTION_FIELDS_PackOptions);
VNNX_FORMAT_UNION_MEMBER(ResizeOptions, VNNX_SHARED_OPTION_FIELDS_ResizeOptions);
VNNX_FORMAT_UNION_MEMBER(TransposeOptions, VNNX_SHARED_OPTION_FIELDS_TransposeOptions);
VNNX_FORMAT_UNION_MEMBER(SplitOptions, VNNX_SHARED_OPTION_FIELDS_SplitOptions);
}  // namespace shared_options

// The layer union: its members in header order, then their field lists.
#define VNNX_LAYER_OPTION_MEMBERS \
    Conv2DOptions, ConcatOptions, eltwise8, reduce8, broadcast8, PadOptions, clip, depthwise, prelu, \
    leakyrelu, SoftmaxOptions, ActivationOptions, LogSoftmaxOptions, prefetch, SliceOptions, GatherOptions, \
    SpaceToBatchNDOptions, BatchToSpaceNDOptions, MirrorPadOptions, ReshapeOptions, PixelShuffleOptions, \
    PackOptions, ResizeOptions, TransposeOptions, SplitOptions, embedding, MinMaxOptions, ShaperOptions
#define VNNX_LAYER_OPTION_FIELDS_Conv2DOptions \
    (i32, kernels), (i32, stride_width), (i32, stride_height), (i32, dilation_width_factor), \
    (i32, dilation_height_factor), (i32, padding_width), (i32, padding_height), \
    (i32s<4>, filter_shape_dims), (i32, group), (i32, imaps), (i32, conv_rows), (i32, use_vector), \
    (i32, use_fia), (i32, use_db), (i32, use_depthwise), (i32, use_strided), (i32, fit_weights), \
    (i32, split_weight_shaper_buffers), (i32, direct_dma), (i32, mxp_double_buffer), (i32, repeat), \
    (i32, in_used), (i32, w_used), (i32, qt_used), (i32, out_used), (i32, sp_used), (i32, fia_preloaded), \
    (i32, next_fia_node_id), (i32, preload_next_fia), (obj_off_t, filter_data), (obj_off_t, bias_data), \
    (obj_off_t, quantization_records), (obj_off_t, nlf_data), (u32, tile_count)
#define VNNX_LAYER_OPTION_FIELDS_ConcatOptions VNNX_SHARED_OPTION_FIELDS_ConcatOptions
#define VNNX_LAYER_OPTION_FIELDS_eltwise8 VNNX_SHARED_OPTION_FIELDS_eltwise8
#define VNNX_LAYER_OPTION_FIELDS_reduce8 VNNX_SHARED_OPTION_FIELDS_reduce8
#define VNNX_LAYER_OPTION_FIELDS_broadcast8 \
    (i32s<4>, filter_shape_dims), (obj_off_t, filter_multiplier), (obj_off_t, filter_shift), \
    (i32, filter_offset), (obj_off_t, filter_data), (obj_off_t, bias_data), (f32, iscale), (f32, fscale), \
    (f32, oscale), (i32, broadcast), (i32, optimized), (i32, isize), (i32, left_shift), (i32, sub), \
    (i32, swap_inputs)
#define VNNX_LAYER_OPTION_FIELDS_PadOptions \
    (i32, value), (i32, transpose_dilate_w), (i32, transpose_dilate_h)
#define VNNX_LAYER_OPTION_FIELDS_clip \
    (f32, min), (f32, max)
#define VNNX_LAYER_OPTION_FIELDS_depthwise \
    (i32, unsigned_input), (i32, unsigned_output), (obj_off_t, weights)
#define VNNX_LAYER_OPTION_FIELDS_prelu \
    (obj_off_t, alpha_multiplier), (obj_off_t, alpha_shift), (i32, alpha_offset), (i32, optimized), \
    (i32, maps_at_once), (f32, iscale), (f32, ascale), (f32, oscale), (obj_off_t, vci_int8), \
    (obj_off_t, alpha_data), (i32s<4>, alpha_shape)
#define VNNX_LAYER_OPTION_FIELDS_leakyrelu \
    (obj_off_t, alpha_multiplier), (obj_off_t, alpha_shift)
#define VNNX_LAYER_OPTION_FIELDS_SoftmaxOptions \
    (i32, diff_min), (i32, axis), (i32, depth), (i32, count), (obj_off_t, vci_int8), (obj_off_t, lut_int32), \
    (obj_off_t, idx_int8)
#define VNNX_LAYER_OPTION_FIELDS_ActivationOptions \
    (i32, input_range_radius), (i32, count), (i32, lut_count), (obj_off_t, vci_int8), (obj_off_t, lut_int8), \
    (obj_off_t, idx_int8)
#define VNNX_LAYER_OPTION_FIELDS_LogSoftmaxOptions \
    (i32, diff_min), (i32, outer_size), (i32, depth), (i32, reverse_scaling_divisor), \
    (i32, reverse_scaling_right_shift), (i32, axis)
#define VNNX_LAYER_OPTION_FIELDS_prefetch \
    (obj_off_t, memory_offset)
#define VNNX_LAYER_OPTION_FIELDS_SliceOptions \
    (i32s<4>, begin), (i32s<4>, end), (i32s<4>, stride)
#define VNNX_LAYER_OPTION_FIELDS_GatherOptions \
    (i32, axis), (i32, batch_dims), (obj_off_t, coord_data), (i32, batch_size), (i32, outer_size), \
    (i32, axis_size), (i32, inner_size), (i32, coord_size), (i32, swap_input_order)
#define VNNX_LAYER_OPTION_FIELDS_SpaceToBatchNDOptions \
    (obj_off_t, block_shape_data), (obj_off_t, paddings_data)
#define VNNX_LAYER_OPTION_FIELDS_BatchToSpaceNDOptions \
    (obj_off_t, block_shape_data), (obj_off_t, crop_data)
#define VNNX_LAYER_OPTION_FIELDS_MirrorPadOptions \
    (i32, mode)
#define VNNX_LAYER_OPTION_FIELDS_ReshapeOptions \
    (i32, mode)
#define VNNX_LAYER_OPTION_FIELDS_PixelShuffleOptions \
    (i32, r)
#define VNNX_LAYER_OPTION_FIELDS_PackOptions VNNX_SHARED_OPTION_FIELDS_PackOptions
#define VNNX_LAYER_OPTION_FIELDS_ResizeOptions VNNX_SHARED_OPTION_FIELDS_ResizeOptions
#define VNNX_LAYER_OPTION_FIELDS_TransposeOptions VNNX_SHARED_OPTION_FIELDS_TransposeOptions
#define VNNX_LAYER_OPTION_FIELDS_SplitOptions VNNX_SHARED_OPTION_FIELDS_SplitOptions
#define VNNX_LAYER_OPTION_FIELDS_embedding \
    (i32s<2>, colar_map_dims), (obj_off_t, colar_map_data)
#define VNNX_LAYER_OPTION_FIELDS_MinMaxOptions \
    (i32, max), (i32s<4>, filter_shape_dims), (obj_off_t, filter_multiplier), (obj_off_t, filter_shift), \
    (i32, filter_offset), (obj_off_t, filter_data)
#define VNNX_LAYER_OPTION_FIELDS_ShaperOptions \
    (i32, height), (i32, height_final), (i32, width), (i32, width_final), (i32, shaper_height), \
    (i32, shaper_height_final), (i32, shaper_width), (i32, shaper_width_final), (i32, stride_height), \
    (i32, use_strided)

namespace layer_options {
VNNX_FORMAT_UNION_MEMBER(Conv2DOptions, VNNX_LAYER_OPTION_FIELDS_Conv2DOptions);
using shared_options::ConcatOptions;
using shared_options::eltwise8;
using shared_options::reduce8;
VNNX_FORMAT_UNION_MEMBER(broadcast8, VNNX_LAYER_OPTION_FIELDS_broadcast8);
VNNX_FORMAT_UNION_MEMBER(PadOptions, VNNX_LAYER_OPTION_FIELDS_PadOptions);
VNNX_FORMAT_UNION_MEMBER(clip, VNNX_LAYER_OPTION_FIELDS_clip);
VNNX_FORMAT_UNION_MEMBER(depthwise, VNNX_LAYER_OPTION_FIELDS_depthwise);
VNNX_FORMAT_UNION_MEMBER(prelu, VNNX_LAYER_OPTION_FIELDS_prelu);
VNNX_FORMAT_UNION_MEMBER(leakyrelu, VNNX_LAYER_OPTION_FIELDS_leakyrelu);
VNNX_FORMAT_UNION_MEMBER(SoftmaxOptions, VNNX_LAYER_OPTION_FIELDS_SoftmaxOptions);
VNNX_FORMAT_UNION_MEMBER(ActivationOptions, VNNX_LAYER_OPTION_FIELDS_ActivationOptions);
VNNX_FORMAT_UNION_MEMBER(LogSoftmaxOptions, VNNX_LAYER_OPTION_FIELDS_LogSoftmaxOptions);
VNNX_FORMAT_UNION_MEMBER(prefetch, VNNX_LAYER_OPTION_FIELDS_prefetch);
VNNX_FORMAT_UNION_MEMBER(SliceOptions, VNNX_LAYER_OPTION_FIELDS_SliceOptions);
VNNX_FORMAT_UNION_MEMBER(GatherOptions, VNNX_LAYER_OPTION_FIELDS_GatherOptions);
VNNX_FORMAT_UNION_MEMBER(SpaceToBatchNDOptions, VNNX_LAYER_OPTION_FIELDS_SpaceToBatchNDOptions);
VNNX_FORMAT_UNION_MEMBER(BatchToSpaceNDOptions, VNNX_LAYER_OPTION_FIELDS_BatchToSpaceNDOptions);
VNNX_FORMAT_UNION_MEMBER(MirrorPadOptions, VNNX_LAYER_OPTION_FIELDS_MirrorPadOptions);
VNNX_FORMAT_UNION_MEMBER(ReshapeOptions, VNNX_LAYER_OPTION_FIELDS_ReshapeOptions);
VNNX_FORMAT_UNION_MEMBER(PixelShuffleOptions, VNNX_LAYER_OPTION_FIELDS_PixelShuffleOptions);
using shared_options::PackOptions;
using shared_options::ResizeOptions;
using shared_options::TransposeOptions;
using shared_options::SplitOptions;
VNNX_FORMAT_UNION_MEMBER(embedding, VNNX_LAYER_OPTION_FIELDS_embedding);
VNNX_FORMAT_UNION_MEMBER(MinMaxOptions, VNNX_LAYER_OPTION_FIELDS_MinMaxOptions);
VNNX_FORMAT_UNION_MEMBER(ShaperOptions, VNNX_LAYER_OPTION_FIELDS_ShaperOptions);
}  // namespace layer_options

/// The layer union, members in header order.
using layer_union = detail::union_of_listed<void VNNX_PP_FOR_EACH(VNNX_FORMAT_LISTED_MEMBER, layer_options, VNNX_LAYER_OPTION_MEMBERS)>;

/// A layer (the SDK's "subnode"): a sub-operation fused into a node.
#define VNNX_FIELDS_vnnx_layer_t \
    (i32, type), (i32, input_data_type), (i32, output_data_type), (i32s<2>, strides), \
    (i32s<2>, kernel_shape), (i32s<2>, dilations), (i32s<6>, pads), (i32, maps), (i32, num_inputs), \
    (i32, num_outputs), (i32, num_tensors), (i32, activation_min), (i32, activation_max), \
    (obj_off_t, input_multiplier), (obj_off_t, input_shift), (i32, input_offset), \
    (obj_off_t, output_multiplier), (obj_off_t, output_shift), (i32, output_offset), (i32, nop), \
    (obj_off_t, tensors)
// Its anonymous union follows the fields above: a firmware header names no field for it.
VNNX_FORMAT_RECORD(vnnx_layer_t, VNNX_FIELDS_vnnx_layer_t, (union_storage<layer_union>, options));

// The node union: its members in header order, then their field lists.
#define VNNX_NODE_OPTION_MEMBERS \
    Conv2DOptions, eltwise8, reduce8, FullyConnectedOptions, BatchMatMulOptions, ConcatOptions, PackOptions, \
    argmax, lrn, TileOptions, reorg, ResizeOptions, TransposeOptions, SplitOptions
#define VNNX_NODE_OPTION_FIELDS_Conv2DOptions \
    (i32, kernels), (i32, stride_width), (i32, stride_height), (i32, dilation_width_factor), \
    (i32, dilation_height_factor), (i32, padding_width), (i32, padding_height), \
    (i32s<4>, filter_shape_dims), (i32, group), (i32, imaps), (i32, conv_rows), (i32, use_vector), \
    (i32, use_fia), (i32, use_db), (i32, use_depthwise), (i32, use_strided), (i32, fit_weights), \
    (i32, split_weight_shaper_buffers), (i32, direct_dma), (i32, mxp_double_buffer), (i32, first_fia), \
    (i32, last_fia), (i32, fia_collision), (i32, repeat), (i32, in_used), (i32, w_used), (i32, qt_used), \
    (i32, out_used), (i32, sp_used), (i32, fia_preloaded), (i32, next_fia_node_id), (i32, preload_next_fia), \
    (obj_off_t, filter_data), (obj_off_t, bias_data), (obj_off_t, quantization_records), \
    (obj_off_t, nlf_data), (u32, tile_count)
#define VNNX_NODE_OPTION_FIELDS_eltwise8 VNNX_SHARED_OPTION_FIELDS_eltwise8
#define VNNX_NODE_OPTION_FIELDS_reduce8 VNNX_SHARED_OPTION_FIELDS_reduce8
#define VNNX_NODE_OPTION_FIELDS_FullyConnectedOptions \
    (i32s<2>, filter_shape_dims), (i32, input_stride), (i32, use_fia), (i32, first_fia), (i32, last_fia), \
    (i32, fia_collision), (i32, mxp_double_buffer), (obj_off_t, filter_data), (obj_off_t, bias_data), \
    (obj_off_t, quantization_records), (obj_off_t, nlf_data)
#define VNNX_NODE_OPTION_FIELDS_BatchMatMulOptions \
    (i32, adj_x), (i32, adj_y), (i32, asym)
#define VNNX_NODE_OPTION_FIELDS_ConcatOptions VNNX_SHARED_OPTION_FIELDS_ConcatOptions
#define VNNX_NODE_OPTION_FIELDS_PackOptions VNNX_SHARED_OPTION_FIELDS_PackOptions
#define VNNX_NODE_OPTION_FIELDS_argmax \
    (i32, pixels_per_loop)
#define VNNX_NODE_OPTION_FIELDS_lrn \
    (f32, alpha), (f32, beta), (f32, bias), (f32, scale), (i32, size)
#define VNNX_NODE_OPTION_FIELDS_TileOptions \
    (i32s<4>, tile)
#define VNNX_NODE_OPTION_FIELDS_reorg \
    (i32, stride)
#define VNNX_NODE_OPTION_FIELDS_ResizeOptions VNNX_SHARED_OPTION_FIELDS_ResizeOptions
#define VNNX_NODE_OPTION_FIELDS_TransposeOptions VNNX_SHARED_OPTION_FIELDS_TransposeOptions
#define VNNX_NODE_OPTION_FIELDS_SplitOptions VNNX_SHARED_OPTION_FIELDS_SplitOptions

namespace node_options {
VNNX_FORMAT_UNION_MEMBER(Conv2DOptions, VNNX_NODE_OPTION_FIELDS_Conv2DOptions);
using shared_options::eltwise8;
using shared_options::reduce8;
VNNX_FORMAT_UNION_MEMBER(FullyConnectedOptions, VNNX_NODE_OPTION_FIELDS_FullyConnectedOptions);
VNNX_FORMAT_UNION_MEMBER(BatchMatMulOptions, VNNX_NODE_OPTION_FIELDS_BatchMatMulOptions);
using shared_options::ConcatOptions;
using shared_options::PackOptions;
VNNX_FORMAT_UNION_MEMBER(argmax, VNNX_NODE_OPTION_FIELDS_argmax);
VNNX_FORMAT_UNION_MEMBER(lrn, VNNX_NODE_OPTION_FIELDS_lrn);
VNNX_FORMAT_UNION_MEMBER(TileOptions, VNNX_NODE_OPTION_FIELDS_TileOptions);
VNNX_FORMAT_UNION_MEMBER(reorg, VNNX_NODE_OPTION_FIELDS_reorg);
using shared_options::ResizeOptions;
using shared_options::TransposeOptions;
using shared_options::SplitOptions;
}  // namespace node_options

/// The node union, members in header order.
using node_union = detail::union_of_listed<void VNNX_PP_FOR_EACH(VNNX_FORMAT_LISTED_MEMBER, node_options, VNNX_NODE_OPTION_MEMBERS)>;

/// A node (`vnnx_subgraph_node_t`): a major step, executed in order.
#define VNNX_FIELDS_vnnx_subgraph_node_t \
    (i32, type), (i32, input_data_type), (i32, output_data_type), (i32, offloaded), \
    (i32s<2>, input_strides), (i32s<2>, output_strides), (i32, channels), (i32, m), (i32, n), (i32, maps), \
    (i32, rows), (i32, cols), (i32, skip), (i32, scratchpad_bytes), (chars<48>, input_description), \
    (chars<48>, output_description), (obj_off_t, sublayers), (i32, num_sublayers), (i32, row_start), \
    (i32, row_last), (i32, orow_last), (i32, row_inc), (i32, row_inc0), (i32, rows_0), (i32, rows_final), \
    (i32, col_start), (i32, col_last), (i32, ocol_last), (i32, col_inc), (i32, col_inc0), (i32, cols_0), \
    (i32, cols_final), (i32, prefetch_bytes_per_map), (i32, use_replay), (obj_off_t, replay_buffer), \
    (i32, replay_buffer_size), (i32, num_inputs), (i32, num_outputs), (i32, num_tensors), \
    (obj_off_t, tensors), (i32, activation_min), (i32, activation_max), (obj_off_t, input_multiplier), \
    (obj_off_t, input_shift), (i32, input_offset), (obj_off_t, output_multiplier), \
    (obj_off_t, output_shift), (i32, output_offset)
// Its anonymous union follows the fields above: a firmware header names no field for it.
VNNX_FORMAT_RECORD(vnnx_subgraph_node_t, VNNX_FIELDS_vnnx_subgraph_node_t, (union_storage<node_union>, options));

/// The header's zero-length `subgraphs[0]`: it marks where the node table starts (offset 84)
/// and takes no bytes; nodes are read and written as records of their own.
using node_table = std::array<vnnx_subgraph_node_t, 0>;

/// The graph header (`vnnx_graph_t`); the node table follows it directly.
#define VNNX_FIELDS_vnnx_graph_t \
    (u32, version), (u32, vbx_nn_preset), (u32, num_inputs), (u32, num_outputs), \
    (u32, fixed_replay_buffer0), (u32, fixed_replay_buffer1), (u32, fixed_replay_buffer2), \
    (u32, fixed_replay_buffer3), (u32, include_io_data), (u32, data_bytes), (u32, allocate_bytes), \
    (obj_off_t, io_nodes), (obj_off_t, io_offsets), (i32, num_layers), (obj_off_t, replay_buffer), \
    (i32, replay_buffer_size), (u32, magic), (i32, sparsity), (node_table, subgraphs)
VNNX_FORMAT_RECORD(vnnx_graph_t, VNNX_FIELDS_vnnx_graph_t);

/// Every record type, for code that walks them all (layout tables, tests).
using all_records = meta::set<vnnx_graph_t, vnnx_subgraph_node_t, vnnx_layer_t, vnnx_tensor_t, indirect_ptr_t>;

/// A record's `options` union descriptor, or void for records without a union.
template <class R>
struct union_of_record { using type = void; };
template <>
struct union_of_record<vnnx_subgraph_node_t> { using type = node_union; };
template <>
struct union_of_record<vnnx_layer_t> { using type = layer_union; };

}  // namespace vnnx::format
