#pragma once
// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED over NHWC int8/uint8 data with TFLite's
// interpreter numerics: int8 CONV_2D and FULLY_CONNECTED requantize once (ruy), uint8 ones
// (gemmlowp) and DEPTHWISE_CONV_2D with the double-rounding MultiplyByQuantizedMultiplier.
// The caller picks the rounding in requant_params. CONV_2D and FULLY_CONNECTED sum their int32
// products through the vectorised kernels of quant/int16_dots.hpp, on several threads when large
// (integer sums: the same values in any order).
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "vnnx/quant/activation.hpp"
#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/int16_dots.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/shape.hpp"

namespace vnnx::ref {

enum class rounding { single, double_ };

/// Requantization shared by the three kernels: one multiplier per output channel (or one
/// for all), zero points, clamping range.
struct requant_params {
    std::int32_t input_zero_point = 0;
    std::int32_t filter_zero_point = 0;  // uint8 weights only; int8 weights are symmetric
    std::int32_t output_zero_point = 0;
    std::vector<quant::quantized_multiplier> multipliers;
    quant::activation_range act{-128, 127};
    rounding round = rounding::single;
    // When set, every accumulator (bias included, before requantization) at its output index:
    // the calibration data of the FIA records (ir/calibration.hpp).
    std::int32_t* accumulators = nullptr;

