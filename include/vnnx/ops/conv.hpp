#pragma once
// CONV_2D and DEPTHWISE_CONV_2D → a CONV_2D (3) node with Conv2DOptions, computed on the FIA
// (lowering.md §7.1, §8.2, §8.3, §9). FULLY_CONNECTED reaches the lowering as RESHAPE → 1x1
// CONV_2D → RESHAPE (passes/fully_connected.hpp, §7.10.1); its trait only states the rules.
// After tiling, finish_conv_node() writes tile_count and inserts the OUTPUT_SHAPER layer
// (§7.1.7); after all nodes, set_fia_flags() writes first_fia / last_fia (§7.1.1) and
// set_fia_preload() the preload chain (§7.1.8).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "vnnx/ops/apply_tile.hpp"
#include "vnnx/ir/tiling.hpp"
#include "vnnx/ir/weight_packing.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/ops/trait.hpp"
#include "vnnx/quant/activation.hpp"
#include "vnnx/quant/fia.hpp"
#include "vnnx/quant/fia_fit.hpp"
#include "vnnx/quant/multiplier.hpp"

namespace vnnx::ops {

namespace conv_detail {

using B = builtin_operator;
using conv_activations = meta::value_set<activation_function::NONE, activation_function::RELU,
                                         activation_function::RELU6, activation_function::RELU_N1_TO_1>;

inline bool is_8bit(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

/// The convolution as the FIA sees it (channels-first, depthwise flag of §7.1).
struct conv_geometry {
    bool depthwise = false;
    std::int32_t K = 0, C = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1;
    std::int32_t N = 1, H = 0, W = 0, OH = 0, OW = 0;
};

inline conv_geometry geometry_of_conv(const graph& g, const compiler::op& o) {
    conv_geometry c;
    const auto& in = g.t(o.inputs.at(0)).shape;   // [N, H, W, C]
    const auto& w = g.t(o.inputs.at(1)).shape;    // [K, kh, kw, C] or [1, kh, kw, C]
    c.N = std::max(1, in[0]);
    c.H = in[1];
    c.W = in[2];
    c.C = in[3];
    c.kh = w[1];
    c.kw = w[2];
    // A depthwise conv over one channel is an ordinary one-kernel conv (§7.1).
    c.depthwise = o.code == B::DEPTHWISE_CONV_2D && w[0] == 1 && c.C > 1;
    c.K = o.code == B::DEPTHWISE_CONV_2D ? w[3] : w[0];
    c.sh = o.options.stride_h;
    c.sw = o.options.stride_w;
    c.dh = o.options.dilation_h;
    c.dw = o.options.dilation_w;
    c.OH = (c.H - ((c.kh - 1) * c.dh + 1)) / c.sh + 1;
    c.OW = (c.W - ((c.kw - 1) * c.dw + 1)) / c.sw + 1;
    return c;
}

inline std::string check_conv(const graph& g, const compiler::op& o) {
    const bool dw = o.code == B::DEPTHWISE_CONV_2D;
    if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.inputs[1] < 0) return "needs an input and a filter";
    if (o.outputs.size() != 1) return "must have one output";
    const auto& x = g.t(o.inputs[0]);
    const auto& w = g.t(o.inputs[1]);
    const auto& y = g.t(o.outputs[0]);
    if (!w.is_constant()) return "input 1 (filter) must be a constant";
    if (x.rank() != 4 || w.rank() != 4 || y.rank() != 4) return "input, filter and output must have rank 4";
    if (!is_8bit(w.type)) return "filter type " + std::string(tflite::type_name(w.type)) + " is not INT8 or UINT8";
    if (!is_8bit(y.type)) return "output type " + std::string(tflite::type_name(y.type)) + " is not INT8 or UINT8";
    for (auto d : w.shape)
        if (d < 1) return "filter dimensions must be positive";
    if (o.options.stride_h < 1 || o.options.stride_w < 1) return "strides must be >= 1";
    if (o.options.dilation_h < 1 || o.options.dilation_w < 1) return "dilation factors must be >= 1";
    const std::int32_t C = x.shape[3];
    if (dw) {
        if (w.shape[0] != 1) return "depthwise filter must have shape [1, kh, kw, C]";
        // A depth multiplier M > 1 over C > 1 channels runs as an ordinary conv with a dense filter
        // (passes/depthwise_multiplier.hpp): the FIA's depthwise mode needs K = C.
        if (C < 1 || w.shape[3] % C != 0) return "depthwise output channels must be a multiple of the input channels";
    } else if (w.shape[3] != C) {
        return "filter depth " + std::to_string(w.shape[3]) + " differs from the input's " + std::to_string(C) +
               " channels: grouped convolutions are not supported";
    }
    const std::int32_t K = dw ? w.shape[3] : w.shape[0];
    if (y.shape[3] != K) return "output channels " + std::to_string(y.shape[3]) + " differ from the filter's " + std::to_string(K);
    if (x.quant.empty() || y.quant.empty() || w.quant.empty()) return "input, filter and output must be quantized";
    if (!(x.quant.scale0() > 0) || !(y.quant.scale0() > 0)) return "input and output scales must be positive";
    const auto ns = w.quant.scale.size();
    if (ns != 1 && ns != static_cast<std::size_t>(K))
        return "filter has " + std::to_string(ns) + " scales; needs 1 or one per output channel (" + std::to_string(K) + ")";
    // A zero scale is legal (TFLite's multiplier 0: the channel gives its zero point); the SDK's
    // six-decimal scales make them on channels with scales below 5e-7.
    for (double s : w.quant.scale)
        if (!(s >= 0) || !std::isfinite(s)) return "filter scales must be non-negative and finite";
    if (!w.quant.zero_point.empty() && w.quant.zero_point.size() != 1 && w.quant.zero_point.size() != ns)
        return "filter zero points must be one or one per scale";
    if (o.inputs.size() > 2 && o.inputs[2] >= 0) {
        const auto& b = g.t(o.inputs[2]);
        if (!b.is_constant() || b.type != tensor_type::INT32) return "input 2 (bias) must be an INT32 constant";
        if (b.element_count() != K) return "bias has " + std::to_string(b.element_count()) + " elements; needs " + std::to_string(K);
    }
    if (o.options.pad == compiler::padding::VALID) {
        const std::int64_t dkh = std::int64_t(w.shape[1] - 1) * o.options.dilation_h + 1;
        const std::int64_t dkw = std::int64_t(w.shape[2] - 1) * o.options.dilation_w + 1;
        if (dkh > x.shape[1] || dkw > x.shape[2]) return "the dilated filter is larger than the unpadded input";
    }
    return {};
}

/// Bounds of §8.3 for the conv's own output, corrected where the SDK is not (quirks): uint8 outputs
/// use 0..255 (the SDK keeps 127 as maximum and -128 as minimum), RELU_N1_TO_1 is honoured (the
/// SDK drops it). For int8 outputs and NONE/RELU/RELU6 the values are exactly §8.3's.
inline quant::activation_range conv_bounds(activation_function act, const compiler::tensor& out) {
    const bool u8 = out.type == tensor_type::UINT8;
    const std::int32_t qmin = u8 ? 0 : -128, qmax = u8 ? 255 : 127;
    const std::int32_t z = out.quant.zero0();
    const double s = out.quant.scale0();
    auto at = [&](double real) { return static_cast<std::int32_t>(quant::round_even(real / s + z)); };
    switch (act) {
        case activation_function::RELU: return {std::max(qmin, z), qmax};
        case activation_function::RELU6: return {std::max(qmin, z), std::clamp(at(6.0), qmin, qmax)};
        case activation_function::RELU_N1_TO_1: return {std::clamp(at(-1.0), qmin, qmax), std::clamp(at(1.0), qmin, qmax)};
        default: return {qmin, qmax};
    }
}

/// Weights as the FIA multiplies them: int8 [K][C/g][kh][kw] with the weight zero point removed.
/// When some w - z_w of an output channel falls outside int8 (uint8 weights with z_w far from 128),
/// that channel is requantized to int8 with scale S_w / f (requantize_channel) and its bias
/// rescaled to the new scale: exact when every w - z_w fits (the usual z_w = 128 of uint8 models),
/// otherwise a weight rounding error of at most one new step per weight. (An exact scheme would
/// need two accumulators per output, e.g. (w - 128)·x plus (128 - z_w)·Σx, which depends on the
/// input: one FIA channel with int8 weights cannot hold it.)
struct fia_weights {
    std::vector<std::int8_t> w;
    std::vector<double> scale;     // per output channel
    std::vector<std::int64_t> bias;  // per output channel, in units of S_in * scale (no z_in term yet)
    std::int32_t requantized_channels = 0;
};

/// Maps one channel's weights d (some outside int8) to int8 codes q ≈ d·f in place and returns f.
/// f is the largest factor that fits the asymmetric range [-128, 127] (the larger side decides);
/// each code is rounded to nearest, then the codes whose rounding was closest to a tie are moved
/// the other way until Σ(q − d·f) is within ±0.5, so a common offset of the inputs (their mean
/// away from the zero point) adds almost no error.
inline double requantize_channel(std::vector<std::int32_t>& d) {
    std::int32_t hi = 0, lo = 0;
    for (auto v : d) {
        hi = std::max(hi, v);
        lo = std::min(lo, v);
    }
    double f = 1.0;
    if (hi > 127) f = std::min(f, 127.0 / hi);
    if (lo < -128) f = std::min(f, 128.0 / -lo);
    std::vector<double> err(d.size());
    double total = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
        const double t = d[i] * f;
        const double q = std::clamp(quant::round_away(t), -128.0, 127.0);
        err[i] = q - t;
        total += err[i];
        d[i] = static_cast<std::int32_t>(q);
    }
    // Largest-remainder correction: each step moves one code by one toward its other neighbour.
    std::vector<std::size_t> order(d.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return total > 0 ? err[a] > err[b] : err[a] < err[b];
    });
    for (std::size_t j = 0; j < order.size() && std::abs(total) > 0.5; ++j) {
        const std::size_t i = order[j];
        const std::int32_t step = total > 0 ? -1 : 1;
        if ((step < 0 && (err[i] <= 0 || d[i] == -128)) || (step > 0 && (err[i] >= 0 || d[i] == 127))) break;
        d[i] += step;
        err[i] += step;
        total += step;
    }
    return f;
}

