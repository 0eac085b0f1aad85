#pragma once
// SLICE (65), STRIDED_SLICE (45) → SliceOptions; TRANSPOSE (39) → TransposeOptions;
// GATHER (36) → GatherOptions; CAST (53) (lowering.md §7.4.3, §7.4.4, §7.7.3, §7.7.4).
// Slices are canonicalised here to explicit begin / end / stride per channels-first axis
// (masks, negative indices, shrink_axis and negative strides resolved with TFLite's rules),
// so the simulator never needs the TFLite options.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

namespace movement {

/// A slice in TFLite axis order: element k of axis i is start[i] + k·stride[i], k < count[i];
/// `end` is the exclusive bound stored in SliceOptions (-1 allowed for negative strides).
struct canonical_slice {
    std::vector<std::int64_t> start, end, stride, count;
    std::string error;  // the rule broken, empty when valid
};

inline canonical_slice slice_of(const graph& g, const compiler::op& o) {
    canonical_slice s;
    const auto& x = g.t(o.inputs.at(0));
    const auto r = x.rank();
    s.start.assign(r, 0);
    s.stride.assign(r, 1);
    s.end.resize(r);
    s.count.resize(r);
    for (std::size_t i = 0; i < r; ++i) s.end[i] = s.count[i] = x.shape[i];
    const auto begin = const_ints(g, input_at(o, 1));
    if (!begin) {
        s.error = "begin must be a constant int32/int64 tensor";
        return s;
    }
    if (o.code == builtin_operator::SLICE) {
        const auto size = const_ints(g, input_at(o, 2));
        if (!size) {
            s.error = "size must be a constant int32/int64 tensor";
            return s;
        }
        if (begin->size() != r || size->size() != r) {
            s.error = "begin and size need one entry per input axis";
            return s;
        }
        for (std::size_t i = 0; i < r; ++i) {
            const std::int64_t dim = x.shape[i], b = (*begin)[i];
            const std::int64_t n = (*size)[i] == -1 ? dim - b : (*size)[i];
            if (b < 0 || n < 0 || b + n > dim) {
                s.error = "axis " + std::to_string(i) + ": begin " + std::to_string(b) + " size " + std::to_string((*size)[i]) +
                          " leave the input dim " + std::to_string(dim);
                return s;
            }
            s.start[i] = b;
            s.end[i] = b + n;
            s.count[i] = n;
        }
        return s;
    }
    // STRIDED_SLICE with TFLite's rules (strided_slice.cc / StartForAxis, StopForAxis).
    const auto end = const_ints(g, input_at(o, 2));
    const auto strides = const_ints(g, input_at(o, 3));
    if (!end || !strides) {
        s.error = "end and strides must be constant int32/int64 tensors";
        return s;
    }
    const auto& opt = o.options;
    if (opt.ellipsis_mask != 0 || opt.new_axis_mask != 0) {
        s.error = "ellipsis_mask and new_axis_mask are not supported";
        return s;
    }
    if (begin->size() > r || end->size() != begin->size() || strides->size() != begin->size()) {
        s.error = "begin, end and strides need the same length, at most the input rank";
        return s;
    }
    for (std::size_t i = 0; i < begin->size(); ++i) {
        const std::int64_t dim = x.shape[i], st = (*strides)[i];
        if (st == 0) {
            s.error = "axis " + std::to_string(i) + ": stride 0";
            return s;
        }
        const bool shrink = (opt.shrink_axis_mask >> i) & 1;
        std::int64_t b = (*begin)[i];
        if (((opt.begin_mask >> i) & 1) && !shrink) {
            b = st > 0 ? 0 : dim - 1;
        } else {
            if (b < 0) b += dim;
            b = st > 0 ? std::clamp<std::int64_t>(b, 0, dim) : std::clamp<std::int64_t>(b, -1, dim - 1);
        }
        std::int64_t e;
        if (shrink) {
            e = b + 1;
        } else if ((opt.end_mask >> i) & 1) {
            e = st > 0 ? dim : -1;
        } else {
            e = (*end)[i];
            if (opt.offset) e += (*begin)[i];
            if (e < 0) e += dim;
            e = st > 0 ? std::clamp<std::int64_t>(e, 0, dim) : std::clamp<std::int64_t>(e, -1, dim - 1);
        }
        if (shrink && (b < 0 || b >= dim)) {
            s.error = "axis " + std::to_string(i) + ": shrunk index out of range";
            return s;
        }
        const std::int64_t step = shrink ? 1 : st;
        const std::int64_t span = step > 0 ? e - b : b - e;
        const std::int64_t as = step > 0 ? step : -step;
        s.start[i] = b;
        s.end[i] = e;
        s.stride[i] = step;
        s.count[i] = span <= 0 ? 0 : (span + as - 1) / as;
    }
    return s;
}

/// SliceOptions from a canonical slice: channels-first order, left-padded to 4 axes. Input
/// ranks above 4 are accepted when the extra leading dims are 1.
inline std::string slice_options(const std::vector<std::int32_t>& in_shape, const canonical_slice& s,
                                 format::layer_options::SliceOptions& out) {
    const auto r = in_shape.size();
    auto cf = [&](const std::vector<std::int64_t>& v) {
        if (v.size() < 3) return v;
        std::vector<std::int64_t> o(v.begin(), v.end() - 3);
        o.push_back(v.back());
        o.push_back(v[v.size() - 3]);
        o.push_back(v[v.size() - 2]);
        return o;
    };
    const auto b = cf(s.start), e = cf(s.end), st = cf(s.stride);
    const auto dims = channels_first(in_shape);
    for (std::size_t i = 0; i + 4 < r; ++i)
        if (dims[i] != 1)
            return "input rank " + std::to_string(r) + " with a leading dim " + std::to_string(dims[i]) +
                   " != 1: SliceOptions holds 4 axes";
    for (std::size_t j = 0; j < 4; ++j) {
        // Axis j of the 4 stored is channels-first axis r - 4 + j (absent axes: the full size-1 range).
        const auto k = static_cast<std::int64_t>(r) - 4 + static_cast<std::int64_t>(j);
        if (k < 0) {
            out.begin[j] = 0;
            out.end[j] = 1;
            out.stride[j] = 1;
            continue;
        }
        const auto u = static_cast<std::size_t>(k);
        out.begin[j] = static_cast<std::int32_t>(b[u]);
        out.end[j] = static_cast<std::int32_t>(e[u]);
        out.stride[j] = static_cast<std::int32_t>(st[u]);
    }
    return {};
}

template <builtin_operator Code>
struct slice_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        Code == builtin_operator::SLICE ? "slice with constant begin/size"
                                        : "strided slice: masks, negative indices and strides, shrink_axis";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    using member = format::layer_options::SliceOptions;
    static constexpr std::string_view notes =
        Code == builtin_operator::STRIDED_SLICE
            ? "masks, negative indices and strides, shrink_axis are honoured (the SDK ignores masks, rejects negatives)"
            : "";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs a data input and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        const auto s = slice_of(g, o);
        if (!s.error.empty()) return s.error;
        std::int64_t n = 1;
        for (auto c : s.count) n *= c;
        const auto& y = g.t(o.outputs[0]);
        if (n == 0) return "the slice is empty";
        if (n != y.element_count() || y.type != g.t(o.inputs[0]).type)
            return "output " + shape_text(y.shape) + " does not match the slice (" + std::to_string(n) + " elements)";
        format::layer_options::SliceOptions so{};
        return slice_options(g.t(o.inputs[0]).shape, s, so);
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        format::layer_options::SliceOptions so{};
        if (auto r = slice_options(c.g.t(o.inputs[0]).shape, slice_of(c.g, o), so); !r.empty()) c.reject(o, r);
        l.set(so);
    }
};

