#pragma once
// Conversions between TFLite-order arrays and the simulator's channels-first tensors
// (lowering.md §2.1), shared by the single-operator test harnesses.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/ref/layout.hpp>

namespace test_layout {

using vnnx::dtype;
using vnnx::ndarray;

/// Output axis i of the channels-first array is TFLite axis perm[i]: [.., H, W, C] -> [.., C, H, W].
inline std::vector<std::int32_t> cf_perm(std::size_t r) {
    std::vector<std::int32_t> p;
    for (std::size_t i = 0; i < r; ++i) p.push_back(static_cast<std::int32_t>(i));
    if (r >= 3) {
        p.resize(r - 3);
        p.push_back(static_cast<std::int32_t>(r - 1));
        p.push_back(static_cast<std::int32_t>(r - 3));
        p.push_back(static_cast<std::int32_t>(r - 2));
    }
    return p;
}

inline ndarray permuted(const ndarray& a, const std::vector<std::int32_t>& perm) {
    std::vector<std::int64_t> s;
    for (auto p : perm) s.push_back(a.shape[static_cast<std::size_t>(p)]);
    ndarray out(a.type, s);
    vnnx::ref::transpose(a, perm, out);
    return out;
}

inline ndarray to_cf(const ndarray& a) { return permuted(a, cf_perm(a.shape.size())); }

/// Channels-first bytes of a tensor whose TFLite shape is `tfl` -> the TFLite-order array.
inline ndarray from_cf(std::span<const std::byte> bytes, dtype t, const std::vector<std::int64_t>& tfl) {
    const auto p = cf_perm(tfl.size());
    std::vector<std::int64_t> cf;
    for (auto i : p) cf.push_back(tfl[static_cast<std::size_t>(i)]);
    ndarray c(t, cf);
    REQUIRE(bytes.size() == c.data.size());
    std::memcpy(c.data.data(), bytes.data(), bytes.size());
    std::vector<std::int32_t> inv(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) inv[static_cast<std::size_t>(p[i])] = static_cast<std::int32_t>(i);
    return permuted(c, inv);
}

}  // namespace test_layout
