#pragma once
// Shape helpers shared by the reference kernels: NHWC indexing, TFLite's padding rule and
// NumPy-style broadcasting of two operands.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vnnx/support/error.hpp"

namespace vnnx::ref {

using shape_t = std::vector<std::int32_t>;

[[nodiscard]] inline std::int64_t flat_size(std::span<const std::int32_t> s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

/// Pads a shape with leading 1s up to `rank` (TFLite's RuntimeShape::ExtendedShape).
[[nodiscard]] inline shape_t extend_shape(std::span<const std::int32_t> s, std::size_t rank) {
    if (s.size() > rank) fail(error_kind::unsupported, "shape of rank " + std::to_string(s.size()) + " exceeds " + std::to_string(rank));
    shape_t out(rank - s.size(), 1);
    out.insert(out.end(), s.begin(), s.end());
    return out;
}

struct nhwc {
    std::int32_t n = 1, h = 1, w = 1, c = 1;
    [[nodiscard]] std::int64_t at(std::int32_t b, std::int32_t y, std::int32_t x, std::int32_t ch) const noexcept {
        return ((static_cast<std::int64_t>(b) * h + y) * w + x) * c + ch;
    }
    [[nodiscard]] std::int64_t size() const noexcept { return static_cast<std::int64_t>(n) * h * w * c; }
};

[[nodiscard]] inline nhwc as_nhwc(std::span<const std::int32_t> s) {
    const auto e = extend_shape(s, 4);
    return {e[0], e[1], e[2], e[3]};
}

enum class padding { same, valid };

/// TFLite ComputePaddingHeightWidth for one axis: the padding before the first element.
[[nodiscard]] constexpr std::int32_t compute_padding(std::int32_t stride, std::int32_t dilation, std::int32_t in_size,
                                                     std::int32_t filter_size, std::int32_t out_size) noexcept {
    const std::int32_t effective = (filter_size - 1) * dilation + 1;
    const std::int32_t total = std::max((out_size - 1) * stride + effective - in_size, 0);
    return total / 2;
}

/// TFLite ComputeOutSize.
[[nodiscard]] constexpr std::int32_t compute_out_size(padding p, std::int32_t in_size, std::int32_t filter_size,
                                                      std::int32_t stride, std::int32_t dilation = 1) noexcept {
    const std::int32_t effective = (filter_size - 1) * dilation + 1;
    if (stride == 0) return 0;
    return p == padding::same ? (in_size + stride - 1) / stride : (in_size + stride - effective) / stride;
}

/// NumPy broadcast of two shapes; throws naming `what` when they do not broadcast.
[[nodiscard]] inline shape_t broadcast_shape(std::span<const std::int32_t> a, std::span<const std::int32_t> b,
                                             const std::string& what) {
    const std::size_t r = std::max(a.size(), b.size());
    const auto ea = extend_shape(a, r), eb = extend_shape(b, r);
    shape_t out(r);
    for (std::size_t i = 0; i < r; ++i) {
        if (ea[i] != eb[i] && ea[i] != 1 && eb[i] != 1)
            fail_input(what + ": shapes do not broadcast (axis " + std::to_string(i) + ": " + std::to_string(ea[i]) +
                       " vs " + std::to_string(eb[i]) + ")");
        out[i] = ea[i] == 1 ? eb[i] : ea[i];
    }
    return out;
}

/// Calls f(index_a, index_b, index_out) for every output element of a broadcast.
template <class F>
void for_each_broadcast(std::span<const std::int32_t> a, std::span<const std::int32_t> b, const shape_t& out, F&& f) {
    const std::size_t r = out.size();
    const auto ea = extend_shape(a, r), eb = extend_shape(b, r);
    std::vector<std::int64_t> sa(r), sb(r);
    std::int64_t ma = 1, mb = 1;
    for (std::size_t i = r; i-- > 0;) {
        sa[i] = ea[i] == 1 ? 0 : ma;
        sb[i] = eb[i] == 1 ? 0 : mb;
        ma *= ea[i];
        mb *= eb[i];
    }
    const std::int64_t total = flat_size(out);
    // Operands of the output's shape (SiLU's x * sigmoid(x), residual ADDs): no index walk.
    if (ma == total && mb == total) {
        for (std::int64_t o = 0; o < total; ++o) f(o, o, o);
        return;
    }
    std::vector<std::int32_t> idx(r, 0);
    std::int64_t ia = 0, ib = 0;
    for (std::int64_t o = 0; o < total; ++o) {
        f(ia, ib, o);
        for (std::size_t d = r; d-- > 0;) {
            ++idx[d];
            ia += sa[d];
            ib += sb[d];
            if (idx[d] < out[d]) break;
            ia -= sa[d] * idx[d];
            ib -= sb[d] * idx[d];
            idx[d] = 0;
        }
    }
}

}  // namespace vnnx::ref