/// The TransposeOptions.permutation of a TFLite permutation, or nullopt.
/// Rank >= 3 with the leading axes in place: lowering.md §7.4.4. Other permutations (rank 2,
/// moves of leading axes) are accepted when, on the channels-first data, they equal one of the
/// six permutations of the last three axes: first compared as strided walks (axis by axis),
/// and only when no walk matches, element by element (what decides).
inline std::optional<std::array<std::int32_t, 3>> transpose_permutation(const std::vector<std::int32_t>& in_tfl,
                                                                        const std::vector<std::int32_t>& perm) {
    const auto r = static_cast<std::int32_t>(perm.size());
    const auto in_cf = channels_first(in_tfl);
    std::vector<std::array<std::int32_t, 3>> candidates;
    if (r >= 3) {
        bool leading_fixed = true;
        for (std::int32_t i = 0; i + 3 < r; ++i) leading_fixed &= perm[static_cast<std::size_t>(i)] == i;
        if (leading_fixed) {
            std::array<std::int32_t, 3> q{};
            for (std::size_t i = 0; i < 3; ++i) q[i] = perm[static_cast<std::size_t>(r - 3) + i] - (r - 3);
            candidates.push_back({(q[2] + 1) % 3, (q[0] + 1) % 3, (q[1] + 1) % 3});
        }
    }
    std::array<std::int32_t, 3> p{0, 1, 2};
    do candidates.push_back(p);
    while (std::next_permutation(p.begin(), p.end()));
    const auto want_walk = transpose_walk(in_tfl, perm).canonical();
    for (const auto& c : candidates)
        if (cf_permutation_walk(in_cf, c).canonical() == want_walk) return c;
    const auto want = transpose_element_map(in_tfl, perm);
    for (const auto& c : candidates)
        if (cf_permutation_element_map(in_cf, c) == want) return c;
    return std::nullopt;
}

}  // namespace movement

