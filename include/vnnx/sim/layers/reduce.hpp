#pragma once
// Reduction layers MEAN (40), SUM (74), REDUCE_MAX (82), REDUCE_MIN (89), from the record:
// reduce8 flags say which channels-first axes (channels, rows, columns) are reduced; the
// input is seen as [outer, C, H, W] and the output holds the kept elements in order (its record
// shape may keep or drop the reduced axes). input_offset/output_offset are the zero points,
// output_multiplier/output_shift the stored requantization, activation_min/max the clamp.
//   MEAN, H and W of a 4-D tensor kept 4-D: TFLite's integer kernel: the raw codes are summed,
//        scaled by the stored multiplier (which folds the 1/n) and shifted by
//        z_out − round(z_in·S_in/S_out) (float, from the tensor records' scales).
//   MEAN otherwise, one quantization in and out: TFLite divides the integer sum of the codes by
//        n, truncating toward zero.
//   MEAN otherwise: TFLite's QuantizedMeanOrSum, which works in float from the tensor records'
//        scales: round(mean·S_in/S_out − z_in·S_in/S_out) + z_out.
//   SUM, one quantization: (Σ(x − z_in))·M + z_out with the stored multiplier (M = QM(1), exact).
//   SUM otherwise: TFLite's QuantizedMeanOrSum(compute_sum), in float from the records' scales:
//        round(Σx·S_in/S_out − z_in·S_in/S_out·n) + z_out (the stored QM(S_in/S_out) applied to
//        Σ(x − z_in) rounds once in fixed point and can differ by 1 LSB).
//   REDUCE_PROD: TFLite's product: p = x0 − z_in, then p = S(p·(x − z_in)) per further element in
//        TFLite (channels-last) order, and S(p) + z_out, S the stored scaling applied as
//        TFLite's 64-bit MultiplyByQuantizedMultiplier (multiplier rounded to 16 bits).
//   REDUCE_MAX / REDUCE_MIN: the extreme code, requantized (x − z_in)·M + z_out (exact identity
//        when input and output quantization agree, QM(1) = (2^30, 1)).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/support/byte_sum.hpp"

