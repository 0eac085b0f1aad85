#pragma once
// RESIZE_NEAREST_NEIGHBOR (97) and RESIZE_BILINEAR (23) → layer with ResizeOptions
// (lowering.md §7.5, §8.8): `scale` = [H_out/H_in, W_out/W_in] (float32), `mode` 0 nearest /
// 1 linear, `c_inc` the per-input-column counts of output columns (nearest only when both
// scales > 1), min_* 0, *_trips 1, `in_scratchpad` 1 for bilinear.
//
// The SDK ignores align_corners and half_pixel_centers [quirk]. Here they are honoured: the
// column map behind `c_inc` follows them (quant/resize_rule.hpp, the simulator's and the
// reference's rule too), and they are stored in `mode` as bit 8 (align_corners) and bit 9
// (half_pixel_centers); with neither set `mode` is exactly the SDK's
// 0/1, and a firmware that only knows 0/1 rejects the other values rather than computing the
// wrong picture. A bilinear resize of a 1×1 input is a nearest one (mode 0), as in the SDK.
#include <algorithm>
#include <cmath>
#include <span>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/pool.hpp"
#include "vnnx/quant/resize_rule.hpp"

namespace vnnx::ops {

namespace resize_detail {

/// Lower source column of output column j for bilinear (§8.8, with the flags honoured).
inline std::int32_t bilinear_source(std::int32_t j, std::int32_t in, std::int32_t out, bool align, bool half) {
    return std::min(quant::resize::integer_tap_of(j, in, out, align, half).lo, in - 1);
}

template <builtin_operator Code>
struct resize_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool bilinear = Code == builtin_operator::RESIZE_BILINEAR;
    static constexpr std::string_view summary =
        bilinear ? "bilinear resize, align_corners / half_pixel_centers honoured"
                 : "nearest-neighbour resize, align_corners / half_pixel_centers honoured";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    using member = format::layer_options::ResizeOptions;
    static constexpr rank_range ranks{4, 4};
    static constexpr std::string_view axes = "H and W of [N,H,W,C]";
    static constexpr std::string_view notes = "align_corners and half_pixel_centers are honoured (the SDK ignores them)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input and one output";
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (x.rank() != 4 || y.rank() != 4) return "input and output must be 4-D [N,H,W,C]";
        if (auto r = pool_detail::check_static_shape(x, "input"); !r.empty()) return r;
        if (auto r = pool_detail::check_static_shape(y, "output"); !r.empty()) return r;
        if (y.shape[0] != x.shape[0] || y.shape[3] != x.shape[3] || y.type != x.type)
            return "output batch, channels and type must equal the input's";
        if (o.inputs.size() > 1 && o.inputs[1] >= 0) {
            const auto& s = g.t(o.inputs[1]);
            if (!s.is_constant() || s.type != tensor_type::INT32 || s.element_count() != 2) return "size must be a constant int32 [2]";
            const auto v = s.values<std::int32_t>();
            if (v[0] != y.shape[1] || v[1] != y.shape[2]) return "size does not match the output shape";
        }
        if (o.options.align_corners && o.options.half_pixel_centers)
            return "align_corners and half_pixel_centers cannot both be set";
        // Resizing moves codes (nearest) or mixes them linearly (bilinear) without requantizing.
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output quantization must be equal";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto& x = c.g.t(o.inputs[0]);
        const auto& y = c.g.t(o.outputs[0]);
        const std::int32_t ih = x.shape[1], iw = x.shape[2], oh = y.shape[1], ow = y.shape[2];
        const bool as_nearest = !bilinear || (ih == 1 && iw == 1);
        const bool align = o.options.align_corners, half = o.options.half_pixel_centers;
        auto& l = c.add_layer(as_nearest ? static_cast<std::int32_t>(builtin_operator::RESIZE_NEAREST_NEIGHBOR) : layer_type,
                              o, {o.inputs.at(0)});
        format::layer_options::ResizeOptions r{};
        r.scale = {static_cast<float>(oh) / static_cast<float>(ih), static_cast<float>(ow) / static_cast<float>(iw)};
        r.mode = quant::resize::encode({!as_nearest, align, half});
        r.rows_trips = r.cols_trips = r.maps_trips = 1;
        r.in_scratchpad = as_nearest ? 0 : 1;
        std::vector<std::int32_t> src;
        for (std::int32_t j = 0; j < ow; ++j)
            src.push_back(as_nearest ? quant::resize::nearest_source(j, iw, ow, align, half) : bilinear_source(j, iw, ow, align, half));
        std::vector<std::uint8_t> counts;  // one byte per entry (§8.8)
        if (as_nearest) {
            if (r.scale[0] > 1.0f && r.scale[1] > 1.0f) {
                counts.assign(static_cast<std::size_t>(iw), 0);
                for (auto s : src) ++counts[static_cast<std::size_t>(s)];
            }
        } else {
            // counts of the indices that occur, ascending
            for (std::size_t j = 0; j < src.size(); ++j) {
                if (j == 0 || src[j] != src[j - 1]) counts.push_back(0);
                ++counts.back();
            }
        }
        for (auto s : src)
            if (std::count(src.begin(), src.end(), s) > 255) c.reject(o, "more than 255 output columns share one input column (c_inc is one byte)");
        r.num_c_inc = static_cast<std::int32_t>(counts.size());
        if (!counts.empty())
            r.c_inc = format::obj_off_t{static_cast<std::uint64_t>(
                c.data().append_bytes(std::as_bytes(std::span<const std::uint8_t>(counts))))};
        l.set(r);
    }
};

}  // namespace resize_detail

template <>
struct op<builtin_operator::RESIZE_NEAREST_NEIGHBOR> : resize_detail::resize_trait<builtin_operator::RESIZE_NEAREST_NEIGHBOR> {
    using tflite_options = tflite::opt::ResizeNearestNeighborOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.align_corners = x.align_corners;
        o.half_pixel_centers = x.half_pixel_centers;
    }
};
template <>
struct op<builtin_operator::RESIZE_BILINEAR> : resize_detail::resize_trait<builtin_operator::RESIZE_BILINEAR> {
    using tflite_options = tflite::opt::ResizeBilinearOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.align_corners = x.align_corners;
        o.half_pixel_centers = x.half_pixel_centers;
    }
};

}  // namespace vnnx::ops
