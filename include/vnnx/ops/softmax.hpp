#pragma once
// SOFTMAX (25) → layer with SoftmaxOptions (lowering.md §7.6.2, §8.7). TFLite normalises over
// its last axis: the channels-first axis −3 for rank ≥ 3 (channels), −1 for rank ≤ 2; `depth`
// is that dim. Data: `vci_int8` the 256-entry uint32 exponential table as four byte planes,
// `lut_int32` / `idx_int8` its step list (`count` entries), `input_multiplier/shift` =
// QM(1 / (S_out·2^16)); `diff_min` −1.
// The SDK ignores `beta` [quirk]; here it is folded into the table, which is built from
// S_in·β (the table is all the runtime knows of the input scale), so any beta is honoured.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/pool.hpp"
#include "vnnx/quant/softmax_tables.hpp"

namespace vnnx::ops {

template <>
struct op<builtin_operator::SOFTMAX> {
    static constexpr builtin_operator code = builtin_operator::SOFTMAX;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary = "softmax over the last axis (beta folded into the table)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::SOFTMAX);
    using member = format::layer_options::SoftmaxOptions;
    using tflite_options = tflite::opt::SoftmaxOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.beta = x.beta;
    }
    static constexpr std::string_view axes = "the TFLite last axis";
    static constexpr std::string_view notes = "beta is honoured, folded into the table (the SDK ignores it)";

    static bool tile(const graph& g, const compiler::op&, std::int32_t in, bool, compiler::layer& L) {
        return tile_whole_axis(g, in, L);
    }
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (auto r = pool_detail::check_static_shape(x, "input"); !r.empty()) return r;
        if (x.rank() < 1) return "the input must have rank >= 1";
        if (y.shape != x.shape || y.type != x.type) return "output shape and type must equal the input's";
        if (!(o.options.beta > 0.0f) || !std::isfinite(o.options.beta)) return "beta must be positive and finite";
        if (!(x.quant.scale0() > 0) || !(y.quant.scale0() > 0)) return "input and output must be quantized";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto& x = c.g.t(o.inputs[0]);
        const auto& y = c.g.t(o.outputs[0]);
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto rank = static_cast<std::int32_t>(x.rank());
        format::layer_options::SoftmaxOptions so{};
        so.diff_min = -1;
        so.axis = rank >= 3 ? -3 : -1;
        so.depth = x.shape.back();
        // beta folded: S_in·β in float, as TFLite multiplies them before its exponentials.
        const double s_beta = quant::scale_product(c.g.arith, x.quant.scale0(), o.options.beta);
        const auto t = quant::softmax_tables(so.depth, s_beta, y.quant.scale0());
        l.rec.input_multiplier = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(t.input.multiplier))};
        l.rec.input_shift =
            format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(static_cast<std::int32_t>(t.input.shift)))};
        std::array<std::uint8_t, 1024> planes{};
        for (std::size_t r = 0; r < 256; ++r)
            for (std::size_t b = 0; b < 4; ++b) planes[b * 256 + r] = static_cast<std::uint8_t>(t.exp_table[r] >> (8 * b));
        so.vci_int8 = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_bytes(std::as_bytes(std::span(planes))))};
        so.count = static_cast<std::int32_t>(t.step_values.size());
        so.lut_int32 = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(t.step_values))};
        so.idx_int8 = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(t.step_codes))};
        l.set(so);
    }
};

}  // namespace vnnx::ops
