#pragma once
// Shared helpers of the data-movement operators (ops/reshape.hpp, ops/concat_split.hpp,
// ops/slice.hpp, ops/pad.hpp): constant integer operands, channels-first axis forms, and the
// element maps that decide whether a TFLite layout change can be expressed by a VNNX record.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vnnx/ops/trait.hpp"

namespace vnnx::ops::movement {

/// Data types a data-movement layer copies (whole elements, no arithmetic).
using any_int_types = meta::value_set<tensor_type::INT8, tensor_type::UINT8, tensor_type::INT16, tensor_type::INT32>;

/// The values of a constant INT32 or INT64 tensor, or nullopt when `t` is absent, not a
/// constant or of another type.
inline std::optional<std::vector<std::int64_t>> const_ints(const graph& g, std::int32_t t) {
    if (t < 0 || static_cast<std::size_t>(t) >= g.tensors.size()) return std::nullopt;
    const auto& x = g.t(t);
    if (!x.is_constant()) return std::nullopt;
    std::vector<std::int64_t> out;
    if (x.type == tensor_type::INT32) {
        for (auto v : x.values<std::int32_t>()) out.push_back(v);
    } else if (x.type == tensor_type::INT64) {
        for (auto v : x.values<std::int64_t>()) out.push_back(v);
    } else {
        return std::nullopt;
    }
    return out;
}

/// Operand i of o, or -1.
inline std::int32_t input_at(const compiler::op& o, std::size_t i) { return i < o.inputs.size() ? o.inputs[i] : -1; }

/// Channels-first axis in the negative form most options store (lowering.md §2.1).
inline std::int32_t cf_axis_negative(std::int32_t axis, std::int32_t rank) {
    return channels_first_axis(axis, rank) - rank;
}

/// A TFLite axis made non-negative, or -1 when it is outside [-rank, rank).
inline std::int32_t normalize_axis(std::int64_t axis, std::int64_t rank) {
    if (axis < -rank || axis >= rank) return -1;
    return static_cast<std::int32_t>(axis < 0 ? axis + rank : axis);
}

inline std::string shape_text(const std::vector<std::int32_t>& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
    return out + "]";
}

inline std::int64_t element_count(const std::vector<std::int32_t>& s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

/// Rules every data-movement tensor must satisfy: static positive dims, rank <= 6 (the
/// tensor record holds six).
inline std::string check_static(const graph& g, std::int32_t t, const char* role) {
    const auto& x = g.t(t);
    if (x.shape.size() > 6) return std::string(role) + " '" + x.name + "' has rank " + std::to_string(x.shape.size()) + ", more than 6";
    for (std::size_t i = 0; i < x.shape.size(); ++i)
        if (x.shape[i] <= 0)
            return std::string(role) + " '" + x.name + "' has no static shape " + shape_text(x.shape);
    return {};
}

/// For a rank-r channels-first array, the channels-first axis of each TFLite axis.
inline std::vector<std::int32_t> cf_axis_of_tflite(std::int32_t rank) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(rank));
    for (std::int32_t i = 0; i < rank; ++i) out[static_cast<std::size_t>(i)] = channels_first_axis(i, rank);
    return out;
}

/// Dense row-major strides of a shape.
inline std::vector<std::int64_t> dense_strides(const std::vector<std::int32_t>& s) {
    std::vector<std::int64_t> st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

/// A strided walk: output element e (row-major over `dims`) reads the input element
/// sum(index_i * strides_i). Transposes are such walks; comparing two walks axis by axis costs
/// nothing, where comparing their element maps costs the tensor (YOLO heads transpose 1 MB).
struct strided_walk {
    std::vector<std::int64_t> dims, strides;

    /// Unit axes dropped, and neighbours merged where the outer one continues the inner one:
    /// two walks with equal canonical forms read the same elements in the same order.
    [[nodiscard]] strided_walk canonical() const {
        strided_walk c;
        for (std::size_t i = 0; i < dims.size(); ++i) {
            if (dims[i] == 1) continue;
            if (!c.dims.empty() && c.strides.back() == strides[i] * dims[i]) {
                c.dims.back() *= dims[i];
                c.strides.back() = strides[i];
            } else {
                c.dims.push_back(dims[i]);
                c.strides.push_back(strides[i]);
            }
        }
        return c;
    }
    bool operator==(const strided_walk&) const = default;
};

/// For every element of the channels-first output of a TFLite TRANSPOSE (in output memory
/// order), the channels-first input element it takes.
inline std::vector<std::int64_t> transpose_element_map(const std::vector<std::int32_t>& in_tfl,
                                                       const std::vector<std::int32_t>& perm) {
    const auto r = static_cast<std::int32_t>(in_tfl.size());
    std::vector<std::int32_t> out_tfl(in_tfl.size());
    for (std::size_t i = 0; i < perm.size(); ++i) out_tfl[i] = in_tfl[static_cast<std::size_t>(perm[i])];
    const auto in_cf = channels_first(in_tfl);
    const auto out_cf = channels_first(out_tfl);
    const auto cf_of = cf_axis_of_tflite(r);
    const auto in_st = dense_strides(in_cf);
    const std::int64_t n = element_count(out_cf);
    std::vector<std::int64_t> map(static_cast<std::size_t>(n));
    std::vector<std::int32_t> idx(out_cf.size(), 0);  // channels-first output index
    for (std::int64_t e = 0; e < n; ++e) {
        std::int64_t src = 0;
        for (std::int32_t i = 0; i < r; ++i) {
            // TFLite output axis i = TFLite input axis perm[i].
            const auto out_axis = static_cast<std::size_t>(cf_of[static_cast<std::size_t>(i)]);
            const auto in_axis = static_cast<std::size_t>(cf_of[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])]);
            src += idx[out_axis] * in_st[in_axis];
        }
        map[static_cast<std::size_t>(e)] = src;
        for (std::size_t d = idx.size(); d-- > 0;) {
            if (++idx[d] < out_cf[d]) break;
            idx[d] = 0;
        }
    }
    return map;
}

