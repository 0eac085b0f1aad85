#pragma once
// Two-input element-wise operators and comparisons (lowering.md §7.3, §8.4, §8.5).
// Constants of <= 4 elements were already turned into tables by the LUT pass (§3.4); what
// reaches lowering is either
//   - two activation inputs: an ELTWISE (301) layer, union eltwise8 (§7.3.1), or
//   - one constant of > 4 elements: a broadcast8 layer ADD (0) / SUB (41) /
//     SQUARED_DIFFERENCE (99) / MUL (18) (§7.3.2–7.3.3), or MAXIMUM (55) / MINIMUM (57) with
//     MinMaxOptions (§7.3.4).
// Broadcasting: TFLite broadcasts right-aligned shapes; the VNNX tensor records are
// channels-first, so the broadcast is exact only when both operands have the output's rank
// (activations) or are right-aligned to it before the channels-first move (constants). Shapes
// that would make the output larger than the activation operand are rejected with the rule.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/ops/trait.hpp"
#include "vnnx/quant/activation.hpp"
#include "vnnx/quant/eltwise.hpp"
#include "vnnx/quant/multiplier.hpp"

namespace vnnx::ops {

namespace eltwise_detail {

using B = builtin_operator;

constexpr bool is_comparison(B c) {
    return c == B::GREATER || c == B::GREATER_EQUAL || c == B::LESS || c == B::LESS_EQUAL || c == B::EQUAL ||
           c == B::NOT_EQUAL;
}

/// What the OPS table says about the SDK's quirks this operator fixes.
constexpr std::string_view notes_of(B c) {
    switch (c) {
        case B::ADD:
        case B::SUB: return "fused RELU6 / RELU_N1_TO_1 applied, uint8 bounds 0..255 (the SDK drops RELU6, keeps 127)";
        case B::MUL: return "fused activations applied, also with a constant operand (the SDK ignores them there)";
        case B::DIV: return "multiplier S_in / (S_in2 S_out) as TFLite (the SDK stores MUL's)";
        default: return "";
    }
}

/// eltwise8.type of §2.5.
inline std::int32_t eltwise_subtype(B c) {
    switch (c) {
        case B::ADD: return 0;
        case B::MUL: return 1;
        case B::SUB: return 2;
        case B::DIV: return 3;
        case B::GREATER: return 4;
        case B::GREATER_EQUAL: return 5;
        case B::LESS: return 6;
        case B::LESS_EQUAL: return 7;
        case B::EQUAL: return 8;
        case B::NOT_EQUAL: return 9;
        case B::MINIMUM: return 10;
        case B::MAXIMUM: return 11;
        case B::SQUARED_DIFFERENCE: return 12;
        default: return -1;
    }
}

inline bool is_8bit(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

/// The TFLite shape `s` right-aligned to `rank` dims (leading 1s).
inline std::vector<std::int32_t> right_align(const std::vector<std::int32_t>& s, std::size_t rank) {
    std::vector<std::int32_t> out(rank > s.size() ? rank - s.size() : 0, 1);
    out.insert(out.end(), s.begin(), s.end());
    return out;
}

/// "" when `b` broadcasts onto `a` without growing it (each dim 1 or equal), else the rule.
inline std::string broadcasts_onto(const std::vector<std::int32_t>& b, const std::vector<std::int32_t>& a,
                                   const std::string& what) {
    if (b.size() != a.size()) return what + " has rank " + std::to_string(b.size()) + ", needs " + std::to_string(a.size());
    for (std::size_t d = 0; d < a.size(); ++d)
        if (b[d] != 1 && b[d] != a[d])
            return what + " dim " + std::to_string(d) + " is " + std::to_string(b[d]) + ", must be 1 or " +
                   std::to_string(a[d]);
    return {};
}

/// The constant's channels-first shape as [k, c, h, w] after right-aligning it to the
/// activation's rank (rank 5 and 6 only with leading 1s).
inline std::vector<std::int32_t> filter_dims(const std::vector<std::int32_t>& konst, std::size_t act_rank) {
    const auto cf = channels_first(right_align(konst, std::max<std::size_t>(act_rank, konst.size())));
    std::vector<std::int32_t> out(4, 1);
    const std::size_t n = std::min<std::size_t>(4, cf.size());
    for (std::size_t i = 0; i < n; ++i) out[4 - n + i] = cf[cf.size() - n + i];
    return out;
}

inline quant::fused_activation fused_of(const compiler::op& o) {
    return static_cast<quant::fused_activation>(o.options.fused);
}

/// Output bounds of a fused activation in the output type's range. The SDK drops RELU6 and
/// keeps the maximum at 127 for UINT8 outputs [quirks]; here the TFLite bounds are used.
inline quant::activation_range output_bounds(const graph& g, const compiler::op& o) {
    const auto& out = g.t(o.outputs.at(0));
    const bool u8 = out.type == tensor_type::UINT8;
    return quant::tflite_activation_range(fused_of(o), out.quant.scale0(), out.quant.zero0(), u8 ? 0 : -128,
                                          u8 ? 255 : 127);
}

inline format::obj_off_t append_i32(lowering& c, std::int32_t v) {
    return format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(v))};
}
inline format::obj_off_t here(lowering& c) {  // an empty array: the current end of the data
    return format::obj_off_t{static_cast<std::uint64_t>(c.data().size())};
}

/// The ELTWISE / broadcast multipliers, computed as TFLite's kernels do (float where TFLite
/// forms the ratio in float) so that the simulator matches TFLite bit for bit.
inline quant::eltwise_params params_for(B code, double s_in, double s_in2, double s_out, bool pot_scale_int16,
                                         quant::scale_arith arith) {
    using quant::eltwise_kind;
    switch (code) {
        case B::ADD: return quant::eltwise_parameters(eltwise_kind::add, s_in, s_in2, s_out, !pot_scale_int16);
        case B::SUB: return quant::eltwise_parameters(eltwise_kind::sub, s_in, s_in2, s_out, !pot_scale_int16);
        case B::SQUARED_DIFFERENCE: return quant::eltwise_parameters(eltwise_kind::squared_difference, s_in, s_in2, s_out);
        case B::MAXIMUM: return quant::eltwise_parameters(eltwise_kind::maximum, s_in, s_in2, s_out);
        case B::MINIMUM: return quant::eltwise_parameters(eltwise_kind::minimum, s_in, s_in2, s_out);
        case B::MUL: {
            quant::eltwise_params p;
            p.left_shift = -1;
            p.output = quant::quantize_multiplier(quant::scale_product_ratio(arith, s_in, s_in2, s_out));
            return p;
        }
        case B::DIV: {
            // TFLite's S_in / (S_in2·S_out); the SDK stores the MUL multiplier [quirk].
            quant::eltwise_params p;
            p.left_shift = -1;
            p.output = quant::quantize_multiplier(quant::scale_ratio(arith, s_in, quant::scale_product(arith, s_in2, s_out)));
            return p;
        }
        default: return quant::eltwise_parameters(eltwise_kind::comparison, s_in, s_in2, s_out);
    }
}

}  // namespace eltwise_detail

