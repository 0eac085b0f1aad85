#pragma once
// RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR over NHWC 8-bit data as TFLite's optimized
// kernels do: nearest with a 10-bit fixed-point ratio (reference float rule when
// align_corners/half_pixel_centers is set), int8 bilinear with 10-bit integer weights,
// uint8 bilinear in float with +0.5 and truncation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "vnnx/ref/shape.hpp"

namespace vnnx::ref {

namespace detail {
inline std::int32_t nearest_source(std::int32_t v, std::int32_t in_size, std::int32_t out_size, bool align_corners,
                                   bool half_pixel) {
    if (!align_corners && !half_pixel) {
        const std::int32_t scale_10 = ((1 << 10) * in_size + out_size / 2) / out_size;
        return std::min((v * scale_10) >> 10, in_size - 1);
    }
    const float scale = (align_corners && out_size > 1) ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                                                        : static_cast<float>(in_size) / static_cast<float>(out_size);
    const float offset = half_pixel ? 0.5f : 0.0f;
    std::int32_t r = std::min(align_corners ? static_cast<std::int32_t>(std::round((static_cast<float>(v) + offset) * scale))
                                            : static_cast<std::int32_t>(std::floor((static_cast<float>(v) + offset) * scale)),
                              in_size - 1);
    if (half_pixel) r = std::max(0, r);
    return r;
}
}  // namespace detail

template <class T>
void resize_nearest(std::span<const T> in, nhwc is, std::span<T> out, nhwc os, bool align_corners, bool half_pixel) {
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            const std::int32_t iy = detail::nearest_source(y, is.h, os.h, align_corners, half_pixel);
            for (std::int32_t x = 0; x < os.w; ++x) {
                const std::int32_t ix = detail::nearest_source(x, is.w, os.w, align_corners, half_pixel);
                for (std::int32_t c = 0; c < os.c; ++c)
                    out[static_cast<std::size_t>(os.at(b, y, x, c))] = in[static_cast<std::size_t>(is.at(b, iy, ix, c))];
            }
        }
}

/// int8 (and reference) integer bilinear: positions and weights in 1/1024 units.
template <class T>
void resize_bilinear_integer(std::span<const T> in, nhwc is, std::span<T> out, nhwc os, bool align_corners,
                             bool half_pixel) {
    std::int32_t hs = ((1 << 10) * is.h + os.h / 2) / os.h;
    std::int32_t ws = ((1 << 10) * is.w + os.w / 2) / os.w;
    if (align_corners && os.h > 1) hs = ((1 << 10) * (is.h - 1) + (os.h - 1) / 2) / (os.h - 1);
    if (align_corners && os.w > 1) ws = ((1 << 10) * (is.w - 1) + (os.w - 1) / 2) / (os.w - 1);
    auto interp = [&](std::int32_t v, std::int32_t scale, std::int32_t size, std::int32_t& pos, std::int32_t& lo,
                      std::int32_t& hi) {
        pos = half_pixel ? v * scale + scale / 2 - (1 << 9) : v * scale;
        lo = std::max(pos / (1 << 10), 0);
        hi = std::min((pos + (1 << 10) - 1) / (1 << 10), size - 1);
    };
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            std::int32_t py, y0, y1;
            interp(y, hs, is.h, py, y0, y1);
            const std::int64_t fy = py - (1 << 10) * y0;
            for (std::int32_t x = 0; x < os.w; ++x) {
                std::int32_t px, x0, x1;
                interp(x, ws, is.w, px, x0, x1);
                const std::int64_t fx = px - (1 << 10) * x0;
                for (std::int32_t c = 0; c < os.c; ++c) {
                    auto v = [&](std::int32_t yy, std::int32_t xx) {
                        return static_cast<std::int64_t>(in[static_cast<std::size_t>(is.at(b, yy, xx, c))]);
                    };
                    const std::int64_t acc = v(y0, x0) * ((1 << 10) - fy) * ((1 << 10) - fx) +
                                             v(y1, x0) * fy * ((1 << 10) - fx) + v(y0, x1) * ((1 << 10) - fy) * fx +
                                             v(y1, x1) * fy * fx;
                    const std::int64_t round = acc > 0 ? (1 << 19) : -(1 << 19);
                    out[static_cast<std::size_t>(os.at(b, y, x, c))] = static_cast<T>((acc + round) / (1 << 20));
                }
            }
        }
}

/// uint8 bilinear of TFLite's optimized kernel: float weights, +0.5, truncation.
template <class T>
void resize_bilinear_float(std::span<const T> in, nhwc is, std::span<T> out, nhwc os, bool align_corners,
                           bool half_pixel) {
    const float hs = (align_corners && os.h > 1) ? static_cast<float>(is.h - 1) / static_cast<float>(os.h - 1)
                                                 : static_cast<float>(is.h) / static_cast<float>(os.h);
    const float ws = (align_corners && os.w > 1) ? static_cast<float>(is.w - 1) / static_cast<float>(os.w - 1)
                                                 : static_cast<float>(is.w) / static_cast<float>(os.w);
    auto interp = [&](std::int32_t v, float scale, std::int32_t size, float& pos, std::int32_t& lo, std::int32_t& hi) {
        pos = half_pixel ? (static_cast<float>(v) + 0.5f) * scale - 0.5f : static_cast<float>(v) * scale;
        lo = std::max(static_cast<std::int32_t>(std::floor(pos)), 0);
        hi = std::min(static_cast<std::int32_t>(std::ceil(pos)), size - 1);
    };
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            float iy;
            std::int32_t y0, y1;
            interp(y, hs, is.h, iy, y0, y1);
            for (std::int32_t x = 0; x < os.w; ++x) {
                float ix;
                std::int32_t x0, x1;
                interp(x, ws, is.w, ix, x0, x1);
                const float dy = iy - static_cast<float>(y0), dx = ix - static_cast<float>(x0);
                const float w[4] = {(1 - dy) * (1 - dx), (1 - dy) * dx, dy * (1 - dx), dy * dx};
                for (std::int32_t c = 0; c < os.c; ++c) {
                    auto v = [&](std::int32_t yy, std::int32_t xx) {
                        return static_cast<float>(in[static_cast<std::size_t>(is.at(b, yy, xx, c))]);
                    };
                    const float r = v(y0, x0) * w[0] + v(y0, x1) * w[1] + v(y1, x0) * w[2] + v(y1, x1) * w[3] + 0.5f;
                    out[static_cast<std::size_t>(os.at(b, y, x, c))] = static_cast<T>(r);
                }
            }
        }
}

}  // namespace vnnx::ref
