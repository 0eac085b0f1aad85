#pragma once
// SPACE_TO_BATCH_ND (38) and BATCH_TO_SPACE_ND (37) → layers of the same type (lowering.md §7.7.4):
// SpaceToBatchNDOptions.block_shape_data / paddings_data and BatchToSpaceNDOptions.block_shape_data
// / crop_data are blob offsets of int32 arrays, the block shape [bh, bw] and the TFLite pads or
// crops [[top, bottom], [left, right]] flattened. SPACE_TO_BATCH_ND pads with the output zero
// point (the layer's output_offset), as TFLite does. 4-D [N,H,W,C] inputs only.
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

namespace movement {

template <builtin_operator Code>
struct space_batch_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool to_batch = Code == builtin_operator::SPACE_TO_BATCH_ND;
    static constexpr std::string_view summary =
        to_batch ? "zero-point padding, then bh x bw spatial phases moved into the batch"
                 : "batch split into bh x bw spatial phases, interleaved, then cropped";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    using member = std::conditional_t<to_batch, format::layer_options::SpaceToBatchNDOptions,
                                      format::layer_options::BatchToSpaceNDOptions>;
    static constexpr rank_range ranks{4, 4};
    static constexpr std::string_view axes = "N, H and W of [N,H,W,C]; constant block shape and paddings/crops";

    /// Block shape {bh, bw} and pads/crops {top, bottom, left, right} from the constants.
    static std::string params(const graph& g, const compiler::op& o, std::vector<std::int32_t>& block,
                              std::vector<std::int32_t>& pads) {
        const auto b = const_ints(g, input_at(o, 1));
        const auto p = const_ints(g, input_at(o, 2));
        const char* what = to_batch ? "paddings" : "crops";
        if (!b || b->size() != 2) return "block_shape must be a constant int32/int64 tensor of 2 elements";
        if (!p || p->size() != 4) return std::string(what) + " must be a constant int32/int64 tensor of shape [2, 2]";
        block.clear();
        pads.clear();
        for (auto v : *b) {
            if (v < 1 || v > 65535) return "block_shape values must be in 1..65535";
            block.push_back(static_cast<std::int32_t>(v));
        }
        for (auto v : *p) {
            if (v < 0 || v > 65535) return std::string(what) + " must be in 0..65535";
            pads.push_back(static_cast<std::int32_t>(v));
        }
        return {};
    }

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 3 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, a block shape, paddings/crops and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        std::vector<std::int32_t> b, p;
        if (auto r = params(g, o, b, p); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (x.rank() != 4 || y.rank() != 4) return "input and output must be 4-D [N,H,W,C]";
        const auto& s = x.shape;
        std::vector<std::int32_t> want;
        if (to_batch) {
            const std::int64_t h = std::int64_t(s[1]) + p[0] + p[1], w = std::int64_t(s[2]) + p[2] + p[3];
            if (h % b[0] != 0 || w % b[1] != 0) return "padded height and width must be multiples of the block shape";
            want = {s[0] * b[0] * b[1], static_cast<std::int32_t>(h / b[0]), static_cast<std::int32_t>(w / b[1]), s[3]};
        } else {
            if (s[0] % (b[0] * b[1]) != 0) return "input batch " + std::to_string(s[0]) + " is not a multiple of bh * bw";
            const std::int64_t h = std::int64_t(s[1]) * b[0] - p[0] - p[1], w = std::int64_t(s[2]) * b[1] - p[2] - p[3];
            if (h < 1 || w < 1) return "the crops remove the whole output";
            want = {s[0] / (b[0] * b[1]), static_cast<std::int32_t>(h), static_cast<std::int32_t>(w), s[3]};
        }
        if (y.shape != want) return "output shape " + shape_text(y.shape) + " should be " + shape_text(want);
        if (y.type != x.type) return "output type must equal the input type";
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output must share the quantization";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        std::vector<std::int32_t> b, p;
        if (auto r = params(c.g, o, b, p); !r.empty()) c.reject(o, r);
        const auto bo = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(b))};
        const auto po = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(p))};
        if constexpr (to_batch) {
            format::layer_options::SpaceToBatchNDOptions u{};
            u.block_shape_data = bo;
            u.paddings_data = po;
            l.set(u);
        } else {
            format::layer_options::BatchToSpaceNDOptions u{};
            u.block_shape_data = bo;
            u.crop_data = po;
            l.set(u);
        }
    }
};

}  // namespace movement

template <>
struct op<builtin_operator::SPACE_TO_BATCH_ND> : movement::space_batch_trait<builtin_operator::SPACE_TO_BATCH_ND> {
    static constexpr bool replay = false;  // its node is never replayed (use_replay = 0)
};
template <>
struct op<builtin_operator::BATCH_TO_SPACE_ND> : movement::space_batch_trait<builtin_operator::BATCH_TO_SPACE_ND> {
    static constexpr bool replay = false;  // its node is never replayed (use_replay = 0)
};

}  // namespace vnnx::ops
