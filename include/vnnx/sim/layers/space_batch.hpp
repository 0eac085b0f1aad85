#pragma once
// SPACE_TO_BATCH_ND (38) and BATCH_TO_SPACE_ND (37) on dense channels-first [N, C, H, W] tensors
// with TFLite's element order: batch b·N + n of the batch side holds the spatial phase
// (b / bw, b % bw) of image n. The block shape [bh, bw] and the pads / crops [top, bottom, left,
// right] are int32 arrays in the blob; SPACE_TO_BATCH_ND fills with the output zero point.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"

namespace vnnx::sim {

namespace space_batch {

struct geometry {
    std::int64_t bh = 1, bw = 1;
    std::array<std::int64_t, 4> pads{};  // top, bottom, left, right
};

/// Reads the arrays and checks that `space` (the image side) and `batch` agree with them;
/// `crops` names the second array for messages.
inline geometry read(const layer_context& c, format::obj_off_t block_at, format::obj_off_t pads_at, const tensor_ref& space,
                     const tensor_ref& batch, bool crops) {
    if (space.rank() != 4 || batch.rank() != 4) c.reject("input and output must be 4-D");
    const auto b = c.int32s(block_at, 2, "block_shape_data");
    const auto p = c.int32s(pads_at, 4, crops ? "crop_data" : "paddings_data");
    geometry g;
    g.bh = b[0];
    g.bw = b[1];
    for (std::size_t i = 0; i < 4; ++i) g.pads[i] = p[i];
    if (g.bh < 1 || g.bw < 1) c.reject("block shape must be >= 1");
    for (auto v : g.pads)
        if (v < 0) c.reject("paddings and crops must be >= 0");
    // Both ways, batch side x block = image side + pads (SPACE_TO_BATCH_ND) or + crops.
    const bool ok = batch.rows() * g.bh == space.rows() + g.pads[0] + g.pads[1] &&
                    batch.cols() * g.bw == space.cols() + g.pads[2] + g.pads[3];
    if (!ok || batch.outer() != space.outer() * g.bh * g.bw || batch.channels() != space.channels())
        c.reject("tensor shapes do not match the block shape and paddings/crops");
    return g;
}

}  // namespace space_batch

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::SPACE_TO_BATCH_ND)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        c.require_unary_8bit();
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto u = c.rec.options.get<format::layer_options::SpaceToBatchNDOptions>();
        const auto g = space_batch::read(c, u.block_shape_data, u.paddings_data, in, out, false);
        const std::uint8_t fill = c.fill_byte(c.rec.output_offset, in, "output_offset");
        const std::int64_t N = in.outer(), C = in.channels(), H = in.rows(), W = in.cols();
        const std::int64_t ON = out.outer(), OH = out.rows(), OW = out.cols();
        for (std::int64_t ob = 0; ob < ON; ++ob) {
            const std::int64_t ib = ob % N, sh = (ob / N) / g.bw, sw = (ob / N) % g.bw;
            for (std::int64_t ch = 0; ch < C; ++ch)
                for (std::int64_t oy = 0; oy < OH; ++oy) {
                    std::byte* dst = out.data + ((ob * C + ch) * OH + oy) * OW;
                    const std::int64_t iy = oy * g.bh + sh - g.pads[0];
                    if (iy < 0 || iy >= H) {
                        std::memset(dst, fill, static_cast<std::size_t>(OW));
                        continue;
                    }
                    const std::byte* src = in.data + ((ib * C + ch) * H + iy) * W;
                    for (std::int64_t ox = 0; ox < OW; ++ox) {
                        const std::int64_t ix = ox * g.bw + sw - g.pads[2];
                        dst[ox] = ix >= 0 && ix < W ? src[ix] : static_cast<std::byte>(fill);
                    }
                }
        }
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::BATCH_TO_SPACE_ND)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        c.require_unary_8bit();
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto u = c.rec.options.get<format::layer_options::BatchToSpaceNDOptions>();
        const auto g = space_batch::read(c, u.block_shape_data, u.crop_data, out, in, true);
        const std::int64_t N = in.outer(), C = in.channels(), H = in.rows(), W = in.cols();
        const std::int64_t ON = out.outer(), OH = out.rows(), OW = out.cols();
        // Every output element is written once: the crops only drop input elements.
        for (std::int64_t ib = 0; ib < N; ++ib) {
            const std::int64_t ob = ib % ON, off = ib / ON;
            for (std::int64_t ch = 0; ch < C; ++ch)
                for (std::int64_t iy = 0; iy < H; ++iy) {
                    const std::int64_t oy = iy * g.bh + off / g.bw - g.pads[0];
                    if (oy < 0 || oy >= OH) continue;
                    const std::byte* src = in.data + ((ib * C + ch) * H + iy) * W;
                    std::byte* dst = out.data + ((ob * C + ch) * OH + oy) * OW;
                    for (std::int64_t ix = 0; ix < W; ++ix) {
                        const std::int64_t ox = ix * g.bw + off % g.bw - g.pads[2];
                        if (ox >= 0 && ox < OW) dst[ox] = src[ix];
                    }
                }
        }
    }
};

}  // namespace vnnx::sim
