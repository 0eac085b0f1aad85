#pragma once
// PRELU (lowering.md §3.4, §7.6.5). An alpha of <= 4 elements varying only along the channels
// becomes a LUT in the default flow; any other alpha is the PRELU (54) layer with the prelu
// union: output_multiplier/shift = QM(S_in/S_out), alpha_multiplier/shift = QM(S_in·S_a/S_out)
// (float products, as TFLite), alpha_offset = z_a, alpha_data = alpha broadcast to the input's
// last three axes in channels-first order, alpha_shape = [1, C, H, W].
// The SDK accepts only a rank-3 alpha [H, W, C] [quirk]; here any alpha that broadcasts to the
// input without varying along a leading axis is expanded, so [C], [1, 1, C], [W, C] ... compile.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/activations.hpp"

namespace vnnx::ops {

namespace prelu_detail {

/// Alpha (TFLite order, right-aligned broadcast) expanded over the input's last min(rank, 3)
/// axes, in channels-first order; the block's CF shape is returned in `cf`.
inline std::vector<std::uint8_t> expand_alpha(const compiler::tensor& x, const compiler::tensor& a, std::array<std::int32_t, 3>& cf) {
    const auto& s = x.shape;
    const std::size_t r = s.size(), k = std::min<std::size_t>(r, 3);
    std::array<std::int32_t, 3> blk{1, 1, 1};  // TFLite order: H, W, C (rank 3+) or the last k dims
    for (std::size_t i = 0; i < k; ++i) blk[3 - k + i] = s[r - k + i];
    std::array<std::int32_t, 3> ad{1, 1, 1};
    for (std::size_t i = 0; i < std::min<std::size_t>(a.shape.size(), 3); ++i)
        ad[2 - i] = a.shape[a.shape.size() - 1 - i];
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(a.data->data());
    std::vector<std::uint8_t> out(static_cast<std::size_t>(blk[0]) * blk[1] * blk[2]);
    for (std::int32_t h = 0; h < blk[0]; ++h)
        for (std::int32_t w = 0; w < blk[1]; ++w)
            for (std::int32_t c = 0; c < blk[2]; ++c) {
                const std::size_t src = (static_cast<std::size_t>(ad[0] == 1 ? 0 : h) * ad[1] + (ad[1] == 1 ? 0 : w)) * ad[2] +
                                        (ad[2] == 1 ? 0 : c);
                // Rank >= 3: HWC → CHW; smaller ranks keep their order (the CF layout equals TFLite's).
                const std::size_t dst = r >= 3 ? (static_cast<std::size_t>(c) * blk[0] + h) * blk[1] + w
                                               : (static_cast<std::size_t>(h) * blk[1] + w) * blk[2] + c;
                out[dst] = bytes[src];
            }
    cf = r >= 3 ? std::array<std::int32_t, 3>{blk[2], blk[0], blk[1]} : blk;
    return out;
}

}  // namespace prelu_detail

template <>
struct op<builtin_operator::PRELU> {
    static constexpr builtin_operator code = builtin_operator::PRELU;
    static constexpr std::string_view summary = "parametric ReLU: a LUT for <= 4 channel alphas, else the prelu layer";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::PRELU);
    using member = format::layer_options::prelu;
    static constexpr std::string_view axes = "alpha broadcast over the input (right-aligned), constant along leading axes";
    static constexpr std::string_view notes = "any broadcastable alpha (scalar, [C], [1,1,C], [H,W,C]) (the SDK: rank-3 alpha only)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 2 || o.inputs[1] < 0) return "needs an input and an alpha";
        compiler::op one = o;
        one.inputs = {o.inputs[0]};
        if (auto r = detail::check_unary(g, one); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& a = g.t(o.inputs[1]);
        if (!a.is_constant() || !a.data) return "alpha (input 1) must be a constant";
        if (a.type != x.type) return "alpha must have the input's type";
        if (a.quant.empty() || a.quant.scale.size() > 1) return "alpha needs one (per-tensor) scale and zero point";
        if (g.t(o.outputs[0]).shape != x.shape) return "output shape must equal the input's";
        if (a.shape.size() > x.shape.size()) return "alpha has a higher rank than the input";
        for (std::size_t i = 0; i < a.shape.size(); ++i) {
            const auto ad = a.shape[a.shape.size() - 1 - i], xd = x.shape[x.shape.size() - 1 - i];
            if (ad != 1 && ad != xd) return "alpha does not broadcast to the input";
            if (i >= 3 && ad != 1) return "alpha must not vary along a leading axis (only the last three)";
        }
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto& x = c.g.t(o.inputs[0]);
        const auto& a = c.g.t(o.inputs[1]);
        const auto& y = c.g.t(o.outputs[0]);
        auto& l = c.add_layer(layer_type, o, {o.inputs[0]});
        const double si = x.quant.scale0(), sa = a.quant.scale0(), so = y.quant.scale0();
        detail::set_output_multiplier(c, l, detail::qm_float_ratio(c.g.arith, si, so));
        const auto ma = quant::quantize_multiplier(quant::scale_product_ratio(c.g.arith, si, sa, so));
        std::array<std::int32_t, 3> cf{};
        const auto alpha = prelu_detail::expand_alpha(x, a, cf);
        format::layer_options::prelu u{};
        u.alpha_multiplier = detail::append_i32(c, ma.multiplier);
        u.alpha_shift = detail::append_i32(c, ma.shift);
        u.alpha_offset = a.quant.zero0();
        // §7.6.5: the vector path takes 8 maps at once when every scaled alpha stays below 256.
        bool small = true;
        const bool u8 = a.type == tensor_type::UINT8;
        for (auto b : alpha) {
            const std::int32_t v = u8 ? b : static_cast<std::int8_t>(b);
            // Signed, as the SDK compares: negative scaled alphas always pass.
            if (static_cast<double>(si) * sa / so * (v - a.quant.zero0()) >= 256.0) small = false;
        }
        u.optimized = small ? 1 : 0;
        u.maps_at_once = small ? 8 : 1;
        u.iscale = si;
        u.ascale = sa;
        u.oscale = so;
        u.vci_int8 = format::absent_offset;
        u.alpha_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(alpha))};
        u.alpha_shape = {1, cf[0], cf[1], cf[2]};
        l.set(u);
    }
};

}  // namespace vnnx::ops
