#pragma once
// 8-bit MEAN over any axes (sum, then one requantization), ARG_MAX/ARG_MIN, and the other
// reductions: REDUCE_MAX/MIN, REDUCE_PROD and SUM.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/eltwise.hpp"
#include "vnnx/ref/shape.hpp"

namespace vnnx::ref {

/// MEAN over axes {1, 2} of [N,H,W,C] → [N,1,1,C], TFLite's 4-D kernel (keep_dims, H and W):
/// the raw codes are summed, scaled by QM(S_in / (n·S_out)) (computed in float, double
/// rounding) and shifted by z_out − round_away(z_in·S_in/S_out) (float). Measured bit-exact
/// against the TFLite build of the shared reference vectors.
template <class T>
void mean_hw(std::span<const T> in, nhwc s, std::span<T> out, operand_quant qi, operand_quant qo) {
    const float count = static_cast<float>(s.w * s.h);
    float temp = static_cast<float>(qi.zero_point) * qi.scale / qo.scale;
    temp = temp > 0 ? temp + 0.5f : temp - 0.5f;
    const std::int32_t bias = qo.zero_point - static_cast<std::int32_t>(temp);
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale / (count * qo.scale)));
    for (std::int32_t b = 0; b < s.n; ++b)
        for (std::int32_t c = 0; c < s.c; ++c) {
            std::int32_t acc = 0;
            for (std::int32_t y = 0; y < s.h; ++y)
                for (std::int32_t x = 0; x < s.w; ++x) acc += in[static_cast<std::size_t>(s.at(b, y, x, c))];
            acc = quant::multiply_by_quantized_multiplier(acc, m.multiplier, m.shift) + bias;
            out[static_cast<std::size_t>(static_cast<std::int64_t>(b) * s.c + c)] = static_cast<T>(
                std::clamp<std::int32_t>(acc, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
        }
}

/// Other 8-bit MEANs: TFLite's QuantizedMeanOrSum of this build, in float: the mean of the
/// raw codes, then round(mean·S_in/S_out − z_in·S_in/S_out) + z_out, clamped. Matches the
/// golden vectors (test/data/ref/mean_last_axis_int8); an integer-only variant did not.
template <class T>
void mean_requantize(std::span<const std::int64_t> sums, std::int64_t count, std::span<T> out, operand_quant qi,
                     operand_quant qo) {
    const float scale = qi.scale / qo.scale;
    const float bias = static_cast<float>(-qi.zero_point) * scale;
    constexpr float lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    for (std::size_t i = 0; i < sums.size(); ++i) {
        const float mean = static_cast<float>(sums[i]) / static_cast<float>(count);
        float r = std::min(std::round(mean * scale + bias) + static_cast<float>(qo.zero_point), hi);
        r = std::max(r, lo);
        out[i] = static_cast<T>(r);
    }
}

/// Sums over the axes in `reduce` (flags per input axis); output in row-major order of the kept axes.
template <class T>
std::vector<std::int64_t> reduce_sum(std::span<const T> in, const shape_t& shape, const std::vector<bool>& reduce,
                                     std::int64_t& count) {
    std::vector<std::int64_t> out_strides(shape.size(), 0);
    std::int64_t n_out = 1;
    count = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        if (reduce[i]) {
            count *= shape[i];
        } else {
            out_strides[i] = n_out;
            n_out *= shape[i];
        }
    }
    std::vector<std::int64_t> sums(static_cast<std::size_t>(n_out), 0);
    std::vector<std::int32_t> idx(shape.size(), 0);
    std::int64_t o = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        sums[static_cast<std::size_t>(o)] += in[i];
        for (std::size_t d = shape.size(); d-- > 0;) {
            ++idx[d];
            o += out_strides[d];
            if (idx[d] < shape[d]) break;
            o -= out_strides[d] * idx[d];
            idx[d] = 0;
        }
    }
    return sums;
}

/// Index of the first maximum (or minimum) along `axis`; output shape drops the axis.
template <class T, class Index>
void arg_max(std::span<const T> in, const shape_t& shape, std::int32_t axis, std::span<Index> out, bool minimum = false) {
    std::int64_t outer = 1, inner = 1;
    for (std::int32_t i = 0; i < axis; ++i) outer *= shape[static_cast<std::size_t>(i)];
    for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
    const std::int64_t n = shape[static_cast<std::size_t>(axis)];
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t k = 0; k < inner; ++k) {
            const T* base = in.data() + o * n * inner + k;
            T best = base[0];
            std::int64_t bi = 0;
            for (std::int64_t j = 1; j < n; ++j) {
                const T v = base[j * inner];
                if (minimum ? v < best : v > best) {
                    best = v;
                    bi = j;
                }
            }
            out[static_cast<std::size_t>(o * inner + k)] = static_cast<Index>(bi);
        }
}