/// `reuse` lends its capacity to the weights (the lowering hands the previous conv's buffer on).
inline fia_weights prepare_weights(const graph& g, const compiler::op& o, const conv_geometry& c,
                                   std::vector<std::int8_t> reuse = {}) {
    const auto& wt = g.t(o.inputs[1]);
    const std::size_t taps = static_cast<std::size_t>(c.kh) * c.kw;
    const std::size_t cg = c.depthwise ? 1 : static_cast<std::size_t>(c.C);
    const std::size_t per_k = cg * taps;
    const bool u8 = wt.type == tensor_type::UINT8;
    const bool dw_op = o.code == B::DEPTHWISE_CONV_2D;
    const auto& raw = *wt.data;
    auto code = [&](std::size_t i) -> std::int32_t {
        const auto b = static_cast<std::uint8_t>(raw.at(i));
        return u8 ? static_cast<std::int32_t>(b) : static_cast<std::int32_t>(static_cast<std::int8_t>(b));
    };
    std::vector<std::int64_t> bias(static_cast<std::size_t>(c.K), 0);
    if (o.inputs.size() > 2 && o.inputs[2] >= 0) {
        const auto b = g.t(o.inputs[2]).values<std::int32_t>();
        for (std::size_t k = 0; k < bias.size(); ++k) bias[k] = b.at(k);
    }
    fia_weights r;
    r.w = std::move(reuse);
    r.w.clear();
    r.w.resize(static_cast<std::size_t>(c.K) * per_k);
    r.scale.resize(static_cast<std::size_t>(c.K));
    r.bias = bias;
    const bool int8_exact = !u8 && raw.size() >= r.w.size() &&
        std::all_of(wt.quant.zero_point.begin(), wt.quant.zero_point.end(), [](std::int64_t z) { return z == 0; });
    if (int8_exact && !dw_op && !c.depthwise) {
        // int8 filters with zero point 0 (the usual case) fit as they are: only the transpose
        // [K][kh][kw][C] -> [K][C][kh][kw], read in file order (a plain copy for 1x1 kernels).
        for (std::int32_t k = 0; k < c.K; ++k) {
            const auto ku = static_cast<std::size_t>(k);
            r.scale[ku] = wt.quant.scale[wt.quant.scale.size() == 1 ? 0 : ku];
        }
        if (taps == 1) {
            std::memcpy(r.w.data(), raw.data(), r.w.size());
            return r;
        }
        for (std::int32_t k = 0; k < c.K; ++k) {
            const auto ku = static_cast<std::size_t>(k);
            std::int8_t* dst = r.w.data() + ku * per_k;
            const std::byte* src = raw.data() + ku * per_k;
            for (std::size_t t = 0; t < taps; ++t)
                for (std::size_t cc = 0; cc < cg; ++cc) dst[cc * taps + t] = static_cast<std::int8_t>(src[t * cg + cc]);
        }
        return r;
    }
    if (int8_exact && dw_op) {
        // The same for depthwise filters [1][kh][kw][K] -> [K][kh][kw] (one input channel per kernel).
        const auto K = static_cast<std::size_t>(c.K);
        for (std::size_t k = 0; k < K; ++k) {
            r.scale[k] = wt.quant.scale[wt.quant.scale.size() == 1 ? 0 : k];
            for (std::size_t t = 0; t < taps; ++t) r.w[k * taps + t] = static_cast<std::int8_t>(raw[t * K + k]);
        }
        return r;
    }
    std::vector<std::int32_t> d(per_k);
    for (std::int32_t k = 0; k < c.K; ++k) {
        const auto ku = static_cast<std::size_t>(k);
        const std::size_t qi = wt.quant.scale.size() == 1 ? 0 : ku;
        const std::int32_t zw = wt.quant.zero_point.empty()
                                    ? 0
                                    : static_cast<std::int32_t>(wt.quant.zero_point[wt.quant.zero_point.size() == 1 ? 0 : qi]);
        for (std::size_t cc = 0; cc < cg; ++cc)
            for (std::int32_t y = 0; y < c.kh; ++y)
                for (std::int32_t x = 0; x < c.kw; ++x) {
                    // TFLite filters: conv [K][kh][kw][C]; depthwise [1][kh][kw][K] (K = C, or the
                    // multiplier over one input channel, which runs as an ordinary conv: cc = 0).
                    const std::size_t src = dw_op ? (static_cast<std::size_t>(y) * c.kw + x) * static_cast<std::size_t>(c.K) + ku
                                                  : ((ku * c.kh + y) * c.kw + x) * c.C + cc;
                    const auto v = code(src) - zw;
                    d[(cc * c.kh + y) * c.kw + x] = v;
                }
        double s = wt.quant.scale[qi];
        // -128 fits int8: only values outside [-128, 127] force the requantization.
        if (std::any_of(d.begin(), d.end(), [](std::int32_t v) { return v < -128 || v > 127; })) {
            // No single FIA accumulator can hold these products exactly: requantize (see fia_weights).
            const double f = requantize_channel(d);
            r.bias[ku] = static_cast<std::int64_t>(quant::round_away(static_cast<double>(bias[ku]) * f));
            s = s / f;
            ++r.requantized_channels;
        }
        r.scale[ku] = s;
        for (std::size_t i = 0; i < per_k; ++i) r.w[ku * per_k + i] = static_cast<std::int8_t>(d[i]);
    }
    return r;
}

