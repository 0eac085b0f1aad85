#pragma once
// The resize rules, once for the compiler (its c_inc column counts), the simulator and the
// reference: which source row or column an output one reads, TFLite's way, and the bits of
// ResizeOptions.mode. `mode` bit 0 selects linear as in the SDK; bits 8 and 9 carry
// align_corners and half_pixel_centers, which the SDK ignores and vnnx honours.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace vnnx::quant::resize {

inline constexpr std::int32_t linear_bit = 1;
inline constexpr std::int32_t align_corners_bit = 1 << 8;
inline constexpr std::int32_t half_pixel_bit = 1 << 9;

/// What ResizeOptions.mode says.
struct mode {
    bool linear = false, align_corners = false, half_pixel = false;
};

[[nodiscard]] constexpr std::int32_t encode(mode m) noexcept {
    return (m.linear ? linear_bit : 0) | (m.align_corners ? align_corners_bit : 0) | (m.half_pixel ? half_pixel_bit : 0);
}

/// The flags of a stored mode; nothing when it has bits this format does not define.
[[nodiscard]] constexpr std::optional<mode> decode(std::int32_t bits) noexcept {
    if ((bits & ~(linear_bit | align_corners_bit | half_pixel_bit)) != 0) return std::nullopt;
    return mode{(bits & linear_bit) != 0, (bits & align_corners_bit) != 0, (bits & half_pixel_bit) != 0};
}

/// Source index of output index v for nearest: without flags TFLite's optimized kernel (the
/// one its interpreter runs), a 16-bit fixed-point ratio (in << 16) / out + 1; with a flag its
/// float rule. (A 10-bit rounded ratio, used here before, reads column 0 for output 3 of a 2 -> 6
/// upsampling where TFLite reads column 1.)
[[nodiscard]] inline std::int32_t nearest_source(std::int32_t v, std::int32_t in, std::int32_t out, bool align,
                                                 bool half) {
    if (!align && !half) {
        const std::int64_t s16 = (static_cast<std::int64_t>(in) << 16) / out + 1;
        return static_cast<std::int32_t>(std::min<std::int64_t>((v * s16) >> 16, in - 1));
    }
    const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                           : static_cast<float>(in) / static_cast<float>(out);
    const float off = half ? 0.5f : 0.0f;
    std::int32_t r = align ? static_cast<std::int32_t>(std::round((static_cast<float>(v) + off) * scale))
                           : static_cast<std::int32_t>(std::floor((static_cast<float>(v) + off) * scale));
    r = std::min(r, in - 1);
    return half ? std::max(r, 0) : r;
}

/// The two source indices of output index v for bilinear and the weight of the upper one.
struct integer_tap {
    std::int32_t lo = 0, hi = 0;
    std::int64_t frac = 0;  // in 1/1024
};
struct float_tap {
    std::int32_t lo = 0, hi = 0;
    float frac = 0;
};

/// int8 bilinear (TFLite): positions in 1/1024 units.
[[nodiscard]] inline integer_tap integer_tap_of(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    std::int32_t s = ((1 << 10) * in + out / 2) / out;
    if (align && out > 1) s = ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
    const std::int32_t pos = half ? v * s + s / 2 - (1 << 9) : v * s;
    integer_tap t;
    t.lo = std::max(pos / (1 << 10), 0);
    t.hi = std::min((pos + (1 << 10) - 1) / (1 << 10), in - 1);
    t.frac = pos - (1 << 10) * t.lo;
    return t;
}

/// uint8 bilinear (TFLite's optimized kernel): positions as floats.
[[nodiscard]] inline float_tap float_tap_of(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    const float s = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                       : static_cast<float>(in) / static_cast<float>(out);
    const float pos = half ? (static_cast<float>(v) + 0.5f) * s - 0.5f : static_cast<float>(v) * s;
    float_tap t;
    t.lo = std::max(static_cast<std::int32_t>(std::floor(pos)), 0);
    t.hi = std::min(static_cast<std::int32_t>(std::ceil(pos)), in - 1);
    t.frac = pos - static_cast<float>(t.lo);
    return t;
}

}  // namespace vnnx::quant::resize
