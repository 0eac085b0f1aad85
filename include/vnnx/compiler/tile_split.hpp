#pragma once
// Describes a split to the tiler (ir/tiling.hpp): each operator as its trait's model (`tile`),
// kind and parameters (lowering.md §10). Operators the tiler has no exact rule for are modelled
// by their closest kind (an element-wise copy), which keeps every tile inside the scratchpad.
#include <algorithm>
#include <cstdint>

#include "vnnx/ir/graph.hpp"
#include "vnnx/ir/split.hpp"
#include "vnnx/ir/tiling.hpp"
#include "vnnx/ops/registry.hpp"

namespace vnnx::compiler {

namespace detail {

inline int bytes_of(tensor_type t) {
    const auto s = tflite::element_size(t);
    return s == 0 ? 1 : static_cast<int>(s);
}

inline layer tile_layer_of(const graph& g, const op& o, bool first) {
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
    if (const auto f = ops::entry_for(o).tile; f && f(g, o, in, first, L)) return L;
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

}  // namespace vnnx::compiler
