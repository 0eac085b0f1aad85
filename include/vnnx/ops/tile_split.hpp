#pragma once
// Describes a split to the tiler (ir/tiling.hpp) and writes the chosen tile into the
// node record (lowering.md §10.1). Operators the tiler has no exact rule for are modelled by
// their closest kind (an element-wise copy), which keeps every tile inside the scratchpad.
#include <cstdint>
#include <string>

#include "vnnx/ir/graph.hpp"
#include "vnnx/ir/program.hpp"
#include "vnnx/ir/split.hpp"
#include "vnnx/ir/tiling.hpp"
#include "vnnx/ops/lowering.hpp"

namespace vnnx::compiler {

namespace detail {

inline int bytes_of(tensor_type t) {
    const auto s = tflite::element_size(t);
    return s == 0 ? 1 : static_cast<int>(s);
}

inline layer tile_layer_of(const graph& g, const op& o, bool first) {
    using B = builtin_operator;
    layer L;
    std::int32_t in = -1;
    for (auto t : o.inputs)
        if (t >= 0 && !g.t(t).is_constant()) {
            in = t;
            break;
        }
    if (in < 0 && !o.inputs.empty()) in = o.inputs[0];
    if (in < 0 || o.outputs.empty() || o.outputs[0] < 0)
        fail(error_kind::bad_input, g.source + ": " + describe(o) + ": needs an input and an output tensor to be tiled");
    const auto geo = ops::geometry_of(g.t(in).shape);
    L.channels = std::max(1, geo.channels);
    L.m = std::max(1, geo.m);
    L.n = std::max(1, geo.n);
    L.in_bytes = bytes_of(g.t(in).type);
    L.out_bytes = bytes_of(g.t(o.outputs.at(0)).type);
    if (o.kind == op_type::lut) {
        L.kind = op_kind::lut;
        return L;
    }
    switch (o.code) {
        case B::CONV_2D:
        case B::DEPTHWISE_CONV_2D: {
            if (!first) break;
            const auto& w = g.t(o.inputs.at(1)).shape;  // [K, kh, kw, C] or [1, kh, kw, C]
            L.kind = op_kind::conv;
            auto& c = L.conv;
            c.depthwise = o.code == B::DEPTHWISE_CONV_2D && L.channels > 1;
            c.channels = L.channels;
            // A depthwise filter [1, kh, kw, M] over one channel is an ordinary conv with M kernels.
            c.kernels = c.depthwise ? L.channels : (o.code == B::DEPTHWISE_CONV_2D ? w[3] : w[0]);
            c.kh = w[1];
            c.kw = w[2];
            c.sh = o.options.stride_h;
            c.sw = o.options.stride_w;
            c.dh = o.options.dilation_h;
            c.dw = o.options.dilation_w;
            if (c.depthwise && c.dh > 1 && c.kh > 1) {  // height dilation is materialised in the filter
                c.kh = (c.kh - 1) * c.dh + 1;
                c.dh = 1;
            }
            return L;
        }
        case B::ADD: case B::SUB: case B::MUL: case B::DIV: case B::SQUARED_DIFFERENCE: case B::MAXIMUM:
        case B::MINIMUM: case B::GREATER: case B::GREATER_EQUAL: case B::LESS: case B::LESS_EQUAL: case B::EQUAL:
        case B::NOT_EQUAL:
            L.kind = op_kind::eltwise;
            return L;
        case B::PAD:
        case B::PADV2: {
            L.kind = op_kind::pad;
            if (o.inputs.size() > 1 && g.t(o.inputs[1]).is_constant()) {
                const auto p = g.t(o.inputs[1]).values<std::int32_t>();
                const auto r = p.size() / 2;
                if (r >= 3) {  // [.., H, W, C]
                    L.pads = {p[2 * (r - 1)], p[2 * (r - 3)], p[2 * (r - 2)], p[2 * (r - 1) + 1], p[2 * (r - 3) + 1],
                              p[2 * (r - 2) + 1]};
                }
            }
            return L;
        }
        case B::DILATE: {
            // Modelled as a nearest resize by the dilations: its output, (in - 1)·d + 1, never exceeds in·d.
            const auto& d = o.inputs.size() > 1 && o.inputs[1] >= 0 ? g.t(o.inputs[1]) : g.t(in);
            if (!d.is_constant() || d.type != tensor_type::INT32 || d.shape.size() != 1 || d.shape[0] < 3) break;
            const auto v = d.values<std::int32_t>();
            L.kind = op_kind::resize_nearest;
            L.resize_h = std::max(1, v[v.size() - 3]);
            L.resize_w = std::max(1, v[v.size() - 2]);
            return L;
        }
        case B::MAX_POOL_2D:
        case B::AVERAGE_POOL_2D:
            L.kind = o.code == B::MAX_POOL_2D ? op_kind::max_pool : op_kind::average_pool;
            L.pool_kh = o.options.filter_h;
            L.pool_kw = o.options.filter_w;
            L.pool_sh = o.options.stride_h;
            L.pool_sw = o.options.stride_w;
            return L;
        case B::SOFTMAX:
        case B::LOG_SOFTMAX:       // like SOFTMAX, these need their whole axis in the tile
        case B::L2_NORMALIZATION:
            L.kind = op_kind::softmax;
            L.softmax_axis = g.t(in).shape.size() >= 3 ? -3 : -1;
            return L;
        case B::MEAN:
        case B::SUM:
            L.kind = op_kind::mean_sum;
            L.reduce_rows = L.reduce_cols = true;
            return L;
        case B::SPLIT:
        case B::SPLIT_V:
            L.kind = op_kind::split;
            return L;
        default: break;
    }
    L.kind = first ? op_kind::identity : op_kind::copy;
    return L;
}

}  // namespace detail

/// The tile of a split, or `fits == false` with the reason.
inline tiling_result tile_split(const graph& g, const split& s, const preset_info& p) {
    tile_node n;
    n.op = detail::tile_layer_of(g, g.ops.at(static_cast<std::size_t>(s.front())), true);
    for (std::size_t i = 1; i < s.size(); ++i)
        n.subnodes.push_back(detail::tile_layer_of(g, g.ops.at(static_cast<std::size_t>(s[i])), false));
    auto r = tile_node_for(n, p);
    r.ops.assign(s.begin(), s.end());
    return r;
}

/// Writes the tile walk into the node record (lowering.md §10.1).
inline void apply_tile(node_build& nd, const tiling_result& t) {
    auto& r = nd.rec;
    auto i32 = [](long long v) { return static_cast<std::int32_t>(v); };
    r.maps = i32(t.maps);
    r.rows = i32(t.rows);
    r.cols = i32(t.cols);
    r.rows_0 = i32(t.rows_0);
    r.rows_final = i32(t.rows_final);
    r.cols_0 = i32(t.cols_0);
    r.cols_final = i32(t.cols_final);
    r.row_start = i32(t.row_start);
    r.col_start = i32(t.col_start);
    r.row_inc0 = i32(t.row_inc0);
    r.row_inc = i32(t.row_inc);
    r.col_inc0 = i32(t.col_inc0);
    r.col_inc = i32(t.col_inc);
    r.row_last = i32(t.row_last);
    r.col_last = i32(t.col_last);
    r.orow_last = i32(t.orow_last);
    r.ocol_last = i32(t.ocol_last);
    r.scratchpad_bytes = i32(t.scratchpad_bytes);
    // The int16 paths of ELTWISE and broadcast layers size their temporaries by the tile they
    // receive (`isize`, §10.5): what the SDK's allocator writes for the tile it chose.
    auto tile_of = [&](std::int32_t op) {
        for (std::size_t i = 0; i < t.ops.size() && i < t.op_tiles.size(); ++i)
            if (t.ops[i] == op) return t.op_tiles[i];
        return t.chosen;
    };
    const auto eltwise = static_cast<std::int32_t>(format::vnnx_operator::ELTWISE);
    if (r.type == eltwise) {
        auto u = nd.template get<format::node_options::eltwise8>();
        const auto& c = t.chosen;
        u.isize = u.optimized == 1 ? i32(c.batch * c.maps * c.rows * c.cols) : 0;
        nd.set(u);
    }
    for (auto& l : nd.layers) {
        const auto c = tile_of(l.source_op);
        if (l.rec.type == eltwise) {
            auto u = l.template get<format::layer_options::eltwise8>();
            u.isize = u.optimized == 1 ? i32(c.batch * c.maps * c.rows * c.cols) : 0;
            l.set(u);
        } else if (l.rec.type == static_cast<std::int32_t>(builtin_operator::ADD) ||
                   l.rec.type == static_cast<std::int32_t>(builtin_operator::SUB) ||
                   l.rec.type == static_cast<std::int32_t>(builtin_operator::SQUARED_DIFFERENCE)) {
            // broadcast8 layers (ops/eltwise.hpp); the SDK leaves MUL's at 0
            auto u = l.template get<format::layer_options::broadcast8>();
            u.isize = u.optimized == 1 ? i32(c.rows * c.cols) : 0;
            l.set(u);
        }
    }
}

}  // namespace vnnx::compiler
