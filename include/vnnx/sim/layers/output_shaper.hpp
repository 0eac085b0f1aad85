#pragma once
// OUTPUT_SHAPER (305): crops the FIA's output grid to the true convolution output
// (lowering.md §7.1.7, §10.4.1). With use_strided the grid is already strided and the output is
// its top-left corner; otherwise output row y is grid row y*stride_height (the FIA computes every
// row offset) and the columns are the first ones of each grid row. Whole tensors are cropped at
// once; the per-tile sizes of ShaperOptions describe the firmware's tile walk and are only checked.
#include <cstdint>
#include <cstring>
#include <string>

#include "vnnx/format/enums.hpp"
#include "vnnx/format/records.hpp"
#include "vnnx/sim/executors.hpp"

namespace vnnx::sim {

// The sizes OUTPUT_SHAPER requires positive; kernels that stand in for the layer check the same.
[[nodiscard]] inline bool shaper_sizes_positive(const format::layer_options::ShaperOptions& o) noexcept {
    return o.height >= 1 && o.width >= 1 && o.shaper_height >= 1 && o.shaper_width >= 1 && o.height_final >= 1 &&
           o.width_final >= 1 && o.shaper_height_final >= 1 && o.shaper_width_final >= 1;
}

template <>
struct layer_exec<static_cast<std::int32_t>(format::vnnx_operator::OUTPUT_SHAPER)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.elem != out.elem) c.reject("input and output element sizes differ");
        const auto o = c.rec.options.get<format::layer_options::ShaperOptions>();
        if (o.stride_height < 1) c.reject("stride_height " + std::to_string(o.stride_height) + " must be >= 1");
        if (!shaper_sizes_positive(o)) c.reject("ShaperOptions sizes must be positive");
        if (in.outer() != out.outer() || in.channels() != out.channels())
            c.reject("input " + std::to_string(in.outer()) + "x" + std::to_string(in.channels()) + " and output " +
                     std::to_string(out.outer()) + "x" + std::to_string(out.channels()) +
                     " differ in batch or channels");
        const long long step = o.use_strided == 1 ? 1 : o.stride_height;
        const long long gh = in.rows(), gw = in.cols(), oh = out.rows(), ow = out.cols();
        if ((oh - 1) * step >= gh || ow > gw)
            c.reject("the " + std::to_string(oh) + "x" + std::to_string(ow) + " output does not fit the " +
                     std::to_string(gh) + "x" + std::to_string(gw) + " grid with row step " + std::to_string(step));
        const std::size_t e = in.elem;
        const auto planes = static_cast<std::size_t>(in.outer() * in.channels());
        auto body = [&](std::size_t p) {
            for (long long y = 0; y < oh; ++y)
                std::memmove(out.data + ((p * static_cast<std::size_t>(oh) + static_cast<std::size_t>(y)) * static_cast<std::size_t>(ow)) * e,
                             in.data + ((p * static_cast<std::size_t>(gh) + static_cast<std::size_t>(y * step)) * static_cast<std::size_t>(gw)) * e,
                             static_cast<std::size_t>(ow) * e);
        };
        // In place (the output over the input) the planes must go in order: plane p's rows land
        // over the input of planes <= p only. Disjoint tensors split over the pool.
        const std::size_t in_bytes = planes * static_cast<std::size_t>(gh * gw) * e;
        const std::size_t out_bytes = planes * static_cast<std::size_t>(oh * ow) * e;
        const bool disjoint = out.data + out_bytes <= in.data || in.data + in_bytes <= out.data;
        if (c.ex.pool && disjoint && out_bytes >= 32768) c.ex.pool->parallel_for(planes, body);
        else
            for (std::size_t p = 0; p < planes; ++p) body(p);
    }
};

}  // namespace vnnx::sim