struct weight_gain_t {
    std::int32_t factor = 1;
    quant::fia_params params;  // the record for the scaled channel when factor > 1
};

/// The FIA multiplies int8 weights, so a channel whose weights use at most half of that range can
/// carry an integer factor m exactly: weights and bias times m, effective scale s/m. Where s/m
/// falls under a finer output shift the 16-bit multiplier gains up to 8 bits (per-tensor weight
/// scales leave most channels this headroom). Picks the m whose multiplier has the smallest
/// relative error; 1 unless a factor is strictly better. `bias` already holds -z_in·Σw and must
/// fit int32 after scaling.
/// One channel's weights summed (for -z_in·Σw) and their extremes (with 0), in one pass.
struct weight_stats {
    std::int64_t sum = 0;
    std::int32_t hi = 0, lo = 0;
};
inline weight_stats stats_of(std::span<const std::int8_t> w) {
    weight_stats r;
    // 32-bit lanes while the sum cannot overflow them: the compiler vectorizes this loop (it is
    // most of the compiler's time on a 3.5 M-weight model otherwise).
    constexpr std::size_t chunk = std::size_t{1} << 23;
    for (std::size_t at = 0; at < w.size(); at += chunk) {
        const std::size_t end = std::min(w.size(), at + chunk);
        std::int32_t sum = 0, hi = 0, lo = 0;
        for (std::size_t i = at; i < end; ++i) {
            const std::int32_t v = w[i];
            sum += v;
            hi = std::max(hi, v);
            lo = std::min(lo, v);
        }
        r.sum += sum;
        r.hi = std::max(r.hi, hi);
        r.lo = std::min(r.lo, lo);
    }
    return r;
}

