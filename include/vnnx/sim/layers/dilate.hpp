#pragma once
// DILATE (203), PadOptions: out[.., c, y·dh, x·dw] = in[.., c, y, x] on dense channels-first
// tensors, every other element `value` (lowering.md §7.5). `pads` must be 0: the DILATE layer
// only inserts; padding is a PAD layer of its own.
#include <cstdint>
#include <cstring>
#include <string>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"

namespace vnnx::sim {

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::DILATE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        c.require_unary_8bit();
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto po = c.rec.options.get<format::layer_options::PadOptions>();
        const std::int64_t dh = po.transpose_dilate_h, dw = po.transpose_dilate_w;
        if (dh < 1 || dw < 1) c.reject("transpose_dilate_h/w must be >= 1");
        for (auto p : c.rec.pads)
            if (p != 0) c.reject("a DILATE layer needs pads of 0");
        const std::int64_t C = in.channels(), H = in.rows(), W = in.cols();
        const std::int64_t oh = (H - 1) * dh + 1, ow = (W - 1) * dw + 1;
        if (out.channels() != C || out.rows() != oh || out.cols() != ow || out.outer() != in.outer())
            c.reject("output shape does not match the input dilated by " + std::to_string(dh) + "x" + std::to_string(dw));
        std::memset(out.data, c.fill_byte(po.value, in, "fill value"), static_cast<std::size_t>(out.count));
        const std::int64_t planes = in.outer() * C;
        for (std::int64_t p = 0; p < planes; ++p)
            for (std::int64_t y = 0; y < H; ++y) {
                const std::byte* src = in.data + (p * H + y) * W;
                std::byte* dst = out.data + (p * oh + y * dh) * ow;
                for (std::int64_t x = 0; x < W; ++x) dst[x * dw] = src[x];
            }
    }
};

}  // namespace vnnx::sim