    [[nodiscard]] std::int32_t apply(std::int32_t acc, std::size_t channel) const {
        const auto& m = multipliers.size() == 1 ? multipliers[0] : multipliers[channel];
        const std::int32_t scaled = round == rounding::single
                                        ? quant::multiply_by_quantized_multiplier_single_round(acc, m.multiplier, m.shift)
                                        : quant::multiply_by_quantized_multiplier(acc, m.multiplier, m.shift);
        return std::clamp(scaled + output_zero_point, act.min, act.max);
    }
};

struct conv_geometry {
    std::int32_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    padding pad = padding::same;
};

namespace detail {
/// The first n values of `v` minus `zero` as int16 (codes and zero points are 8-bit).
template <class W>
std::vector<std::int16_t> offset_rows(std::span<const W> v, std::size_t n, std::int32_t zero) {
    if (v.size() < n) fail_input("weights hold " + std::to_string(v.size()) + " values, " + std::to_string(n) + " needed");
    std::vector<std::int16_t> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::int16_t>(static_cast<std::int32_t>(v[i]) - zero);
    return out;
}

/// Runs f(r0, r1) over [0, rows): on the hardware's threads when the work is large (each thread
/// writes its own output rows, so the result is the same bytes), else on this one.
template <class F>
void split_rows(std::int64_t rows, std::int64_t macs, F&& f) {
    const auto hw = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
    const std::int64_t parts = std::min<std::int64_t>({hw, rows, macs / (std::int64_t{1} << 22) + 1});
    if (parts <= 1) {
        f(std::int64_t{0}, rows);
        return;
    }
    std::vector<std::thread> pool;
    for (std::int64_t t = 1; t < parts; ++t) pool.emplace_back([&, t] { f(rows * t / parts, rows * (t + 1) / parts); });
    f(std::int64_t{0}, rows / parts);
    for (auto& th : pool) th.join();
}

/// The kernels hold (x - z) in int16: zero points must be 8-bit values.
inline void check_zero_points(const requant_params& q, const char* op) {
    for (const std::int32_t z : {q.input_zero_point, q.filter_zero_point})
        if (z < -255 || z > 255) fail_input(std::string(op) + ": zero point " + std::to_string(z) + " is outside -255..255");
}

inline void check_multipliers(const requant_params& q, std::int32_t channels, const char* op) {
    if (q.multipliers.size() != 1 && q.multipliers.size() != static_cast<std::size_t>(channels))
        fail_input(std::string(op) + ": " + std::to_string(q.multipliers.size()) + " multipliers for " +
                   std::to_string(channels) + " output channels");
}
}  // namespace detail

/// input [N,H,W,C], filter [O,KH,KW,C/groups], bias [O] or empty, output [N,OH,OW,O].
/// Per output pixel, its patch of (x - z_in) over the kernel window (0 where the window leaves
/// the input: TFLite skips those taps) is multiplied with every channel's row of (w - z_w): the
/// sum over the window, channel and tap, that TFLite's loops compute, in int32 as they do.
template <class T, class W>
void conv2d(std::span<const T> input, nhwc in, std::span<const W> filter, nhwc f, std::span<const std::int32_t> bias,
            std::span<T> output, nhwc out, const conv_geometry& g, const requant_params& q) {
    detail::check_multipliers(q, out.c, "CONV_2D");
    detail::check_zero_points(q, "CONV_2D");
    if (f.c <= 0 || in.c % f.c != 0) fail_input("CONV_2D: input channels not a multiple of the filter depth");
    const std::int32_t groups = in.c / f.c;
    if (out.c % groups != 0) fail_input("CONV_2D: output channels not a multiple of the group count");
    const std::int32_t per_group = out.c / groups;
    const std::int32_t pad_h = compute_padding(g.stride_h, g.dilation_h, in.h, f.h, out.h);
    const std::int32_t pad_w = compute_padding(g.stride_w, g.dilation_w, in.w, f.w, out.w);
    const auto K = static_cast<std::size_t>(f.h) * static_cast<std::size_t>(f.w) * static_cast<std::size_t>(f.c);
    const auto w16 = detail::offset_rows(filter, static_cast<std::size_t>(out.c) * K, q.filter_zero_point);
    auto rows = [&](std::int64_t r0, std::int64_t r1) {
        std::vector<std::int16_t> patch(static_cast<std::size_t>(groups) * K);
        std::vector<std::int32_t> acc(static_cast<std::size_t>(out.c));
        for (std::int64_t r = r0; r < r1; ++r) {
            const auto b = static_cast<std::int32_t>(r / out.h), oy = static_cast<std::int32_t>(r % out.h);
            for (std::int32_t ox = 0; ox < out.w; ++ox) {
                std::int16_t* p = patch.data();
                for (std::int32_t gr = 0; gr < groups; ++gr)
                    for (std::int32_t ky = 0; ky < f.h; ++ky) {
                        const std::int32_t iy = oy * g.stride_h - pad_h + ky * g.dilation_h;
                        for (std::int32_t kx = 0; kx < f.w; ++kx, p += f.c) {
                            const std::int32_t ix = ox * g.stride_w - pad_w + kx * g.dilation_w;
                            if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) {
                                std::fill(p, p + f.c, std::int16_t{0});
                                continue;
                            }
                            const T* px = input.data() + in.at(b, iy, ix, gr * f.c);
                            for (std::int32_t ic = 0; ic < f.c; ++ic)
                                p[ic] = static_cast<std::int16_t>(static_cast<std::int32_t>(px[ic]) - q.input_zero_point);
                        }
                    }
                for (std::int32_t gr = 0; gr < groups; ++gr)
                    quant::dots(patch.data() + static_cast<std::size_t>(gr) * K,
                                  w16.data() + static_cast<std::size_t>(gr) * static_cast<std::size_t>(per_group) * K,
                                  static_cast<std::size_t>(per_group), K, acc.data() + static_cast<std::size_t>(gr) * static_cast<std::size_t>(per_group));
                for (std::int32_t oc = 0; oc < out.c; ++oc) {
                    std::int32_t a = acc[static_cast<std::size_t>(oc)];
                    if (!bias.empty()) a += bias[static_cast<std::size_t>(oc)];
                    const auto at = static_cast<std::size_t>(out.at(b, oy, ox, oc));
                    if (q.accumulators != nullptr) q.accumulators[at] = a;
                    output[at] = static_cast<T>(q.apply(a, static_cast<std::size_t>(oc)));
                }
            }
        }
    };
    const std::int64_t macs = static_cast<std::int64_t>(out.size()) * static_cast<std::int64_t>(K);
    detail::split_rows(static_cast<std::int64_t>(out.n) * out.h, macs, rows);
}