inline weight_gain_t weight_gain(const weight_stats& ws, std::int64_t bias, double s, std::int32_t z_out,
                                 quant::activation_range bounds) {
    const std::int32_t hi = ws.hi, lo = ws.lo;
    weight_gain_t best;
    if ((hi == 0 && lo == 0) || !(s > 0)) return best;
    auto rel_error = [](const quant::fia_params& p, double scale) {
        const double exact = std::ldexp(scale, quant::fia_output_shifts[static_cast<std::size_t>(p.shift_index)]);
        return std::abs(p.multiplier - exact) / exact;
    };
    double best_error = rel_error(quant::fia_quantize(s, bias, z_out, bounds.min, bounds.max), s);
    for (std::int32_t m = 2; m * hi <= 127 && m * lo >= -128; ++m) {
        const std::int64_t b = bias * m;
        if (b < std::numeric_limits<std::int32_t>::min() || b > std::numeric_limits<std::int32_t>::max()) break;
        quant::fia_params p;
        try {
            p = quant::fia_quantize(s / m, b, z_out, bounds.min, bounds.max);
        } catch (const vnnx::error&) {
            break;  // the constant no longer fits 48 bits: larger factors will not either
        }
        if (const double e = rel_error(p, s / m); e < best_error) {
            best_error = e;
            best.factor = m;
            best.params = p;
        }
    }
    return best;
}
inline weight_gain_t weight_gain(std::span<const std::int8_t> w, std::int64_t bias, double s, std::int32_t z_out,
                                 quant::activation_range bounds) {
    return weight_gain(stats_of(w), bias, s, z_out, bounds);
}

inline std::int32_t clamp32(std::int64_t v) {
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, std::numeric_limits<std::int32_t>::min(),
                                                              std::numeric_limits<std::int32_t>::max()));
}

template <class T>
std::int64_t append_vector(compiler::data_section& d, const std::vector<T>& v) {
    return d.append(std::span<const T>(v));
}

