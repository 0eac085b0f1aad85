#pragma once
// Spatial data movement with TFLite's semantics: DILATE (zero insertion between elements, any
// rank), SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND over NHWC data (TFLite's reference kernels;
// 3-D inputs [N, H, C] are the 4-D case with W = 1 and a block width of 1). Element bytes are
// copied whole, so the kernels serve every element type.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "vnnx/support/error.hpp"
#include "vnnx/support/npy.hpp"

namespace vnnx::ref {

/// y[i·d] = x[i] on every axis (d = dilations), every other element `fill` (one element's bytes).
inline void dilate(const ndarray& x, std::span<const std::int64_t> dilations, std::span<const std::byte> fill, ndarray& y) {
    const std::size_t r = x.shape.size();
    const std::size_t es = dtype_size(x.type);
    if (dilations.size() != r || y.shape.size() != r || fill.size() != es || y.type != x.type)
        fail_input("DILATE: dilations, output rank, type or padding value do not match the input");
    for (std::size_t a = 0; a < r; ++a)
        if (dilations[a] < 1 || y.shape[a] != (x.shape[a] - 1) * dilations[a] + 1)
            fail_input("DILATE: output axis " + std::to_string(a) + " must be (in - 1) * dilation + 1");
    for (std::size_t e = 0; e < y.element_count(); ++e) std::memcpy(y.data.data() + e * es, fill.data(), es);
    std::vector<std::int64_t> idx(r, 0);
    for (std::size_t e = 0; e < x.element_count(); ++e) {
        std::int64_t dst = 0;
        for (std::size_t a = 0; a < r; ++a) dst = dst * y.shape[a] + idx[a] * dilations[a];
        std::memcpy(y.data.data() + static_cast<std::size_t>(dst) * es, x.data.data() + e * es, es);
        for (std::size_t a = r; a-- > 0;) {
            if (++idx[a] < x.shape[a]) break;
            idx[a] = 0;
        }
    }
}

namespace detail {
/// [N, H, W, C] of a 3-D or 4-D NHWC shape (3-D: W = 1).
inline std::array<std::int64_t, 4> nhwc4(const std::vector<std::int64_t>& s, const char* op) {
    if (s.size() == 4) return {s[0], s[1], s[2], s[3]};
    if (s.size() == 3) return {s[0], s[1], 1, s[2]};
    fail_input(std::string(op) + ": input and output must be 3-D or 4-D");
}
}  // namespace detail

/// block = {bh, bw}, pads = {top, bottom, left, right}; `fill` is the padding element
/// (TFLite: the output zero point). Output batch b·N + n holds block offset (b / bw, b % bw).
inline void space_to_batch_nd(const ndarray& x, std::array<std::int64_t, 2> block, std::array<std::int64_t, 4> pads,
                              std::span<const std::byte> fill, ndarray& y) {
    const auto is = detail::nhwc4(x.shape, "SPACE_TO_BATCH_ND"), os = detail::nhwc4(y.shape, "SPACE_TO_BATCH_ND");
    const std::size_t es = dtype_size(x.type);
    const auto [bh, bw] = block;
    if (bh < 1 || bw < 1 || y.type != x.type || fill.size() != es || os[3] != is[3] || os[0] != is[0] * bh * bw ||
        os[1] * bh != is[1] + pads[0] + pads[1] || os[2] * bw != is[2] + pads[2] + pads[3])
        fail_input("SPACE_TO_BATCH_ND: output shape does not match the block shape and paddings");
    const std::int64_t C = is[3];
    for (std::int64_t ob = 0; ob < os[0]; ++ob) {
        const std::int64_t ib = ob % is[0], sh = (ob / is[0]) / bw, sw = (ob / is[0]) % bw;
        for (std::int64_t oh = 0; oh < os[1]; ++oh)
            for (std::int64_t ow = 0; ow < os[2]; ++ow) {
                std::byte* dst = y.data.data() + static_cast<std::size_t>(((ob * os[1] + oh) * os[2] + ow) * C) * es;
                const std::int64_t ih = oh * bh + sh - pads[0], iw = ow * bw + sw - pads[2];
                if (ih < 0 || ih >= is[1] || iw < 0 || iw >= is[2]) {
                    for (std::int64_t c = 0; c < C; ++c) std::memcpy(dst + c * static_cast<std::int64_t>(es), fill.data(), es);
                } else {
                    std::memcpy(dst, x.data.data() + static_cast<std::size_t>(((ib * is[1] + ih) * is[2] + iw) * C) * es,
                                static_cast<std::size_t>(C) * es);
                }
            }
    }
}

/// The inverse: input batch b·N + n goes to block offset (b / bw, b % bw) of output batch n,
/// minus the crops {top, bottom, left, right}.
inline void batch_to_space_nd(const ndarray& x, std::array<std::int64_t, 2> block, std::array<std::int64_t, 4> crops,
                              ndarray& y) {
    const auto is = detail::nhwc4(x.shape, "BATCH_TO_SPACE_ND"), os = detail::nhwc4(y.shape, "BATCH_TO_SPACE_ND");
    const std::size_t es = dtype_size(x.type);
    const auto [bh, bw] = block;
    if (bh < 1 || bw < 1 || y.type != x.type || os[3] != is[3] || is[0] != os[0] * bh * bw ||
        os[1] != is[1] * bh - crops[0] - crops[1] || os[2] != is[2] * bw - crops[2] - crops[3])
        fail_input("BATCH_TO_SPACE_ND: output shape does not match the block shape and crops");
    const std::int64_t C = is[3];
    for (std::int64_t ib = 0; ib < is[0]; ++ib) {
        const std::int64_t ob = ib % os[0], off = ib / os[0];
        for (std::int64_t ih = 0; ih < is[1]; ++ih) {
            const std::int64_t oh = ih * bh + off / bw - crops[0];
            if (oh < 0 || oh >= os[1]) continue;
            for (std::int64_t iw = 0; iw < is[2]; ++iw) {
                const std::int64_t ow = iw * bw + off % bw - crops[2];
                if (ow < 0 || ow >= os[2]) continue;
                std::memcpy(y.data.data() + static_cast<std::size_t>(((ob * os[1] + oh) * os[2] + ow) * C) * es,
                            x.data.data() + static_cast<std::size_t>(((ib * is[1] + ih) * is[2] + iw) * C) * es,
                            static_cast<std::size_t>(C) * es);
            }
        }
    }
}

}  // namespace vnnx::ref
