#pragma once
// AVERAGE_POOL_2D and MAX_POOL_2D on raw 8-bit codes (input and output share quantization).
// The average divides by the number of in-bounds taps and rounds half away from zero.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>

#include "vnnx/quant/activation.hpp"
#include "vnnx/ref/shape.hpp"

namespace vnnx::ref {

struct pool_params {
    std::int32_t filter_h = 1, filter_w = 1, stride_h = 1, stride_w = 1;
    padding pad = padding::same;
    quant::activation_range act{-128, 127};
};

namespace detail {
template <class T, class Reduce>
void pool(nhwc in, std::span<T> output, nhwc out, const pool_params& p, Reduce&& reduce) {
    const std::int32_t pad_h = compute_padding(p.stride_h, 1, in.h, p.filter_h, out.h);
    const std::int32_t pad_w = compute_padding(p.stride_w, 1, in.w, p.filter_w, out.w);
    for (std::int32_t b = 0; b < out.n; ++b)
        for (std::int32_t oy = 0; oy < out.h; ++oy)
            for (std::int32_t ox = 0; ox < out.w; ++ox) {
                const std::int32_t y0 = oy * p.stride_h - pad_h, x0 = ox * p.stride_w - pad_w;
                const std::int32_t ky0 = std::max(0, -y0), ky1 = std::min(p.filter_h, in.h - y0);
                const std::int32_t kx0 = std::max(0, -x0), kx1 = std::min(p.filter_w, in.w - x0);
                for (std::int32_t c = 0; c < out.c; ++c) {
                    const std::int32_t v = reduce(b, y0, x0, ky0, ky1, kx0, kx1, c);
                    output[static_cast<std::size_t>(out.at(b, oy, ox, c))] =
                        static_cast<T>(std::clamp(v, p.act.min, p.act.max));
                }
            }
}
}  // namespace detail

template <class T>
void average_pool(std::span<const T> input, nhwc in, std::span<T> output, nhwc out, const pool_params& p) {
    detail::pool(in, output, out, p,
                 [&](std::int32_t b, std::int32_t y0, std::int32_t x0, std::int32_t ky0, std::int32_t ky1,
                     std::int32_t kx0, std::int32_t kx1, std::int32_t c) {
                     std::int32_t acc = 0;
                     for (std::int32_t ky = ky0; ky < ky1; ++ky)
                         for (std::int32_t kx = kx0; kx < kx1; ++kx)
                             acc += input[static_cast<std::size_t>(in.at(b, y0 + ky, x0 + kx, c))];
                     const std::int32_t count = (ky1 - ky0) * (kx1 - kx0);
                     if (count <= 0) return std::int32_t{0};
                     return acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                 });
}

template <class T>
void max_pool(std::span<const T> input, nhwc in, std::span<T> output, nhwc out, const pool_params& p) {
    detail::pool(in, output, out, p,
                 [&](std::int32_t b, std::int32_t y0, std::int32_t x0, std::int32_t ky0, std::int32_t ky1,
                     std::int32_t kx0, std::int32_t kx1, std::int32_t c) {
                     std::int32_t m = std::numeric_limits<T>::lowest();
                     for (std::int32_t ky = ky0; ky < ky1; ++ky)
                         for (std::int32_t kx = kx0; kx < kx1; ++kx)
                             m = std::max<std::int32_t>(m, input[static_cast<std::size_t>(in.at(b, y0 + ky, x0 + kx, c))]);
                     return m;
                 });
}

}  // namespace vnnx::ref