inline void lower_conv(lowering& ctx, const compiler::op& o) {
    const graph& g = ctx.g;
    if (auto why = check_conv(g, o); !why.empty()) ctx.reject(o, why);
    const auto c = geometry_of_conv(g, o);
    if (c.depthwise && c.sw != 1)
        ctx.reject(o, "a depthwise convolution with stride_w > 1 must be rewritten first (STRIDED_DEPTHWISE pass)");
    if (o.options.pad != compiler::padding::VALID)
        ctx.reject(o, "SAME padding must be made explicit first (EXPLICIT_PAD pass)");
    const auto& in_t = g.t(o.inputs[0]);
    // With a folded LUT (§7.1.6) the requantization targets the conv's own output, kept in nlf_source.
    const compiler::tensor& own_out = o.nlf_source ? *o.nlf_source : g.t(o.outputs[0]);
    const std::int32_t z_in = in_t.quant.zero0(), z_out = own_out.quant.zero0();
    const auto bounds = conv_bounds(o.options.fused, own_out);

    auto& node = ctx.node;
    auto& r = node.rec;
    r.input_strides = {c.sh, c.sw};
    r.input_offset = z_in;
    r.output_offset = z_out;
    r.output_data_type = calc_type_of(own_out.type);
    r.activation_min = bounds.min;
    r.activation_max = bounds.max;
    r.input_multiplier = format::absent_offset;
    r.input_shift = format::absent_offset;
    node.tensors.push_back(ctx.desc(o.inputs[0]));
    node.tensors.push_back(ctx.desc(o.outputs[0]));
    r.num_inputs = 1;
    r.num_outputs = 1;

    // Weights, bias (with -z_in * sum(w)) and the FIA records (§7.1.2, §8.2).
    auto fw = prepare_weights(g, o, c, std::move(ctx.prog.filter_scratch));
    const std::size_t per_k = fw.w.size() / static_cast<std::size_t>(c.K);
    std::vector<std::int32_t> om(static_cast<std::size_t>(c.K)), sidx(om.size()), bias(om.size());
    std::vector<std::uint64_t> records(om.size());
    // Calibration samples of this operator, when they describe this output (a fused activation
    // with its own quantization, or --sdk-scales, leaves §8.2's records).
    const compiler::op_calibration* cal = ctx.prog.calib != nullptr && !g.sdk_records ? ctx.prog.calib->find(o.source_index) : nullptr;
    if (cal != nullptr && (cal->channels != c.K || cal->out_zero != z_out || cal->out_scale != own_out.quant.scale0() ||
                           cal->samples.size() != om.size()))
        cal = nullptr;
    std::vector<quant::fia_sample> samples;
    const auto& wt_scale = g.t(o.inputs[1]).quant.scale;
    // TFLite rounds twice for uint8 weights (gemmlowp) and in its depthwise kernel. A
    // TRANSPOSE_CONV (or a depthwise one of multiplier > 1) reaches here rewritten as a CONV_2D,
    // so with int8 weights it keeps the single rounding, though TFLite's kernel rounds twice.
    const bool double_rounding = g.t(o.inputs[1]).type == tensor_type::UINT8 || o.code == builtin_operator::DEPTHWISE_CONV_2D;
    for (std::size_t k = 0; k < om.size(); ++k) {
        const auto ws = stats_of(std::span<const std::int8_t>(fw.w.data() + k * per_k, per_k));
        const std::int64_t sum = ws.sum;
        bias[k] = clamp32(fw.bias[k] - static_cast<std::int64_t>(z_in) * sum);
        double s = static_cast<double>(in_t.quant.scale0()) * fw.scale[k] / static_cast<double>(own_out.quant.scale0());
        auto p = quant::fia_quantize(s, bias[k], z_out, bounds.min, bounds.max);
        // The SDK writes no filter gain: --sdk-scales keeps its records.
        const auto gain = g.sdk_records ? weight_gain_t{}
                                        : weight_gain(ws, fw.bias[k] - static_cast<std::int64_t>(z_in) * sum, s, z_out, bounds);
        if (gain.factor > 1) {
            for (std::size_t i = 0; i < per_k; ++i)
                fw.w[k * per_k + i] = static_cast<std::int8_t>(fw.w[k * per_k + i] * gain.factor);
            bias[k] = static_cast<std::int32_t>((fw.bias[k] - static_cast<std::int64_t>(z_in) * sum) * gain.factor);
            s /= gain.factor;
            p = gain.params;
        }
        // TFLite's second rounding, where its kernel rounds twice (quant::fia_second_rounding).
        if (double_rounding && !g.sdk_records) {
            const double s_tfl = static_cast<double>(in_t.quant.scale0()) *
                                 static_cast<double>(wt_scale[wt_scale.size() == 1 ? 0 : k]) /
                                 static_cast<double>(own_out.quant.scale0());
            p = quant::fia_second_rounding(p, -quant::quantize_multiplier(s_tfl).shift, z_out, bounds.min);
        }
        // A requantized channel (uint8 weights out of int8 range) no longer sums TFLite's products.
        const bool exact_weights = fw.scale[k] == wt_scale[wt_scale.size() == 1 ? 0 : k];
        if (cal != nullptr && exact_weights && !cal->samples[k].empty()) {
            // The FIA accumulates Σx·w' = m·A − bias[k] for TFLite's accumulator A (m the gain).
            samples.clear();
            for (const auto& x : cal->samples[k])
                samples.push_back({static_cast<std::int64_t>(gain.factor) * x.acc - bias[k], x.y});
            const auto fit = quant::fia_fit_validated(samples, p, bounds.min, bounds.max);
            auto& st = ctx.prog.fit;
            ++st.channels;
            st.changed += fit.params != p ? 1 : 0;
            st.samples += samples.size();
            st.matched_before += samples.size() - fit.start.wrong();
            st.matched_after += samples.size() - fit.tally.wrong();
            p = fit.params;
        }
        om[k] = p.multiplier;
        sidx[k] = p.shift_index;
        records[k] = quant::fia_record(p);
    }

    const std::int32_t P = ctx.preset.parallel_output_maps;
    auto& data = ctx.data();
    r.output_multiplier = format::obj_off_t{static_cast<std::uint64_t>(append_vector(data, om))};
    r.output_shift = format::obj_off_t{static_cast<std::uint64_t>(append_vector(data, sidx))};
    const auto bias_at = append_vector(data, bias);
    data.align(static_cast<std::size_t>(P));

    // The filter is packed in place, straight into the data blob (it is most of the file).
    const auto filter_at = static_cast<std::int64_t>(data.size());
    std::size_t packed_bytes = 0;
    auto in_blob = [&](std::size_t n) {
        packed_bytes = n;
        const auto region = data.extend(n);
        return std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(region.data()), n);
    };
    std::int32_t kh_eff = c.kh, dh_eff = c.dh;
    if (c.depthwise) {
        // Height dilation is materialised as zero rows (§7.1.1); the tiler used the same kh'.
        const auto dil = compiler::dilate_depthwise_height(fw.w, c.C, c.kh, c.kw, c.dh);
        if (dil.kh != c.kh) dh_eff = 1;
        kh_eff = dil.kh;
        compiler::pack_depthwise_weights_to(dil.data, c.C, kh_eff, c.kw, P, ctx.imaps, ctx.maps, in_blob);
    } else {
        compiler::pack_conv_weights_to(fw.w, c.K, c.C, c.kh, c.kw, P, ctx.maps, in_blob);
    }
    ctx.prog.filter_scratch = std::move(fw.w);  // packed: its pages serve the next convolution
    data.align(4);
    data.align(8);
    const auto records_at = append_vector(data, records);
    format::obj_off_t nlf = format::absent_offset;
    if (!o.nlf_table.empty()) {
        std::vector<std::int8_t> table(256);
        for (std::size_t i = 0; i < 256; ++i) table[i] = static_cast<std::int8_t>(o.nlf_table.at(i));
        nlf = format::obj_off_t{static_cast<std::uint64_t>(append_vector(data, table))};
    }

    format::node_options::Conv2DOptions u{};
    u.kernels = c.depthwise ? c.C : c.K;
    u.stride_width = c.sw;
    u.stride_height = c.sh;
    u.dilation_width_factor = c.dw;
    u.dilation_height_factor = dh_eff;
    u.padding_width = 0;
    u.padding_height = 0;
    u.filter_shape_dims = c.depthwise ? decltype(u.filter_shape_dims){1, c.C, kh_eff, c.kw}
                                      : decltype(u.filter_shape_dims){c.K, c.C, c.kh, c.kw};
    u.group = c.depthwise ? c.C : 1;
    u.imaps = ctx.imaps;
    u.conv_rows = 0;
    u.use_vector = 1;
    u.use_fia = 1;
    u.use_db = 1;
    u.use_depthwise = c.depthwise ? 1 : 0;
    u.use_strided = (c.sw != 1 && !c.depthwise) ? 1 : 0;
    u.fit_weights = 0;
    u.split_weight_shaper_buffers = 0;
    u.direct_dma = 0;
    u.mxp_double_buffer = 1;
    u.first_fia = 0;  // set_fia_flags()
    u.last_fia = 0;
    u.fia_collision = 1;
    u.repeat = -1;
    u.in_used = u.w_used = u.qt_used = u.out_used = u.sp_used = -1;
    u.fia_preloaded = 0;  // set_fia_preload()
    u.next_fia_node_id = -1;
    u.preload_next_fia = 0;
    u.filter_data = format::obj_off_t{static_cast<std::uint64_t>(filter_at)};
    u.bias_data = format::obj_off_t{static_cast<std::uint64_t>(bias_at)};
    u.quantization_records = format::obj_off_t{static_cast<std::uint64_t>(records_at)};
    u.nlf_data = nlf;
    u.tile_count = 0;  // finish_conv_node()
    node.set(u);

    node.macs = static_cast<std::int64_t>(c.N) * c.K * c.OH * c.OW * (c.depthwise ? 1 : c.C) * c.kh * c.kw;
    node.weight_bytes = static_cast<std::int64_t>(packed_bytes + records.size() * 8 + bias.size() * 4);
}

