#pragma once
// DILATE (203) → DILATE layer with PadOptions (lowering.md §7.5): `transpose_dilate_h/w` are the
// row and column dilations, `pads` stay 0, `value` is the fill. The SDK ignores the operator's
// padding_value input and fills with the input zero point [quirk]; here `value` is that input.
// The compiler's TRANSPOSE_CONV rewrite (ir/transpose_conv_form.hpp) produces this operator too.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

namespace movement {

/// The fill of a DILATE: its padding_value input (one constant element of the input type).
inline std::string dilate_value(const graph& g, const compiler::op& o, std::int32_t& value) {
    const auto& x = g.t(o.inputs.at(0));
    const std::int32_t t = input_at(o, 2);
    if (t < 0) return "needs a padding_value input";
    const auto& c = g.t(t);
    if (!c.is_constant() || c.type != x.type || !c.data || c.data->size() != 1)
        return "padding_value must be one constant element of the input type";
    const auto b = static_cast<std::uint8_t>((*c.data)[0]);
    value = x.type == tensor_type::INT8 ? static_cast<std::int8_t>(b) : b;
    return {};
}

}  // namespace movement

template <>
struct op<builtin_operator::DILATE> {
    static constexpr builtin_operator code = builtin_operator::DILATE;
    static constexpr std::string_view summary = "inserts dilation - 1 fill elements between neighbours along H and W";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::DILATE);
    using member = format::layer_options::PadOptions;
    static constexpr rank_range ranks{3, 4};
    static constexpr std::string_view axes = "H and W of [N,H,W,C] / [H,W,C] (the other dilations must be 1)";
    static constexpr std::string_view notes = "fills with the padding_value input (the SDK uses the input zero point)";

    /// (dh, dw) of the constant dilations, or the rule broken.
    static std::string dilations(const graph& g, const compiler::op& o, std::int32_t& dh, std::int32_t& dw) {
        const auto& x = g.t(o.inputs.at(0));
        const auto r = x.rank();
        const auto d = movement::const_ints(g, movement::input_at(o, 1));
        if (!d) return "dilations must be a constant int32/int64 tensor";
        if (d->size() != r) return "dilations must have " + std::to_string(r) + " elements (one per input axis)";
        for (std::size_t a = 0; a < r; ++a) {
            if ((*d)[a] < 1) return "dilations must be >= 1";
            if (a + 3 != r && a + 2 != r && (*d)[a] != 1)
                return "dilation of axis " + std::to_string(a) + " must be 1 (only H and W are dilated)";
        }
        if ((*d)[r - 3] > 65535 || (*d)[r - 2] > 65535) return "dilations above 65535 are not supported";
        dh = static_cast<std::int32_t>((*d)[r - 3]);
        dw = static_cast<std::int32_t>((*d)[r - 2]);
        return {};
    }

    /// The tiler's model: a nearest resize by the dilations (its output, (in - 1)·d + 1, never
    /// exceeds in·d); without constant dilations, the default.
    static bool tile(const graph& g, const compiler::op& o, std::int32_t in, bool, compiler::layer& L) {
        const auto& d = o.inputs.size() > 1 && o.inputs[1] >= 0 ? g.t(o.inputs[1]) : g.t(in);
        if (!d.is_constant() || d.type != tensor_type::INT32 || d.shape.size() != 1 || d.shape[0] < 3) return false;
        const auto v = d.values<std::int32_t>();
        L.kind = compiler::op_kind::resize_nearest;
        L.resize_h = std::max(1, v[v.size() - 3]);
        L.resize_w = std::max(1, v[v.size() - 2]);
        return true;
    }
    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 3 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, dilations, a padding value and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        std::int32_t dh = 1, dw = 1, value = 0;
        if (auto r = dilations(g, o, dh, dw); !r.empty()) return r;
        if (auto r = dilate_value(g, o, value); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        auto want = x.shape;
        const auto r = want.size();
        const std::int64_t oh = std::int64_t(want[r - 3] - 1) * dh + 1, ow = std::int64_t(want[r - 2] - 1) * dw + 1;
        if (oh > (1 << 24) || ow > (1 << 24)) return "the dilated output has more than 16777216 rows or columns";
        want[r - 3] = static_cast<std::int32_t>(oh);
        want[r - 2] = static_cast<std::int32_t>(ow);
        if (y.shape != want) return "output shape " + shape_text(y.shape) + " should be " + shape_text(want);
        if (y.type != x.type) return "output type must equal the input type";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        format::layer_options::PadOptions po{};
        if (auto r = dilations(c.g, o, po.transpose_dilate_h, po.transpose_dilate_w); !r.empty()) c.reject(o, r);
        if (auto r = movement::dilate_value(c.g, o, po.value); !r.empty()) c.reject(o, r);
        l.rec.pads = {0, 0, 0, 0, 0, 0};
        l.set(po);
    }
};

}  // namespace vnnx::ops
