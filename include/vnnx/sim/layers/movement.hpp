#pragma once
// Data-movement layers, computed from their records only (lowering.md §7.4, §7.5, §7.7):
//   RESHAPE (22)        the output holds the input's elements in TFLite order; both tensors'
//                       channels-first layouts come from their records (`mode` and `nop` are
//                       informational: any reshape is performed).
//   SLICE (65), STRIDED_SLICE (45)  SliceOptions begin/end/stride on the last four
//                       channels-first axes (end exclusive, negative strides allowed); the
//                       sliced box is written to the output in TFLite order, so an output of
//                       lower rank (shrink_axis) receives the same elements.
//   TRANSPOSE (39)      output axis j of the last three channels-first axes takes input axis
//                       permutation[j]; leading axes stay in place.
//   PAD (34)            pads [c,h,w before, c,h,w after] on the last three axes, filled with
//                       PadOptions.value.
//   GATHER (36)         out[outer][k][inner] = in[outer][coord[k]][inner] on the
//                       channels-first axis GatherOptions.axis, written in TFLite order.
//   CAST (53)           each element converted to the output type (two's complement wrap).
//   UNPACK (88)         output k = the input with TFLite axis `axis` fixed at k.
//   MIRROR_PAD (100)    pads as PAD, each padded element mirrored from the input: without the
//                       edge element (MirrorPadOptions.mode 1, REFLECT) or with it (0, SYMMETRIC).
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/pad_plane.hpp"
#include "vnnx/sim/layers/movement_common.hpp"

namespace vnnx::sim {

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::RESHAPE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        movement::require_same_elements(c, in, out, "reshape");
        movement::copy(movement::tflite_view(in), movement::tflite_view(out), nullptr, c.ex.isa);
    }
};

namespace movement {

/// SLICE and STRIDED_SLICE: the sliced box of the input, as a view in TFLite order.
inline view slice_view(const layer_context& c, const tensor_ref& in) {
    const auto so = c.rec.options.get<format::layer_options::SliceOptions>();
    const std::size_t r = in.rank();
    const auto cf = cf_view(in);
    view v;
    v.base = in.data;
    v.elem = in.elem;
    // Axis j of the four stored is channels-first axis r - 4 + j; axes before it must be 1.
    for (std::size_t k = 0; k + 4 < r; ++k)
        if (in.shape[k] != 1) c.reject("input rank " + std::to_string(r) + ": leading dim " + std::to_string(k) + " is not 1");
    std::int64_t base = 0;
    for (std::size_t j = 0; j < 4; ++j) {
        const std::int64_t b = so.begin[j], e = so.end[j], s = so.stride[j];
        const auto k = static_cast<std::int64_t>(r) - 4 + static_cast<std::int64_t>(j);
        const std::int64_t dim = k >= 0 ? in.shape[static_cast<std::size_t>(k)] : 1;
        if (s == 0) c.reject("SliceOptions axis " + std::to_string(j) + ": stride 0");
        const std::int64_t span = s > 0 ? e - b : b - e;
        const std::int64_t as = s > 0 ? s : -s;
        const std::int64_t n = span <= 0 ? 0 : (span + as - 1) / as;
        if (n > 0 && (b < 0 || b >= dim || b + (n - 1) * s < 0 || b + (n - 1) * s >= dim))
            c.reject("SliceOptions axis " + std::to_string(j) + ": begin " + std::to_string(b) + " end " + std::to_string(e) +
                     " stride " + std::to_string(s) + " leave the dim " + std::to_string(dim));
        if (k < 0) {
            if (n != 1) c.reject("SliceOptions axis " + std::to_string(j) + " is absent from the input but selects " + std::to_string(n) + " elements");
            continue;
        }
        base += b * cf.strides[static_cast<std::size_t>(k)];
        v.dims.push_back(n);
        v.strides.push_back(s * cf.strides[static_cast<std::size_t>(k)]);
    }
    // Leading unit axes of a rank > 4 input stay in the view so its TFLite order is right.
    v.dims.insert(v.dims.begin(), r > 4 ? r - 4 : 0, 1);
    v.strides.insert(v.strides.begin(), r > 4 ? r - 4 : 0, 0);
    v.base += static_cast<std::ptrdiff_t>(base * in.elem);
    return to_tflite_order(v);
}

template <std::int32_t Type>
struct slice_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto src = slice_view(c, in);
        if (in.elem != out.elem || in.type != out.type) c.reject("input and output calc types differ");
        if (static_cast<std::uint64_t>(src.count()) != out.count)
            c.reject("the slice selects " + std::to_string(src.count()) + " elements but the output has " + std::to_string(out.count));
        copy(src, tflite_view(out), c.ex.pool, c.ex.isa);
    }
};

}  // namespace movement

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::SLICE)>
    : movement::slice_exec<static_cast<std::int32_t>(builtin_operator::SLICE)> {};