/// The trait of one binary operator; `lower_layer` picks ELTWISE or the constant form.
template <builtin_operator Code, class Activations>
struct binary_op {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        eltwise_detail::is_comparison(Code) ? "comparison: of two activations ELTWISE (301), with a constant of <= 4 elements (one per channel) a LUT; 0/1 output"
        : Code == builtin_operator::DIV     ? "two activations: ELTWISE (301); a constant of <= 4 elements: a LUT"
                                            : "two activations: ELTWISE (301); a constant of > 4 elements: its broadcast layer";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = Activations{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(format::vnnx_operator::ELTWISE);
    using member = format::layer_options::eltwise8;
    static constexpr std::string_view axes = "TFLite broadcasting of right-aligned shapes, rank <= 6";
    static constexpr std::string_view notes = eltwise_detail::notes_of(Code);

    static constexpr bool comparison = eltwise_detail::is_comparison(Code);
    static constexpr bool has_constant_form = Code == builtin_operator::ADD || Code == builtin_operator::SUB ||
                                              Code == builtin_operator::MUL ||
                                              Code == builtin_operator::SQUARED_DIFFERENCE ||
                                              Code == builtin_operator::MAXIMUM || Code == builtin_operator::MINIMUM;

    /// The tiler's model: an ELTWISE layer.
    static bool tile(const graph&, const compiler::op&, std::int32_t, bool, compiler::layer& L) {
        L.kind = compiler::op_kind::eltwise;
        return true;
    }
    static std::string check(const graph& g, const compiler::op& o) {
        using namespace eltwise_detail;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.inputs[1] < 0 || o.outputs.size() != 1)
            return "needs two inputs and one output";
        const auto& a = g.t(o.inputs[0]);
        const auto& b = g.t(o.inputs[1]);
        const auto& out = g.t(o.outputs[0]);
        if (!is_8bit(a.type) || !is_8bit(b.type)) return "inputs must be INT8 or UINT8";
        if (a.type != b.type) return "both inputs must have one type";
        if (comparison) {
            if (out.type != tensor_type::BOOL && !is_8bit(out.type)) return "output must be BOOL";
        } else if (out.type != a.type) {
            return "output type must equal the input type";
        }
        if (a.quant.empty() || b.quant.empty()) return "inputs need quantization parameters";
        if (!comparison && out.quant.empty()) return "output needs quantization parameters";
        if (a.quant.scale.size() > 1 || b.quant.scale.size() > 1 || out.quant.scale.size() > 1)
            return "per-channel quantization of an operand is not supported";
        if (a.is_constant() && b.is_constant()) return "both inputs are constants";
        if (!a.is_constant() && !b.is_constant()) {
            if (a.shape.size() != out.shape.size() || b.shape.size() != out.shape.size())
                return "two activation inputs must have the output's rank (" + std::to_string(out.shape.size()) +
                       ") to broadcast channels-first; reshape the smaller one first";
            if (auto r = broadcasts_onto(a.shape, out.shape, "input 0"); !r.empty()) return r;
            if (auto r = broadcasts_onto(b.shape, out.shape, "input 1"); !r.empty()) return r;
            if (out.shape.size() > 6) return "rank above 6";
            return {};
        }
        // One constant.
        const auto& k = a.is_constant() ? a : b;
        const auto& x = a.is_constant() ? b : a;
        if (comparison || !has_constant_form) {
            // Only the LUT pass can take it: at most 4 elements, one per channel (§3.4). A
            // comparison with a constant is a function of one input too: a table of 0 / 1.
            bool per_channel = k.element_count() <= 4;
            for (std::size_t d = 0; d + 1 < k.shape.size(); ++d)
                if (k.shape[d] != 1) per_channel = false;
            if (k.element_count() > 1 && (k.shape.empty() || x.shape.empty() || k.shape.back() != x.shape.back()))
                per_channel = false;
            if (!per_channel || x.shape != out.shape)
                return "a constant operand must have at most 4 elements, one per channel (it becomes a lookup table)";
            if (comparison && out.type != tensor_type::BOOL) return "a comparison with a constant needs a BOOL output";
            return {};
        }
        if (x.shape != out.shape) return "the constant must not broadcast the activation to a larger output";
        if (k.shape.size() > x.shape.size())
            return "the constant has rank " + std::to_string(k.shape.size()) + ", above the activation's " +
                   std::to_string(x.shape.size());
        if (auto r = broadcasts_onto(right_align(k.shape, x.shape.size()), x.shape, "the constant"); !r.empty())
            return r;
        // Dims before the last four of the channels-first shape are not in filter_shape_dims.
        const auto cf = channels_first(right_align(k.shape, x.shape.size()));
        for (std::size_t d = 0; d + 4 < cf.size(); ++d)
            if (cf[d] != 1) return "the constant may vary only in the last four channels-first dims";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const bool konst = c.g.t(o.inputs[0]).is_constant() || c.g.t(o.inputs[1]).is_constant();
        if (konst) lower_constant(c, o);
        else lower_eltwise(c, o);
    }