/// transpose_element_map as a walk over the channels-first output.
inline strided_walk transpose_walk(const std::vector<std::int32_t>& in_tfl, const std::vector<std::int32_t>& perm) {
    const auto r = static_cast<std::int32_t>(in_tfl.size());
    std::vector<std::int32_t> out_tfl(in_tfl.size());
    for (std::size_t i = 0; i < perm.size(); ++i) out_tfl[i] = in_tfl[static_cast<std::size_t>(perm[i])];
    const auto out_cf = channels_first(out_tfl);
    const auto cf_of = cf_axis_of_tflite(r);
    const auto in_st = dense_strides(channels_first(in_tfl));
    strided_walk w;
    w.dims.assign(out_cf.begin(), out_cf.end());
    w.strides.assign(out_cf.size(), 0);
    for (std::int32_t i = 0; i < r; ++i)
        w.strides[static_cast<std::size_t>(cf_of[static_cast<std::size_t>(i)])] =
            in_st[static_cast<std::size_t>(cf_of[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])])];
    return w;
}

/// The element map of the VNNX TRANSPOSE layer: the channels-first input seen as
/// [outer, d0, d1, d2] (missing dims 1); output axis j of the last three takes input axis p[j].
inline std::vector<std::int64_t> cf_permutation_element_map(const std::vector<std::int32_t>& in_cf,
                                                            const std::array<std::int32_t, 3>& p) {
    std::int64_t outer = 1;
    std::array<std::int64_t, 3> d{1, 1, 1};
    const std::size_t r = in_cf.size();
    for (std::size_t i = 0; i < r; ++i) {
        if (i + 3 < r) outer *= in_cf[i];
        else d[i + 3 - r] = in_cf[i];
    }
    const std::array<std::int64_t, 3> st{d[1] * d[2], d[2], 1};
    const std::int64_t plane = d[0] * d[1] * d[2];
    std::vector<std::int64_t> map;
    map.reserve(static_cast<std::size_t>(outer * plane));
    const auto a = static_cast<std::size_t>(p[0]), b = static_cast<std::size_t>(p[1]), c = static_cast<std::size_t>(p[2]);
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < d[a]; ++i)
            for (std::int64_t j = 0; j < d[b]; ++j)
                for (std::int64_t k = 0; k < d[c]; ++k) map.push_back(o * plane + i * st[a] + j * st[b] + k * st[c]);
    return map;
}

/// cf_permutation_element_map as a walk.
inline strided_walk cf_permutation_walk(const std::vector<std::int32_t>& in_cf, const std::array<std::int32_t, 3>& p) {
    std::int64_t outer = 1;
    std::array<std::int64_t, 3> d{1, 1, 1};
    const std::size_t r = in_cf.size();
    for (std::size_t i = 0; i < r; ++i) {
        if (i + 3 < r) outer *= in_cf[i];
        else d[i + 3 - r] = in_cf[i];
    }
    const std::array<std::int64_t, 3> st{d[1] * d[2], d[2], 1};
    const auto a = static_cast<std::size_t>(p[0]), b = static_cast<std::size_t>(p[1]), c = static_cast<std::size_t>(p[2]);
    return {{outer, d[a], d[b], d[c]}, {d[0] * d[1] * d[2], st[a], st[b], st[c]}};
}

}  // namespace vnnx::ops::movement