template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::STRIDED_SLICE)>
    : movement::slice_exec<static_cast<std::int32_t>(builtin_operator::STRIDED_SLICE)> {};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::TRANSPOSE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        movement::require_same_elements(c, in, out, "transpose");
        const auto p = c.rec.options.get<format::layer_options::TransposeOptions>().permutation;
        std::array<bool, 3> seen{};
        for (auto a : p) {
            if (a < 0 || a > 2 || seen[static_cast<std::size_t>(a)])
                c.reject("permutation [" + std::to_string(p[0]) + "," + std::to_string(p[1]) + "," + std::to_string(p[2]) +
                         "] is not a permutation of 0,1,2");
            seen[static_cast<std::size_t>(a)] = true;
        }
        const std::array<std::int64_t, 3> d{in.channels(), in.rows(), in.cols()};
        const std::array<std::int64_t, 3> st{d[1] * d[2], d[2], 1};
        movement::view src;
        src.base = in.data;
        src.elem = in.elem;
        src.dims = {in.outer()};
        src.strides = {d[0] * d[1] * d[2]};
        for (auto a : p) {
            src.dims.push_back(d[static_cast<std::size_t>(a)]);
            src.strides.push_back(st[static_cast<std::size_t>(a)]);
        }
        movement::view dst;  // the output is written densely in the permuted order
        dst.base = out.data;
        dst.elem = out.elem;
        dst.dims = {static_cast<std::int64_t>(out.count)};
        dst.strides = {1};
        movement::copy(src, dst, nullptr, c.ex.isa);
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::PAD)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        c.require_unary_8bit();
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto po = c.rec.options.get<format::layer_options::PadOptions>();
        if (po.transpose_dilate_w != 1 || po.transpose_dilate_h != 1) c.reject("a PAD layer needs transpose_dilate_w = transpose_dilate_h = 1");
        const auto& pads = c.rec.pads;
        for (auto p : pads)
            if (p < 0) c.reject("negative pad " + std::to_string(p));
        const std::int64_t C = in.channels(), H = in.rows(), W = in.cols();
        const std::int64_t oc = C + pads[0] + pads[3], oh = H + pads[1] + pads[4], ow = W + pads[2] + pads[5];
        if (out.channels() != oc || out.rows() != oh || out.cols() != ow || out.outer() != in.outer())
            c.reject("output shape does not match the input padded by the layer's pads");
        // One output plane per index, so planes can go to several threads.
        const auto fill = c.fill_byte(po.value, in, "pad value");
        const auto plane = static_cast<std::size_t>(oh * ow);
        const kernels::pad_geometry g{static_cast<std::size_t>(H), static_cast<std::size_t>(W), static_cast<std::size_t>(oh),
                                      static_cast<std::size_t>(ow), static_cast<std::size_t>(pads[1]),
                                      static_cast<std::size_t>(pads[2])};
        auto body = [&](std::size_t p) {
            const auto o = static_cast<std::int64_t>(p) / oc, oc_i = static_cast<std::int64_t>(p) % oc;
            std::uint8_t* d = reinterpret_cast<std::uint8_t*>(out.data) + p * plane;
            const std::int64_t ch = oc_i - pads[0];
            const bool padded = ch < 0 || ch >= C;  // a padded channel: all fill
            kernels::pad_plane(d, padded ? nullptr : in.u8() + (o * C + ch) * H * W, g, fill);
        };
        const auto planes = static_cast<std::size_t>(in.outer() * oc);
        if (c.ex.pool && out.count >= 32768) c.ex.pool->parallel_for(planes, body);
        else
            for (std::size_t p = 0; p < planes; ++p) body(p);
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::GATHER)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input (params) and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.elem != out.elem || in.type != out.type) c.reject("params and output calc types differ");
        const auto go = c.rec.options.get<format::layer_options::GatherOptions>();
        if (go.batch_dims != 0 || go.batch_size != 1) c.reject("only batch_dims 0 (batch_size 1) is supported");
        const auto r = static_cast<std::int32_t>(in.rank());
        if (go.axis < 0 || go.axis >= r) c.reject("axis " + std::to_string(go.axis) + " is outside the params rank " + std::to_string(r));
        std::int64_t outer = 1, inner = 1;
        for (std::int32_t i = 0; i < go.axis; ++i) outer *= in.shape[static_cast<std::size_t>(i)];
        for (std::int32_t i = go.axis + 1; i < r; ++i) inner *= in.shape[static_cast<std::size_t>(i)];
        const std::int64_t dim = in.shape[static_cast<std::size_t>(go.axis)];
        if (go.outer_size != outer || go.inner_size != inner || go.axis_size != dim)
            c.reject("outer/axis/inner sizes " + std::to_string(go.outer_size) + "/" + std::to_string(go.axis_size) + "/" +
                     std::to_string(go.inner_size) + " do not match the params shape");
        if (go.coord_size <= 0) c.reject("coord_size must be positive");
        const auto coords = c.int32s(go.coord_data, static_cast<std::uint64_t>(go.coord_size), "coord_data");
        const std::int64_t n = go.coord_size;
        if (static_cast<std::uint64_t>(outer * n * inner) != out.count)
            c.reject("the gather yields " + std::to_string(outer * n * inner) + " elements but the output has " + std::to_string(out.count));
        // Gather on the channels-first axis into a box shaped like the params with that axis
        // resized, then lay the box out through TFLite order (index shapes other than 1-D
        // change the output rank).
        std::vector<std::byte> box(static_cast<std::size_t>(outer * n * inner) * in.elem);
        const std::size_t chunk = static_cast<std::size_t>(inner) * in.elem;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t k = 0; k < n; ++k) {
                const std::int32_t ix = coords[static_cast<std::size_t>(k)];
                if (ix < 0 || ix >= dim) c.reject("coordinate " + std::to_string(k) + " (" + std::to_string(ix) + ") is outside [0, " + std::to_string(dim) + ")");
                std::memcpy(box.data() + static_cast<std::size_t>(o * n + k) * chunk,
                            in.data + static_cast<std::size_t>(o * dim + ix) * chunk, chunk);
            }
        tensor_ref shaped = in;
        shaped.data = box.data();
        shaped.shape[static_cast<std::size_t>(go.axis)] = static_cast<std::int32_t>(n);
        shaped.count = static_cast<std::uint64_t>(outer * n * inner);
        movement::copy(movement::tflite_view(shaped), movement::tflite_view(out), nullptr, c.ex.isa);
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::CAST)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.shape != out.shape) c.reject("input and output shapes differ");
        for (std::uint64_t i = 0; i < in.count; ++i) out.set(i, in.get(i));
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::UNPACK)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        const auto po = c.rec.options.get<format::layer_options::PackOptions>();
        if (c.tensors.size() < 2) c.reject("expects an input and outputs");
        const tensor_ref& in = c.tensors[0];
        const auto n_out = c.tensors.size() - 1;
        const auto rank = static_cast<std::int32_t>(in.rank());
        if (po.dims != rank) c.reject("PackOptions.dims " + std::to_string(po.dims) + " differs from the input rank " + std::to_string(rank));
        const std::int32_t a = movement::tflite_axis_of_cf(po.axis + rank, rank);
        if (a < 0) c.reject("axis " + std::to_string(po.axis) + " is outside the input rank");
        const auto src = movement::tflite_view(in);
        const auto count = src.dims[static_cast<std::size_t>(a)];
        if (po.count != count || static_cast<std::int64_t>(n_out) > count)
            c.reject("count " + std::to_string(po.count) + " and " + std::to_string(n_out) + " outputs for an axis of " + std::to_string(count));
        for (std::size_t k = 0; k < n_out; ++k) {
            const tensor_ref& out = c.tensors[1 + k];
            if (out.elem != in.elem || out.type != in.type) c.reject("output " + std::to_string(k) + " calc type differs from the input");
            const auto part = movement::fix_axis(src, static_cast<std::size_t>(a), static_cast<std::int64_t>(k));
            if (static_cast<std::uint64_t>(part.count()) != out.count) c.reject("output " + std::to_string(k) + " has the wrong size");
            movement::copy(part, movement::tflite_view(out), nullptr, c.ex.isa);
        }
    }
};