/// input [N,H,W,C], filter [1,KH,KW,C·M], output channel oc = ic·M + m.
template <class T, class W>
void depthwise_conv2d(std::span<const T> input, nhwc in, std::span<const W> filter, nhwc f,
                      std::span<const std::int32_t> bias, std::span<T> output, nhwc out, const conv_geometry& g,
                      std::int32_t depth_multiplier, const requant_params& q) {
    detail::check_multipliers(q, out.c, "DEPTHWISE_CONV_2D");
    if (depth_multiplier <= 0 || out.c != in.c * depth_multiplier || f.c != out.c)
        fail_input("DEPTHWISE_CONV_2D: channel counts do not match the depth multiplier");
    const std::int32_t pad_h = compute_padding(g.stride_h, g.dilation_h, in.h, f.h, out.h);
    const std::int32_t pad_w = compute_padding(g.stride_w, g.dilation_w, in.w, f.w, out.w);
    const std::int32_t M = depth_multiplier;
    const auto C = static_cast<std::size_t>(out.c);
    // The filter less its zero point as [tap][output channel], so that the innermost loop runs
    // along the channels of one input pixel (contiguous in NHWC) and vectorises. The sums are
    // the same integers in another order, so the results are TFLite's exactly.
    std::vector<std::int32_t> w32(static_cast<std::size_t>(f.h) * static_cast<std::size_t>(f.w) * C);
    for (std::int32_t ky = 0; ky < f.h; ++ky)
        for (std::int32_t kx = 0; kx < f.w; ++kx)
            for (std::size_t oc = 0; oc < C; ++oc)
                w32[(static_cast<std::size_t>(ky) * static_cast<std::size_t>(f.w) + static_cast<std::size_t>(kx)) * C + oc] =
                    static_cast<std::int32_t>(filter[static_cast<std::size_t>(f.at(0, ky, kx, static_cast<std::int32_t>(oc)))]) -
                    q.filter_zero_point;
    const std::int32_t zi = q.input_zero_point;
    auto rows = [&](std::int64_t r0, std::int64_t r1) {
        std::vector<std::int32_t> acc(C);
        for (std::int64_t r = r0; r < r1; ++r) {
            const auto b = static_cast<std::int32_t>(r / out.h), oy = static_cast<std::int32_t>(r % out.h);
            for (std::int32_t ox = 0; ox < out.w; ++ox) {
                std::fill(acc.begin(), acc.end(), 0);
                for (std::int32_t ky = 0; ky < f.h; ++ky) {
                    const std::int32_t iy = oy * g.stride_h - pad_h + ky * g.dilation_h;
                    if (iy < 0 || iy >= in.h) continue;
                    for (std::int32_t kx = 0; kx < f.w; ++kx) {
                        const std::int32_t ix = ox * g.stride_w - pad_w + kx * g.dilation_w;
                        if (ix < 0 || ix >= in.w) continue;
                        const T* px = input.data() + in.at(b, iy, ix, 0);
                        const std::int32_t* wt =
                            w32.data() + (static_cast<std::size_t>(ky) * static_cast<std::size_t>(f.w) + static_cast<std::size_t>(kx)) * C;
                        std::int32_t* a = acc.data();
                        if (M == 1) {
                            for (std::size_t c = 0; c < C; ++c) a[c] += (static_cast<std::int32_t>(px[c]) - zi) * wt[c];
                        } else {
                            for (std::size_t oc = 0; oc < C; ++oc)
                                a[oc] += (static_cast<std::int32_t>(px[oc / static_cast<std::size_t>(M)]) - zi) * wt[oc];
                        }
                    }
                }
                const auto at0 = static_cast<std::size_t>(out.at(b, oy, ox, 0));
                for (std::size_t oc = 0; oc < C; ++oc) {
                    std::int32_t v = acc[oc];
                    if (!bias.empty()) v += bias[oc];
                    if (q.accumulators != nullptr) q.accumulators[at0 + oc] = v;
                    output[at0 + oc] = static_cast<T>(q.apply(v, oc));
                }
            }
        }
    };
    const std::int64_t macs = static_cast<std::int64_t>(out.size()) * f.h * f.w;
    detail::split_rows(static_cast<std::int64_t>(out.n) * out.h, macs, rows);
}