namespace vnnx::sim {

namespace reduce_exec_detail {

struct reduce_args {
    std::int32_t kind = 40;
    bool red_c = false, red_h = false, red_w = false;
    std::int32_t multiplier = 0, shift = 0;
    std::int32_t z_in = 0, z_out = 0, lo = -128, hi = 127;
};

/// Runs a reduction on tensors [input, output]; Ctx is a node or layer context.
/// TFLite's MultiplyByQuantizedMultiplier for a 64-bit input (REDUCE_PROD).
inline std::int32_t scale64(std::int64_t x, std::int32_t multiplier, std::int32_t shift) {
    const std::int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const std::int32_t total = 15 - shift;
    return static_cast<std::int32_t>((x * reduced + (std::int64_t{1} << (total - 1))) >> total);
}

/// Reductions keep elements in TFLite order; a record that drops axes can change which axis is
/// "channels" ([1,H,W,C] reduced over C is [1,H,W], channels-first [W,1,H]). Position, in the
/// output record's channels-first memory, of the output element with TFLite row-major index k.
inline std::uint64_t cf_position(const tensor_ref& out, std::uint64_t k) {
    if (out.rank() < 3) return k;
    const std::uint64_t C = static_cast<std::uint64_t>(out.channels()), H = static_cast<std::uint64_t>(out.rows()),
                        W = static_cast<std::uint64_t>(out.cols());
    const std::uint64_t c = k % C, w = (k / C) % W, h = (k / (C * W)) % H, lead = k / (C * W * H);
    return ((lead * C + c) * H + h) * W + w;
}

/// TFLite row-major index, in the reduced (keep_dims) shape [outer, H', W', C'], of the input
/// element at channels-first (o, ch, y, x); rank <= 2 tensors have C = 1 and no permutation.
struct keep_index {
    std::int64_t oc, oh, ow;
    bool rc, rh, rw;
    [[nodiscard]] std::size_t operator()(std::int64_t o, std::int64_t ch, std::int64_t y, std::int64_t x) const {
        return static_cast<std::size_t>(((o * oh + (rh ? 0 : y)) * ow + (rw ? 0 : x)) * oc + (rc ? 0 : ch));
    }
};

template <class Ctx>
void run_reduce(const Ctx& c, const tensor_ref& in, const tensor_ref& out, const reduce_args& a) {
    if ((in.type != 0 && in.type != 1) || (out.type != 0 && out.type != 1)) c.reject("expects 8-bit tensors");
    if (!a.red_c && !a.red_h && !a.red_w) c.reject("reduce8 reduces no axis");
    const std::int64_t outer = in.outer();
    const std::int64_t C = in.channels(), H = in.rows(), W = in.cols();
    const std::int64_t oc = a.red_c ? 1 : C, oh = a.red_h ? 1 : H, ow = a.red_w ? 1 : W;
    const std::int64_t n = (a.red_c ? C : 1) * (a.red_h ? H : 1) * (a.red_w ? W : 1);
    if (static_cast<std::int64_t>(out.count) != outer * oc * oh * ow)
        c.reject("output has " + std::to_string(out.count) + " elements but the reduction keeps " +
                 std::to_string(outer * oc * oh * ow));
    if (a.shift < -31 || a.shift > 30) c.reject("output_shift " + std::to_string(a.shift) + " is outside -31..30");
    const bool is_max = a.kind == static_cast<std::int32_t>(builtin_operator::REDUCE_MAX);
    const bool is_min = a.kind == static_cast<std::int32_t>(builtin_operator::REDUCE_MIN);
    const bool is_mean = a.kind == static_cast<std::int32_t>(builtin_operator::MEAN);
    const bool is_prod = a.kind == static_cast<std::int32_t>(builtin_operator::REDUCE_PROD);
    if (is_prod && (a.shift < -31 || a.shift > 7)) c.reject("REDUCE_PROD scaling shift must lie in -31..7");
    // TFLite picks its integer MEAN kernel for 4-D keep_dims means over exactly H and W.
    const bool mean_hw = is_mean && in.rank() == 4 && out.rank() == 4 && a.red_h && a.red_w && !a.red_c;
    const float s_ratio = in.scale / out.scale;
    if ((is_mean || a.kind == static_cast<std::int32_t>(builtin_operator::SUM)) && !(std::isfinite(s_ratio) && s_ratio > 0))
        c.reject("tensor scales must be positive");
    const bool same_quant = in.scale == out.scale && a.z_in == a.z_out;
    std::int32_t hw_bias = 0;
    if (mean_hw) {
        float hw_temp = static_cast<float>(a.z_in) * in.scale / out.scale;
        hw_temp = hw_temp > 0 ? hw_temp + 0.5f : hw_temp - 0.5f;
        // Checked before the conversion: a damaged record's scales make it any float.
        if (!(std::fabs(hw_temp) < 1e9f))
            c.reject("MEAN: input_offset times the scale ratio (" + std::to_string(hw_temp) + ") is outside 32 bits");
        hw_bias = a.z_out - static_cast<std::int32_t>(hw_temp);
    }

    // Only the quantities this reduction uses are allocated.
    const auto count = static_cast<std::size_t>(out.count);
    std::vector<std::int64_t> acc(is_max || is_min ? 0 : count, 0);
    std::vector<std::int32_t> ext(is_max || is_min ? count : 0, is_max ? INT32_MIN : INT32_MAX);
    const keep_index key{oc, oh, ow, a.red_c, a.red_h, a.red_w};
    std::vector<std::int32_t> prod(is_prod ? count : 0, 0);
    std::vector<bool> started(is_prod ? count : 0, false);
    const float lo = static_cast<float>(a.lo), hi = static_cast<float>(a.hi);
    // The TFLite order is the channels-first one when one of C and H*W is 1 (a pooled
    // classifier head): no divisions per element.
    const bool in_order = out.rank() < 3 || out.channels() == 1 || out.rows() * out.cols() == 1;
    // Output element k (TFLite order) from its reduced quantity.
    auto finish = [&](std::size_t k) {
        std::int32_t r = 0;
        if (is_prod) {
            r = scale64(prod[k], a.multiplier, a.shift) + a.z_out;
        } else if (is_max || is_min) {
            r = quant::multiply_by_quantized_multiplier(ext[k] - a.z_in, a.multiplier, a.shift) + a.z_out;
        } else if (mean_hw) {
            if (acc[k] > INT32_MAX || acc[k] < INT32_MIN) c.reject("MEAN sum overflows 32 bits");
            r = quant::multiply_by_quantized_multiplier(static_cast<std::int32_t>(acc[k]), a.multiplier, a.shift) + hw_bias;
        } else if (is_mean && same_quant) {
            // One quantization: TFLite divides the integer sum of the codes, truncating.
            r = static_cast<std::int32_t>(acc[k] / n);
        } else if (is_mean) {
            const float mean = static_cast<float>(acc[k]) / static_cast<float>(n);
            const float bias = static_cast<float>(-a.z_in) * s_ratio;
            const float f = std::clamp(std::round(mean * s_ratio + bias) + static_cast<float>(a.z_out), lo, hi);
            r = static_cast<std::int32_t>(f);
        } else if (same_quant) {  // SUM with one quantization: the raw codes summed
            const std::int64_t centred = acc[k] - static_cast<std::int64_t>(a.z_in) * n;
            if (centred > INT32_MAX || centred < INT32_MIN) c.reject("SUM overflows 32 bits");
            r = quant::multiply_by_quantized_multiplier(static_cast<std::int32_t>(centred), a.multiplier, a.shift) + a.z_out;
        } else {  // SUM: TFLite's QuantizedMeanOrSum(compute_sum), in float from the records' scales
            const float bias = static_cast<float>(-a.z_in) * s_ratio * static_cast<float>(n);
            const float f = std::round(static_cast<float>(acc[k]) * s_ratio + bias);
            r = std::isfinite(f) && std::abs(f) < 1e9f ? static_cast<std::int32_t>(f) + a.z_out : (f < 0 ? a.lo : a.hi);
        }
        out.set(in_order ? k : cf_position(out, k), std::clamp(r, a.lo, a.hi));
    };
    if (!is_prod && a.red_h && a.red_w && !a.red_c) {
        // Over H and W only: each channel plane is contiguous; integer sums and extremes do not
        // depend on the order (the global pooling of classifier heads). One plane per index,
        // reduced and finished, over the pool when there is enough work (it ran alone, a
        // tenth of a classifier head's time on two threads).
        const auto plane = static_cast<std::size_t>(H * W);
        const auto planes = static_cast<std::size_t>(outer * C);
        // An output over the input is written only once every plane is read.
        const bool overlap = out.data < in.data + planes * plane && in.data < out.data + count * out.elem;
        auto extreme = [&](const auto* p) {
            std::int32_t e = is_max ? INT32_MIN : INT32_MAX;
            if (is_max)
                for (std::size_t i = 0; i < plane; ++i) e = std::max<std::int32_t>(e, p[i]);
            else
                for (std::size_t i = 0; i < plane; ++i) e = std::min<std::int32_t>(e, p[i]);
            return e;
        };
        // Plane q = (o, ch) keeps element o*C + ch = q (key() with H and W reduced): no division.
        auto body = [&](std::size_t k) {
            const std::uint8_t* p = in.u8() + k * plane;
            if (!is_max && !is_min) acc[k] = byte_sum(p, plane, in.type == 1);
            else if (in.type == 1) ext[k] = extreme(reinterpret_cast<const std::int8_t*>(p));
            else ext[k] = extreme(p);
            if (!overlap) finish(k);
        };
        if (c.ex.pool && planes * plane >= 32768) c.ex.pool->parallel_for(planes, body);
        else
            for (std::size_t q = 0; q < planes; ++q) body(q);
        if (overlap)
            for (std::size_t k = 0; k < count; ++k) finish(k);
        return;
    }
    // TFLite (channels-last) order: REDUCE_PROD's per-step rounding depends on it.
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t y = 0; y < H; ++y)
            for (std::int64_t x = 0; x < W; ++x)
                for (std::int64_t ch = 0; ch < C; ++ch) {
                    const auto i = static_cast<std::uint64_t>(((o * C + ch) * H + y) * W + x);
                    const auto k = key(o, ch, y, x);
                    const std::int32_t v = in.get(i);
                    if (is_max) ext[k] = std::max(ext[k], v);
                    else if (is_min) ext[k] = std::min(ext[k], v);
                    else acc[k] += v;
                    if (is_prod) {
                        prod[k] = started[k] ? scale64(std::int64_t{prod[k]} * (v - a.z_in), a.multiplier, a.shift) : v - a.z_in;
                        started[k] = true;
                    }
                }
    for (std::size_t k = 0; k < count; ++k) finish(k);
}

template <class Ctx, class Reduce8>
reduce_args args_of(const Ctx& c, const Reduce8& r8, std::int32_t kind, const tensor_ref& out) {
    reduce_args a;
    a.kind = kind;
    a.red_c = r8.channels != 0;
    a.red_h = r8.rows != 0;
    a.red_w = r8.columns != 0;
    a.multiplier = c.int32s(c.rec.output_multiplier, 1, "output_multiplier")[0];
    a.shift = c.int32s(c.rec.output_shift, 1, "output_shift")[0];
    a.z_in = c.rec.input_offset;
    a.z_out = c.rec.output_offset;
    a.lo = std::max(c.rec.activation_min, out.type_min());
    a.hi = std::min(c.rec.activation_max, out.type_max());
    if (a.lo > a.hi) c.reject("activation_min exceeds activation_max");
    // 8-bit zero points; far larger ones are a damaged record and would overflow the 32-bit sums.
    for (const auto& [z, name] : {std::pair{a.z_in, "input_offset"}, std::pair{a.z_out, "output_offset"}})
        if (z < -65536 || z > 65536) c.reject(std::string(name) + " " + std::to_string(z) + " is outside -65536..65536");
    if (a.multiplier < 0) c.reject("output_multiplier is negative");
    return a;
}

}  // namespace reduce_exec_detail

template <std::int32_t Type>
struct reduce_layer_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        const auto r8 = c.rec.options.get<format::layer_options::reduce8>();
        const auto a = reduce_exec_detail::args_of(c, r8, Type, c.tensors[1]);
        reduce_exec_detail::run_reduce(c, c.tensors[0], c.tensors[1], a);
    }
};

template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::MEAN)> : reduce_layer_exec<40> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::SUM)> : reduce_layer_exec<74> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::REDUCE_MAX)> : reduce_layer_exec<82> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::REDUCE_MIN)> : reduce_layer_exec<89> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::REDUCE_PROD)> : reduce_layer_exec<81> {};

}  // namespace vnnx::sim