/// Folds the axes in `reduce` (flags per input axis) in row-major input order: each output
/// element starts with first(x) of its first input and takes next(acc, x) for the others
/// (TFLite's ReduceGeneric). Output in row-major order of the kept axes.
template <class T, class Acc, class First, class Next>
std::vector<Acc> reduce_generic(std::span<const T> in, const shape_t& shape, const std::vector<bool>& reduce, First&& first,
                                Next&& next) {
    std::vector<std::int64_t> out_strides(shape.size(), 0);
    std::int64_t n_out = 1;
    for (std::size_t i = shape.size(); i-- > 0;)
        if (!reduce[i]) {
            out_strides[i] = n_out;
            n_out *= shape[i];
        }
    std::vector<Acc> acc(static_cast<std::size_t>(n_out));
    std::vector<bool> seen(static_cast<std::size_t>(n_out), false);
    std::vector<std::int32_t> idx(shape.size(), 0);
    std::int64_t o = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const auto k = static_cast<std::size_t>(o);
        acc[k] = seen[k] ? next(acc[k], in[i]) : first(in[i]);
        seen[k] = true;
        for (std::size_t d = shape.size(); d-- > 0;) {
            ++idx[d];
            o += out_strides[d];
            if (idx[d] < shape[d]) break;
            o -= out_strides[d] * idx[d];
            idx[d] = 0;
        }
    }
    return acc;
}

/// REDUCE_MAX / REDUCE_MIN: the raw codes (TFLite requires one quantization in and out).
template <class T>
void reduce_max_min(std::span<const T> in, const shape_t& shape, const std::vector<bool>& reduce, std::span<T> out, bool maximum) {
    const auto r = reduce_generic<T, T>(in, shape, reduce, [](T x) { return x; },
                                        [&](T a, T x) { return maximum ? std::max(a, x) : std::min(a, x); });
    std::copy(r.begin(), r.end(), out.begin());
}

/// TFLite's 64-bit MultiplyByQuantizedMultiplier: the multiplier rounded to 16 bits, one rounding.
[[nodiscard]] inline std::int32_t multiply_by_quantized_multiplier_64(std::int64_t x, std::int32_t multiplier, int shift) {
    const std::int32_t reduced = multiplier < 0x7FFF0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7FFF;
    const int total_shift = 15 - shift;
    x = x * static_cast<std::int64_t>(reduced) + (std::int64_t{1} << (total_shift - 1));
    return static_cast<std::int32_t>(x >> total_shift);
}

/// REDUCE_PROD: every product step is rescaled by QM(S_in / S_out^(1/n)) (n reduced elements),
/// once more at the end, so that the accumulator never overflows (TFLite's QuantizedReduceProd).
template <class T>
void reduce_prod(std::span<const T> in, const shape_t& shape, const std::vector<bool>& reduce, std::span<T> out,
                 operand_quant qi, operand_quant qo) {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < shape.size(); ++i)
        if (reduce[i]) n *= shape[i];
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale) /
                                              std::pow(static_cast<double>(qo.scale), 1.0 / static_cast<double>(n)));
    const auto r = reduce_generic<T, std::int32_t>(
        in, shape, reduce, [&](T x) { return static_cast<std::int32_t>(x) - qi.zero_point; },
        [&](std::int32_t acc, T x) {
            return multiply_by_quantized_multiplier_64(static_cast<std::int64_t>(acc) * (static_cast<std::int32_t>(x) - qi.zero_point),
                                                       m.multiplier, m.shift);
        });
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    for (std::size_t i = 0; i < r.size(); ++i)
        out[i] = static_cast<T>(std::clamp(multiply_by_quantized_multiplier_64(r[i], m.multiplier, m.shift) + qo.zero_point, lo, hi));
}

/// SUM with another output quantization: TFLite's QuantizedMeanOrSum(compute_sum) in float:
/// round(sum·S_in/S_out − z_in·S_in/S_out·n) + z_out. Equal quantizations sum the raw codes.
template <class T>
void sum_requantize(std::span<const std::int64_t> sums, std::int64_t count, std::span<T> out, operand_quant qi, operand_quant qo) {
    constexpr std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    const float scale = qi.scale / qo.scale;
    const float bias = static_cast<float>(-qi.zero_point) * scale * static_cast<float>(count);
    for (std::size_t i = 0; i < sums.size(); ++i) {
        const auto v = static_cast<std::int32_t>(std::round(static_cast<float>(sums[i]) * scale + bias)) + qo.zero_point;
        out[i] = static_cast<T>(std::clamp(v, lo, hi));
    }
}

}  // namespace vnnx::ref
