#pragma once
// OUTLIER_WEIGHTS (ours; issue of numerics.md "uint8 weights whose zero point is far from 128"):
// the FIA multiplies int8 weights, so a uint8 weight channel whose w − z_w leaves [−128, 127]
// would have to be requantized, off by up to one new step per weight (DeepLabV3: 44 LSB on one
// node). A CONV_2D with such a channel reads a second copy of the input channels S that some
// outlier weight reads: CONCATENATION(x, GATHER(x, S)) along the channels (x twice when S is
// all of them), and a filter [K, kh, kw, C + |S|] that holds each weight as two halves
// a + b = w − z_w, a over x and b over the copy, both in the uint8 code range around the same
// zero point and in int8 after it. Σ x·(a + b) is TFLite's sum exactly, at |S|/C more MACs and
// a copy of |S| input channels. Depthwise convolutions stay requantized: their sums cannot meet
// inside the node, and computing the outlier channels exactly outside it (a CONV_2D of their
// own) was measured not to pay on DeepLabV3 (docs/numerics.md).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vnnx/ir/graph_helpers.hpp"

namespace vnnx::compiler::passes {

namespace detail {

/// The split of one weight: a + b = d (d = w − z_w) with both halves within [lo, hi], or false.
/// The first half takes all it can: a weight within int8 stays whole (b = 0), so the channels
/// that needed nothing keep their sums and records exactly. (Equal halves, which leave room for
/// a filter gain on every channel, cut the isolated differences further but, measured end to
/// end on the photos of numerics.md, lost agreement: DeepLabV3 99.48% -> 99.35% of pixels.)
struct weight_halves {
    std::int32_t lo = 0, hi = 0;
    [[nodiscard]] bool split(std::int32_t d, std::int32_t& a, std::int32_t& b) const {
        a = std::clamp(d, lo, hi);
        b = d - a;
        return b >= lo && b <= hi;
    }
};

/// The range a half may take for zero point z: a uint8 code (z + half in 0..255) whose
/// difference from z is an int8.
inline weight_halves halves_for(std::int32_t z) { return {std::max(-128, -z), std::min(127, 255 - z)}; }

}  // namespace detail

inline void split_outlier_weights(graph& g) {
    using B = builtin_operator;
    std::vector<op> out;
    out.reserve(g.ops.size());
    for (auto& o : g.ops) {
        const bool candidate = o.kind == op_type::builtin && o.code == B::CONV_2D && o.inputs.size() >= 2 &&
                               o.inputs[0] >= 0 && o.inputs[1] >= 0 && g.t(o.inputs[1]).is_constant() &&
                               g.t(o.inputs[1]).type == tensor_type::UINT8 && g.t(o.inputs[1]).rank() == 4 &&
                               g.t(o.inputs[0]).rank() == 4 && g.t(o.inputs[0]).shape[3] == g.t(o.inputs[1]).shape[3];
        if (!candidate) {
            out.push_back(std::move(o));
            continue;
        }
        const auto& wt = g.t(o.inputs[1]);
        const std::int32_t K = wt.shape[0], kh = wt.shape[1], kw = wt.shape[2], C = wt.shape[3];
        const std::size_t per_k = static_cast<std::size_t>(std::max(kh, 0)) * std::max(kw, 0) * std::max(C, 0);
        const auto& src = *wt.data;
        const auto& zp = wt.quant.zero_point;
        if (K < 1 || kh < 1 || kw < 1 || C < 1 || src.size() != per_k * static_cast<std::size_t>(K) ||
            (zp.size() > 1 && zp.size() != static_cast<std::size_t>(K))) {
            out.push_back(std::move(o));
            continue;
        }
        const auto zero_of = [&](std::int32_t k) {
            return zp.empty() ? std::int32_t{0} : static_cast<std::int32_t>(zp[zp.size() == 1 ? 0 : static_cast<std::size_t>(k)]);
        };
        // w − z_w of weight i of output channel k ([kh][kw][C] per channel).
        const auto diff = [&](std::int32_t k, std::size_t i) {
            return static_cast<std::int32_t>(std::to_integer<std::uint8_t>(src[static_cast<std::size_t>(k) * per_k + i])) - zero_of(k);
        };
        // One scan: can every weight be split, and which input channels does an outlier weight
        // read? Those (S, in order) get a second copy; the others are read once, so the MACs
        // grow by |S| / C, not twice.
        std::vector<std::uint8_t> outlier_reads(static_cast<std::size_t>(C), 0);
        bool splittable = true;
        for (std::int32_t k = 0; k < K && splittable; ++k) {
            const auto h = detail::halves_for(zero_of(k));
            for (std::size_t i = 0; i < per_k; ++i) {
                const std::int32_t d = diff(k, i);
                if (d < -128 || d > 127) outlier_reads[i % static_cast<std::size_t>(C)] = 1;
                std::int32_t a = 0, b = 0;
                if (!h.split(d, a, b)) {
                    splittable = false;  // z_w = 0 and w = 255: 255 is not two codes of 0..127
                    break;
                }
            }
        }
        std::vector<std::int32_t> second;
        for (std::int32_t c = 0; c < C; ++c)
            if (outlier_reads[static_cast<std::size_t>(c)]) second.push_back(c);
        if (second.empty() || !splittable) {
            out.push_back(std::move(o));
            continue;
        }
        const std::int32_t S = static_cast<std::int32_t>(second.size());
        const std::size_t wide = static_cast<std::size_t>(C + S);
        std::vector<std::byte> halves(wide * kh * kw * static_cast<std::size_t>(K));
        for (std::int32_t k = 0; k < K; ++k) {
            const std::int32_t z = zero_of(k);
            const auto h = detail::halves_for(z);
            for (std::size_t t = 0; t < static_cast<std::size_t>(kh) * kw; ++t) {
                std::byte* row = halves.data() + (static_cast<std::size_t>(k) * kh * kw + t) * wide;
                const auto code = [&](std::size_t c, bool second_half) {
                    std::int32_t a = 0, b = 0;
                    (void)h.split(diff(k, t * C + c), a, b);
                    return static_cast<std::byte>(static_cast<std::uint8_t>(z + (second_half ? b : a)));
                };
                for (std::int32_t c = 0; c < C; ++c) row[c] = code(static_cast<std::size_t>(c), false);
                for (std::int32_t j = 0; j < S; ++j) row[C + j] = code(static_cast<std::size_t>(second[static_cast<std::size_t>(j)]), true);
            }
        }
        tensor filt = wt;
        filt.name = g.unique_name(wt.name + "/halves");
        filt.shape = {K, kh, kw, C + S};
        filt.data = std::move(halves);
        const std::int32_t x = o.inputs[0];
        const std::vector<std::int32_t> xs = g.t(x).shape;
        std::int32_t copy = x;
        if (S < C) {  // the channels of S only: a GATHER along the channels
            const auto idx = add_i32_constant(g, g.t(x).name + "/outlier_channels", {S}, second);
            copy = add_activation_like(g, x, g.t(x).name + "/outlier_copy", {xs[0], xs[1], xs[2], S});
            op gather;
            gather.code = B::GATHER;
            gather.inputs = {x, idx};
            gather.outputs = {copy};
            gather.options.axis = 3;
            out.push_back(std::move(gather));
        }
        const std::int32_t doubled = add_activation_like(g, x, g.t(x).name + "/twice", {xs[0], xs[1], xs[2], C + S});
        op cat;
        cat.code = B::CONCATENATION;
        cat.inputs = {x, copy};
        cat.outputs = {doubled};
        cat.options.axis = 3;
        out.push_back(std::move(cat));
        o.inputs[0] = doubled;
        o.inputs[1] = g.add_tensor(std::move(filt));
        out.push_back(std::move(o));
    }
    g.ops = std::move(out);
}

}  // namespace vnnx::compiler::passes