    /// §7.3.1: ELTWISE (301), union eltwise8.
    static void lower_eltwise(lowering& c, const compiler::op& o) {
        using namespace eltwise_detail;
        const std::int32_t a = o.inputs[0], b = o.inputs[1];
        // swap: input 0 is computed earlier in this node (by the node's own operator, a conv's
        // output, or an earlier layer), so input 1 is the one brought in (read before add_layer).
        const std::string a_name = c.tensor_name(a);
        bool swap = false;
        // (An IDENTITY node's own output is the copy of its input: not computed, not counted.)
        if (c.node.rec.type != static_cast<std::int32_t>(format::vnnx_operator::IDENTITY))
            for (std::size_t i = static_cast<std::size_t>(std::max(0, c.node.rec.num_inputs)); i < c.node.tensors.size(); ++i)
                if (c.node.tensors[i].name == a_name) swap = true;
        for (const auto& l : c.node.layers)
            if (!l.tensors.empty() && l.tensors.back().name == a_name) swap = true;
        auto& l = c.add_layer(layer_type, o, {a, b});
        const auto& ta = c.g.t(a);
        const auto& tb = c.g.t(b);
        const auto& to = c.g.t(o.outputs[0]);
        const double s_in = ta.quant.scale0(), s_in2 = tb.quant.scale0();
        const double s_out = comparison ? 1.0 : to.quant.scale0();
        const auto p = params_for(Code, s_in, s_in2, s_out, o.options.pot_scale_int16, c.g.arith);

        format::layer_options::eltwise8 u{};
        u.type = eltwise_subtype(Code);
        u.input2_offset = tb.quant.zero0();
        u.left_shift = p.left_shift;
        u.swap = swap ? 1 : 0;
        u.bias_data = format::absent_offset;
        u.isize = 0;  // the element count of the final tile, written with the tile (§10.5)
        u.optimized = 0;
        if (Code == builtin_operator::ADD && 2.0 * s_in / s_out < 256.0 && 2.0 * s_in2 / s_out < 256.0) {
            u.optimized = ta.shape.size() > 3 ? 1 : 0;
            const bool m0 = s_in == s_out && ta.quant.zero0() == to.quant.zero0();
            const bool m1 = s_in2 == s_out && tb.quant.zero0() == to.quant.zero0();
            if (m0 && m1) u.optimized = 2;
            else if (m0 && ta.quant.zero0() != tb.quant.zero0()) u.optimized = 3;
            else if (m1 && ta.quant.zero0() != tb.quant.zero0()) u.optimized = 4;
        }
        if (comparison) {
            l.rec.output_offset = 0;
            l.tensors.back().zero = 0;
            l.tensors.back().scale = 1.0f;
            l.rec.activation_min = 0;
            l.rec.activation_max = 1;
        } else {
            const auto r = output_bounds(c.g, o);
            l.rec.activation_min = r.min;
            l.rec.activation_max = r.max;
        }
        // Data order of §7.3.1: output, input, input2 (one int32 each; MUL/DIV: inputs empty).
        l.rec.output_multiplier = append_i32(c, p.output.multiplier);
        l.rec.output_shift = append_i32(c, p.output.shift);
        if (p.input1.empty()) {
            l.rec.input_multiplier = here(c);
            l.rec.input_shift = here(c);
            u.input2_multiplier = here(c);
            u.input2_shift = here(c);
        } else {
            l.rec.input_multiplier = append_i32(c, p.input1[0].multiplier);
            l.rec.input_shift = append_i32(c, p.input1[0].shift);
            u.input2_multiplier = append_i32(c, p.input2[0].multiplier);
            u.input2_shift = append_i32(c, p.input2[0].shift);
        }
        l.set(u);
        // The first layer of an IDENTITY node: raise the node geometry over both inputs (§7.3.1).
        if (c.node.layers.size() == 1) {
            const auto ga = geometry_of(ta.shape), gb = geometry_of(tb.shape);
            c.node.rec.m = std::max(ga.m, gb.m);
            c.node.rec.n = std::max(ga.n, gb.n);
            if (tb.shape.size() > 3) c.node.rec.channels = std::max(ga.channels, gb.channels);
        }
    }

