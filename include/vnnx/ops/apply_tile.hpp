#pragma once
// Writes the tile the tiler chose (compiler/tile_split.hpp, ir/tiling.hpp) into a node record
// and the temporaries' sizes of its element-wise layers (lowering.md §10.1, §10.5).
#include <cstdint>
#include <string>

#include "vnnx/ir/graph.hpp"
#include "vnnx/ir/program.hpp"
#include "vnnx/ir/tiling.hpp"
#include "vnnx/ops/lowering.hpp"

namespace vnnx::compiler {

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
