#pragma once
// DEPTH_TO_SPACE (5) and SPACE_TO_DEPTH (26), TFLite semantics on dense channels-first tensors:
//   DEPTH_TO_SPACE  out[n, h·bs+i, w·bs+j, c] = in[n, h, w, (i·bs+j)·C_out + c]
//   SPACE_TO_DEPTH  out[n, h, w, (i·bs+j)·C_in + c] = in[n, h·bs+i, w·bs+j, c]
// The block size bs is not stored in the record (the SDK stores none); it follows from the
// input and output tensor records, which must agree with it exactly.
#include <cstdint>
#include <string>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/layers/movement_common.hpp"

namespace vnnx::sim {

namespace movement {

/// The block size of a depth/space move from the records: `space` is the side with the larger
/// rows and columns, `depth` the one with more channels.
template <class Ctx>
std::int64_t block_size(const Ctx& c, const tensor_ref& space, const tensor_ref& depth) {
    if (space.rank() != 4 || depth.rank() != 4) c.reject("input and output must be 4-D");
    if (depth.rows() < 1 || space.rows() % depth.rows() != 0) c.reject("rows do not give a whole block size");
    const std::int64_t bs = space.rows() / depth.rows();
    if (bs < 1 || space.cols() != depth.cols() * bs || depth.channels() != space.channels() * bs * bs ||
        space.outer() != depth.outer())
        c.reject("tensor shapes do not describe a block size " + std::to_string(bs) + " move");
    return bs;
}

/// The depth-side tensor in TFLite order with its channels split: [N, H, i, W, j, C].
inline view depth_blocks(const tensor_ref& depth, std::int64_t bs, std::int64_t c_space) {
    const view t = tflite_view(depth);  // [N, H, W, C·bs·bs]
    view v;
    v.base = t.base;
    v.elem = t.elem;
    const auto sc = t.strides[3];
    v.dims = {t.dims[0], t.dims[1], bs, t.dims[2], bs, c_space};
    v.strides = {t.strides[0], t.strides[1], bs * c_space * sc, t.strides[2], c_space * sc, sc};
    return v;
}

/// The space-side tensor in TFLite order with its rows and columns split: [N, H, i, W, j, C].
inline view space_blocks(const tensor_ref& space, std::int64_t bs) {
    const view t = tflite_view(space);  // [N, H·bs, W·bs, C]
    view v;
    v.base = t.base;
    v.elem = t.elem;
    v.dims = {t.dims[0], t.dims[1] / bs, bs, t.dims[2] / bs, bs, t.dims[3]};
    v.strides = {t.strides[0], bs * t.strides[1], t.strides[1], bs * t.strides[2], t.strides[2], t.strides[3]};
    return v;
}

}  // namespace movement

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::DEPTH_TO_SPACE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        movement::require_same_elements(c, in, out, "depth_to_space");
        const auto bs = movement::block_size(c, out, in);
        movement::copy(movement::depth_blocks(in, bs, out.channels()), movement::space_blocks(out, bs), nullptr, c.ex.isa);
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::SPACE_TO_DEPTH)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        movement::require_same_elements(c, in, out, "space_to_depth");
        const auto bs = movement::block_size(c, in, out);
        movement::copy(movement::space_blocks(in, bs), movement::depth_blocks(out, bs, in.channels()), nullptr, c.ex.isa);
    }
};

}  // namespace vnnx::sim
