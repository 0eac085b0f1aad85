#pragma once
// Normalisations over the TFLite last axis, each a layer that needs that axis whole
// (the channels-first axis −3 for rank >= 3, −1 below), not vectorized (lowering.md §5.2):
//   LOG_SOFTMAX (50), LogSoftmaxOptions (§7.6.3): TFLite's fixed-point parameters for
//     input_integer_bits 5: input_multiplier/shift = QM(S_in·2^26), reverse_scaling_* and
//     diff_min; output_multiplier/shift = QM(16/256); output_offset = z_out.
//   L2_NORMALIZATION (11) (§7.7.4): no union, input_offset = z_in; the output quantization is
//     fixed by TFLite (1/128, zero point 0 for int8, 128 for uint8).
#include <cmath>
#include <cstdint>
#include <string>

#include "vnnx/ops/activations.hpp"

namespace vnnx::ops {

namespace normalize_detail {
inline std::int32_t cf_axis(const compiler::tensor& x) { return x.rank() >= 3 ? -3 : -1; }
}  // namespace normalize_detail

template <>
struct op<builtin_operator::LOG_SOFTMAX> {
    static constexpr builtin_operator code = builtin_operator::LOG_SOFTMAX;
    static constexpr std::string_view summary = "log-softmax over the last axis (output 16/256, zero point 127 / 255)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::LOG_SOFTMAX);
    using member = format::layer_options::LogSoftmaxOptions;
    static constexpr bool replay = false;  // its node is never replayed (use_replay = 0)
    static constexpr std::string_view axes = "the TFLite last axis";
    static constexpr std::string_view notes =
        "outer_size counts every row and uint8 outputs get output_offset 255 (the SDK stores TFLite dim 0 and always 127)";

    static bool tile(const graph& g, const compiler::op&, std::int32_t in, bool, compiler::layer& L) {
        return tile_whole_axis(g, in, L);
    }
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        if (auto r = detail::check_unary(g, o); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (x.rank() < 1 || y.shape != x.shape) return "output shape must equal the input's (rank >= 1)";
        if (y.quant.scale0() != 16.0f / 256 || y.quant.zero0() != (y.type == tensor_type::INT8 ? 127 : 255))
            return "output must be quantized with scale 16/256 and zero point 127 (int8) or 255 (uint8), as TFLite requires";
        if (!(x.quant.scale0() > 0x1p-26f) || x.quant.scale0() >= 32.0f) return "input scale must lie in (2^-26, 32)";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto& x = c.g.t(o.inputs[0]);
        auto& l = c.add_layer(layer_type, o, {o.inputs[0]});
        // TFLite's PreprocessLogSoftmaxScalingExp with beta 1 and 5 integer bits.
        const double real = std::min(static_cast<double>(x.quant.scale0()) * (1LL << 26), (1LL << 31) - 1.0);
        const auto mb = quant::quantize_multiplier_greater_than_one(real);
        const auto rev = quant::quantize_multiplier_smaller_than_one(static_cast<double>(1LL << (31 - mb.shift)) / mb.multiplier);
        l.rec.input_multiplier = detail::append_i32(c, mb.multiplier);
        l.rec.input_shift = detail::append_i32(c, mb.shift);
        detail::set_output_multiplier(c, l, quant::quantize_multiplier(16.0 / 256));
        format::layer_options::LogSoftmaxOptions u{};
        u.diff_min = -static_cast<std::int32_t>(std::floor(31.0 * static_cast<double>(1LL << 26) / static_cast<double>(1LL << mb.shift)));
        u.depth = x.shape.back();
        u.outer_size = static_cast<std::int32_t>(x.element_count() / static_cast<std::size_t>(u.depth));
        u.reverse_scaling_divisor = rev.multiplier;
        u.reverse_scaling_right_shift = -rev.shift;
        u.axis = normalize_detail::cf_axis(x);
        l.set(u);
    }
};

template <>
struct op<builtin_operator::L2_NORMALIZATION> {
    static constexpr builtin_operator code = builtin_operator::L2_NORMALIZATION;
    static constexpr std::string_view summary = "L2 normalisation over the last axis, TFLite's integer inverse square root";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::L2_NORMALIZATION);
    using member = no_member;
    using tflite_options = tflite::opt::L2NormOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.fused = x.fused_activation_function;
    }
    static constexpr bool replay = false;  // its node is never replayed (use_replay = 0)
    static constexpr std::string_view axes = "the TFLite last axis";

    static bool tile(const graph& g, const compiler::op&, std::int32_t in, bool, compiler::layer& L) {
        return tile_whole_axis(g, in, L);
    }
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        if (auto r = detail::check_unary(g, o); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (x.rank() < 1 || y.shape != x.shape) return "output shape must equal the input's (rank >= 1)";
        if (y.quant.scale0() != 1.0f / 128 || y.quant.zero0() != (y.type == tensor_type::INT8 ? 0 : 128))
            return "output must be quantized with scale 1/128 and zero point 0 (int8) or 128 (uint8), as TFLite requires";
        // Σ(x − z)² must fit the int32 accumulator, as in TFLite.
        if (static_cast<std::int64_t>(x.shape.back()) * 255 * 255 > INT32_MAX) return "the last axis is too long for an int32 sum of squares";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) { c.add_layer(layer_type, o, {o.inputs[0]}); }
};

}  // namespace vnnx::ops