/// What CONV_2D and DEPTHWISE_CONV_2D share: one FIA node kind, checks and lowering.
struct conv_family {
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = conv_activations{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::CONV_2D);
    static constexpr std::int32_t layer_type = no_layer;
    using member = format::node_options::Conv2DOptions;
    static constexpr rank_range ranks{4, 4};
    static constexpr auto paddings = any_padding{};
    static constexpr std::string_view notes =
        "uint8 outputs clamp to 0..255 and RELU_N1_TO_1 is applied (the SDK keeps -128..127 and drops it)";
    static std::string check(const graph& g, const compiler::op& o) { return check_conv(g, o); }
    static void lower_node(lowering& c, const compiler::op& o) { lower_conv(c, o); }
    /// The options CONV_2D and DEPTHWISE_CONV_2D share: padding, strides, dilations, activation.
    template <class Options>
    static void read_window(const Options& x, compiler::op_options& o) {
        o.pad = x.padding;
        o.stride_w = x.stride_w;
        o.stride_h = x.stride_h;
        o.dilation_w = x.dilation_w_factor;
        o.dilation_h = x.dilation_h_factor;
        o.fused = x.fused_activation_function;
    }
    /// The tiler's model: a convolution when it starts its node (a depthwise filter [1, kh, kw, M]
    /// over one channel is an ordinary conv with M kernels).
    static bool tile(const graph& g, const compiler::op& o, std::int32_t, bool first, compiler::layer& L) {
        if (!first) return false;
        const auto& w = g.t(o.inputs.at(1)).shape;  // [K, kh, kw, C] or [1, kh, kw, C]
        const bool dw = o.code == builtin_operator::DEPTHWISE_CONV_2D;
        L.kind = compiler::op_kind::conv;
        auto& c = L.conv;
        c.depthwise = dw && L.channels > 1;
        c.channels = L.channels;
        c.kernels = c.depthwise ? L.channels : (dw ? w[3] : w[0]);
        c.kh = w[1];
        c.kw = w[2];
        c.sh = o.options.stride_h;
        c.sw = o.options.stride_w;
        c.dh = o.options.dilation_h;
        c.dw = o.options.dilation_w;
        if (c.depthwise && c.dh > 1 && c.kh > 1) {  // height dilation is materialised in the filter
            c.kh = (c.kh - 1) * c.dh + 1;
            c.dh = 1;
        }
        return true;
    }
};

}  // namespace conv_detail

template <>
struct op<builtin_operator::CONV_2D> : conv_detail::conv_family {
    using tflite_options = tflite::opt::Conv2DOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) { read_window(x, o); }
    static constexpr builtin_operator code = builtin_operator::CONV_2D;
    static constexpr std::string_view summary = "convolution on the FIA (any kernel, stride, dilation; int8/uint8)";
};

template <>
struct op<builtin_operator::DEPTHWISE_CONV_2D> : conv_detail::conv_family {
    using tflite_options = tflite::opt::DepthwiseConv2DOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        read_window(x, o);
        o.depth_multiplier = x.depth_multiplier;
    }
    static constexpr builtin_operator code = builtin_operator::DEPTHWISE_CONV_2D;
    static constexpr std::string_view summary = "depthwise convolution on the FIA (a depth multiplier > 1 runs as an ordinary conv)";
};

template <>
struct op<builtin_operator::FULLY_CONNECTED> {
    static constexpr builtin_operator code = builtin_operator::FULLY_CONNECTED;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary = "fully connected, run as a 1x1 CONV_2D between two RESHAPEs";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = conv_detail::conv_activations{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::CONV_2D);
    static constexpr std::int32_t layer_type = no_layer;
    using member = format::node_options::Conv2DOptions;
    using tflite_options = tflite::opt::FullyConnectedOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.fused = x.fused_activation_function;
        o.keep_num_dims = x.keep_num_dims;
    }
    static constexpr std::string_view axes = "contracts the last axis; every leading axis is a row";
    static constexpr std::string_view notes =
        "inputs with several rows (token-wise layers) and FCs without bias compile (the SDK fails on both)";
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.inputs[1] < 0 || o.outputs.size() != 1)
            return "needs an input, weights and one output";
        const auto& w = g.t(o.inputs[1]);
        if (!w.is_constant()) return "input 1 (weights) must be a constant";
        if (w.rank() != 2) return "weights must have rank 2";
        if (!conv_detail::is_8bit(w.type)) return "weight type " + std::string(tflite::type_name(w.type)) + " is not INT8 or UINT8";
        if (!conv_detail::is_8bit(g.t(o.outputs[0]).type)) return "output must be INT8 or UINT8";
        if (g.t(o.outputs[0]).element_count() % std::max(1, w.shape[0]) != 0) return "output size is not a multiple of the output depth";
        if (o.inputs.size() > 2 && o.inputs[2] >= 0) {
            const auto& b = g.t(o.inputs[2]);
            if (!b.is_constant() || b.type != tensor_type::INT32) return "input 2 (bias) must be an INT32 constant";
        }
        return {};
    }
    static void lower_node(lowering& c, const compiler::op& o) {
        c.reject(o, "must be rewritten to a 1x1 CONV_2D before lowering (FC_CONV_2D pass)");
    }
};

/// A name for the FIA grid tensor: "<name>.<n>", n the first number no tensor uses yet.
inline std::string fresh_tensor_name(const graph& g, const compiler::program& prog, const node_build& nd,
                                     const std::string& base) {
    auto used = [&](const std::string& n) {
        for (const auto& t : g.tensors)
            if (t.name == n) return true;
        auto in_node = [&](const node_build& x) {
            for (const auto& t : x.tensors)
                if (t.name == n) return true;
            for (const auto& l : x.layers)
                for (const auto& t : l.tensors)
                    if (t.name == n) return true;
            return false;
        };
        if (in_node(nd)) return true;
        for (const auto& x : prog.nodes)
            if (in_node(x)) return true;
        return false;
    };
    for (int i = 1;; ++i)
        if (auto n = base + "." + std::to_string(i); !used(n)) return n;
}

