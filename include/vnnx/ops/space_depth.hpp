#pragma once
// DEPTH_TO_SPACE (5) and SPACE_TO_DEPTH (26) → layers of the same type, no union (lowering.md
// §7.7). The SDK stores no block size [quirk], so its runtime cannot know it; here the layer's
// input and output tensor records carry it (block = output rows / input rows, or the inverse),
// and the simulator reads it from there. Pure data movement: input and output share the
// quantization, as TFLite requires.
#include <cstdint>
#include <string>

#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

namespace movement {

template <builtin_operator Code>
struct space_depth_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool to_space = Code == builtin_operator::DEPTH_TO_SPACE;
    static constexpr std::string_view summary =
        to_space ? "channel blocks moved to bs x bs spatial blocks (TFLite DCR order)"
                 : "bs x bs spatial blocks moved into the channels";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    using member = no_member;
    static constexpr rank_range ranks{4, 4};
    static constexpr std::string_view axes = "H, W and C of [N,H,W,C]";
    static constexpr std::string_view notes =
        "the block size is carried by the tensor records (the SDK stores none, so its layer cannot run)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        const std::int32_t bs = o.options.block_size;
        if (bs < 1) return "block_size " + std::to_string(bs) + " must be >= 1";
        if (x.rank() != 4 || y.rank() != 4) return "input and output must be 4-D [N,H,W,C]";
        const auto& s = x.shape;
        std::vector<std::int32_t> want;
        if (to_space) {
            if (s[3] % (bs * bs) != 0) return "input channels " + std::to_string(s[3]) + " are not a multiple of block_size^2";
            want = {s[0], s[1] * bs, s[2] * bs, s[3] / (bs * bs)};
        } else {
            if (s[1] % bs != 0 || s[2] % bs != 0) return "input height and width must be multiples of block_size";
            want = {s[0], s[1] / bs, s[2] / bs, s[3] * bs * bs};
        }
        if (y.shape != want) return "output shape " + shape_text(y.shape) + " should be " + shape_text(want);
        if (y.type != x.type) return "output type must equal the input type";
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output must share the quantization";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) { c.add_layer(layer_type, o, {o.inputs.at(0)}); }
};

}  // namespace movement

template <>
struct op<builtin_operator::DEPTH_TO_SPACE> : movement::space_depth_trait<builtin_operator::DEPTH_TO_SPACE> {
    using tflite_options = tflite::opt::DepthToSpaceOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.block_size = x.block_size;
    }
    static constexpr bool replay = false;  // its node is never replayed (use_replay = 0)
};
template <>
struct op<builtin_operator::SPACE_TO_DEPTH> : movement::space_depth_trait<builtin_operator::SPACE_TO_DEPTH> {
    using tflite_options = tflite::opt::SpaceToDepthOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.block_size = x.block_size;
    }
    static constexpr bool replay = false;  // its node is never replayed (use_replay = 0)
};

}  // namespace vnnx::ops