    /// §7.3.2–7.3.4: a constant of more than 4 elements.
    static void lower_constant(lowering& c, const compiler::op& o) {
        using namespace eltwise_detail;
        const bool swap = c.g.t(o.inputs[0]).is_constant();
        const std::int32_t x = swap ? o.inputs[1] : o.inputs[0];
        const std::int32_t f = swap ? o.inputs[0] : o.inputs[1];
        const auto& tx = c.g.t(x);
        const auto& tf = c.g.t(f);
        const auto& to = c.g.t(o.outputs[0]);
        const double s_in = tx.quant.scale0(), s_f = tf.quant.scale0(), s_out = to.quant.scale0();
        const std::int32_t z_in = tx.quant.zero0(), z_f = tf.quant.zero0(), z_out = to.quant.zero0();

        using B = builtin_operator;
        if (!has_constant_form)
            c.reject(o, "a constant operand is supported only as part of a lookup table (at most 4 elements)");
        const bool minmax = Code == B::MAXIMUM || Code == B::MINIMUM;
        std::int32_t type = static_cast<std::int32_t>(Code);  // ADD 0, MUL 18, SQUARED_DIFFERENCE 99, MAXIMUM 55, MINIMUM 57
        if (Code == B::SUB) type = 41;
        auto& l = c.add_layer(type, o, {x});
        const auto dims = filter_dims(tf.shape, tx.shape.size());
        // Filter bytes channels-first, broadcast dims kept at their stored size.
        const auto cf_shape = channels_first(right_align(tf.shape, std::max(tx.shape.size(), tf.shape.size())));
        std::vector<std::uint8_t> raw(tf.data->size());
        std::memcpy(raw.data(), tf.data->data(), raw.size());
        std::vector<std::uint8_t> filter = to_channels_first(raw, right_align(tf.shape, cf_shape.size()));
        const auto gx = geometry_of(tx.shape);

        if (minmax) {
            format::layer_options::MinMaxOptions u{};
            u.max = Code == B::MAXIMUM ? 1 : 0;
            for (std::size_t i = 0; i < 4; ++i) u.filter_shape_dims[i] = dims[i];
            u.filter_offset = z_f;
            const auto qi = quant::quantize_multiplier(s_in), qo = quant::quantize_multiplier(s_out),
                       qf = quant::quantize_multiplier(s_f);
            l.rec.input_multiplier = append_i32(c, qi.multiplier);
            l.rec.input_shift = append_i32(c, qi.shift);
            l.rec.output_multiplier = append_i32(c, qo.multiplier);
            l.rec.output_shift = append_i32(c, qo.shift);
            u.filter_multiplier = append_i32(c, qf.multiplier);
            u.filter_shift = append_i32(c, qf.shift);
            u.filter_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(filter))};
            l.set(u);
            // MAXIMUM/MINIMUM take the operand codes as they are (TFLite compares raw codes).
            return;
        }

        format::layer_options::broadcast8 u{};
        for (std::size_t i = 0; i < 4; ++i) u.filter_shape_dims[i] = dims[i];
        const std::int32_t fh = dims[2], fw = dims[3];
        if (fh == 1 && fw == 1) u.broadcast = 1;
        else if (fh == 1 && fw == gx.n) u.broadcast = 2;
        else if (fh == gx.m && fw == gx.n) u.broadcast = 3;
        else u.broadcast = 0;
        u.filter_offset = z_f;
        u.swap_inputs = swap ? 1 : 0;
        u.isize = 0;  // rows·cols of the final tile when optimized, written with the tile (§10.5)
        const auto r = output_bounds(c.g, o);
        l.rec.activation_min = r.min;
        l.rec.activation_max = r.max;
        if (Code == B::MUL) {
            // §7.3.3: sqrt(S_in·S_f) as both input scales; fused activations are honoured here
            // (the SDK ignores them [quirk]).
            const float root = static_cast<float>(std::sqrt(static_cast<double>(s_in) * s_f));
            u.iscale = root;
            u.fscale = root;
            u.oscale = s_out;
            u.sub = 0;
            u.left_shift = -1;
            const double M = quant::scale_product_ratio(c.g.arith, s_in, s_f, s_out);
            bool small = u.broadcast == 1;
            for (auto v : filter) {
                const std::int32_t fv = tf.type == tensor_type::INT8 ? static_cast<std::int8_t>(v) : v;
                if (M * (fv - z_f) >= 256.0) small = false;
            }
            u.optimized = small ? 1 : 0;
            const auto m = quant::quantize_multiplier(M);
            l.rec.output_multiplier = append_i32(c, m.multiplier);
            l.rec.output_shift = append_i32(c, m.shift);
            u.filter_multiplier = format::absent_offset;
            u.filter_shift = format::absent_offset;
            u.filter_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(filter))};
            // Bias per index of the first CF axis after a leading axis of size 1 (§8.5).
            std::vector<std::int32_t> cf_dims = cf_shape;
            while (cf_dims.size() > 1 && cf_dims.front() == 1) cf_dims.erase(cf_dims.begin());
            const std::size_t rows = cf_dims.empty() ? 1 : static_cast<std::size_t>(cf_dims.front());
            const std::size_t per_row = rows == 0 ? 0 : filter.size() / rows;
            std::vector<std::int32_t> bias(rows);
            for (std::size_t i = 0; i < rows; ++i) {
                std::int64_t sum = 0;
                for (std::size_t j = 0; j < per_row; ++j) {
                    const auto v = filter[i * per_row + j];
                    sum += (tf.type == tensor_type::INT8 ? static_cast<std::int8_t>(v) : v) - z_f;
                }
                bias[i] = quant::broadcast_mul_bias(z_in, sum, z_out, M);
            }
            u.bias_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(bias))};
            l.set(u);
            return;
        }
        const auto p = params_for(Code, s_in, s_f, s_out, o.options.pot_scale_int16, c.g.arith);
        u.iscale = s_in;
        u.fscale = s_f;
        u.oscale = s_out;
        u.sub = Code == B::SUB ? 1 : 0;
        u.left_shift = p.left_shift;
        u.optimized = u.broadcast == 1 && 2.0 * s_in / s_out < 256.0 && 2.0 * s_f / s_out < 256.0 ? 1 : 0;
        u.bias_data = format::absent_offset;
        // Data order of §7.3.2: input, output, filter pairs, then the filter bytes.
        l.rec.input_multiplier = append_i32(c, p.input1[0].multiplier);
        l.rec.input_shift = append_i32(c, p.input1[0].shift);
        l.rec.output_multiplier = append_i32(c, p.output.multiplier);
        l.rec.output_shift = append_i32(c, p.output.shift);
        u.filter_multiplier = append_i32(c, p.input2[0].multiplier);
        u.filter_shift = append_i32(c, p.input2[0].shift);
        u.filter_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(filter))};
        l.set(u);
    }

    /// Bytes of a TFLite-ordered tensor of shape `s` in channels-first order.
    static std::vector<std::uint8_t> to_channels_first(const std::vector<std::uint8_t>& v, const std::vector<std::int32_t>& s) {
        if (s.size() < 3) return v;
        const std::size_t r = s.size();
        std::size_t outer = 1;
        for (std::size_t i = 0; i + 3 < r; ++i) outer *= static_cast<std::size_t>(s[i]);
        const auto H = static_cast<std::size_t>(s[r - 3]), W = static_cast<std::size_t>(s[r - 2]),
                   C = static_cast<std::size_t>(s[r - 1]);
        std::vector<std::uint8_t> out(v.size());
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t w = 0; w < W; ++w)
                    for (std::size_t ch = 0; ch < C; ++ch)
                        out[((o * C + ch) * H + h) * W + w] = v[((o * H + h) * W + w) * C + ch];
        return out;
    }
};