/// After tiling a CONV_2D node: tile_count, and the OUTPUT_SHAPER layer (§7.1.7) in front of the
/// other layers when the FIA's grid differs from the true output.
inline void finish_conv_node(const graph& g, const compiler::program& prog, node_build& nd,
                             const compiler::tiling_result& t) {
    if (nd.rec.type != static_cast<std::int32_t>(builtin_operator::CONV_2D)) return;
    auto u = nd.get<format::node_options::Conv2DOptions>();
    u.tile_count = static_cast<std::uint32_t>(t.tile_count);
    nd.set(u);
    if (nd.tensors.size() < 2) return;
    // channels/m/n are the conv input's (§5.2), whatever a later layer of the node wrote there
    // (an ELTWISE layer widens an IDENTITY node's geometry over both of its inputs).
    const auto& in_shape = nd.tensors[0].shape;
    const auto dim = [&](std::size_t d) { return d <= in_shape.size() ? in_shape[in_shape.size() - d] : 1; };
    nd.rec.channels = dim(3);
    nd.rec.m = dim(2);
    nd.rec.n = dim(1);
    if (!t.shaper) return;
    const auto& s = *t.shaper;
    auto& out = nd.tensors[1];
    if (out.shape.size() != 4) return;
    // The first tile may need no shaper while the whole tensor does (a one-row tile of a stride-2
    // conv): then the grid of the whole tensor still differs and the shaper is added all the same.
    const bool grid_differs = out.shape[2] != s.full_shaper_height || out.shape[3] != s.full_shaper_width;
    if (!s.needed && !grid_differs) return;
    const compiler::tensor_desc original = out;
    out.name = fresh_tensor_name(g, prog, nd, original.name);
    out.shape = {original.shape[0], original.shape[1], static_cast<std::int32_t>(s.full_shaper_height),
                 static_cast<std::int32_t>(s.full_shaper_width)};

    compiler::layer_build l;
    l.rec = compiler::default_layer();
    l.rec.type = static_cast<std::int32_t>(format::vnnx_operator::OUTPUT_SHAPER);
    l.rec.input_data_type = out.type;
    l.rec.output_data_type = original.type;
    l.rec.input_offset = original.zero;
    l.rec.output_offset = original.zero;
    l.rec.activation_min = -128;
    l.rec.activation_max = 127;
    l.rec.num_inputs = 1;
    l.rec.num_outputs = 1;
    l.rec.num_tensors = 2;
    l.tensors = {out, original};
    format::layer_options::ShaperOptions so{};
    auto i32 = [](long long v) { return static_cast<std::int32_t>(v); };
    so.height = i32(s.first.height);
    so.width = i32(s.first.width);
    so.shaper_height = i32(s.first.shaper_height);
    so.shaper_width = i32(s.first.shaper_width);
    so.height_final = i32(s.final.height);
    so.width_final = i32(s.final.width);
    so.shaper_height_final = i32(s.final.shaper_height);
    so.shaper_width_final = i32(s.final.shaper_width);
    so.stride_height = s.stride_height;
    so.use_strided = s.use_strided ? 1 : 0;
    l.set(so);
    nd.layers.insert(nd.layers.begin(), std::move(l));
}

/// After all nodes (§7.1.1): first_fia on the first FIA node, last_fia on the last one.
inline void set_fia_flags(compiler::program& prog) {
    std::vector<std::size_t> fia;
    for (std::size_t k = 0; k < prog.nodes.size(); ++k)
        if (prog.nodes[k].rec.type == static_cast<std::int32_t>(builtin_operator::CONV_2D)) fia.push_back(k);
    for (std::size_t i = 0; i < fia.size(); ++i) {
        auto& nd = prog.nodes[fia[i]];
        auto u = nd.get<format::node_options::Conv2DOptions>();
        u.first_fia = i == 0 ? 1 : 0;
        u.last_fia = i + 1 == fia.size() ? 1 : 0;
        nd.set(u);
    }
}

/// FIA preload flags (lowering.md §7.1.8, the SDK's set_fia_preload): every conv node points at
/// the next conv node; the next one's input may be loaded while this one runs when the last
/// producer of that input ran before this node, or, when this node is that producer, when its
/// last map tile or its last rows come after what the next node's first input tile needs.
inline void set_fia_preload(compiler::program& prog) {
    using format::node_options::Conv2DOptions;
    std::vector<std::size_t> fia;
    for (std::size_t k = 0; k < prog.nodes.size(); ++k)
        if (prog.nodes[k].rec.type == static_cast<std::int32_t>(builtin_operator::CONV_2D)) fia.push_back(k);
    for (std::size_t i = 0; i < fia.size(); ++i) {
        auto& nd = prog.nodes[fia[i]];
        auto u = nd.get<Conv2DOptions>();
        u.fia_preloaded = 0;
        u.preload_next_fia = 0;
        u.next_fia_node_id = i + 1 < fia.size() ? static_cast<std::int32_t>(fia[i + 1]) : -1;
        nd.set(u);
    }
    // The highest index of a node that names one of node k's inputs among its outputs or its
    // layers' tensors, or -1. The SDK's tensor list of a node holds its layers' tensors after its
    // outputs, so a later node whose layer reads the tensor (a residual ELTWISE) counts as well:
    // no preload then, which is also the safe choice.
    auto last_producer = [&](std::size_t k) {
        const auto& nd = prog.nodes[k];
        const auto n_in = static_cast<std::size_t>(std::max(0, nd.rec.num_inputs));
        auto is_input = [&](const std::string& name) {
            for (std::size_t i = 0; i < n_in && i < nd.tensors.size(); ++i)
                if (nd.tensors[i].name == name) return true;
            return false;
        };
        std::int64_t last = -1;
        for (std::size_t j = 0; j < prog.nodes.size(); ++j) {
            const auto& pj = prog.nodes[j];
            const auto pj_in = static_cast<std::size_t>(std::max(0, pj.rec.num_inputs));
            bool names = false;
            for (std::size_t o = pj_in; o < pj.tensors.size() && !names; ++o) names = is_input(pj.tensors[o].name);
            for (std::size_t l = 0; l < pj.layers.size() && !names; ++l)
                for (const auto& t : pj.layers[l].tensors) names = names || is_input(t.name);
            if (names) last = static_cast<std::int64_t>(j);
        }
        return last;
    };
    for (std::size_t i = 0; i + 1 < fia.size(); ++i) {
        const std::size_t n = fia[i], nn = fia[i + 1];
        auto& a = prog.nodes[n];
        auto& b = prog.nodes[nn];
        auto ua = a.get<Conv2DOptions>();
        auto ub = b.get<Conv2DOptions>();
        bool preload = false;
        const std::int64_t p = last_producer(nn);
        if (p >= 0 && p < static_cast<std::int64_t>(n)) {
            preload = true;
        } else if (p == static_cast<std::int64_t>(n)) {
            const std::int64_t K = ua.kernels, maps = a.rec.maps;
            const std::int64_t last = maps > 0 ? K - maps * ((K - 1) / maps) : K;  // maps of the final map tile
            if (K - (last + maps) > ub.imaps && K - last > std::min<std::int64_t>(2 * std::int64_t{ub.imaps}, b.rec.channels))
                preload = true;
            const std::int64_t first_rows = std::int64_t{b.rec.row_start} + b.rec.rows_0;
            if (std::int64_t{a.rec.orow_last} - a.rec.row_inc > first_rows &&
                a.rec.orow_last > std::min<std::int64_t>(first_rows + b.rec.rows, b.rec.m))
                preload = true;
        }
        if (!preload) continue;
        ua.preload_next_fia = 1;
        ub.fia_preloaded = 1;
        a.set(ua);
        b.set(ub);
    }
}

