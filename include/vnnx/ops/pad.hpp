#pragma once
// PAD (34) and PADV2 (60) → PAD layer with PadOptions (lowering.md §7.5): `pads` holds
// [c_before, h_before, w_before, c_after, h_after, w_after] on the channels-first axes and
// `value` the fill (the input zero point for PAD, the constant for PADV2). The SDK ignores
// padding of leading (batch) axes [quirk]; here it is rejected instead of dropped.
// MIRROR_PAD (100) → MIRROR_PAD layer with the same `pads` and MirrorPadOptions.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

namespace movement {

/// The six channels-first pads of a TFLite [rank, 2] pad constant, or the rule broken.
inline std::string pad_fields(const graph& g, const compiler::op& o, std::array<std::int32_t, 6>& pads) {
    const auto& x = g.t(o.inputs.at(0));
    const auto r = x.rank();
    const auto p = const_ints(g, input_at(o, 1));
    if (!p) return "paddings must be a constant int32/int64 tensor";
    if (p->size() != 2 * r) return "paddings must have shape [" + std::to_string(r) + ", 2]";
    if (r < 1) return "the input must have rank >= 1";
    for (auto v : *p)
        if (v < 0) return "paddings must be non-negative";
    auto before = [&](std::size_t a) { return static_cast<std::int32_t>((*p)[2 * a]); };
    auto after = [&](std::size_t a) { return static_cast<std::int32_t>((*p)[2 * a + 1]); };
    pads.fill(0);
    if (r >= 3) {
        for (std::size_t a = 0; a + 3 < r; ++a)
            if (before(a) != 0 || after(a) != 0)
                return "padding of leading axis " + std::to_string(a) + " is not supported (only the last three axes)";
        pads = {before(r - 1), before(r - 3), before(r - 2), after(r - 1), after(r - 3), after(r - 2)};
    } else if (r == 2) {
        pads = {0, before(0), before(1), 0, after(0), after(1)};
    } else {
        pads = {0, 0, before(0), 0, 0, after(0)};
    }
    return {};
}

/// The fill value: PAD → input zero point; PADV2 → its constant (one element of the input type).
inline std::string pad_value(const graph& g, const compiler::op& o, std::int32_t& value) {
    const auto& x = g.t(o.inputs.at(0));
    if (o.code == builtin_operator::PADV2 && input_at(o, 2) >= 0) {
        const auto& c = g.t(o.inputs[2]);
        if (!c.is_constant() || c.type != x.type || !c.data || c.data->size() != 1)
            return "constant_values must be one constant element of the input type";
        const auto b = static_cast<std::uint8_t>((*c.data)[0]);
        value = x.type == tensor_type::INT8 ? static_cast<std::int8_t>(b) : b;
        return {};
    }
    value = x.quant.zero0();
    return {};
}

template <builtin_operator Code>
struct pad_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        Code == builtin_operator::PAD ? "constant padding with the zero point, last three axes"
                                      : "constant padding with a given value, last three axes";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::PAD);
    using member = format::layer_options::PadOptions;
    static constexpr std::string_view axes = "the last three axes (padding of leading axes is rejected)";
    static constexpr std::string_view notes = "leading-axis padding is rejected (the SDK silently drops it)";

    /// The tiler's model: a pad, with its H, W and C amounts when they are constant.
    static bool tile(const graph& g, const compiler::op& o, std::int32_t, bool, compiler::layer& L) {
        L.kind = compiler::op_kind::pad;
        if (o.inputs.size() > 1 && g.t(o.inputs[1]).is_constant()) {
            const auto p = g.t(o.inputs[1]).values<std::int32_t>();
            const auto r = p.size() / 2;
            if (r >= 3)  // [.., H, W, C]
                L.pads = {p[2 * (r - 1)], p[2 * (r - 3)], p[2 * (r - 2)], p[2 * (r - 1) + 1], p[2 * (r - 3) + 1],
                          p[2 * (r - 2) + 1]};
        }
        return true;
    }
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, paddings and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        std::array<std::int32_t, 6> pads{};
        if (auto r = pad_fields(g, o, pads); !r.empty()) return r;
        std::int32_t value = 0;
        if (auto r = pad_value(g, o, value); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        // TFLite fills PAD with the output zero point, the VNNX layer with the input's.
        if (Code == builtin_operator::PAD && x.quant.zero0() != y.quant.zero0())
            return "input and output zero points differ";
        const auto p = const_ints(g, o.inputs[1]);
        auto expect = x.shape;
        for (std::size_t a = 0; a < expect.size(); ++a)
            expect[a] += static_cast<std::int32_t>((*p)[2 * a] + (*p)[2 * a + 1]);
        if (expect != y.shape || y.type != x.type) return "output " + shape_text(y.shape) + " does not match the paddings";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        std::array<std::int32_t, 6> pads{};
        if (auto r = pad_fields(c.g, o, pads); !r.empty()) c.reject(o, r);
        format::layer_options::PadOptions po{};
        if (auto r = pad_value(c.g, o, po.value); !r.empty()) c.reject(o, r);
        po.transpose_dilate_w = 1;
        po.transpose_dilate_h = 1;
        l.rec.pads = pads;
        l.set(po);
    }
};

}  // namespace movement

