#pragma once
// Data-movement nodes, computed from their records only (lowering.md §7.2). The node's
// tensors are its inputs (num_inputs) then its outputs (num_outputs), dense channels-first.
//   CONCATENATION (2)   inputs joined on channels-first axis ConcatOptions.axis (non-negative).
//   SPLIT (49), SPLIT_V (102)  the input cut on channels-first axis SplitOptions.axis
//                       (negative form) into the sizes of the `splits` array.
//   PACK (83)           inputs stacked on the TFLite axis whose channels-first form (for the
//                       output rank dims + 1) is PackOptions.axis.
//   TILE (69)           the input repeated TileOptions.tile = [n, c, h, w] times per
//                       channels-first axis.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/short_rows.hpp"
#include "vnnx/sim/layers/movement_common.hpp"
#include "vnnx/sim/thread_pool.hpp"

namespace vnnx::sim {

namespace movement {

/// outer = product of dims before `axis`, inner = product after it.
inline void around(const tensor_ref& t, std::size_t axis, std::int64_t& outer, std::int64_t& inner) {
    outer = inner = 1;
    for (std::size_t i = 0; i < axis; ++i) outer *= t.shape[i];
    for (std::size_t i = axis + 1; i < t.rank(); ++i) inner *= t.shape[i];
}

/// One contiguous copy of a concatenation or split.
struct piece {
    std::byte* dst;
    const std::byte* src;
    std::size_t bytes;
};

/// Carries out the copies in order, or over the pool in slices of at most 64 KiB when the
/// sources and destinations are `disjoint` (nothing then depends on the order) and there is
/// enough to share in pieces that are not tiny: YOLO's concatenations and C2f splits move
/// megabytes between convolutions.
inline void copy_pieces(const std::vector<piece>& pieces, bool disjoint, thread_pool* pool) {
    std::size_t total = 0;
    for (const auto& p : pieces) total += p.bytes;
    if (!pool || !disjoint || total < (std::size_t{1} << 18) || total / pieces.size() < 4096) {
        for (const auto& p : pieces) std::memmove(p.dst, p.src, p.bytes);
        return;
    }
    constexpr std::size_t slice = std::size_t{1} << 16;
    std::vector<piece> work;
    for (const auto& p : pieces)
        for (std::size_t at = 0; at < p.bytes; at += slice)
            work.push_back({p.dst + at, p.src + at, std::min(slice, p.bytes - at)});
    pool->parallel_for(work.size(), [&](std::size_t i) { std::memcpy(work[i].dst, work[i].src, work[i].bytes); });
}

/// The dims of `a` and `b` agree everywhere except on `axis`.
inline bool same_off_axis(const tensor_ref& a, const tensor_ref& b, std::size_t axis) {
    if (a.rank() != b.rank()) return false;
    for (std::size_t i = 0; i < a.rank(); ++i)
        if (i != axis && a.shape[i] != b.shape[i]) return false;
    return true;
}

}  // namespace movement

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::CONCATENATION)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        const auto n_in = static_cast<std::size_t>(c.rec.num_inputs);
        if (c.rec.num_outputs != 1 || n_in < 1 || c.tensors.size() != n_in + 1)
            c.reject("expects num_inputs inputs and one output");
        const tensor_ref& out = c.tensors[n_in];
        const auto axis = c.rec.options.get<format::node_options::ConcatOptions>().axis;
        if (axis < 0 || static_cast<std::size_t>(axis) >= out.rank())
            c.reject("axis " + std::to_string(axis) + " is outside the output rank " + std::to_string(out.rank()));
        const auto ax = static_cast<std::size_t>(axis);
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < n_in; ++i) {
            const tensor_ref& x = c.tensors[i];
            if (x.elem != out.elem || x.type != out.type) c.reject("input " + std::to_string(i) + " calc type differs from the output");
            if (!movement::same_off_axis(x, out, ax)) c.reject("input " + std::to_string(i) + " shape does not match the output off the axis");
            sum += x.shape[ax];
        }
        if (sum != out.shape[ax]) c.reject("input sizes along the axis do not add up to the output's");
        std::int64_t outer, inner;
        movement::around(out, ax, outer, inner);
        bool disjoint = true;
        for (std::size_t i = 0; i < n_in; ++i) disjoint = disjoint && !bytes_overlap(c.tensors[i], out);
        if (disjoint && outer > 1) {
            // Row by row, input by input: no list of pieces, and rows shared over the pool.
            const std::size_t row = static_cast<std::size_t>(out.shape[ax] * inner) * out.elem;
            auto rows = [&](std::size_t r0, std::size_t r1) {
                std::size_t at = 0;
                for (std::size_t i = 0; i < n_in; ++i) {
                    const tensor_ref& x = c.tensors[i];
                    const std::size_t chunk = static_cast<std::size_t>(x.shape[ax] * inner) * x.elem;
                    kernels::short_rows(c.ex.isa, reinterpret_cast<std::uint8_t*>(out.data + r0 * row + at), static_cast<std::ptrdiff_t>(row),
                                        reinterpret_cast<const std::uint8_t*>(x.data + r0 * chunk), static_cast<std::ptrdiff_t>(chunk),
                                        chunk, r1 - r0);
                    at += chunk;
                }
            };
            const auto n = static_cast<std::size_t>(outer);
            if (c.ex.pool && c.ex.pool->size() > 1 && n * row >= (std::size_t{1} << 18)) {
                const std::size_t parts = std::min<std::size_t>(n, 8 * std::size_t{c.ex.pool->size()});
                c.ex.pool->parallel_for(parts, [&](std::size_t p) { rows(n * p / parts, n * (p + 1) / parts); });
            } else {
                rows(0, n);
            }
            return;
        }
        std::size_t pos = 0;
        std::vector<movement::piece> pieces;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < n_in; ++i) {
                const tensor_ref& x = c.tensors[i];
                const std::size_t chunk = static_cast<std::size_t>(x.shape[ax] * inner) * x.elem;
                pieces.push_back({out.data + pos, x.data + static_cast<std::size_t>(o) * chunk, chunk});
                pos += chunk;
            }
        movement::copy_pieces(pieces, disjoint, c.ex.pool);
    }
};

