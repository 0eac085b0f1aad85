#pragma once
// TRANSPOSE_CONV (lowering.md §7.8.1): rewritten into DILATE (stride > 1) + PADV2 (when it pads)
// + a VALID stride-1 CONV_2D, so the FIA conv path, its weight packing and its requantization
// records run it. A transposed convolution is the direct convolution of the dilated, padded
// input with the kernel turned by 180 degrees; the SDK's pass keeps the kernel unturned and
// swaps odd SAME pads [quirk], both corrected here: the filter is a new constant with both
// spatial axes reversed, and the pads are top/left k - 1 - p and bottom/right what makes the
// output size (TFLite's p: ⌊total/2⌋, the odd unit going to the end).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

/// The direct-conv form of a TRANSPOSE_CONV: dilated input size and the explicit pads.
struct transpose_conv_form {
    std::int32_t N = 1, H = 0, W = 0, C = 0, K = 0, kh = 0, kw = 0, sh = 1, sw = 1, OH = 0, OW = 0;
    std::int32_t dil_h = 0, dil_w = 0;                      // (H - 1)·sh + 1, (W - 1)·sw + 1
    std::int32_t top = 0, bottom = 0, left = 0, right = 0;  // pads of the dilated input
    std::string error;                                      // non-empty: not expressible
};

namespace detail {
/// TFLite's pad of one axis: the forward conv from the output size back to the input size.
inline std::int32_t tflite_transpose_pad(padding p, std::int32_t out, std::int32_t k, std::int32_t s) {
    const std::int32_t back = p == padding::SAME ? (out + s - 1) / s : (out + s - k) / s;
    return std::max((back - 1) * s + k - out, 0) / 2;
}
}  // namespace detail

/// Inputs of the operator: output_shape, filter [K, kh, kw, C], input [N, H, W, C], bias.
inline transpose_conv_form transpose_conv_form_of(const graph& g, const op& o) {
    transpose_conv_form f;
    if (o.inputs.size() < 3 || o.inputs[1] < 0 || o.inputs[2] < 0 || o.outputs.empty() || o.outputs[0] < 0) {
        f.error = "needs output_shape, filter, input and one output";
        return f;
    }
    const auto& x = g.t(o.inputs[2]).shape;
    const auto& w = g.t(o.inputs[1]).shape;
    const auto& y = g.t(o.outputs[0]).shape;
    if (x.size() != 4 || w.size() != 4 || y.size() != 4) {
        f.error = "input, filter and output must have rank 4";
        return f;
    }
    f.N = x[0], f.H = x[1], f.W = x[2], f.C = x[3];
    f.K = w[0], f.kh = w[1], f.kw = w[2];
    f.OH = y[1], f.OW = y[2];
    f.sh = o.options.stride_h, f.sw = o.options.stride_w;
    if (f.sh < 1 || f.sw < 1) {
        f.error = "strides must be >= 1";
        return f;
    }
    if (f.kh < 1 || f.kw < 1 || f.H < 1 || f.W < 1 || f.OH < 1 || f.OW < 1) {
        f.error = "filter, input and output dimensions must be positive";
        return f;
    }
    // The dilated, padded input must stay far inside int32 (strides are not bounded by TFLite).
    constexpr std::int64_t limit = 1 << 24;
    const std::int64_t dil_h = std::int64_t(f.H - 1) * f.sh + 1, dil_w = std::int64_t(f.W - 1) * f.sw + 1;
    if (dil_h + f.kh > limit || dil_w + f.kw > limit || std::int64_t(f.OH) + f.kh > limit || std::int64_t(f.OW) + f.kw > limit) {
        f.error = "the dilated input is larger than " + std::to_string(limit) + " rows or columns";
        return f;
    }
    f.dil_h = static_cast<std::int32_t>(dil_h);
    f.dil_w = static_cast<std::int32_t>(dil_w);
    f.top = f.kh - 1 - detail::tflite_transpose_pad(o.options.pad, f.OH, f.kh, f.sh);
    f.left = f.kw - 1 - detail::tflite_transpose_pad(o.options.pad, f.OW, f.kw, f.sw);
    f.bottom = f.OH + f.kh - 1 - f.top - f.dil_h;
    f.right = f.OW + f.kw - 1 - f.left - f.dil_w;
    if (f.top < 0 || f.bottom < 0 || f.left < 0 || f.right < 0)
        f.error = "output " + std::to_string(f.OH) + "x" + std::to_string(f.OW) + " does not follow from input " +
                  std::to_string(f.H) + "x" + std::to_string(f.W) + " with a " + std::to_string(f.kh) + "x" +
                  std::to_string(f.kw) + " kernel and strides " + std::to_string(f.sh) + "x" + std::to_string(f.sw) +
                  " (the result would need cropping)";
    return f;
}

