#pragma once
// Copies the main subgraph of a verified TFLite model into the compiler's graph, reading each
// operator's options through the options traits of vnnx/tflite.
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "vnnx/ir/graph.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/support/linkage.hpp"

namespace vnnx::compiler {

namespace detail {

inline void read_options(const tflite::operator_view& v, op_options& o) {
    using B = builtin_operator;
    namespace opt = tflite::opt;
    switch (v.op()) {
        case B::CONV_2D: {
            const auto x = v.options<opt::Conv2DOptions>();
            o.pad = x.padding;
            o.stride_w = x.stride_w;
            o.stride_h = x.stride_h;
            o.dilation_w = x.dilation_w_factor;
            o.dilation_h = x.dilation_h_factor;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::DEPTHWISE_CONV_2D: {
            const auto x = v.options<opt::DepthwiseConv2DOptions>();
            o.pad = x.padding;
            o.stride_w = x.stride_w;
            o.stride_h = x.stride_h;
            o.dilation_w = x.dilation_w_factor;
            o.dilation_h = x.dilation_h_factor;
            o.depth_multiplier = x.depth_multiplier;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::AVERAGE_POOL_2D:
        case B::MAX_POOL_2D:
        case B::L2_POOL_2D: {
            const auto x = v.options<opt::Pool2DOptions>();
            o.pad = x.padding;
            o.stride_w = x.stride_w;
            o.stride_h = x.stride_h;
            o.filter_w = x.filter_width;
            o.filter_h = x.filter_height;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::FULLY_CONNECTED: {
            const auto x = v.options<opt::FullyConnectedOptions>();
            o.fused = x.fused_activation_function;
            o.keep_num_dims = x.keep_num_dims;
            break;
        }
        case B::SOFTMAX: o.beta = v.options<opt::SoftmaxOptions>().beta; break;
        case B::CONCATENATION: {
            const auto x = v.options<opt::ConcatenationOptions>();
            o.axis = x.axis;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::ADD: {
            const auto x = v.options<opt::AddOptions>();
            o.fused = x.fused_activation_function;
            o.pot_scale_int16 = x.pot_scale_int16;
            break;
        }
        case B::SUB: {
            const auto x = v.options<opt::SubOptions>();
            o.fused = x.fused_activation_function;
            o.pot_scale_int16 = x.pot_scale_int16;
            break;
        }
        case B::MUL: o.fused = v.options<opt::MulOptions>().fused_activation_function; break;
        case B::DIV: o.fused = v.options<opt::DivOptions>().fused_activation_function; break;
        case B::L2_NORMALIZATION: o.fused = v.options<opt::L2NormOptions>().fused_activation_function; break;
        case B::RESIZE_BILINEAR: {
            const auto x = v.options<opt::ResizeBilinearOptions>();
            o.align_corners = x.align_corners;
            o.half_pixel_centers = x.half_pixel_centers;
            break;
        }
        case B::RESIZE_NEAREST_NEIGHBOR: {
            const auto x = v.options<opt::ResizeNearestNeighborOptions>();
            o.align_corners = x.align_corners;
            o.half_pixel_centers = x.half_pixel_centers;
            break;
        }
        case B::RESHAPE: o.new_shape = v.options<opt::ReshapeOptions>().new_shape; break;
        case B::SPACE_TO_DEPTH: o.block_size = v.options<opt::SpaceToDepthOptions>().block_size; break;
        case B::DEPTH_TO_SPACE: o.block_size = v.options<opt::DepthToSpaceOptions>().block_size; break;
        case B::GATHER: {
            const auto x = v.options<opt::GatherOptions>();
            o.axis = x.axis;
            o.batch_dims = x.batch_dims;
            break;
        }
        case B::MEAN: case B::SUM: case B::REDUCE_MAX: case B::REDUCE_MIN: case B::REDUCE_PROD:
            o.keep_dims = v.options<opt::ReducerOptions>().keep_dims;
            break;
        case B::SQUEEZE: o.squeeze_dims = v.options<opt::SqueezeOptions>().squeeze_dims; break;
        case B::STRIDED_SLICE: {
            const auto x = v.options<opt::StridedSliceOptions>();
            o.begin_mask = x.begin_mask;
            o.end_mask = x.end_mask;
            o.ellipsis_mask = x.ellipsis_mask;
            o.new_axis_mask = x.new_axis_mask;
            o.shrink_axis_mask = x.shrink_axis_mask;
            o.offset = x.offset;
            break;
        }
        case B::SPLIT: o.num = v.options<opt::SplitOptions>().num_splits; break;
        case B::SPLIT_V: o.num = v.options<opt::SplitVOptions>().num_splits; break;
        case B::TRANSPOSE_CONV: {
            const auto x = v.options<opt::TransposeConvOptions>();
            o.pad = x.padding;
            o.stride_w = x.stride_w;
            o.stride_h = x.stride_h;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::PACK: {
            const auto x = v.options<opt::PackOptions>();
            o.num = x.values_count;
            o.axis = x.axis;
            break;
        }
        case B::UNPACK: {
            const auto x = v.options<opt::UnpackOptions>();
            o.num = x.num;
            o.axis = x.axis;
            break;
        }
        case B::LEAKY_RELU: o.alpha = v.options<opt::LeakyReluOptions>().alpha; break;
        case B::MIRROR_PAD:
            o.mirror_mode = static_cast<std::int32_t>(v.options<opt::MirrorPadOptions>().mode);
            break;
        case B::BATCH_MATMUL: {
            const auto x = v.options<opt::BatchMatMulOptions>();
            o.adj_x = x.adj_x;
            o.adj_y = x.adj_y;
            break;
        }
        case B::GELU: o.approximate = v.options<opt::GeluOptions>().approximate; break;
        default: break;
    }
}

}  // namespace detail

/// The main subgraph as a compiler graph. With constant_storage::borrow its constants point into
/// the model's bytes, which must then outlive the graph.
VNNX_ENTRY graph import_graph(const tflite::model_view& m, constant_storage storage = constant_storage::copy);
#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY graph import_graph(const tflite::model_view& m, constant_storage storage) {
    graph g;
    g.source = std::string(m.source());
    const auto sg = m.subgraph(0);
    g.tensors.reserve(sg.tensor_count());
    for (std::size_t i = 0; i < sg.tensor_count(); ++i) {
        const auto tv = sg.tensor(i);
        tensor t;
        t.name = std::string(tv.name());
        if (t.name.empty()) t.name = "tensor" + std::to_string(i);
        t.type = tv.type();
        t.shape.assign(tv.shape().begin(), tv.shape().end());
        const auto q = tv.quant();
        t.quant.scale.assign(q.scale.begin(), q.scale.end());
        t.quant.zero_point.assign(q.zero_point.begin(), q.zero_point.end());
        t.quant.quantized_dimension = q.quantized_dimension;
        if (tv.is_constant()) {
            const auto d = tv.data();
            t.data = storage == constant_storage::borrow ? constant_bytes::borrow(d)
                                                         : constant_bytes(std::vector<std::byte>(d.begin(), d.end()));
        }
        g.tensors.push_back(std::move(t));
    }
    // Names identify buffers in a VNNX file: make them unique (a set: a model may have very many).
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < g.tensors.size(); ++i)
        if (!seen.insert(g.tensors[i].name).second) {
            g.tensors[i].name += "#" + std::to_string(i);
            seen.insert(g.tensors[i].name);
        }
    for (std::size_t i = 0; i < sg.operator_count(); ++i) {
        const auto v = sg.op(i);
        op o;
        o.code = v.op();
        o.inputs.assign(v.inputs().begin(), v.inputs().end());
        o.outputs.assign(v.outputs().begin(), v.outputs().end());
        o.source_index = static_cast<std::int32_t>(i);
        o.custom_code = std::string(v.custom_code());
        detail::read_options(v, o.options);
        g.ops.push_back(std::move(o));
    }
    g.inputs.assign(sg.inputs().begin(), sg.inputs().end());
    g.outputs.assign(sg.outputs().begin(), sg.outputs().end());
    // An activation with no element, yet other dimensions that would size every tiling walk and
    // buffer (operator intermediates, which are never lowered, may be empty; so may an int32
    // shape vector such as the empty RESHAPE target of a scalar, which shape folding consumes).
    const auto check_not_empty = [&](std::int32_t i) {
        if (i < 0) return;
        const auto& t = g.t(i);
        if (t.is_constant() || (t.shape.size() <= 1 && t.type == tensor_type::INT32) || std::find(t.shape.begin(), t.shape.end(), 0) == t.shape.end()) return;
        std::string dims;
        for (std::size_t d = 0; d < t.shape.size(); ++d) dims += (d ? "x" : "") + std::to_string(t.shape[d]);
        fail(error_kind::unsupported, g.source + ": tensor " + std::to_string(i) + " '" + t.name + "': shape " + dims +
                                          " has no elements (empty activations are not supported)");
    };
    for (const auto& o : g.ops) {
        for (const auto i : o.inputs) check_not_empty(i);
        for (const auto i : o.outputs) check_not_empty(i);
    }
    return g;
}
#endif

}  // namespace vnnx::compiler
