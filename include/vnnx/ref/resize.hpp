#pragma once
// RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR over NHWC 8-bit data as TFLite's optimized
// kernels do: nearest with a 16-bit fixed-point ratio (reference float rule when
// align_corners/half_pixel_centers is set), int8 bilinear with 10-bit integer weights,
// uint8 bilinear in float with +0.5 and truncation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "vnnx/quant/resize_rule.hpp"
#include "vnnx/ref/shape.hpp"

namespace vnnx::ref {

template <class T>
void resize_nearest(std::span<const T> in, nhwc is, std::span<T> out, nhwc os, bool align_corners, bool half_pixel) {
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            const std::int32_t iy = quant::resize::nearest_source(y, is.h, os.h, align_corners, half_pixel);
            for (std::int32_t x = 0; x < os.w; ++x) {
                const std::int32_t ix = quant::resize::nearest_source(x, is.w, os.w, align_corners, half_pixel);
                for (std::int32_t c = 0; c < os.c; ++c)
                    out[static_cast<std::size_t>(os.at(b, y, x, c))] = in[static_cast<std::size_t>(is.at(b, iy, ix, c))];
            }
        }
}

/// int8 (and reference) integer bilinear: positions and weights in 1/1024 units.
template <class T>
void resize_bilinear_integer(std::span<const T> in, nhwc is, std::span<T> out, nhwc os, bool align_corners,
                             bool half_pixel) {
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            const auto ty = quant::resize::integer_tap_of(y, is.h, os.h, align_corners, half_pixel);
            const std::int32_t y0 = ty.lo, y1 = ty.hi;
            const std::int64_t fy = ty.frac;
            for (std::int32_t x = 0; x < os.w; ++x) {
                const auto tx = quant::resize::integer_tap_of(x, is.w, os.w, align_corners, half_pixel);
                const std::int32_t x0 = tx.lo, x1 = tx.hi;
                const std::int64_t fx = tx.frac;
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
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            const auto ty = quant::resize::float_tap_of(y, is.h, os.h, align_corners, half_pixel);
            const std::int32_t y0 = ty.lo, y1 = ty.hi;
            for (std::int32_t x = 0; x < os.w; ++x) {
                const auto tx = quant::resize::float_tap_of(x, is.w, os.w, align_corners, half_pixel);
                const std::int32_t x0 = tx.lo, x1 = tx.hi;
                const float dy = ty.frac, dx = tx.frac;
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