inline void transpose_conv(graph& g) {
    using B = builtin_operator;
    std::vector<op> out;
    out.reserve(g.ops.size());
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::TRANSPOSE_CONV) {
            out.push_back(std::move(o));
            continue;
        }
        const auto f = transpose_conv_form_of(g, o);
        if (!f.error.empty()) fail(error_kind::unsupported, g.source + ": " + describe(o) + ": " + f.error);
        const std::int32_t x = o.inputs[2], w = o.inputs[1];
        const std::int32_t bias = o.inputs.size() > 3 ? o.inputs[3] : -1;
        const std::string base = g.t(o.outputs[0]).name;
        std::int32_t cur = x;
        std::int32_t fill = -1;
        auto fill_value = [&] {  // the input zero point: (x - z_in) = 0 adds nothing to the sums
            if (fill >= 0) return fill;
            tensor cv;
            cv.name = g.unique_name(base + "/fill");
            cv.type = g.t(x).type;
            cv.quant = g.t(x).quant;
            cv.data = std::vector<std::byte>{static_cast<std::byte>(static_cast<std::uint8_t>(g.t(x).quant.zero0()))};
            fill = g.add_tensor(std::move(cv));
            return fill;
        };
        if (f.sh > 1 || f.sw > 1) {
            const auto dil = add_i32_constant(g, base + "/dilations", {4}, {1, f.sh, f.sw, 1});
            const auto v = fill_value();
            const auto d = add_activation_like(g, x, base + "/dilated", {f.N, f.dil_h, f.dil_w, f.C});
            op dl;
            dl.code = B::DILATE;
            dl.inputs = {cur, dil, v};
            dl.outputs = {d};
            out.push_back(std::move(dl));
            cur = d;
        }
        if (f.top + f.bottom + f.left + f.right > 0) {
            const auto pads = add_i32_constant(g, base + "/pads", {4, 2}, {0, 0, f.top, f.bottom, f.left, f.right, 0, 0});
            const auto v = fill_value();
            const auto p = add_activation_like(g, x, base + "/padded",
                                               {f.N, f.dil_h + f.top + f.bottom, f.dil_w + f.left + f.right, f.C});
            op pd;
            pd.code = B::PADV2;
            pd.inputs = {cur, pads, v};
            pd.outputs = {p};
            out.push_back(std::move(pd));
            cur = p;
        }
        // The filter turned by 180 degrees: [k][y][x][c] = old[k][kh-1-y][kw-1-x][c].
        tensor rot = g.t(w);
        rot.name = g.unique_name(g.t(w).name + "/rotated");
        const auto& src = *g.t(w).data;
        if (src.size() != static_cast<std::size_t>(f.K) * f.kh * f.kw * f.C * tflite::element_size(g.t(w).type))
            fail(error_kind::bad_input, g.source + ": " + describe(o) + ": filter data does not hold its shape's elements");
        std::vector<std::byte> turned(src.size());
        const std::size_t C = static_cast<std::size_t>(f.C), kw = static_cast<std::size_t>(f.kw), kh = static_cast<std::size_t>(f.kh);
        for (std::size_t k = 0; k < static_cast<std::size_t>(f.K); ++k)
            for (std::size_t yy = 0; yy < kh; ++yy)
                for (std::size_t xx = 0; xx < kw; ++xx)
                    for (std::size_t c = 0; c < C; ++c)
                        turned[((k * kh + yy) * kw + xx) * C + c] = src.at(((k * kh + (kh - 1 - yy)) * kw + (kw - 1 - xx)) * C + c);
        rot.data = std::move(turned);
        const auto wr = g.add_tensor(std::move(rot));
        op conv;
        conv.code = B::CONV_2D;
        conv.inputs = {cur, wr};
        if (bias >= 0) conv.inputs.push_back(bias);
        conv.outputs = {o.outputs[0]};
        conv.options.pad = padding::VALID;
        conv.options.fused = o.options.fused;
        conv.source_index = o.source_index;
        out.push_back(std::move(conv));
    }
    g.ops = std::move(out);
}

}  // namespace vnnx::compiler::passes