template <>
struct op<builtin_operator::PAD> : movement::pad_trait<builtin_operator::PAD> {};
template <>
struct op<builtin_operator::PADV2> : movement::pad_trait<builtin_operator::PADV2> {};

/// MIRROR_PAD (100) → MIRROR_PAD layer: `pads` as PAD, MirrorPadOptions.mode 1 for REFLECT, 0
/// for SYMMETRIC (lowering.md §7.5). REFLECT mirrors without the edge element, SYMMETRIC with it.
template <>
struct op<builtin_operator::MIRROR_PAD> {
    static constexpr builtin_operator code = builtin_operator::MIRROR_PAD;
    static constexpr std::string_view summary = "REFLECT or SYMMETRIC mirror padding, last three axes";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::MIRROR_PAD);
    using member = format::layer_options::MirrorPadOptions;
    using tflite_options = tflite::opt::MirrorPadOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.mirror_mode = static_cast<std::int32_t>(x.mode);
    }
    static constexpr std::string_view axes = "the last three axes (padding of leading axes is rejected)";

    static bool reflect(const compiler::op& o) { return o.options.mirror_mode == 0; }

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, paddings and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (o.options.mirror_mode != 0 && o.options.mirror_mode != 1) return "mode must be REFLECT or SYMMETRIC";
        std::array<std::int32_t, 6> pads{};
        if (auto r = pad_fields(g, o, pads); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        const auto p = const_ints(g, o.inputs[1]);
        auto expect = x.shape;
        for (std::size_t a = 0; a < expect.size(); ++a) {
            const auto limit = x.shape[a] - (reflect(o) ? 1 : 0);
            if ((*p)[2 * a] > limit || (*p)[2 * a + 1] > limit)
                return "axis " + std::to_string(a) + ": pads above " + std::to_string(limit) + " (" +
                       (reflect(o) ? "REFLECT" : "SYMMETRIC") + " over " + std::to_string(x.shape[a]) + " elements)";
            expect[a] += static_cast<std::int32_t>((*p)[2 * a] + (*p)[2 * a + 1]);
        }
        if (expect != y.shape || y.type != x.type) return "output " + shape_text(y.shape) + " does not match the paddings";
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output must share the quantization";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        std::array<std::int32_t, 6> pads{};
        if (auto r = movement::pad_fields(c.g, o, pads); !r.empty()) c.reject(o, r);
        l.rec.pads = pads;
        format::layer_options::MirrorPadOptions mo{};
        mo.mode = reflect(o) ? 1 : 0;
        l.set(mo);
    }
};

}  // namespace vnnx::ops
