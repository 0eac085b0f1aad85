#pragma once
// FOLD_SHAPES: shape arithmetic on constants is evaluated at compile time (lowering.md §3.2,
// REMOVE_CONSTANTS c, generalised). Exported graphs compute RESHAPE targets at run time from
// SHAPE of an activation, STRIDED_SLICE / GATHER / PACK / CONCATENATION on the int32 result and
// integer ADD / SUB / MUL / DIV; shapes are static here, so each such operator whose operands are
// all known becomes a constant and disappears. Runs right after the import, before the checks, so
// `vnnx compile` and `vnnx info` judge the folded graph.
//
// Only INT32 / INT64 tensors without quantization are folded: quantized arithmetic on constants
// is the LUT pass's business, not shape arithmetic.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "vnnx/ir/graph.hpp"
#include "vnnx/ops/slice.hpp"

namespace vnnx::compiler::passes {

namespace fold_detail {

using B = builtin_operator;
using ints = std::vector<std::int64_t>;

inline bool is_shape_tensor(const tensor& t) {
    return (t.type == tensor_type::INT32 || t.type == tensor_type::INT64) && t.quant.empty();
}

inline std::int64_t product(const std::vector<std::int32_t>& s, std::size_t from, std::size_t to) {
    std::int64_t n = 1;
    for (std::size_t i = from; i < to && i < s.size(); ++i) n *= s[i];
    return n;
}

/// Stores `v` as the constant data of `t` in t's own type.
inline void set_values(tensor& t, const ints& v) {
    std::vector<std::byte> bytes;
    if (t.type == tensor_type::INT32) {
        bytes.resize(v.size() * 4);
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto x = static_cast<std::int32_t>(v[i]);
            std::memcpy(bytes.data() + 4 * i, &x, 4);
        }
    } else {
        bytes.resize(v.size() * 8);
        if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    }
    t.data = std::move(bytes);
}

/// Elements of a strided window of `x` (TFLite order): start + k*stride per axis, k < count.
inline ints gather_window(const ints& x, const std::vector<std::int32_t>& shape, const ops::movement::canonical_slice& s) {
    const std::size_t r = shape.size();
    ints out;
    std::int64_t n = 1;
    for (auto c : s.count) n *= c;
    if (n <= 0) return out;
    std::vector<std::int64_t> k(r, 0);
    for (std::int64_t e = 0; e < n; ++e) {
        std::int64_t at = 0;
        for (std::size_t i = 0; i < r; ++i) at = at * shape[i] + s.start[i] + k[i] * s.stride[i];
        out.push_back(x.at(static_cast<std::size_t>(at)));
        for (std::size_t i = r; i-- > 0;) {
            if (++k[i] < s.count[i]) break;
            k[i] = 0;
        }
    }
    return out;
}

/// Values of TFLite integer arithmetic on two operands of equal size or one scalar.
inline std::optional<ints> arithmetic(B code, const ints& a, const ints& b) {
    if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
    const std::size_t n = std::max(a.size(), b.size());
    ints out(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
        switch (code) {
            case B::ADD: out[i] = x + y; break;
            case B::SUB: out[i] = x - y; break;
            case B::MUL: out[i] = x * y; break;
            case B::MAXIMUM: out[i] = std::max(x, y); break;
            case B::MINIMUM: out[i] = std::min(x, y); break;
            case B::DIV:  // TFLite's integer DIV truncates
                if (y == 0) return std::nullopt;
                out[i] = x / y;
                break;
            case B::FLOOR_DIV:
                if (y == 0) return std::nullopt;
                out[i] = x / y - ((x % y != 0 && ((x < 0) != (y < 0))) ? 1 : 0);
                break;
            default: return std::nullopt;
        }
    }
    return out;
}

/// The values of a constant int32/int64 tensor whose data holds exactly its shape's elements.
inline std::optional<ints> const_ints(const graph& g, std::int32_t t) {
    auto v = ops::movement::const_ints(g, t);
    if (v && static_cast<std::int64_t>(v->size()) != g.t(t).element_count()) return std::nullopt;
    return v;
}

/// The output values of `o`, when it is shape arithmetic whose operands are all known.
inline std::optional<ints> evaluate(const graph& g, const op& o) {
    if (o.kind != op_type::builtin || o.outputs.size() != 1 || o.outputs[0] < 0) return std::nullopt;
    const auto& y = g.t(o.outputs[0]);
    if (!is_shape_tensor(y)) return std::nullopt;
    auto in = [&](std::size_t i) { return ops::movement::input_at(o, i); };
    switch (o.code) {
        case B::SHAPE: {
            if (in(0) < 0) return std::nullopt;
            const auto& x = g.t(in(0));
            ints v(x.shape.begin(), x.shape.end());
            for (auto d : v)
                if (d < 0) return std::nullopt;  // a dynamic dim: nothing to fold
            return v;
        }
        case B::RESHAPE:
        case B::SQUEEZE:
        case B::EXPAND_DIMS:
        case B::CAST: return const_ints(g, in(0));
        case B::PACK:
        case B::CONCATENATION: {
            if (o.inputs.empty()) return std::nullopt;
            const auto yr = static_cast<std::int64_t>(y.rank());
            const std::int64_t axis = o.options.axis < 0 ? o.options.axis + yr : o.options.axis;
            if (axis < 0 || axis >= std::max<std::int64_t>(yr, 1)) return std::nullopt;
            // Every input is `outer` blocks of `inner_k` elements, interleaved block by block.
            const auto outer = product(y.shape, 0, static_cast<std::size_t>(axis));
            std::vector<ints> parts;
            for (auto t : o.inputs) {
                auto v = const_ints(g, t);
                if (!v) return std::nullopt;
                parts.push_back(std::move(*v));
            }
            ints out;
            for (std::int64_t b = 0; b < outer; ++b)
                for (const auto& p : parts) {
                    const auto inner = static_cast<std::int64_t>(p.size()) / std::max<std::int64_t>(outer, 1);
                    for (std::int64_t i = 0; i < inner; ++i) out.push_back(p[static_cast<std::size_t>(b * inner + i)]);
                }
            if (static_cast<std::int64_t>(out.size()) != y.element_count()) return std::nullopt;
            return out;
        }
        case B::SLICE:
        case B::STRIDED_SLICE: {
            const auto x = const_ints(g, in(0));
            if (!x) return std::nullopt;
            const auto s = ops::movement::slice_of(g, o);
            if (!s.error.empty()) return std::nullopt;
            auto out = gather_window(*x, g.t(in(0)).shape, s);
            if (static_cast<std::int64_t>(out.size()) != y.element_count()) return std::nullopt;
            return out;
        }
        case B::GATHER: {
            const auto x = const_ints(g, in(0));
            const auto idx = const_ints(g, in(1));
            if (!x || !idx || o.options.batch_dims != 0) return std::nullopt;
            const auto& xs = g.t(in(0)).shape;
            const auto r = static_cast<std::int64_t>(xs.size());
            const std::int64_t axis = o.options.axis < 0 ? o.options.axis + r : o.options.axis;
            if (axis < 0 || axis >= r) return std::nullopt;
            const auto a = static_cast<std::size_t>(axis);
            const auto outer = product(xs, 0, a), inner = product(xs, a + 1, xs.size());
            ints out;
            for (std::int64_t b = 0; b < outer; ++b)
                for (auto k : *idx) {
                    if (k < 0 || k >= xs[a]) return std::nullopt;
                    for (std::int64_t i = 0; i < inner; ++i)
                        out.push_back((*x)[static_cast<std::size_t>((b * xs[a] + k) * inner + i)]);
                }
            if (static_cast<std::int64_t>(out.size()) != y.element_count()) return std::nullopt;
            return out;
        }
        case B::ADD:
        case B::SUB:
        case B::MUL:
        case B::DIV:
        case B::FLOOR_DIV:
        case B::MAXIMUM:
        case B::MINIMUM: {
            const auto a = const_ints(g, in(0));
            const auto b = const_ints(g, in(1));
            if (!a || !b || o.options.fused != activation::NONE) return std::nullopt;
            auto out = arithmetic(o.code, *a, *b);
            if (!out || static_cast<std::int64_t>(out->size()) != y.element_count()) return std::nullopt;
            return out;
        }
        default: return std::nullopt;
    }
}

}  // namespace fold_detail

/// Folds every operator of shape arithmetic whose operands are known; returns how many. Graph
/// outputs are never folded (the model would lose an output tensor's producer).
inline std::size_t fold_shapes(graph& g) {
    std::size_t folded = 0;
    std::vector<bool> gone(g.ops.size(), false);
    for (bool again = true; again;) {
        again = false;
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            if (gone[i]) continue;
            const auto& o = g.ops[i];
            if (o.outputs.size() != 1 || o.outputs[0] < 0) continue;
            if (std::find(g.outputs.begin(), g.outputs.end(), o.outputs[0]) != g.outputs.end()) continue;
            auto v = fold_detail::evaluate(g, o);
            if (!v) continue;
            fold_detail::set_values(g.t(o.outputs[0]), *v);
            gone[i] = true;
            ++folded;
            again = true;
        }
    }
    if (folded == 0) return 0;
    std::vector<op> kept;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (!gone[i]) kept.push_back(std::move(g.ops[i]));
    g.ops = std::move(kept);
    return folded;
}

}  // namespace vnnx::compiler::passes