namespace eltwise_detail {
using act_relu = meta::value_set<activation_function::NONE, activation_function::RELU, activation_function::RELU6,
                                 activation_function::RELU_N1_TO_1>;
}  // namespace eltwise_detail

template <> struct op<builtin_operator::ADD> : binary_op<builtin_operator::ADD, eltwise_detail::act_relu> {
    using tflite_options = tflite::opt::AddOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.fused = x.fused_activation_function;
        o.pot_scale_int16 = x.pot_scale_int16;
    }
};
template <> struct op<builtin_operator::SUB> : binary_op<builtin_operator::SUB, eltwise_detail::act_relu> {
    using tflite_options = tflite::opt::SubOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.fused = x.fused_activation_function;
        o.pot_scale_int16 = x.pot_scale_int16;
    }
};
template <> struct op<builtin_operator::MUL> : binary_op<builtin_operator::MUL, eltwise_detail::act_relu> {
    using tflite_options = tflite::opt::MulOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.fused = x.fused_activation_function;
    }
};
template <> struct op<builtin_operator::DIV> : binary_op<builtin_operator::DIV, eltwise_detail::act_relu> {
    using tflite_options = tflite::opt::DivOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.fused = x.fused_activation_function;
    }
};
template <> struct op<builtin_operator::SQUARED_DIFFERENCE> : binary_op<builtin_operator::SQUARED_DIFFERENCE, no_activation> {};
template <> struct op<builtin_operator::MAXIMUM> : binary_op<builtin_operator::MAXIMUM, no_activation> {};
template <> struct op<builtin_operator::MINIMUM> : binary_op<builtin_operator::MINIMUM, no_activation> {};
template <> struct op<builtin_operator::GREATER> : binary_op<builtin_operator::GREATER, no_activation> {};
template <> struct op<builtin_operator::GREATER_EQUAL> : binary_op<builtin_operator::GREATER_EQUAL, no_activation> {};
template <> struct op<builtin_operator::LESS> : binary_op<builtin_operator::LESS, no_activation> {};
template <> struct op<builtin_operator::LESS_EQUAL> : binary_op<builtin_operator::LESS_EQUAL, no_activation> {};
template <> struct op<builtin_operator::EQUAL> : binary_op<builtin_operator::EQUAL, no_activation> {};
template <> struct op<builtin_operator::NOT_EQUAL> : binary_op<builtin_operator::NOT_EQUAL, no_activation> {};

}  // namespace vnnx::ops