/// input [batches, depth] (any shape of that size), weights [units, depth], output [batches, units].
template <class T, class W>
void fully_connected(std::span<const T> input, std::span<const W> weights, std::span<const std::int32_t> bias,
                     std::span<T> output, std::int32_t batches, std::int32_t depth, std::int32_t units,
                     const requant_params& q) {
    detail::check_multipliers(q, units, "FULLY_CONNECTED");
    detail::check_zero_points(q, "FULLY_CONNECTED");
    const auto D = static_cast<std::size_t>(depth), U = static_cast<std::size_t>(units);
    const auto w16 = detail::offset_rows(weights, U * D, q.filter_zero_point);
    auto rows = [&](std::int64_t b0, std::int64_t b1) {
        std::vector<std::int16_t> x16(D);
        std::vector<std::int32_t> acc(U);
        for (std::int64_t b = b0; b < b1; ++b) {
            const T* px = input.data() + b * depth;
            for (std::size_t d = 0; d < D; ++d)
                x16[d] = static_cast<std::int16_t>(static_cast<std::int32_t>(px[d]) - q.input_zero_point);
            quant::dots(x16.data(), w16.data(), U, D, acc.data());
            for (std::size_t u = 0; u < U; ++u) {
                std::int32_t a = acc[u];
                if (!bias.empty()) a += bias[u];
                if (q.accumulators != nullptr) q.accumulators[static_cast<std::size_t>(b) * U + u] = a;
                output[static_cast<std::size_t>(b) * U + u] = static_cast<T>(q.apply(a, u));
            }
        }
    };
    detail::split_rows(batches, static_cast<std::int64_t>(batches) * units * depth, rows);
}

/// TRANSPOSE_CONV as TFLite's reference kernels compute it (reference_integer_ops::TransposeConv
/// for int8 per-channel, reference_ops::TransposeConv for uint8): every input pixel scatters
/// (x - z_in)·(w - z_w) into the output window at (y·stride - pad, x·stride - pad); the int32
/// sums, plus bias, are requantized once each with the rounding in `q` (double rounding there).
/// input [N,H,W,C], filter [O,KH,KW,C], bias [O] or empty, output [N,OH,OW,O].
template <class T, class W>
void transpose_conv2d(std::span<const T> input, nhwc in, std::span<const W> filter, nhwc f,
                      std::span<const std::int32_t> bias, std::span<T> output, nhwc out, std::int32_t stride_h,
                      std::int32_t stride_w, std::int32_t pad_h, std::int32_t pad_w, const requant_params& q) {
    detail::check_multipliers(q, out.c, "TRANSPOSE_CONV");
    if (f.c != in.c || f.n != out.c || in.n != out.n) fail_input("TRANSPOSE_CONV: filter, input and output shapes disagree");
    std::vector<std::int32_t> acc(static_cast<std::size_t>(out.size()), 0);
    for (std::int32_t b = 0; b < in.n; ++b)
        for (std::int32_t iy = 0; iy < in.h; ++iy)
            for (std::int32_t ix = 0; ix < in.w; ++ix)
                for (std::int32_t ky = 0; ky < f.h; ++ky) {
                    const std::int32_t oy = iy * stride_h - pad_h + ky;
                    if (oy < 0 || oy >= out.h) continue;
                    for (std::int32_t kx = 0; kx < f.w; ++kx) {
                        const std::int32_t ox = ix * stride_w - pad_w + kx;
                        if (ox < 0 || ox >= out.w) continue;
                        const T* px = input.data() + in.at(b, iy, ix, 0);
                        for (std::int32_t oc = 0; oc < out.c; ++oc) {
                            const W* pw = filter.data() + f.at(oc, ky, kx, 0);
                            std::int32_t sum = 0;
                            for (std::int32_t ic = 0; ic < in.c; ++ic)
                                sum += (static_cast<std::int32_t>(px[ic]) - q.input_zero_point) *
                                       (static_cast<std::int32_t>(pw[ic]) - q.filter_zero_point);
                            acc[static_cast<std::size_t>(out.at(b, oy, ox, oc))] += sum;
                        }
                    }
                }
    for (std::int64_t i = 0; i < out.size(); ++i) {
        const auto oc = static_cast<std::size_t>(i % out.c);
        std::int32_t a = acc[static_cast<std::size_t>(i)];
        if (!bias.empty()) a += bias[oc];
        output[static_cast<std::size_t>(i)] = static_cast<T>(q.apply(a, oc));
    }
}

}  // namespace vnnx::ref