template <>
struct op<builtin_operator::SLICE> : movement::slice_trait<builtin_operator::SLICE> {};
template <>
struct op<builtin_operator::STRIDED_SLICE> : movement::slice_trait<builtin_operator::STRIDED_SLICE> {
    using tflite_options = tflite::opt::StridedSliceOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.begin_mask = x.begin_mask;
        o.end_mask = x.end_mask;
        o.ellipsis_mask = x.ellipsis_mask;
        o.new_axis_mask = x.new_axis_mask;
        o.shrink_axis_mask = x.shrink_axis_mask;
        o.offset = x.offset;
    }
};

template <>
struct op<builtin_operator::TRANSPOSE> {
    static constexpr builtin_operator code = builtin_operator::TRANSPOSE;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary = "transpose expressible as a channels-first permutation of the last three axes";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::TRANSPOSE);
    using member = format::layer_options::TransposeOptions;
    static constexpr std::string_view axes = "a permutation of the last three axes; leading axes stay";

    static std::optional<std::vector<std::int32_t>> perm_of(const graph& g, const compiler::op& o) {
        const auto v = movement::const_ints(g, movement::input_at(o, 1));
        if (!v) return std::nullopt;
        const auto r = static_cast<std::int64_t>(g.t(o.inputs[0]).rank());
        if (static_cast<std::int64_t>(v->size()) != r) return std::nullopt;
        std::vector<std::int32_t> p;
        std::vector<bool> seen(v->size(), false);
        for (auto a : *v) {
            const auto n = movement::normalize_axis(a, r);
            if (n < 0 || seen[static_cast<std::size_t>(n)]) return std::nullopt;
            seen[static_cast<std::size_t>(n)] = true;
            p.push_back(n);
        }
        return p;
    }

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, a permutation and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        const auto p = perm_of(g, o);
        if (!p) return "the permutation must be a constant holding each input axis once";
        const auto& in = g.t(o.inputs[0]);
        std::vector<std::int32_t> expect;
        for (auto a : *p) expect.push_back(in.shape[static_cast<std::size_t>(a)]);
        if (expect != g.t(o.outputs[0]).shape || g.t(o.outputs[0]).type != in.type)
            return "output shape or type does not match the permutation";
        if (!transpose_permutation(in.shape, *p)) {
            std::string ps = "[";
            for (std::size_t i = 0; i < p->size(); ++i) ps += (i ? "," : "") + std::to_string((*p)[i]);
            return "permutation " + ps + "] of " + shape_text(in.shape) +
                   " is not a permutation of the last three channels-first axes (TransposeOptions holds 3)";
        }
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto p = movement::transpose_permutation(c.g.t(o.inputs[0]).shape, *perm_of(c.g, o));
        if (!p) c.reject(o, "the permutation cannot be expressed");
        format::layer_options::TransposeOptions t{};
        t.permutation = *p;
        t.out_maps_at_once = 1;
        t.out_rows_at_once = 1;
        l.set(t);
    }
};

