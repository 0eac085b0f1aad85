#pragma once
// MAX_POOL_2D (17) and AVERAGE_POOL_2D (1) layers, from the record: `kernel_shape` [kh, kw],
// `strides` [sh, sw], `pads` [c0, top, left, c1, bottom, right] (padded taps are skipped; the
// average divides by the in-bounds taps), clamp to [activation_min, activation_max]. Input
// and output share their quantization, so codes are pooled directly.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/pool.hpp"

namespace vnnx::sim {

namespace pool_exec_detail {

template <kernels::pool_kind Kind>
void run_pool(layer_context& c) {
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    if (in.type != out.type) c.reject("input and output calc types differ");
    if (in.rank() < 3 || out.rank() != in.rank()) c.reject("expects channels-first [.., C, H, W] tensors of equal rank");
    if (c.rec.pads[0] != 0 || c.rec.pads[3] != 0) c.reject("channel padding is not supported by a pool");
    kernels::pool_shape s;
    s.channels = static_cast<int>(in.outer() * in.channels());
    s.height = in.rows();
    s.width = in.cols();
    s.kernel_h = c.rec.kernel_shape[0];
    s.kernel_w = c.rec.kernel_shape[1];
    s.stride_h = c.rec.strides[0];
    s.stride_w = c.rec.strides[1];
    s.pad_top = c.rec.pads[1];
    s.pad_left = c.rec.pads[2];
    s.pad_bottom = c.rec.pads[4];
    s.pad_right = c.rec.pads[5];
    s.is_signed = in.is_signed();
    s.act_min = std::max(c.rec.activation_min, in.type_min());
    s.act_max = std::min(c.rec.activation_max, in.type_max());
    if (s.stride_h < 1 || s.stride_w < 1 || s.kernel_h < 1 || s.kernel_w < 1)
        c.reject("kernel_shape and strides must be positive");
    if (out.outer() * out.channels() != s.channels || out.rows() != s.out_h() || out.cols() != s.out_w())
        c.reject("output is " + std::to_string(out.channels()) + "x" + std::to_string(out.rows()) + "x" +
                 std::to_string(out.cols()) + " but the window walk gives " + std::to_string(s.out_h()) + "x" +
                 std::to_string(s.out_w()));
    kernels::pool2d(c.ex.isa, Kind, s, std::span<const std::uint8_t>(in.u8(), in.count),
                    std::span<std::uint8_t>(out.u8(), out.count), c.ex.pool, c.view.source() + ": " + c.where);
}

}  // namespace pool_exec_detail

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::MAX_POOL_2D)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { pool_exec_detail::run_pool<kernels::pool_kind::max>(c); }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::AVERAGE_POOL_2D)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { pool_exec_detail::run_pool<kernels::pool_kind::average>(c); }
};

}  // namespace vnnx::sim