namespace movement {

struct split_exec {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        const auto n_out = static_cast<std::size_t>(c.rec.num_outputs);
        if (c.rec.num_inputs != 1 || n_out < 1 || c.tensors.size() != n_out + 1)
            c.reject("expects one input and num_outputs outputs");
        const tensor_ref& in = c.tensors[0];
        const auto so = c.rec.options.get<format::node_options::SplitOptions>();
        const auto r = static_cast<std::int32_t>(in.rank());
        if (so.axis < -r || so.axis >= 0) c.reject("axis " + std::to_string(so.axis) + " is outside the input rank " + std::to_string(r));
        const auto ax = static_cast<std::size_t>(so.axis + r);
        const auto sizes = c.int32s(so.splits, n_out, "splits");
        std::int64_t sum = 0;
        for (std::size_t k = 0; k < n_out; ++k) {
            const tensor_ref& y = c.tensors[1 + k];
            if (y.elem != in.elem || y.type != in.type) c.reject("output " + std::to_string(k) + " calc type differs from the input");
            if (!same_off_axis(y, in, ax) || y.shape[ax] != sizes[k])
                c.reject("output " + std::to_string(k) + " shape does not match split size " + std::to_string(sizes[k]));
            if (sizes[k] > so.max_split) c.reject("split size " + std::to_string(sizes[k]) + " exceeds max_split");
            sum += sizes[k];
        }
        if (sum != in.shape[ax]) c.reject("split sizes do not add up to the input's axis");
        std::int64_t outer, inner;
        around(in, ax, outer, inner);
        std::size_t pos = 0;
        std::vector<piece> pieces;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::size_t k = 0; k < n_out; ++k) {
                const tensor_ref& y = c.tensors[1 + k];
                const std::size_t chunk = static_cast<std::size_t>(y.shape[ax] * inner) * y.elem;
                pieces.push_back({y.data + static_cast<std::size_t>(o) * chunk, in.data + pos, chunk});
                pos += chunk;
            }
        bool disjoint = true;
        for (std::size_t k = 0; k < n_out; ++k) {
            disjoint = disjoint && !bytes_overlap(c.tensors[1 + k], in);
            for (std::size_t j = 0; j < k; ++j) disjoint = disjoint && !bytes_overlap(c.tensors[1 + k], c.tensors[1 + j]);
        }
        copy_pieces(pieces, disjoint, c.ex.pool);
    }
};

}  // namespace movement

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::SPLIT)> : movement::split_exec {};
template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::SPLIT_V)> : movement::split_exec {};

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::PACK)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        const auto po = c.rec.options.get<format::node_options::PackOptions>();
        const auto n_in = static_cast<std::size_t>(c.rec.num_inputs);
        if (c.rec.num_outputs != 1 || n_in < 1 || c.tensors.size() != n_in + 1 || po.count != c.rec.num_inputs)
            c.reject("expects count inputs and one output");
        const tensor_ref& out = c.tensors[n_in];
        const auto orank = static_cast<std::int32_t>(out.rank());
        if (po.dims + 1 != orank) c.reject("PackOptions.dims " + std::to_string(po.dims) + " is not the output rank - 1");
        const std::int32_t a = movement::tflite_axis_of_cf(po.axis + orank, orank);
        if (a < 0) c.reject("axis " + std::to_string(po.axis) + " is outside the output rank");
        const auto dst = movement::tflite_view(out);
        if (dst.dims[static_cast<std::size_t>(a)] != po.count) c.reject("the output's packed axis does not hold count entries");
        for (std::size_t k = 0; k < n_in; ++k) {
            const tensor_ref& x = c.tensors[k];
            if (x.elem != out.elem || x.type != out.type) c.reject("input " + std::to_string(k) + " calc type differs from the output");
            const auto part = movement::fix_axis(dst, static_cast<std::size_t>(a), static_cast<std::int64_t>(k));
            if (static_cast<std::uint64_t>(part.count()) != x.count || static_cast<std::int32_t>(x.rank()) != po.dims)
                c.reject("input " + std::to_string(k) + " does not fill one entry of the packed axis");
            movement::copy(movement::tflite_view(x), part, nullptr, c.ex.isa);
        }
    }
};

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::TILE)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        if (c.rec.num_inputs != 1 || c.rec.num_outputs != 1 || c.tensors.size() != 2) c.reject("expects one input and one output");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.elem != out.elem || in.type != out.type) c.reject("input and output calc types differ");
        const auto tile = c.rec.options.get<format::node_options::TileOptions>().tile;
        if (in.rank() > 4 || out.rank() != in.rank()) c.reject("input rank must be 1..4 and equal the output rank");
        std::array<std::int64_t, 4> d{1, 1, 1, 1}, od{};
        for (std::size_t i = 0; i < in.rank(); ++i) d[4 - in.rank() + i] = in.shape[i];
        for (std::size_t j = 0; j < 4; ++j) {
            if (tile[j] < 1) c.reject("tile entry " + std::to_string(j) + " must be at least 1");
            od[j] = d[j] * tile[j];
        }
        for (std::size_t i = 0; i < out.rank(); ++i)
            if (out.shape[i] != od[4 - out.rank() + i]) c.reject("output shape is not the input tiled by TileOptions.tile");
        for (std::size_t j = 0; j + out.rank() < 4; ++j)
            if (od[j] != 1) c.reject("TileOptions.tile repeats an axis the tensors do not have");
        const std::size_t es = in.elem;
        const std::size_t row = static_cast<std::size_t>(d[3]) * es;
        std::size_t pos = 0;
        for (std::int64_t n = 0; n < od[0]; ++n)
            for (std::int64_t ch = 0; ch < od[1]; ++ch)
                for (std::int64_t y = 0; y < od[2]; ++y) {
                    const std::int64_t src_row = ((n % d[0]) * d[1] + ch % d[1]) * d[2] + y % d[2];
                    for (std::int64_t t = 0; t < tile[3]; ++t) {
                        std::memcpy(out.data + pos, in.data + static_cast<std::size_t>(src_row) * row, row);
                        pos += row;
                    }
                }
    }
};

}  // namespace vnnx::sim