/// An IDENTITY node without layers that copies `src` into the tensor `dst`, written in the
/// strided layout `strides` (the node the SDK puts before a strided conv whose input cannot be
/// written strided by its producer). Tiled as a plain copy of the tensor.
inline node_build strided_copy_node(const tensor_desc& src, const std::string& dst, const std::array<std::int32_t, 2>& strides,
                                    const compiler::preset_info& preset) {
    node_build nd;
    nd.rec = compiler::default_node();
    nd.rec.type = static_cast<std::int32_t>(format::vnnx_operator::IDENTITY);
    nd.rec.input_data_type = nd.rec.output_data_type = src.type;
    nd.rec.input_offset = nd.rec.output_offset = src.zero;
    nd.rec.output_strides = strides;
    nd.rec.use_replay = 0;
    const auto dim = [&](std::size_t d) { return d <= src.shape.size() ? src.shape[src.shape.size() - d] : 1; };
    nd.rec.channels = dim(3);
    nd.rec.m = dim(2);
    nd.rec.n = dim(1);
    nd.label = "strided copy";
    nd.tensors.push_back(src);
    auto out = src;
    out.name = dst;
    nd.tensors.push_back(out);
    compiler::set_description(nd.rec.input_description, src.name);
    compiler::set_description(nd.rec.output_description, dst);
    compiler::tile_node tn;
    tn.op.kind = compiler::op_kind::identity;
    tn.op.channels = std::max(1, nd.rec.channels);
    tn.op.m = std::max(1, nd.rec.m);
    tn.op.n = std::max(1, nd.rec.n);
    const auto t = compiler::tile_node_for(tn, preset);
    if (!t.fits) fail(error_kind::unsupported, "the strided copy of '" + src.name + "' cannot fit in the scratchpad: " + t.reason);
    compiler::apply_tile(nd, t);
    return nd;
}

/// After all nodes (§7.1.5): a strided conv (use_strided) reads its input in the FIA's strided
/// layout. As the SDK does: when the input is a node output read by this conv only, its producer
/// writes it that way (output_strides); otherwise (a model input or output, or a tensor other
/// nodes read densely, as ResNet's shortcut convolutions) an IDENTITY node without layers is put
/// just before the conv to copy it into the strided layout, and the conv reads the copy.
inline void set_strided_inputs(const graph& g, compiler::program& prog, const compiler::preset_info& preset) {
    auto final_output = [](const node_build& nd) -> const std::string* {
        if (!nd.layers.empty() && !nd.layers.back().tensors.empty()) return &nd.layers.back().tensors.back().name;
        const auto own = static_cast<std::size_t>(std::max(0, nd.rec.num_inputs));
        return own < nd.tensors.size() ? &nd.tensors[own].name : nullptr;
    };
    auto is_io = [&](const std::string& n) {
        for (auto t : g.inputs)
            if (g.t(t).name == n) return true;
        for (auto t : g.outputs)
            if (g.t(t).name == n) return true;
        return false;
    };
    for (std::size_t k = 0; k < prog.nodes.size(); ++k) {
        if (prog.nodes[k].rec.type != static_cast<std::int32_t>(builtin_operator::CONV_2D) || prog.nodes[k].tensors.empty()) continue;
        if (prog.nodes[k].get<format::node_options::Conv2DOptions>().use_strided != 1) continue;
        const std::string in = prog.nodes[k].tensors[0].name;
        std::size_t readers = 0;
        for (const auto& other : prog.nodes)
            for (std::int32_t i = 0; i < other.rec.num_inputs && static_cast<std::size_t>(i) < other.tensors.size(); ++i)
                if (other.tensors[static_cast<std::size_t>(i)].name == in) ++readers;
        std::size_t producer = k;
        for (std::size_t j = 0; j < k; ++j)
            if (const auto* out = final_output(prog.nodes[j]); out != nullptr && *out == in) producer = j;
        if (!is_io(in) && readers == 1 && producer < k) {
            prog.nodes[producer].rec.output_strides = prog.nodes[k].rec.input_strides;
            continue;
        }
        node_build copy = strided_copy_node(prog.nodes[k].tensors[0], fresh_tensor_name(g, prog, prog.nodes[k], in),
                                            prog.nodes[k].rec.input_strides, preset);
        prog.nodes[k].tensors[0].name = copy.tensors[1].name;
        compiler::set_description(prog.nodes[k].rec.input_description, copy.tensors[1].name);
        prog.nodes.insert(prog.nodes.begin() + static_cast<std::ptrdiff_t>(k), std::move(copy));
        ++k;  // past the conv
    }
}

/// Everything decided after all nodes exist: strided inputs (which may add nodes), then the
/// FIA flags and preloading over the final node list.
inline void finish_conv_graph(const graph& g, compiler::program& prog, const compiler::preset_info& preset) {
    set_strided_inputs(g, prog, preset);
    set_fia_flags(prog);
    set_fia_preload(prog);
}

}  // namespace vnnx::ops
