#pragma once
// Graph inputs and outputs between the user's arrays and the simulator's tensors.
// Users hand over arrays in the TFLite layout (channels last, NHWC) and dtype; VNNX tensors are
// channels first (lowering.md §2.1: a shape of rank >= 3 moves its last axis to position -3).
// Also the SDK's default test input (vnnx_compile without -i: NumPy seed 42, randint(0, 256)).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "vnnx/format/model_view.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/support/npy.hpp"

namespace vnnx::sim {

/// Which layout the arrays of `vnnx infer` use.
enum class io_layout { tflite, vnnx };

/// Element type of a VNNX calc type as an array dtype.
[[nodiscard]] inline dtype io_dtype(std::int32_t calc_type) {
    switch (calc_type) {
        case 0: return dtype::uint8;
        case 1: return dtype::int8;
        case 2: return dtype::int16;
        case 3: return dtype::int32;
        default: fail_input("calc type " + std::to_string(calc_type) + " has no array type");
    }
}

/// [.., H, W, C] -> [.., C, H, W] (rank >= 3); lower ranks are unchanged.
[[nodiscard]] inline std::vector<std::int64_t> channels_first_shape(std::span<const std::int64_t> s) {
    std::vector<std::int64_t> out(s.begin(), s.end());
    if (out.size() >= 3) std::rotate(out.end() - 3, out.end() - 1, out.end());
    return out;
}

/// [.., C, H, W] -> [.., H, W, C] (rank >= 3); lower ranks are unchanged.
[[nodiscard]] inline std::vector<std::int64_t> channels_last_shape(std::span<const std::int64_t> s) {
    std::vector<std::int64_t> out(s.begin(), s.end());
    if (out.size() >= 3) std::rotate(out.end() - 3, out.end() - 2, out.end());
    return out;
}

namespace detail {

/// Moves the last three axes [A, B, C] -> [C, A, B] (to_first) or [A, B, C] -> [B, C, A];
/// leading axes are an outer loop. Works on bytes, any element size.
inline ndarray rotate_last3(const ndarray& a, bool to_first) {
    if (a.shape.size() < 3) return a;
    const std::size_t r = a.shape.size();
    const auto d0 = static_cast<std::size_t>(a.shape[r - 3]), d1 = static_cast<std::size_t>(a.shape[r - 2]),
               d2 = static_cast<std::size_t>(a.shape[r - 1]);
    ndarray out(a.type, to_first ? channels_first_shape(a.shape) : channels_last_shape(a.shape));
    const std::size_t e = dtype_size(a.type), plane = d0 * d1 * d2;
    const std::size_t outer = plane == 0 ? 0 : a.element_count() / plane;
    for (std::size_t o = 0; o < outer; ++o) {
        const std::byte* src = a.data.data() + o * plane * e;
        std::byte* dst = out.data.data() + o * plane * e;
        for (std::size_t i = 0; i < d0; ++i)
            for (std::size_t j = 0; j < d1; ++j)
                for (std::size_t k = 0; k < d2; ++k) {
                    const std::size_t from = (i * d1 + j) * d2 + k;
                    // to_first: source [H=i, W=j, C=k] -> [C=k, H=i, W=j]; else [C=i, H=j, W=k] -> [H=j, W=k, C=i].
                    const std::size_t to = to_first ? (k * d0 + i) * d1 + j : (j * d2 + k) * d0 + i;
                    std::memcpy(dst + to * e, src + from * e, e);
                }
    }
    return out;
}

/// Shapes equal up to leading 1s (the SDK adds or drops the batch dimension of .npy inputs).
inline bool same_shape_up_to_batch(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
    auto strip = [](std::span<const std::int64_t> s) {
        std::size_t i = 0;
        while (i + 1 < s.size() && s[i] == 1) ++i;
        return std::vector<std::int64_t>(s.begin() + static_cast<std::ptrdiff_t>(i), s.end());
    };
    return strip(a) == strip(b);
}

inline std::string shape_text(std::span<const std::int64_t> s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
}

}  // namespace detail

/// An NHWC array as channels first.
[[nodiscard]] inline ndarray to_channels_first(const ndarray& a) { return detail::rotate_last3(a, true); }
/// A channels-first array as NHWC.
[[nodiscard]] inline ndarray to_channels_last(const ndarray& a) { return detail::rotate_last3(a, false); }

/// The shape an io tensor has in `layout` (its record holds the channels-first shape).
[[nodiscard]] inline std::vector<std::int64_t> io_shape(const format::io_tensor& io, io_layout layout) {
    std::vector<std::int64_t> cf(io.shape.begin(), io.shape.end());
    return layout == io_layout::vnnx ? cf : channels_last_shape(cf);
}

/// TFLite's QUANTIZE of a float array (round half away from zero, then clamp) into `to`.
[[nodiscard]] inline ndarray quantize_array(const ndarray& a, dtype to, float scale, std::int32_t zero,
                                            const std::string& what) {
    if (a.type != dtype::float32) fail_input(what + ": only float32 arrays can be quantized");
    if (!(scale > 0)) fail_input(what + ": the tensor's scale " + std::to_string(scale) + " is not positive");
    std::int64_t lo = 0, hi = 0;
    switch (to) {
        case dtype::int8: lo = -128, hi = 127; break;
        case dtype::uint8: lo = 0, hi = 255; break;
        case dtype::int16: lo = -32768, hi = 32767; break;
        default: fail_input(what + ": cannot quantize to " + std::string(dtype_name(to)));
    }
    ndarray out(to, a.shape);
    for (std::size_t i = 0; i < a.element_count(); ++i) {
        const double q = std::round(static_cast<double>(a.get<float>(i)) / scale) + zero;
        out.set(i, static_cast<std::int64_t>(std::clamp<double>(q, static_cast<double>(lo), static_cast<double>(hi))));
    }
    return out;
}

/// An int64 array (TFLite's ARG_MAX default) as the int32 of its VNNX io tensor: the format has
/// no 64-bit type, the values must fit.
[[nodiscard]] inline ndarray narrow_int64(const ndarray& a, const std::string& what) {
    if (a.type != dtype::int64) fail_input(what + ": only int64 arrays are narrowed to int32");
    ndarray out(dtype::int32, a.shape);
    for (std::size_t i = 0; i < a.element_count(); ++i) {
        const auto v = a.get<std::int64_t>(i);
        if (v < INT32_MIN || v > INT32_MAX) fail_input(what + ": value " + std::to_string(v) + " does not fit in int32");
        out.set(i, v);
    }
    return out;
}

/// The channels-first bytes of an io tensor from a user array in `layout`. The dtype must be the
/// tensor's (float32 is quantized with the tensor's scale and zero point when the model's float
/// input was folded away); the shape must match up to a leading batch of 1.
[[nodiscard]] inline std::vector<std::byte> io_bytes(const format::io_tensor& io, const ndarray& a, io_layout layout,
                                                     const std::string& what) {
    const dtype want = io_dtype(io.type);
    const auto shape = io_shape(io, layout);
    if (!detail::same_shape_up_to_batch(a.shape, shape))
        fail_input(what + ": shape " + detail::shape_text(a.shape) + " does not match the model's " +
                   detail::shape_text(shape) + (layout == io_layout::tflite ? " (TFLite layout, channels last)" : " (VNNX layout, channels first)"));
    ndarray v = a;
    if (v.type != want) {
        if (v.type != dtype::float32)
            fail_input(what + ": dtype " + std::string(dtype_name(v.type)) + " does not match the model's " +
                       std::string(dtype_name(want)));
        v = quantize_array(v, want, io.scale, io.zero_point, what);
    }
    v.shape = shape;
    if (layout == io_layout::tflite) v = to_channels_first(v);
    return std::move(v.data);
}

/// An io tensor's channels-first bytes as an array in `layout`.
[[nodiscard]] inline ndarray io_array(const format::io_tensor& io, std::span<const std::byte> bytes, io_layout layout,
                                      const std::string& what) {
    ndarray cf(io_dtype(io.type), std::vector<std::int64_t>(io.shape.begin(), io.shape.end()));
    if (bytes.size() != cf.data.size())
        fail_input(what + ": " + std::to_string(bytes.size()) + " bytes for a tensor of " +
                   std::to_string(cf.data.size()) + " bytes");
    if (!bytes.empty()) std::memcpy(cf.data.data(), bytes.data(), bytes.size());
    return layout == io_layout::vnnx ? cf : to_channels_last(cf);
}

/// How many samples array `a` holds for io tensor `io`: 1 when it is one sample (its shape
/// matches up to leading 1s), N when it is N samples along a new first axis ([N] + the shape,
/// or the shape with its leading 1 replaced by N), 0 when it is neither.
[[nodiscard]] inline std::size_t io_samples(const format::io_tensor& io, const ndarray& a, io_layout layout) {
    const auto shape = io_shape(io, layout);
    if (detail::same_shape_up_to_batch(a.shape, shape)) return 1;
    if (a.shape.size() >= 2 && a.shape[0] > 1 &&
        detail::same_shape_up_to_batch(std::span<const std::int64_t>(a.shape).subspan(1), shape))
        return static_cast<std::size_t>(a.shape[0]);
    return 0;
}

/// Sample s of an array holding `a.shape[0]` samples along its first axis.
[[nodiscard]] inline ndarray sample_of(const ndarray& a, std::size_t s) {
    if (a.shape.empty() || s >= static_cast<std::size_t>(a.shape[0]))
        fail_input("sample " + std::to_string(s) + " is outside an array of shape " + detail::shape_text(a.shape));
    ndarray out(a.type, std::vector<std::int64_t>(a.shape.begin() + 1, a.shape.end()));
    const std::size_t bytes = out.data.size();
    if (bytes != 0) std::memcpy(out.data.data(), a.data.data() + s * bytes, bytes);
    return out;
}

/// Samples of one shape stacked along a new first axis; a leading 1 (the model's batch of one)
/// gives way to the count, as io_samples reads it back.
[[nodiscard]] inline ndarray stack_samples(const std::vector<ndarray>& parts) {
    if (parts.empty()) fail_input("no samples to stack");
    std::vector<std::int64_t> shape = parts[0].shape;
    if (!shape.empty() && shape[0] == 1) shape.erase(shape.begin());
    shape.insert(shape.begin(), static_cast<std::int64_t>(parts.size()));
    ndarray out(parts[0].type, shape);
    const std::size_t bytes = parts[0].data.size();
    for (std::size_t s = 0; s < parts.size(); ++s) {
        if (parts[s].type != parts[0].type || parts[s].shape != parts[0].shape)
            fail_input("sample " + std::to_string(s) + " has shape " + detail::shape_text(parts[s].shape) + ", sample 0 " +
                       detail::shape_text(parts[0].shape));
        if (bytes != 0) std::memcpy(out.data.data() + s * bytes, parts[s].data.data(), bytes);
    }
    return out;
}

/// The SDK's pseudo-random test input: integers 0..255 cast to `type` (so int8 wraps), drawn in
/// C order of `shape`. With seed 42 this reproduces NumPy's `np.random.seed(42);
/// np.random.randint(0, 256, shape)`: the legacy generator is MT19937 seeded by init_genrand, and
/// a 0..255 draw keeps the low 8 bits of one 32-bit output (masked rejection never rejects).
/// The SDK seeds again for every input (`default_input_arr` of infer_tflite.py).
[[nodiscard]] inline ndarray random_array(std::mt19937& gen, dtype type, std::vector<std::int64_t> shape) {
    ndarray out(type, std::move(shape));
    if (type == dtype::int8 || type == dtype::uint8) {  // bytes as they are drawn (the generic set() is most of a 224x224 input's time)
        for (auto& b : out.data) b = static_cast<std::byte>(gen() & 0xFFu);
        return out;
    }
    for (std::size_t i = 0; i < out.element_count(); ++i) {
        const auto v = static_cast<std::uint8_t>(gen() & 0xFFu);
        if (type == dtype::float32) out.set(i, static_cast<float>(v));
        else out.set(i, static_cast<std::int64_t>(v));
    }
    return out;
}

/// The default seed of vnnx_compile's generated test input.
inline constexpr std::uint32_t default_input_seed = 42;

}  // namespace vnnx::sim