namespace movement {

/// The source index of output index `o` along an axis of `n` input elements padded by `before`:
/// mirrored without the edge (REFLECT) or with it (SYMMETRIC).
inline std::int64_t mirror_index(std::int64_t o, std::int64_t before, std::int64_t n, bool reflect) {
    std::int64_t i = o - before;
    if (i < 0) i = reflect ? -i : -i - 1;
    else if (i >= n) i = reflect ? 2 * n - 2 - i : 2 * n - 1 - i;
    return i;
}

}  // namespace movement

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::MIRROR_PAD)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.elem != out.elem || in.type != out.type) c.reject("input and output calc types differ");
        const auto mode = c.rec.options.get<format::layer_options::MirrorPadOptions>().mode;
        if (mode != 0 && mode != 1) c.reject("mode " + std::to_string(mode) + " is neither 1 (REFLECT) nor 0 (SYMMETRIC)");
        const bool reflect = mode == 1;
        const auto& pads = c.rec.pads;
        const std::int64_t C = in.channels(), H = in.rows(), W = in.cols();
        const std::array<std::int64_t, 3> n{C, H, W};
        for (std::size_t a = 0; a < 3; ++a) {
            const std::int64_t limit = n[a] - (reflect ? 1 : 0);
            if (pads[a] < 0 || pads[a + 3] < 0 || pads[a] > limit || pads[a + 3] > limit)
                c.reject("pads exceed what the mode can mirror");
        }
        const std::int64_t oc = C + pads[0] + pads[3], oh = H + pads[1] + pads[4], ow = W + pads[2] + pads[5];
        if (out.channels() != oc || out.rows() != oh || out.cols() != ow || out.outer() != in.outer())
            c.reject("output shape does not match the input padded by the layer's pads");
        const std::size_t es = in.elem;
        for (std::int64_t o = 0; o < in.outer(); ++o)
            for (std::int64_t ch = 0; ch < oc; ++ch) {
                const auto sc = movement::mirror_index(ch, pads[0], C, reflect);
                for (std::int64_t y = 0; y < oh; ++y) {
                    const auto sy = movement::mirror_index(y, pads[1], H, reflect);
                    for (std::int64_t x = 0; x < ow; ++x) {
                        const auto sx = movement::mirror_index(x, pads[2], W, reflect);
                        const auto src = static_cast<std::size_t>(((o * C + sc) * H + sy) * W + sx);
                        const auto dst = static_cast<std::size_t>(((o * oc + ch) * oh + y) * ow + x);
                        std::memcpy(out.data + dst * es, in.data + src * es, es);
                    }
                }
            }
    }
};

}  // namespace vnnx::sim
