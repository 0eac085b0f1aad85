#pragma once
// Layers over one axis and PRELU, from the record alone:
//   PRELU (54): x − z_in >= 0 → QM(output); below → (x − z_in)·(a − alpha_offset) · QM(alpha),
//     a from prelu.alpha_data, an [C, H, W] block (alpha_shape) repeated over the leading axes.
//   LOG_SOFTMAX (50): along LogSoftmaxOptions.axis (−3 channels, −1 columns); S_in is recovered
//     exactly from input_multiplier/shift = QM(S_in·2^26) (a float scale fits the 31-bit
//     multiplier), S_out from output_multiplier/shift; then TFLite's builtin recipe: a float
//     table exp(−S_in·d), log of the sum, rint of the scaled difference plus output_offset.
//   L2_NORMALIZATION (11): along the channels-first axis −3 (rank >= 3) or −1; Σ(x − z_in)²,
//     its inverse square root in fixed point, then TFLite's int8 (signed output) or uint8
//     rescaling.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/quant/inv_sqrt.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/layers/eltwise.hpp"

namespace vnnx::sim {

namespace normalize_detail {
/// Length, stride and count of the vectors along a channels-first axis (−3, −2, −1).
struct axis_walk {
    std::int64_t n = 1, inner = 1, outer = 1;
};
inline axis_walk walk(const layer_context& c, const tensor_ref& t, std::int32_t axis) {
    if (axis < -3 || axis > -1) c.reject("axis " + std::to_string(axis) + " is not one of -3, -2, -1");
    const auto from_end = static_cast<std::size_t>(-axis);
    axis_walk w;
    w.n = t.dim_from_end(from_end);
    w.inner = from_end == 3 ? std::int64_t{t.rows()} * t.cols() : from_end == 2 ? t.cols() : 1;
    if (w.n <= 0) c.reject("empty normalised axis");
    w.outer = static_cast<std::int64_t>(t.count) / (w.n * w.inner);
    return w;
}
inline void unary(const layer_context& c) {
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    c.require_same_count(c.tensors[0], c.tensors[1]);
}
}  // namespace normalize_detail

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::PRELU)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        normalize_detail::unary(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto u = c.rec.options.get<format::layer_options::prelu>();
        const auto m = eltwise_detail::read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        const auto ma = eltwise_detail::read_qm(c, u.alpha_multiplier, u.alpha_shift, "alpha");
        const std::int64_t block = std::int64_t{in.channels()} * in.rows() * in.cols();
        if (u.alpha_shape[0] != 1 || std::int64_t{u.alpha_shape[1]} * u.alpha_shape[2] * u.alpha_shape[3] != block)
            c.reject("alpha_shape does not cover the input's [C, H, W]");
        const auto alpha = c.bytes(u.alpha_data, static_cast<std::uint64_t>(block), "alpha_data");
        const std::int32_t zi = c.rec.input_offset, zo = c.rec.output_offset, za = u.alpha_offset;
        const bool s = in.is_signed();
        for (std::uint64_t i = 0; i < in.count; ++i) {
            const std::int32_t x = in.get(i) - zi;
            std::int32_t v;
            if (x >= 0) {
                v = eltwise_detail::scale(x, m);
            } else {
                const auto b = static_cast<std::uint8_t>(alpha[i % static_cast<std::uint64_t>(block)]);
                const std::int32_t a = (s ? static_cast<std::int8_t>(b) : b) - za;
                v = eltwise_detail::scale(x * a, ma);
            }
            out.set(i, std::clamp(zo + v, out.type_min(), out.type_max()));
        }
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::LOG_SOFTMAX)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        normalize_detail::unary(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto o = c.rec.options.get<format::layer_options::LogSoftmaxOptions>();
        const auto w = normalize_detail::walk(c, in, o.axis);
        if (w.n != o.depth) c.reject("depth " + std::to_string(o.depth) + " differs from the axis length " + std::to_string(w.n));
        const auto mb = c.int32s(c.rec.input_multiplier, 1, "input_multiplier")[0];
        const auto sb = c.int32s(c.rec.input_shift, 1, "input_shift")[0];
        const auto mo = eltwise_detail::read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        if (mb <= 0 || sb < 0 || sb > 31 || mo.multiplier <= 0) c.reject("input or output multiplier is not a positive scale");
        const auto s_in = static_cast<float>(std::ldexp(static_cast<double>(mb), sb - 31 - 26));
        const auto s_out = static_cast<float>(std::ldexp(static_cast<double>(mo.multiplier), mo.shift - 31));
        float table[256];  // table[255 − d] = exp(−S_in·d)
        for (int d = 0; d <= 255; ++d) table[255 - d] = std::exp(-s_in * static_cast<float>(d));
        const std::int32_t zo = c.rec.output_offset;
        for (std::int64_t a = 0; a < w.outer; ++a)
            for (std::int64_t b = 0; b < w.inner; ++b) {
                const std::int64_t base = a * w.n * w.inner + b;
                auto at = [&](std::int64_t j) { return static_cast<std::uint64_t>(base + j * w.inner); };
                std::int32_t mx = in.type_min();
                for (std::int64_t j = 0; j < w.n; ++j) mx = std::max(mx, in.get(at(j)));
                float sum = 0.0f;
                for (std::int64_t j = 0; j < w.n; ++j) sum += table[255 - mx + in.get(at(j))];
                const float k = s_in / s_out;
                const float pre = (s_in * static_cast<float>(mx) + std::log(sum)) / s_out;
                for (std::int64_t j = 0; j < w.n; ++j) {
                    const float v = k * static_cast<float>(in.get(at(j))) - pre;
                    out.set(at(j), std::clamp(static_cast<std::int32_t>(std::rint(v)) + zo, out.type_min(), out.type_max()));
                }
            }
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::L2_NORMALIZATION)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        normalize_detail::unary(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto w = normalize_detail::walk(c, in, in.rank() >= 3 ? -3 : -1);
        const std::int32_t zi = c.rec.input_offset;
        for (std::int64_t a = 0; a < w.outer; ++a)
            for (std::int64_t b = 0; b < w.inner; ++b) {
                const std::int64_t base = a * w.n * w.inner + b;
                auto at = [&](std::int64_t j) { return static_cast<std::uint64_t>(base + j * w.inner); };
                std::int32_t acc = 0;
                for (std::int64_t j = 0; j < w.n; ++j) {
                    const std::int32_t d = in.get(at(j)) - zi;
                    acc += d * d;
                }
                const auto m = quant::inv_sqrt_quantized_multiplier_exp(acc, -1);
                for (std::int64_t j = 0; j < w.n; ++j) {
                    const std::int32_t d = in.get(at(j)) - zi;
                    const std::int32_t v =
                        out.is_signed() ? quant::multiply_by_quantized_multiplier(d, m.multiplier, m.shift + 7)
                                        : 128 + quant::multiply_by_quantized_multiplier_smaller_than_one_exp(128 * d, m.multiplier, m.shift);
                    out.set(at(j), std::clamp(v, out.type_min(), out.type_max()));
                }
            }
    }
};

}  // namespace vnnx::sim