template <>
struct op<builtin_operator::GATHER> {
    static constexpr builtin_operator code = builtin_operator::GATHER;
    static constexpr std::string_view summary = "gather with constant indices (batch_dims 0)";
    static constexpr auto dtypes = movement::any_int_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::GATHER);
    using member = format::layer_options::GatherOptions;
    using tflite_options = tflite::opt::GatherOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.axis = x.axis;
        o.batch_dims = x.batch_dims;
    }
    static constexpr std::string_view axes = "any one axis of the params";
    static constexpr std::string_view notes = "the input is always the layer's first tensor (the SDK derives it from tensor numbering)";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs params, indices and one output";
        if (g.t(o.inputs[0]).is_constant()) return "params is a constant; only activation params are supported";
        if (auto r = check_static(g, o.inputs[0], "params"); !r.empty()) return r;
        if (o.options.batch_dims != 0) return "batch_dims " + std::to_string(o.options.batch_dims) + " is not supported (only 0)";
        const auto idx = const_ints(g, o.inputs[1]);
        if (!idx) return "indices must be a constant int32/int64 tensor";
        const auto& x = g.t(o.inputs[0]);
        const auto axis = normalize_axis(o.options.axis, static_cast<std::int64_t>(x.rank()));
        if (axis < 0) return "axis " + std::to_string(o.options.axis) + " is outside the params rank";
        const auto dim = x.shape[static_cast<std::size_t>(axis)];
        for (std::size_t k = 0; k < idx->size(); ++k)
            if ((*idx)[k] < 0 || (*idx)[k] >= dim)
                return "index " + std::to_string(k) + " (" + std::to_string((*idx)[k]) + ") is outside [0, " + std::to_string(dim) + ")";
        if (idx->empty()) return "indices are empty";
        std::vector<std::int32_t> expect(x.shape.begin(), x.shape.begin() + axis);
        for (auto d : g.t(o.inputs[1]).shape) expect.push_back(d);
        expect.insert(expect.end(), x.shape.begin() + axis + 1, x.shape.end());
        if (expect != g.t(o.outputs[0]).shape || g.t(o.outputs[0]).type != x.type) return "output shape or type does not match the gather";
        return check_static(g, o.outputs[0], "output");
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& x = c.g.t(o.inputs[0]);
        const auto rank = static_cast<std::int32_t>(x.rank());
        const auto cf = channels_first(x.shape);
        const auto axis = channels_first_axis(movement::normalize_axis(o.options.axis, rank), rank);
        const auto idx = *movement::const_ints(c.g, o.inputs[1]);
        format::layer_options::GatherOptions go{};
        go.axis = axis;  // non-negative form (lowering.md §7.7.3)
        go.batch_dims = 0;
        go.batch_size = 1;
        go.axis_size = cf[static_cast<std::size_t>(axis)];
        go.outer_size = 1;
        go.inner_size = 1;
        for (std::int32_t i = 0; i < axis; ++i) go.outer_size *= cf[static_cast<std::size_t>(i)];
        for (std::int32_t i = axis + 1; i < rank; ++i) go.inner_size *= cf[static_cast<std::size_t>(i)];
        // All indices in order (shape[0] for the usual 1-D indices; the simulator lays any
        // index shape out through the output's TFLite order).
        go.coord_size = static_cast<std::int32_t>(idx.size());
        // The SDK sets this from tensor numbering [quirk]; the layer's one input is always
        // the params, so it is 0.
        go.swap_input_order = 0;
        std::vector<std::int32_t> coords(idx.begin(), idx.end());
        go.coord_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(coords))};
        l.set(go);
    }
};

template <>
struct op<builtin_operator::CAST> {
    static constexpr builtin_operator code = builtin_operator::CAST;
    static constexpr std::string_view summary = "integer cast (int8/uint8/int16/int32, two's complement wrap)";
    static constexpr auto dtypes =
        meta::value_set<tensor_type::INT8, tensor_type::UINT8, tensor_type::INT16, tensor_type::INT32, tensor_type::BOOL>{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::CAST);
    using member = no_member;

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
        if (auto r = movement::check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        const auto t = g.t(o.outputs[0]).type;
        if (t != tensor_type::INT8 && t != tensor_type::UINT8 && t != tensor_type::INT16 && t != tensor_type::INT32)
            return "output type " + std::string(tflite::type_name(t)) + " is not supported (int8, uint8, int16, int32)";
        if (g.t(o.outputs[0]).shape != g.t(o.inputs[0]).shape) return "output shape differs from the input shape";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) { c.add_layer(layer_type, o, {o.inputs.at(0)}); }
};

}  // namespace vnnx::ops
